"""The contexts the merge's refusal rules read, and `first_refusal`, which runs a tuple of rules.

A rule reads one context and returns a reason to refuse (a sentence the user sees) or None:
- `RegionFit`: one snippet region at its cheapest placement by line anchors (`lineplace.py`);
- `LinePlan`: every region placed, before the splice (`lineplace.py`);
- `DefinitionMatch`, `ShownDefinition`: a marker-free snippet whose definitions replace the
  original's by name (`tree.py`);
- `MemberList`, `DeletedRun`, `ShownMember`, `NewMember`: a container's members aligned by name,
  the members it deletes, one it replaces and one it adds (`members.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from fastapply.merge.anchor import Candidate, Region
from fastapply.merge.defs import Definition
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import is_blank, reindent, similar
from fastapply.merge.whole_defs import original_definitions

RENAMED_LINE_RATIO = 0.8  # similarity (0..1) of the one changed line of a member renamed in place

Ctx = TypeVar("Ctx")


def first_refusal(checks: Sequence[Callable[[Ctx], str | None]], ctx: Ctx) -> str | None:
    """The reason of the first check that refuses, or None."""
    found = named_refusal(checks, ctx)
    return found[1] if found else None


def named_refusal(checks: Sequence[Callable[[Ctx], str | None]], ctx: Ctx,
                  skip: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(the name of the first check that refuses, its reason), skipping the checks named in `skip`."""
    for check in checks:
        if check.__name__ in skip:
            continue
        reason = check(ctx)
        if reason:
            return check.__name__, reason
    return None


@dataclass
class RegionFit:
    """A region at its cheapest placement, with the original span it would replace."""

    i: int  # index of the region in the snippet (reasons say `region {i + 1}`)
    region: Region
    c: Candidate  # the chosen placement
    orig: list[str]
    prev_end: int  # where the previous region's span ends (this one cannot start before)
    next_start: int  # where the next anchored region starts
    start: int  # the original span [start, end) the region replaces, its edge lines included
    end: int
    lead: list[str]  # region lines before its first anchor / after its last one
    trail: list[str]
    new_lead: list[str]  # those edge lines left over after pairing with original lines: new code
    new_trail: list[str]
    next_region: Region | None  # the snippet's next region, if any
    partial_ok: bool  # a marker-free snippet (what it does not show stays)
    lang: str | None
    fuzzy: int = 0  # edge lines paired with original lines by similarity rather than equality
    opened: int = 0  # brackets the snippet's new lines opened before this region's first anchor
    lowered: bool = False  # placed under the wrap reading: lines the snippet wrapped, put back (wrap.py)


@dataclass
class LinePlan:
    """Every region's span in the original, in snippet order, before the splice."""

    spans: list[tuple[int, int, list[str]]]  # (start, end exclusive, replacement lines)
    regions: list[Region]
    orig: list[str]
    defs: list[Definition]  # the original's definitions, flattened
    partial_ok: bool
    loose: bool  # the snippet writes its markers loosely (see lineplace._loose_markers)
    lang: str | None = None
    wrapped: bool = False  # the wrap reading (wrap.py): the wrapped code joined the span before its marker
    head: bool = field(init=False)  # code above the first region, which has no marker before it
    tail: bool = field(init=False)  # code below the last region, which has no marker after it

    def __post_init__(self) -> None:
        edges = not self.partial_ok and bool(self.spans)
        self.head = edges and not self.regions[0].marker_before and \
            any(not is_blank(x) for x in self.orig[:self.spans[0][0]])
        self.tail = edges and not self.regions[-1].marker_after and \
            any(not is_blank(x) for x in self.orig[self.spans[-1][1]:])

    @cached_property
    def merged_defs(self) -> list[Definition] | None:
        """The definitions of the file as the plan would splice it (parsed once for every check
        that compares them with the original's), or None when the spans overlap."""
        merged = apply_edits(self.orig, self.spans)
        return None if merged is None else original_definitions(merged, self.lang)


