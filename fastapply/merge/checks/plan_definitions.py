"""File rules (context: `LinePlan`): the definitions the splice would leave in the file.

A definition defined twice (the old one kept beside the region's), a header placed on another
definition (renaming it), an edited header added again beside the original, a header deleted with
its body kept.
"""

from __future__ import annotations

import re
from collections import Counter

from fastapply.merge.checks.base import LinePlan
from fastapply.merge.defs import Definition
from fastapply.merge.text import code_of, indent_of, is_blank, similar
from fastapply.merge.whole_defs import header_counts


def defined_twice(plan: LinePlan) -> str | None:
    """In a marker-free snippet (which keeps what it does not show), a region that shows the header
    of a definition (unique in the original) while it is placed away from it: the merge would keep
    the old definition and add the region's, defining it twice."""
    if not plan.partial_ok:
        return None
    count: dict[str, int] = {}
    for d in plan.defs:
        count[d.header] = count.get(d.header, 0) + 1
    for i, (start, end, repl) in enumerate(plan.spans):
        shown = {x.strip() for x in repl}
        for d in plan.defs:
            if count[d.header] == 1 and d.name in d.header and d.header in shown and not (start <= d.node_start < end):
                return (f"region {i + 1} shows `{d.header[:60]}` but is placed away from it (line {d.node_start + 1}): "
                        "the definition would be there twice")
    return None


def header_names_other_definition(plan: LinePlan) -> str | None:
    """A definition's name vanishes while a name the original already defines gains a copy: a
    region showing the header of an existing definition (`public int getAsInt() {`) was placed on
    another one (its annotations matched there), renaming it. Such a header anchors to its own
    definition or not at all."""
    if plan.lang is None or not plan.defs or plan.merged_defs is None:
        return None
    before = Counter((d.kind, d.name) for d in plan.defs)
    after = Counter((d.kind, d.name) for d in plan.merged_defs)
    lost = before - after
    gained = [k for k in after - before if before[k] > 0]
    if lost and gained:
        (kind, name), (_, old) = gained[0], next(iter(lost))
        return (f"the snippet's `{name}` would replace `{old}`, although `{name}` is defined elsewhere in the "
                "original: which definition does it show?")
    return None


def definition_added_again(plan: LinePlan) -> str | None:
    """The merge would add a definition whose header is an original one (same enclosing names and
    name) with only a comment or spacing changed (`def test_brotli():  # beta` beside
    `def test_brotli():`), while the original one stays: the snippet showed that definition edited,
    and its region was placed elsewhere (a loose snippet's last region pulled to the file's end, on
    a repeated line). (A header copied verbatim may be a deliberate copy; an edited one is an edit.)"""
    if plan.lang is None or not plan.defs or plan.merged_defs is None:
        return None
    before, after = header_counts(plan.defs), header_counts(plan.merged_defs)

    def by_code(counts: Counter) -> Counter:
        out: Counter = Counter()
        for (path, name, header), n in counts.items():
            out[(path, name, code_of(header))] += n
        return out

    code_before, code_after = by_code(before), by_code(after)
    for path, name, header in after:
        k = (path, name, code_of(header))
        if before[(path, name, header)] == 0 and code_after[k] > code_before[k] >= 1:
            return (f"`{header[:60]}` would define `{name}` a second time beside the original's: the snippet's "
                    "edit of it placed elsewhere?")
    return None


def header_deleted_body_kept(plan: LinePlan) -> str | None:
    """A region's span deletes the header of a definition (the line is not among the region's
    lines), while the definition goes on past the span: its body would be kept under whatever
    precedes it. A snippet deletes a definition whole, or shows its header changed; a header
    dropped alone is a misplacement (a new block line paired with it). A header shown edited names
    the definition in the region."""
    for i, (start, end, repl) in enumerate(plan.spans):
        shown = {x.rstrip() for x in repl}
        for d in plan.defs:
            if start <= d.node_start < end and d.end >= end and plan.orig[d.node_start].rstrip() not in shown and \
                    not any(_short_name(d) in x for x in repl) and not _edited_header_shown(d, repl, plan.orig) and \
                    any(not is_blank(x) for x in plan.orig[end:d.end + 1]):
                return (f"region {i + 1} would delete the header `{d.header[:50]}` (line {d.node_start + 1}) but keep "
                        "the rest of that definition: misplaced?")
    return None


def _edited_header_shown(d: Definition, repl: list[str], orig: list[str]) -> bool:
    """The region shows the header edited, a rename included (`public void testMapCreation() {` for
    `public void testStringMapCreation() {`, below its `@Test`): a line at the header's depth that
    opens a block like it and reads as a version of it."""
    header = orig[d.node_start]
    return any(indent_of(x) == indent_of(header) and x.rstrip()[-1:] == header.rstrip()[-1:] and
               x.split()[:1] == header.split()[:1] and similar(x, header) for x in repl if x.strip())


def _short_name(d: Definition) -> str:
    """The definition's own name, without the receiver or type it is qualified with (`Project.License`)."""
    return re.split(r"[.:]+", d.name)[-1]
