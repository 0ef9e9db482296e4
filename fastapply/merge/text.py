"""Line helpers shared by the merge modules: splitting, indentation, re-indenting, similarity."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from rapidfuzz import fuzz

from fastapply.merge.diff import line_pairs


def split_lines(text: str) -> tuple[list[str], str, bool]:
    """Lines without their endings, the newline style, and whether the text ends with a newline."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.replace("\r\n", "\n")
    ends = body.endswith("\n")
    if ends:
        body = body[:-1]
    return (body.split("\n") if body or ends else []), newline, ends


def join_lines(lines: list[str], newline: str, trailing: bool) -> str:
    return newline.join(lines) + (newline if trailing and lines else "")


def with_original_spacing(orig: list[str], lines: list[str]) -> list[str]:
    """`lines` (a merge's answer), each line that stands for an original line and differs from it
    only in trailing whitespace written as the original has it: the comparison key ignores
    trailing whitespace (`key`), so a snippet that dropped it (a Markdown hard break, a comment's
    tail) would otherwise take it out of unchanged lines. A line of whitespace only is given back
    where the code around it is unchanged (a wrap re-indents its blank lines with its code). Which
    answer line stands for which original line: a line diff by key (the common head and tail first)."""
    if not any(x != x.rstrip() for x in orig):
        return lines
    # answer line -> the original line it stands for
    pairs = {j: i for i, j in line_pairs([key(x) for x in orig], [key(x) for x in lines]).items()}
    out = list(lines)
    for j, i in pairs.items():
        if out[j] == orig[i]:
            continue
        if orig[i].strip() or _code_around_kept(orig, lines, pairs, j):
            out[j] = orig[i]
    return out


def _code_around_kept(orig: list[str], lines: list[str], pairs: dict[int, int], j: int) -> bool:
    """Neither code line next to answer line j (the nearest above and below) is an original line
    re-indented: where a wrap moved code a level, its blank lines move with it."""
    stripped = {x.strip() for x in orig}
    for step in (-1, 1):
        k = j + step
        while 0 <= k < len(lines) and not lines[k].strip():
            k += step
        if 0 <= k < len(lines) and k not in pairs and lines[k].strip() in stripped:
            return False
    return True


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def key(line: str) -> str:
    """Comparison key of a line: trailing whitespace never decides a match."""
    return line.rstrip()


def is_blank(line: str) -> bool:
    return not line.strip()


def reindent(lines: list[str], anchor_update: str, anchor_original: str) -> list[str] | None:
    """Shift lines so that `anchor_update` gets the indentation of `anchor_original`.

    Agents often paste a method at column 0 or re-indent a block; the shift is applied to every
    non-blank line, and to a line of whitespace only as far as it goes (it keeps its place in the
    block: `    ` inside a method pasted at column 0 comes back as the original's). None when lines
    cannot be shifted left that far (the block is not uniformly indented the same way)."""
    iu, io = indent_of(anchor_update), indent_of(anchor_original)
    if iu == io:
        return list(lines)
    if io.startswith(iu):  # shift right by the original's extra prefix
        extra = io[len(iu):]
        return [extra + ln if ln.strip() or (ln and ln.startswith(iu)) else ln for ln in lines]
    if iu.startswith(io):  # shift left
        cut = len(iu) - len(io)
        out = []
        for ln in lines:
            if not ln.strip():
                out.append(ln[cut:] if len(ln) >= cut and ln.startswith(iu[:cut]) else ln)
            elif ln[:cut].strip() == "" and len(ln) - len(ln.lstrip()) >= cut:
                out.append(ln[cut:])
            else:
                return None
        return out
    return None  # tabs vs spaces: do not guess


