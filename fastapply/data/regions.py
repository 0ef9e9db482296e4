"""Which lines of the expected file a snippet shows: regions around the changes.

A region is a span of the expected file together with the span of the original it replaces. Context
regions grow a number of non-blank lines around each change; definition regions are whole
functions or classes (matched to the same definition in the original by its header line); header
and closing regions are the first and last line of a class around a pasted method.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.data.hunks import Diff
from fastapply.merge.defs import Definition, collect, flatten
from fastapply.languages import parse

MERGE_GAP = 2  # regions this close (or separated by blank lines only) are shown as one
MAX_CLASS_LINES = 120  # a whole-class snippet of a longer class is not how agents write


@dataclass(frozen=True)
class Region:
    start: int  # expected lines [start, end)
    end: int
    ostart: int  # original lines [ostart, oend) that it replaces
    oend: int
    kind: str  # "context" | "def" | "header" | "close"


def definitions(text: str, language: str) -> list[Definition]:
    tree = parse(language, text)
    if tree is None or tree.root_node.has_error:
        return []
    return flatten(collect(tree, text.encode("utf-8")))


def _grow(lines: list[str], j: int, step: int, n: int) -> int:
    """From line j, the region edge after taking n non-blank lines backwards (step -1) or forwards."""
    taken = 0
    while taken < n and (j > 0 if step < 0 else j < len(lines)):
        k = j - 1 if step < 0 else j
        taken += bool(lines[k].strip())
        j += step
    return j


def context_regions(d: Diff, n: int) -> list[Region] | None:
    """Each change with n non-blank lines of context on each side; None when a span does not map."""
    spans = []
    for _, _, j1, j2 in d.hunks:
        s, e = _grow(d.exp, j1, -1, n), _grow(d.exp, j2, +1, n)
        if spans and (s - spans[-1][1] <= MERGE_GAP or not "".join(d.exp[spans[-1][1]:s]).strip()):
            spans[-1] = (spans[-1][0], max(e, spans[-1][1]))
        else:
            spans.append((s, e))
    return spans_to_regions(d, spans)


def spans_to_regions(d: Diff, spans: list[tuple[int, int]]) -> list[Region] | None:
    """Spans of the expected file as context regions with their lines in the original, or None when
    one of them does not map."""
    out = []
    for s, e in spans:
        os_, oe = d.map_start(s), d.map_end(e)
        if os_ is None or oe is None:
            return None
        out.append(Region(s, e, os_, oe, "context"))
    return out


def _innermost(defs: list[Definition], j1: int, j2: int, kinds: tuple[str, ...], leaf: bool) -> Definition | None:
    """The smallest definition of those kinds whose lines hold the change [j1, j2) strictly after its first
    line. leaf: only definitions without members (a pasted container without markers inside could be
    lazy about its members, so a member it leaves out would be ambiguous)."""
    best = None
    for x in defs:
        if x.kind in kinds and x.node_start < j1 and max(j2, j1 + 1) <= x.end + 1 and not (leaf and x.members):
            if best is None or x.end - x.start < best.end - best.start:
                best = x
    return best


def _twin(x: Definition, odefs: list[Definition]) -> Definition | None:
    """The one original definition with the same kind and header line."""
    same = [o for o in odefs if o.kind == x.kind and o.header == x.header]
    return same[0] if len(same) == 1 else None


def def_regions(d: Diff, edefs: list[Definition], odefs: list[Definition], kinds: tuple[str, ...],
                max_lines: int | None = None, leaf: bool = True) -> list[tuple[Region, Definition, Definition]] | None:
    """The whole definitions (of those kinds) that hold the changes, each with its original twin."""
    found: list[tuple[Region, Definition, Definition]] = []
    for _, _, j1, j2 in d.hunks:
        x = _innermost(edefs, j1, j2, kinds, leaf)
        if x is None or (max_lines and x.end + 1 - x.start > max_lines):
            return None
        if found and found[-1][1] is x:
            continue
        o = _twin(x, odefs)
        if o is None or _dropped_member(x, o):
            return None
        found.append((Region(x.start, x.end + 1, o.start, o.end + 1, "def"), x, o))
    for (a, _, _), (b, _, _) in zip(found, found[1:]):
        if b.start < a.end:
            return None  # nested or overlapping definitions
    return found


def _dropped_member(x: Definition, o: Definition) -> bool:
    """A member of the original that the new definition no longer has (deleted, or elided: a reader
    of a lazy snippet cannot tell which)."""
    names = {(m.kind, m.name) for m in x.members}
    return any((m.kind, m.name) not in names for m in o.members)


def _parent(defs: list[Definition], x: Definition) -> Definition | None:
    for p in defs:
        if any(m is x for m in p.members):
            return p
    return None


def with_class_lines(d: Diff, found, edefs, odefs) -> list[Region] | None:
    """Pasted methods inside their class's first line (and its closing line in brace languages)."""
    out: list[Region] = []
    last = None
    for region, x, o in found:
        p, po = _parent(edefs, x), _parent(odefs, o)
        if p is None or po is None or p.header != po.header:
            return None
        closing = Region(p.end, p.end + 1, po.end, po.end + 1, "close") if d.exp[p.end].strip() in ("}", "};") \
            else None
        if p is last:  # a second method of the same class: one header and one closing line
            if out[-1].kind == "close":
                out.pop()
        else:
            out.append(Region(p.node_start, p.node_start + 1, po.node_start, po.node_start + 1, "header"))
        out.append(region)
        if closing is not None:
            out.append(closing)
        last = p
    return out
