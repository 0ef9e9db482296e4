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
from functools import lru_cache

# Words allowed inside a marker. Punctuation such as ',' or ':' means prose ("// ... however, ...").
_WORDS = r"[A-Za-z(\[][A-Za-z0-9 _\-'/()\[\]]{0,60}?"
# Without closing dots the wording must say it stands for code ("// ... implies" is prose).
_KEYWORDS = re.compile(
    r"\b(existing|rest|same|unchanged|remaining|other|others|previous|omitted|keep|kept|more|"
    r"code|before|above|below|imports|tests|methods|fields|functions|lines|etc)\b", re.I)

# Comment openers agents write markers in, in any file: the marker's comment token often is not the
# file's language's (Morph's own example puts `//` in Python; Osmosis asks for `//` in any code), so
# every syntax is read everywhere: `#`, `//`, `/* */`, JSX `{/* */}`, `<!-- -->`, `--` (SQL, Lua),
# `;` (INI, Lisp), `%` (LaTeX, Erlang), `REM` and `::` (batch), `'` (VB), `(* *)` (OCaml, Pascal).
_OPEN = r"(?:#+|//+|/\*+|\{\s*/\*+|<!--|--|;+|%+|(?i:rem)(?=\s)|::|'|\(\*)"
_CLOSE = r"(?:\*+/\s*\}?|-->|\*\))?"
_DOTS = r"(?:\.{3}|…)"

# `<open> ... [words] [...] <close>`
_DOTTED = re.compile(rf"^{_OPEN}\s*{_DOTS}\s*(?P<words>{_WORDS})?\s*(?P<close_dots>{_DOTS})?\s*{_CLOSE}$")
# `<open> words ... <close>` (e.g. "// rest of code ...")
_TRAILING_DOTS = re.compile(rf"^{_OPEN}\s*(?P<words>{_WORDS})\s*{_DOTS}\s*{_CLOSE}$")
# `<open> words <close>` without dots: only a wording that says code is left out (`ELISION_PHRASE`)
_NO_DOTS = re.compile(rf"^{_OPEN}\s*(?P<words>[^.…]{{1,70}}?)\s*{_CLOSE}$")

# What a marker's words say without dots, whole (`# rest of file unchanged`, `// existing code`,
# `# keep the rest`, `-- unchanged`): a wording that says the code is elided, never one that could be
# a heading or a remark (`// other tests`, `# more helpers` are comments). The wordings of Continue's,
# Cline's, aider's and Gemini CLI's omission detectors, narrowed to whole phrases.
_THING = (r"(?:code|codes|file|class|classes|module|function|functions|method|methods|implementation|body|"
          r"component|components|content|contents|logic|script|template|config|configuration|settings|tests?|"
          r"fields?|imports?|exports?|members?|properties|props|styles?|rules?|markup|sections?|lines?|"
          r"statements?|cases?|routes?|handlers?|definitions?|declarations?|options|keys|entries|items|"
          r"elements|children|jsx|html|css|queries|steps|targets|tasks|jobs|services|struct|impl|object|"
          r"dependencies|attributes|parameters|params|arguments|variables|constants|types|interfaces|"
          r"blocks?|markers?|things|stuff|source|program|document|page)")
_STATE = (r"(?:unchanged|the\s+same|as[\s-]is|as\s+before|as\s+it\s+was|as\s+they\s+were|omitted|elided|"
          r"not\s+shown|intact|untouched|here|below|above|goes\s+here|follows?)")
