"""Region rules (context: `RegionFit`): attributes, decorators and annotations at a region's edge.

Attributes stack (`@Override` above many methods, `#[test]` above every test), so an equal or a
similar one proves nothing: an edited attribute, or one added next to it? A deletion after an
attribute anchor, or a new attribute? A new attribute on top of the stack, read as an anchor?
"""

from __future__ import annotations

from fastapply.merge.checks.base import RegionFit
from fastapply.merge.checks.helpers import ATTRIBUTE_STARTS, added_lines, anchor_span, deletions_at_edges
from fastapply.merge.text import is_blank


def edited_attribute(fit: RegionFit) -> str | None:
    """An edge line of the region that is an attribute / decorator / annotation was paired with a
    different one in the original (`#[cfg(test)]` over `#[test]`): an edit of that attribute, or a
    new one added above it? Attributes stack, so similar text decides nothing."""
    o = fit.orig
    pairs = list(zip(reversed(fit.lead), reversed(o[fit.start:fit.c.start]))) + \
        list(zip(fit.trail, o[fit.c.end + 1:fit.end]))
    for x, y in pairs:
        a, b = x.strip(), y.strip()
        if a != b and a.startswith(ATTRIBUTE_STARTS) and b.startswith(ATTRIBUTE_STARTS):
            return (f"region {fit.i + 1} shows `{a[:40]}` where the original has `{b[:40]}`: "
                    "a changed attribute, or one added next to it?")
    return None


def deletion_after_attribute(fit: RegionFit) -> str | None:
    """The region's first (last) anchors are only attributes (`@Override`, `#[test]`) and the
    placement deletes original code right after (before) them: attributes stack above many
    definitions, so the region's attribute may as well be a new one, deleting nothing."""
    if fit.c.first == fit.c.last:
        return None
    for _, run, gone in deletions_at_edges(*anchor_span(fit)):
        if all(x.strip().startswith(ATTRIBUTE_STARTS) for x in run if x) and any(gone):
            return (f"region {fit.i + 1} would delete original code next to `{run[0].strip()[:40]}`, an attribute "
                    "that may as well be a new one: refusing to guess")
    return None


def new_attribute_read_as_anchor(fit: RegionFit) -> str | None:
    """The region's first anchor is an attribute (`@Override`), and the region adds, after it, the
    original line right above its span, as written, which stays: the attribute is a new one put on
    top of the original's stack (`@Override` / `@SerializedName("a")` / `@Override` ...), and the
    merge would pair it with the one further down and repeat the line above (`@SerializedName`
    twice). Attributes stack, so an equal one proves nothing."""
    c, o = fit.c, fit.orig
    j = fit.start - 1
    if j < max(fit.prev_end, 0) or is_blank(o[j]) or not c.lines[c.first].strip().startswith(ATTRIBUTE_STARTS):
        return None
    if o[j].rstrip() in {x.rstrip() for x in added_lines(c.lines[c.first + 1:c.last + 1], o[c.start:c.end + 1])}:
        return (f"region {fit.i + 1} starts on `{c.lines[c.first].strip()[:40]}`, an attribute that may as well be a "
                f"new one, and adds `{o[j].strip()[:40]}`, which stands right above it (line {j + 1}) and stays: "
                "which attribute is new?")
    return None
