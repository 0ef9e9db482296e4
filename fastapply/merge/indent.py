"""Re-base a snippet's indentation to the file's: tabs written as spaces, 2 spaces for 4, and back.

Agents re-indent what they send (a model reads tabs as spaces and writes spaces; it writes 2-space
code for a 4-space file). The merge compares lines with their indentation, so such a snippet
matches nothing, or keeps its own indentation in the file. Here it is re-based before any rule
reads it, level by level: a line `n` snippet levels deep is `n + k` file levels deep, in the file's
character and width (`Conversion`).

- The file's own lines decide the conversion: each snippet line whose text stands in the original at
  one indentation only is evidence of where the snippet's levels fall in the file. The snippet's
  level width and the offset `k` are the ones most of the evidence agrees on (`AGREEMENT`); a line
  the edit moved to another depth (a wrap) is a vote against, and is re-based like any other line.
- A snippet in the file's character is re-based only when the evidence says its levels are another
  width; one merely shifted (a method shown from column 0) is the merge's business, as ever.
- What cannot be re-based for sure is refused with the line named: a tab file's snippet in spaces
  whose evidence disagrees, a new line between two levels, a new line more than one level deeper
  than the line before it that opens nothing (alignment, not indentation).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fastapply.merge.text import indent_of, is_trivial

# Widths one level of space indentation may have; anything else is alignment.
UNITS = (2, 3, 4, 8)
# The share of a text's space indentations one level width must divide (the rest: alignment).
COVERAGE = 0.9
# The share of the evidence a conversion must explain (a line the edit moves is evidence against it).
AGREEMENT = 0.75
# A line ending in one of these opens what the next lines hang from (a hanging indent may be deep).
_OPENERS = ("{", "(", "[", ":", "=>", "->", "=", "do", "then")


@dataclass(frozen=True)
class Style:
    char: str  # "\t" or " "
    unit: int | None  # spaces per level (None: not known); 1 for tabs

    def describe(self) -> str:
        if self.char == "\t":
            return "tabs"
        return f"{self.unit} spaces" if self.unit else "spaces"


def style_of(lines: list[str], least: int = 1) -> Style | None:
    """The indentation style of `lines`, or None when fewer than `least` lines are indented or tabs
    and spaces are both common (a mixed file keeps each line's own; nothing is re-based against it)."""
    tabs = sum(1 for ln in lines if ln.startswith("\t") and ln.strip())
    spaces = sum(1 for ln in lines if ln.startswith(" ") and ln.strip() and not ln.lstrip(" ").startswith("*"))
    if not tabs and not spaces:
        return None
    if tabs and spaces and min(tabs, spaces) > max(tabs, spaces) / 4:
        return None
    if tabs > spaces:
        return Style("\t", 1) if tabs >= least else None
    return Style(" ", _space_unit(lines)) if tabs + spaces >= least else None


def _space_unit(lines: list[str]) -> int | None:
    """The width of one level: the smallest common step from one space-indented line to a deeper one
    after it that nearly every indentation is a whole multiple of (`COVERAGE`: a few aligned lines
    do not count). Google's Java style steps by 2 into blocks and by 4 into continuation lines, often
    more of the latter: 2; a CSS file at 4 with a few lines aligned by 3: 4."""
    steps: Counter = Counter()
    widths = []
    prev = None
    for ln in lines:
        if not ln.strip() or ln.startswith("\t") or ln.lstrip().startswith("*"):
            continue  # (a ` * ` line of a block comment is aligned to its opener, one space in)
        w = len(ln) - len(ln.lstrip(" "))
        widths.append(w)
        if prev is not None and w > prev and w - prev in UNITS:
            steps[w - prev] += 1
        prev = w
    if not steps:
        return None
    most = steps.most_common(1)[0][1]

    def covers(u: int) -> bool:
        return sum(1 for w in widths if w % u == 0) >= COVERAGE * len(widths)

    common = [w for w, n in steps.items() if n >= max(2, most // 5) and covers(w)]
    if common:
        return min(common)
    return min(w for w, n in steps.items() if n == most)


def _width(indent: str) -> int:
    """Characters of indentation: tabs and spaces count one each (a style has one of them)."""
    return len(indent)


@dataclass(frozen=True)
class Conversion:
    """Snippet level width `unit` (in its own characters), offset `k` file levels, agreement."""

    unit: int
    k: int
    share: float
    agreeing: int  # distinct snippet widths among the evidence it explains


@dataclass(frozen=True)
class Rebased:
    lines: list[str] | None  # None: refused
    note: str = ""  # what was done, or why it was refused


def rebase(lines: list[str], orig_lines: list[str], skip: list[bool]) -> Rebased | None:
    """The snippet's lines in the file's indentation, or None when nothing says its style differs
    from the file's. `skip`: lines that are not code (markers are re-based, but are no evidence)."""
    # (a file says its style by a few indented lines: the two of a broken three-line file say little)
    file_style, snip_style = style_of(orig_lines, 3), style_of([x for x, s in zip(lines, skip) if not s])
    if file_style is None or snip_style is None or file_style.unit is None:
        return None
    evidence = _evidence(lines, orig_lines, skip, snip_style.char, file_style)
    if file_style.char == snip_style.char:
        code = [x for x, m in zip(lines, skip) if not m]
        conv = _scaled(evidence, file_style.unit, snip_style.unit, code)
        shift = _shifted(evidence, file_style.unit)
        if conv is None and shift is not None:
            done = _convert(lines, orig_lines, skip, shift, file_style, Style(file_style.char, file_style.unit),
                            f"the snippet is shifted {shift.k} level(s) left of the file")
            if done.lines is not None:
                return done
        if conv is None or conv is UNCLEAR:
            if conv is UNCLEAR or snip_style.unit and snip_style.unit != file_style.unit and \
                    (_plainly(code, snip_style.unit, file_style.unit) or not any(w for w, _, _ in evidence)):
                return Rebased(None, f"the snippet is indented with {snip_style.describe()}, the file with "
                                     f"{file_style.describe()}, and the lines it shows from the file do not say "
                                     "where its levels fall in the file: send the snippet indented as the file is")
            return None
        snip_style = Style(snip_style.char, conv.unit)
    else:
        units = (1,) if snip_style.char == "\t" else UNITS
        conv = _best(evidence, units, snip_style.unit)
        if conv is not None and snip_style.char == " ":
            snip_style = Style(" ", conv.unit)
        if not any(w for w, _, _ in evidence):  # nothing indented shows where the levels fall
            if any(ln.startswith(snip_style.char) and ln.strip() for ln in orig_lines):
                return None  # the file has lines indented so: the snippet's may be right (a raw string)
            unit = units[0] if len(units) == 1 else snip_style.unit
            conv = Conversion(unit, 0, 1.0, 0) if unit else None
    said = f"the snippet is indented with {snip_style.describe()}, the file with {file_style.describe()}"
    if conv is None or (conv.share < AGREEMENT and file_style.char != snip_style.char):
        return Rebased(None, said + ", and the lines it shows from the file do not say where its levels fall in "
                                    "the file: send the snippet indented as the file is")
    return _convert(lines, orig_lines, skip, conv, file_style, snip_style, said)


def _evidence(lines: list[str], orig_lines: list[str], skip: list[bool], char: str,
              file: Style) -> list[tuple[int, int, str]]:
    """(snippet width, file level, file indentation) of each snippet line whose text stands in the
    original at one indentation only, a whole number of levels deep there."""
    at: dict[str, set[str]] = {}
    for ln in orig_lines:
        s = ln.strip()
        if s:
            at.setdefault(s, set()).add(indent_of(ln))
    out = []
    for ln, s in zip(lines, skip):
        if not ln.strip() or s:
            continue
        found = at.get(ln.strip())
        ind = indent_of(ln)
        if not found or len(found) != 1 or ind.strip(char) or is_trivial(ln):
            continue
        target = next(iter(found))
        level, rest = divmod(_width(target), file.unit or 1)
        if not rest and not target.strip(file.char):
            out.append((_width(ind), level, target))
    return out


def _fit(evidence: list[tuple[int, int, str]], unit: int) -> Conversion | None:
    """The offset most evidence agrees on for a snippet level width `unit`."""
    votes: Counter = Counter()
    for w, level, _ in evidence:
        if w % unit == 0:
            votes[level - w // unit] += 1
    if not votes:
        return None
    k, n = votes.most_common(1)[0]
    widths = {w for w, level, _ in evidence if w % unit == 0 and level - w // unit == k}
    return Conversion(unit, k, n / len(evidence), len(widths))


def _best(evidence: list[tuple[int, int, str]], units: tuple[int, ...], prefer: int | None) -> Conversion | None:
    """The level width among `units` that explains the most evidence (then over the most widths;
    then `prefer`, the snippet's own steps)."""
    fits = [c for c in (_fit(evidence, u) for u in units) if c is not None]
    return max(fits, key=lambda c: (c.share, c.agreeing, c.unit == prefer), default=None)


def _scaled(evidence: list[tuple[int, int, str]], file_unit: int, steps: int | None,
            code: list[str]) -> Conversion | None:
    """Same character, another level width: the one that explains the evidence best, when it does so
    better than the file's own width, and either for most of the evidence over two snippet widths
    at least, or with the snippet stepping `plainly` by it. Never where the snippet's own steps
    (`steps`) are the file's width (a wrap moves lines a level: evidence against, not a scaling); a
    shifted snippet is no scaling."""
    if steps == file_unit:
        return None
    same = _fit(evidence, file_unit)
    best = _best(evidence, tuple(u for u in UNITS if u != file_unit), steps)
    if best is None:  # new code only: its own steps are all there is
        return Conversion(steps, 0, 1.0, 0) if steps and same is None and _plainly(code, steps, file_unit) else None
    if same is None:  # the file's width explains none of it: the other width, if it explains most
        return best if best.share >= AGREEMENT else None
    if same.share > best.share:
        return None
    if same.share == best.share:
        # the evidence fits both widths, and the snippet's own steps are the other one: not clear
        return UNCLEAR if best.unit == steps else None
    strong = best.share >= AGREEMENT and best.agreeing >= 2
    return best if strong or (best.unit == steps and _plainly(code, steps, file_unit)) else None


# `_scaled`'s answer where the snippet's width may be the file's or another: the request is refused.
UNCLEAR = Conversion(0, 0, 0.0, 0)


def _shifted(evidence: list[tuple[int, int, str]], file_unit: int) -> Conversion | None:
    """The snippet in the file's own style, shallower than the file by whole levels (a method shown
    from column 0): the shift most evidence agrees on, over two widths at least."""
    same = _fit(evidence, file_unit)
    # (shifted right is how a wrap shows the code it wraps: the merge reads that, not a shift)
    if same is None or same.k <= 0 or same.share < AGREEMENT or same.agreeing < 2:
        return None
    return same


def _plainly(code: list[str], unit: int, file_unit: int) -> bool:
    """The snippet steps in by `unit` again and again, and never by the file's own width (a 2-space
    file's snippet indented by 4 throughout; Google's Java style steps by 2 into blocks and by 4
    into continuation lines, so a real snippet of it takes both)."""
    steps: Counter = Counter()
    prev = None
    for ln in code:
        if not ln.strip():
            continue
        w = len(ln) - len(ln.lstrip(" "))
        if prev is not None and w > prev:
            steps[w - prev] += 1
        prev = w
    return steps[unit] >= 2 and not steps[file_unit]


def _levels(ind: str, char: str, unit: int) -> tuple[int, int]:
    """Whole levels of an indentation in its style, and the characters left over (alignment: the
    space before a ` * ` comment line, spaces after tabs)."""
    if char == "\t":
        tabs = len(ind) - len(ind.lstrip("\t"))
        return tabs, len(ind) - tabs
    return divmod(len(ind), unit)


def _convert(lines: list[str], orig_lines: list[str], skip: list[bool], conv: Conversion, file: Style,
             snip: Style, said: str) -> Rebased:
    known = {ln.strip(): indent_of(ln) for ln in orig_lines if ln.strip()}
    unique = {s for s in known if sum(1 for ln in orig_lines if ln.strip() == s) == 1}
    out: list[str] = []
    prev: tuple[int, str] | None = None  # depth and text of the last code line
    for i, line in enumerate(lines):
        if not line.strip():  # whitespace only: as deep as it says, where that is a whole level
            level, rest = _levels(line, snip.char, conv.unit) if not line.strip(snip.char) else (0, 1)
            out.append("" if rest or not line or level + conv.k < 0 else
                       file.char * ((level + conv.k) * (file.unit or 1)))
            continue
        ind = indent_of(line)
        level, rest = _levels(ind, snip.char, conv.unit)
        depth = level + conv.k
        lenient = skip[i] or line.lstrip().startswith("*")
        if line.strip() in unique and not skip[i] and not is_trivial(line) and (rest or depth < 0):
            target = known[line.strip()]  # an aligned line the file has: its own indentation
        elif depth < 0 or (rest and not lenient):
            return Rebased(None, f"{said}, and the depth of snippet line {i + 1} (`{line.strip()[:50]}`) in the file "
                                 "is not clear: send the snippet indented as the file is")
        else:
            target = file.char * (depth * (file.unit or 1)) + " " * rest
        if prev is not None and not skip[i] and depth > prev[0] + 1 and line.strip() not in unique and \
                not prev[1].endswith(_OPENERS):
            return Rebased(None, f"{said}, and snippet line {i + 1} (`{line.strip()[:50]}`) is more than one level "
                                 "deeper than the line before it (alignment or indentation?): send the snippet "
                                 "indented as the file is")
        if not skip[i]:
            prev = (depth, line.rstrip())
        out.append(target + line[len(ind):])
    return Rebased(out, f"{said}: re-based it to the file's")