_BE = r"(?:is|are|remains?|stays?|left|kept)"
_ELISION = (
    rf"(?:the\s+)?rest(?:\s+of\s+(?:the\s+)?(?:\w+\s+)?{_THING})?(?:\s+{_BE})?(?:\s+{_STATE})?"
    rf"|(?:keep|keeps|keeping|kept|leave|leaving|preserve|preserving)\s+(?:the\s+|all\s+)?"
    rf"(?:rest|remainder|existing(?:\s+\w+)?|everything\s+else|original(?:\s+\w+)?)"
    rf"(?:\s+of\s+(?:the\s+)?{_THING})?(?:\s+{_STATE})?"
    rf"|(?:existing|previous|original)\s+(?:code|implementation|logic|content|contents|source)"
    rf"(?:\s+{_BE})?(?:\s+{_STATE})?"
    rf"|(?:unchanged|remaining|omitted)\s+(?:\w+\s+)?{_THING}(?:\s+{_BE})?(?:\s+{_STATE})?"
    rf"|(?:existing|previous|original|same)\s+(?:\w+\s+)?{_THING}\s+(?:{_BE}\s+)?{_STATE}"
    rf"|(?:all\s+)?(?:the\s+)?(?:other\s+|remaining\s+)?{_THING}\s+(?:{_BE}\s+)?"
    rf"(?:unchanged|the\s+same|as[\s-]is|as\s+before|omitted|elided|untouched)"
    r"|unchanged|no\s+changes?(?:\s+(?:below|above|here|to\s+the\s+rest))?|same\s+as\s+before|"
    r"omitted\s+for\s+brevity|(?:lines?\s+)?\d+\s*(?:-|–|to)\s*\d+\s+(?:unchanged|omitted|remain\s+unchanged)"
)
ELISION_PHRASE = re.compile(rf"^[(\[]?\s*(?:{_ELISION})\s*[)\]]?\s*[.:;]?$", re.I)
# Somewhere in a comment, a wording that says code was left out: what `reads_like_elision` looks for
# in lines that are not markers (`// TODO: rest of the implementation here`, `# keep existing logic`).
_ELISION_INSIDE = re.compile(
    rf"\b(?:(?:the\s+)?rest\s+of\s+(?:the\s+)?(?:\w+\s+)?{_THING}"
    rf"|(?:keep|keeping|leave|preserve)\s+(?:the\s+|all\s+)?(?:rest|remainder|existing|everything\s+else)"
    rf"|(?:existing|unchanged|previous|original|remaining|omitted)\s+(?:\w+\s+)?{_THING}\s+(?:{_BE}\s+)?{_STATE}"
    rf"|{_THING}\s+(?:{_BE}\s+)?(?:unchanged|the\s+same|as\s+before|omitted|elided)"
    r"|existing\s+code|omitted\s+for\s+brevity|same\s+as\s+before)\b"
    rf"|{_DOTS}\s*(?:existing|rest|unchanged|same|omitted|remaining|previous|original|keep)\b"
    rf"|\b(?:existing\s+code|unchanged|the\s+same|as\s+before)\s*{_DOTS}", re.I)
# Any comment line, whatever its syntax (a `'` opener needs a space after it: `'a'` is a string).
_COMMENT = re.compile(rf"^(?:#|//|/\*|\{{\s*/\*|<!--|--|;|%|(?i:rem)(?=\s|$)|::|'\s|\(\*)")

# A marker inside a line: `// ... existing ...` (closing dots required so that code after it on the
# line is not swallowed) or `/* ... */`.
INLINE_MARKER = re.compile(rf"//\s*{_DOTS}\s*(?:{_WORDS})?\s*{_DOTS}|/\*\s*{_DOTS}\s*(?:{_WORDS})?\s*{_DOTS}?\s*\*/")


@lru_cache(maxsize=1 << 16)  # asked of every line of the original by each reading's checks
def looks_like_marker(line: str) -> bool:
    """True when the whole line (ignoring indentation) has the shape of an elision marker: dots in
    any comment syntax (`# ...`, `REM ... existing code ...`, `// ... (unchanged) ...`), or a comment
    whose whole wording says the code is left out (`# rest of file unchanged`, `// existing code`)."""
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
    if m:
        return bool(_KEYWORDS.search(m.group("words")))
    m = _NO_DOTS.match(s)
    return bool(m and ELISION_PHRASE.match(m.group("words").strip()))


def is_comment_line(line: str) -> bool:
    """A line that is a comment in some language's syntax (not necessarily the file's)."""
    return bool(_COMMENT.match(line.strip()))


def reads_like_elision(line: str) -> bool:
    """A comment line that reads like a note that code was left out, marker or not: what must never be
    written into a file unless the original has it (`validate`'s marker_leak, the merge's intake)."""
    s = line.strip()
    return looks_like_marker(s) or (is_comment_line(s) and len(s) <= 200 and bool(_ELISION_INSIDE.search(s)))


def comment_opener(line: str) -> str | None:
    """The comment token a marker line is written with (`#`, `//`, `<!--`, `REM`, ...), or None."""
    m = re.match(rf"{_OPEN}", line.strip())
    return m.group(0) if m else None


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
