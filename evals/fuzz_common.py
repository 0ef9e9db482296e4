"""What every fuzz edit generator shares: the random source (`Pick`), a parsed original (`Source`),
the edit record (`Edit`), the syntax guard, and the snippet renderer (edited file -> lazy snippet).

Generators are pure functions `gen(pick, src) -> Edit | None` (None: the pattern does not apply to
this original, or this draw). `pick` is a `RandomPick` in `evals.fuzz` and a hypothesis-backed
adapter in the property tests, so the benchmark and CI draw the same edits.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from fastapply.languages import error_count, parse
from fastapply.merge.text import is_trivial

COMMENT = {"python": "#"}
WORDS = ["alpha", "beta", "gamma", "delta", "value", "result", "config", "count", "total", "item"]


class Pick(Protocol):
    def int(self, lo: int, hi: int) -> int: ...  # inclusive
    def choice(self, seq): ...
    def bool(self) -> bool: ...
    def shuffle(self, seq) -> list: ...


class RandomPick:
    """`Pick` over `random.Random` (deterministic for a seed)."""

    def __init__(self, seed: str):
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def bool(self) -> bool:
        return self.rng.random() < 0.5

    def shuffle(self, seq) -> list:
        out = list(seq)
        self.rng.shuffle(out)
        return out


@dataclass(frozen=True)
class Edit:
    """One fuzz case: `expected` is the edited file, exact by construction; `update` the snippet."""

    language: str
    original: str
    expected: str
    update: str
    variant: str = ""  # e.g. "ctx1 careful": how the snippet was rendered


class Source:
    """An original file with its lines and (lazily) its tree; generators read it, never change it."""

    def __init__(self, language: str, text: str, name: str = ""):
        self.language, self.text, self.name = language, text, name
        self.lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")

    @cached_property
    def tree(self):
        return parse(self.language, self.text)

    @cached_property
    def errors(self) -> int:
        return error_count(self.tree) if self.tree is not None else 0

    @cached_property
    def compiles(self) -> bool:
        return self.language == "python" and python_compiles(self.text)

    @cached_property
    def unit(self) -> str:
        """The file's indentation step (a tab, or the smallest run of leading spaces)."""
        if self.language == "go":
            return "\t"
        sizes = [len(x) - len(x.lstrip(" ")) for x in self.lines
                 if x.startswith(" ") and x.strip() and x.strip()[0] not in "*/#"]  # not comment lines
        small = min((s for s in sizes if s > 0), default=4)
        return " " * (small if small in (2, 4) else 4)