@dataclass
class DefinitionMatch:
    """The snippet's definitions and the original definition each names (None: a new one)."""

    matched: list[tuple[Definition, Definition | None]]
    duplicate: tuple[Definition, int] | None  # the first one naming several, and how many (matching stops there)
    u_lines: list[str]
    orig: list[str]


@dataclass
class ShownDefinition:
    """A snippet definition `u` that replaces the original's `o`."""

    u: Definition
    o: Definition
    u_lines: list[str]
    orig: list[str]
    partial: bool = field(init=False)  # a class shown with only some of its members (the others stay)

    def __post_init__(self) -> None:
        u, o = self.u, self.o
        shown = {(m.kind, m.name) for m in u.members}
        self.partial = u.kind in ("type", "impl", "test") and bool(o.members) and bool(u.members) and \
            any((m.kind, m.name) not in shown for m in o.members) and not self._renamed_in_place()

    def _renamed_in_place(self) -> bool:
        """Every original member the snippet does not name stands in it renamed: in the same place
        among the members, every line the same but one, which is like the original's (a typo fixed
        in the names of two tests; in Java the `@Test` above counts as the method's). The definition
        is shown whole then, not partially beside new members (which kept both copies)."""
        u, o = self.u, self.o
        if len(u.members) != len(o.members):
            return False
        names = {(m.kind, m.name) for m in o.members}
        for a, b in zip(o.members, u.members):
            if (a.kind, a.name) == (b.kind, b.name):
                continue
            was = [x.strip() for x in self.orig[a.node_start:a.end + 1]]
            now = [x.strip() for x in self.u_lines[b.node_start:b.end + 1]]
            changed = [(x, y) for x, y in zip(was, now) if x != y]
            if a.kind != b.kind or (b.kind, b.name) in names or len(was) != len(now) or len(changed) != 1 or \
                    not similar(*changed[0], RENAMED_LINE_RATIO):
                return False
        return True


@dataclass
class MemberList:
    """One container's snippet items (('def', Definition) / ('marker', row) / ('other', node)) and
    the original members they name."""

    items: list
    o_members: list[Definition]
    container: Definition | None  # None: the file's top level
    matched: dict[int, Definition]  # item index -> the original member it names
    duplicate: tuple[Definition, int] | None  # the first item naming several members, and how many


@dataclass
class DeletedRun:
    """Original members the snippet skips without a marker between its neighbours: deleted."""

    run: list[Definition]
    last: Definition | None  # the original member kept or replaced just before the run
    k: int  # index of the member after the run
    o_members: list[Definition]
    container: Definition | None
    orig: list[str]
    start: int = field(init=False)  # the original lines [start, end) that go
    end: int = field(init=False)

    def __post_init__(self) -> None:
        self.start = (self.last.end + 1) if self.last is not None else self.run[0].start
        end = self.run[-1].end + 1
        if self.last is None:  # also the blank lines after the run
            while end < len(self.orig) and is_blank(self.orig[end]) and \
                    (self.k >= len(self.o_members) or end < self.o_members[self.k].start):
                end += 1
        self.end = end


@dataclass
class ShownMember:
    """A snippet member (no marker inside) that replaces the original member it names."""

    u: Definition
    o: Definition
    next_item: tuple | None  # the snippet's next item in the container, if any
    upd: list[str]
    orig: list[str]
    markers: set[int]
    brace: bool  # the language closes definitions with `}`
    new_lines: list[str] | None = field(init=False)  # u's lines re-indented for o's place; None: impossible

    def __post_init__(self) -> None:
        u = self.u
        self.new_lines = reindent(self.upd[u.start:u.end + 1], self.upd[u.node_start], self.orig[self.o.node_start])


@dataclass
class NewMember:
    """A snippet member that names no original member."""

    u: Definition
    rest: list[tuple[str, bool]]  # the items after it: (kind, names an original member)
    marker_open: bool  # a marker comes right before it (after the last shown member)
    container: Definition | None