def dedent(lines: list[str]) -> tuple[list[str], str]:
    """Remove the common indentation of the non-blank lines; returns the lines and that prefix."""
    indents = [indent_of(ln) for ln in lines if ln.strip()]
    if not indents:
        return list(lines), ""
    common = indents[0]
    for ind in indents[1:]:
        while not ind.startswith(common):
            common = common[:-1]
    # a whitespace-only line keeps what it has beyond the common prefix (the file's blank lines are data)
    return [ln[len(common):] if ln.strip() or ln.startswith(common) else "" for ln in lines], common


def similar(a: str, b: str, threshold: float = 0.6) -> bool:
    """Two non-blank lines that look like versions of each other (an edited line)."""
    a, b = a.strip(), b.strip()
    if not a or not b:
        return False
    if a == b:
        return True
    # difflib's ratio counts the characters of matching blocks, a common subsequence, so it is at most
    # the longest common subsequence's ratio, which rapidfuzz computes in C: below the threshold
    # there, below it in difflib too (the same answer, without building a SequenceMatcher).
    if fuzz.ratio(a, b) < 100 * threshold - 1e-6:
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= threshold


TRIVIAL = frozenset({"}", "};", "},", ")", ");", "),", "]", "];", "],", "})", "});", "end", "{", "(", "[",
                     "else:", "} else {", "try:", "pass", "return", "return;", "break;", "continue;", "\"\"\"",
                     "'''", "*/", "/**", "*", "//", "#", "fi", "esac", "done", "default:", "return nil",
                     "return nil;", "return null;", "return this;", "return err", "return false", "return true",
                     "return None", "return result", "return self", "if err != nil {"})


# lines that only close a block: a region's edge may end with one it adds (the `}` of a new block)
CLOSERS = frozenset({"}", "};", "},", ")", ");", "]", "];", "})", "});", "end"})


def is_trivial(line: str) -> bool:
    """A line too common to anchor anything on its own."""
    s = line.strip()
    return not s or s in TRIVIAL or len(s) <= 2


# an import, package or module line (Python, JS/TS, Go, Rust, Java, C)
_IMPORT_LINE = re.compile(r"\s*(import[\s{(]|from\s+\S+\s+import\s|use\s|package\s|#include\b|extern\s+crate\s|"
                          r"(pub\s+)?mod\s+\w+;|(const|let|var)\s.*=\s*require\()")


def is_import_line(line: str) -> bool:
    return bool(_IMPORT_LINE.match(line))


# a trailing `# ...` / `// ...` comment with no quote after its start (so not inside a string)
_TRAILING_COMMENT = re.compile(r"\s+(?:#|//)[^\"'`]*$")


def code_of(line: str) -> str:
    """A line's code: its trailing comment cut and its spacing collapsed (`def f():  # beta` and
    `def f():` are one header)."""
    return " ".join(_TRAILING_COMMENT.sub("", line).split())


_KEY_SPLIT = re.compile(r"\s*(?::|=|\()")


def line_key(line: str) -> str:
    """What a line is about: the text before its first ':', '=' or '(' (`FEATURE_05: true` ->
    `FEATURE_05`, `export const VERSION = '1'` -> `export const VERSION`), else its first word."""
    s = line.strip()
    m = _KEY_SPLIT.search(s)
    if m and m.start() > 0:
        return " ".join(s[:m.start()].split())
    return s.split()[0] if s else ""


def same_subject(a: str, b: str) -> bool:
    """Two lines that are versions of one another: same key (not a trivial one) and similar text."""
    ka, kb = line_key(a), line_key(b)
    return bool(ka) and ka == kb and len(ka) >= 3 and not is_trivial(ka) and similar(a, b, 0.6)


def occurrences(lines: list[str], block: list[str]) -> int:
    """How often `block` occurs as consecutive lines of `lines` (2 means "more than once")."""
    if not block:
        return 2
    found = 0
    for i, line in enumerate(lines[:len(lines) - len(block) + 1]):
        if line == block[0] and lines[i:i + len(block)] == block:
            found += 1
            if found > 1:
                break
    return found
