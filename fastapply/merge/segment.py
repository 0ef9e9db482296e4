"""Split a lazy snippet into regions (runs of real lines) separated by whole-line markers."""

from __future__ import annotations

from fastapply.merge.anchor import Region
from fastapply.merge.text import indent_of, is_blank


def split_regions(update_lines: list[str], flags: list[bool]) -> tuple[list[Region], int]:
    """Regions in snippet order and the number of markers (`flags`: markers.marker_flags, per line).
    Blank-only regions between markers carry nothing and are dropped; blank lines at the snippet's
    ends are dropped too."""
    regions: list[Region] = []
    current: list[str] = []
    seen_marker = False
    marker_indent = None
    marker_line = ""
    n_markers = 0
    for line, is_marker in zip(update_lines, flags):
        if is_marker:
            n_markers += 1
            if any(not is_blank(x) for x in current):
                regions.append(Region(current, marker_before=seen_marker, marker_after=True,
                                      after_indent=indent_of(line), before_indent=marker_indent,
                                      after_line=line.rstrip(), before_line=marker_line))
            current = []
            seen_marker = True
            marker_indent = indent_of(line)
            marker_line = line.rstrip()
        else:
            current.append(line)
    if any(not is_blank(x) for x in current):
        regions.append(Region(current, marker_before=seen_marker, marker_after=False, before_indent=marker_indent,
                              before_line=marker_line))
    if regions and not regions[0].marker_before:
        while regions[0].lines and is_blank(regions[0].lines[0]):
            regions[0].lines.pop(0)
            regions[0].blank_head += 1
    if regions and not regions[-1].marker_after:
        while regions[-1].lines and is_blank(regions[-1].lines[-1]):
            regions[-1].lines.pop()
    return regions, n_markers
