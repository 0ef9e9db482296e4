"""Recognise the "unchanged code elided here" markers agents write in lazy edit snippets.

Styles seen in practice: `# ... existing code ...`, `// ... rest of code ...`, `// ... same ...`,
`{/* ... existing code ... */}`, `<!-- ... existing sections ... -->`, `/* ... */`, `# ...`,
`// ...`, `-- ...`, and markers inside a line (`port: // ... existing ...,`).

A marker-shaped line is only a pattern match; real comments such as `// ... however, ...` are
rejected by the wording rules, and a marker-shaped line that occurs verbatim in the original next
to the same neighbours is content (`is_marker_line` with `original`).
"""

from __future__ import annotations

import re

# Words allowed inside a marker. Punctuation such as ',' or ':' means prose ("// ... however, ...").
_WORDS = r"[A-Za-z][A-Za-z0-9 _\-'/()]{0,60}?"
# Without closing dots the wording must say it stands for code ("// ... implies" is prose).
_KEYWORDS = re.compile(
    r"\b(existing|rest|same|unchanged|remaining|other|others|previous|omitted|keep|kept|more|"
    r"code|before|above|below|imports|tests|methods|fields|functions|lines|etc)\b", re.I)

_OPEN = r"(?:#+|//+|/\*+|\{\s*/\*+|<!--|--|;+)"
_CLOSE = r"(?:\*+/\s*\}?|-->)?"
_DOTS = r"(?:\.{3}|…)"

# `<open> ... [words] [...] <close>`
_DOTTED = re.compile(rf"^{_OPEN}\s*{_DOTS}\s*(?P<words>{_WORDS})?\s*(?P<close_dots>{_DOTS})?\s*{_CLOSE}$")
# `<open> words ... <close>` (e.g. "// rest of code ...")
_TRAILING_DOTS = re.compile(rf"^{_OPEN}\s*(?P<words>{_WORDS})\s*{_DOTS}\s*{_CLOSE}$")

# A marker inside a line: `// ... existing ...` (closing dots required so that code after it on the
# line is not swallowed) or `/* ... */`.
INLINE_MARKER = re.compile(rf"//\s*{_DOTS}\s*(?:{_WORDS})?\s*{_DOTS}|/\*\s*{_DOTS}\s*(?:{_WORDS})?\s*{_DOTS}?\s*\*/")


def looks_like_marker(line: str) -> bool:
    """True when the whole line (ignoring indentation) has the shape of an elision marker."""
    s = line.strip()
    if not s or len(s) > 90:
        return False
    m = _DOTTED.match(s)
    if m:
        words = (m.group("words") or "").strip()
        if not words or m.group("close_dots") or _KEYWORDS.search(words):
            return True
        return False
    m = _TRAILING_DOTS.match(s)
    return bool(m and _KEYWORDS.search(m.group("words")))


def _neighbour(lines: list[str], i: int, step: int, skip) -> str | None:
    j = i + step
    while 0 <= j < len(lines):
        if lines[j].strip() and not skip(j):
            return lines[j].strip()
        j += step
    return None


def marker_flags(update_lines: list[str], original_lines: list[str] | None = None) -> list[bool]:
    """For each update line, whether it is a whole-line marker.

    A marker-shaped line that occurs verbatim in the original is content when one of its non-blank
    neighbours in the update is also its neighbour at such an occurrence (it is quoted context, as in
    a file that really contains `# ...`). Otherwise it is a marker.
    """
    shaped = [looks_like_marker(line) for line in update_lines]
    if original_lines is None or not any(shaped):
        return shaped
    positions: dict[str, list[int]] = {}
    for k, line in enumerate(original_lines):
        if looks_like_marker(line):
            positions.setdefault(line.strip(), []).append(k)
    flags = list(shaped)
    for i, is_shaped in enumerate(shaped):
        if not is_shaped:
            continue
        occ = positions.get(update_lines[i].strip())
        if not occ:
            continue
        prev_u = _neighbour(update_lines, i, -1, lambda j: shaped[j])
        next_u = _neighbour(update_lines, i, 1, lambda j: shaped[j])
        for k in occ:
            prev_o = _neighbour(original_lines, k, -1, lambda j: False)
            next_o = _neighbour(original_lines, k, 1, lambda j: False)
            if (prev_u is not None and prev_u == prev_o) or (next_u is not None and next_u == next_o):
                flags[i] = False
                break
    return flags


def comment_read_as_marker(update_lines: list[str], original_lines: list[str], flags: list[bool]) -> str | None:
    """A line read as a marker that has a comment's shape (`# Other request exceptions...`: words,
    then dots) and stands verbatim in the original: the original's comment, copied with new code,
    or a marker? (Not its neighbours there, or `marker_flags` would call it content.) The snippet
    does not say; a `# ... existing code ...` with leading dots is a marker however it is quoted.
    `flags`: marker_flags(update_lines, original_lines)."""
    have = {x.strip() for x in original_lines}
    for line, is_marker in zip(update_lines, flags):
        s = line.strip()
        if is_marker and s in have and not _DOTTED.match(s):
            return (f"`{s[:60]}` reads as a marker, but the original has that very line as a comment: "
                    "the comment, or a marker?")
    return None


def split_inline(line: str) -> list[str] | None:
    """Pieces of a line around inline markers (`a: // ... existing ..., b: 2` -> ['a: ', ', b: 2']),
    or None when the line has none. Whole-line markers are not inline markers."""
    if looks_like_marker(line):
        return None
    pieces = INLINE_MARKER.split(line)
    return pieces if len(pieces) > 1 else None


def has_markers(update: str, original: str | None = None) -> bool:
    lines = update.splitlines()
    flags = marker_flags(lines, original.splitlines() if original is not None else None)
    return any(flags) or any(split_inline(line) for line in lines)