def python_compiles(text: str) -> bool:
    try:
        compile(text, "<fuzz>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def keeps_syntax(src: Source, edited: str) -> bool:
    """The edit leaves the file parsing no worse (and, for Python that compiled, still compiling):
    a generator never asks the merge for a broken file."""
    tree = parse(src.language, edited)
    if tree is not None and error_count(tree) > src.errors:
        return False
    return not src.compiles or python_compiles(edited)


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def text_of(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def marker(language: str) -> str:
    return COMMENT.get(language, "//") + " ... existing code ..."


def window(lines: list[str], a: int, b: int, ctx: int) -> tuple[int, int]:
    """[lo, hi) around the edited stretch [a, b) with `ctx` context lines on each side, counted in
    lines that can anchor: blank lines and `}` / ` *` alone do not show where an edit starts or ends."""
    lo, hi = a, b
    for _ in range(ctx):
        lo = max(0, lo - 1)
        while lo > 0 and is_trivial(lines[lo]):
            lo -= 1
        hi = min(len(lines), hi + 1)
        while hi < len(lines) and is_trivial(lines[hi - 1]):
            hi += 1
    return lo, hi


def first_indent(elided: list[str]) -> str:
    """A careful marker's indentation: that of the first line of the code it stands for."""
    return indent_of(next((x for x in elided if x.strip()), ""))


@dataclass(frozen=True)
class Stretch:
    """Edited lines [a, b) of the edited file; a == b is a deletion point. `min_ctx`: context
    lines the snippet must show around it (a deletion or a bare insertion needs its neighbours)."""

    a: int
    b: int
    min_ctx: int = 0


def shown_rows(lines: list[str], stretches: list[Stretch], ctx: int) -> list[bool]:
    shown = [False] * len(lines)
    for s in stretches:
        lo, hi = window(lines, s.a, s.b, max(ctx, s.min_ctx))
        for i in range(lo, hi):
            shown[i] = True
    return shown


def render(lines: list[str], shown: list[bool], language: str, loose: bool, drop: str = "none",
           careful_at: frozenset[int] = frozenset(), mark: str | None = None,
           breaks: frozenset[int] = frozenset()) -> str:
    """The snippet: shown lines as they are, each run of hidden lines as one marker. Careful markers
    take the indentation of the first line they stand for; loose ones sit at column 0, except the
    runs starting in `careful_at` (a marker a pattern places on purpose). A hidden row in `breaks`
    starts a new marker even right after another one (a deeper marker, then an outer one). `drop`
    leaves out the leading or trailing marker (loose writers do); `mark` is the marker's text."""
    shown = list(shown)
    runs = _hidden_runs(shown, breaks)
    for lo, hi in runs:  # a marker standing only for blank lines: a writer shows them instead
        if not any(x.strip() for x in lines[lo:hi]):
            shown[lo:hi] = [True] * (hi - lo)
    out: list[str] = []
    mark = mark or marker(language)
    i = 0
    while i < len(lines):
        if shown[i]:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not shown[j] and j not in breaks:
            j += 1
        edge = "lead" if i == 0 else "trail" if j == len(lines) else ""
        if not (edge and edge == drop):
            pad = first_indent(lines[i:j]) if (not loose or i in careful_at) else ""
            out.append(pad + mark)
        i = j
    return "\n".join(out) + "\n"


def no_op(src: Source, lines: list[str], shown: list[bool]) -> bool:
    """Every shown run of the snippet occurs as it is in the original: the snippet reads as "no
    change" as well as the edit (a deletion between repeated lines, say), so it shows nothing."""
    whole = "\n" + "\n".join(src.lines) + "\n"
    runs, cur = [], []
    for line, on in zip(lines, shown):
        if on:
            cur.append(line)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return all("\n" + "\n".join(r) + "\n" in whole for r in runs)


def _hidden_runs(shown: list[bool], breaks: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    runs, i = [], 0
    while i < len(shown):
        if shown[i]:
            i += 1
            continue
        j = i + 1
        while j < len(shown) and not shown[j] and j not in breaks:
            j += 1
        runs.append((i, j))
        i = j
    return runs


def style(pick: Pick, lines: list[str], shown: list[bool], first_change: int, last_change: int,
          allow_zero_ctx: bool = True) -> tuple[bool, str]:
    """Draw careful or loose markers and, for loose ones, a dropped edge marker where the snippet
    still shows real code on that side of the edit (else the marker is kept)."""
    loose = pick.bool()
    drop = pick.choice(["none", "lead", "trail"]) if loose else "none"
    if drop == "lead":
        before = [x for i, x in enumerate(lines[:first_change]) if shown[i]]
        if not shown or shown[0] or not any(x.strip() for x in before):
            drop = "none"
    if drop == "trail":
        after = [x for i, x in enumerate(lines[last_change:], last_change) if shown[i]]
        if not shown or shown[-1] or not any(x.strip() for x in after):
            drop = "none"
    return loose, drop


def snippet(pick: Pick, src: Source, new_lines: list[str], stretches: list[Stretch], ctx: int,
            hide: list[tuple[int, int]] = (), tag: str = "", reads_as_no_change: bool = False) -> Edit | None:
    """Render the edited file as a snippet around `stretches` (context `ctx`, markers careful or
    loose), with the rows in `hide` elided on purpose (by a marker a careful writer places). A
    snippet that also reads as "no change" (`no_op`) is no case unless `reads_as_no_change`: the
    merge must then refuse it or answer the edit, never the original."""
    edited = text_of(new_lines) if src.text.endswith("\n") else "\n".join(new_lines)
    if edited == src.text or not keeps_syntax(src, edited):
        return None
    shown = shown_rows(new_lines, stretches, ctx)
    for lo, hi in hide:
        shown[lo:hi] = [False] * (hi - lo)
    if not any(shown) or (no_op(src, new_lines, shown) and not reads_as_no_change):
        return None
    first = min(s.a for s in stretches)
    last = max(s.b for s in stretches)
    loose, drop = style(pick, new_lines, shown, first, last)
    update = render(new_lines, shown, src.language, loose, drop, frozenset(lo for lo, _ in hide))
    variant = f"ctx{ctx} {'loose' if loose else 'careful'}" + (f" drop-{drop}" if drop != "none" else "")
    return Edit(src.language, src.text, edited, update, (variant + " " + tag).strip())
