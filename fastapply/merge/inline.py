"""Fill markers that stand inside a line (`port: // ... existing ...,`) from the original line.

Each marker's text is what the original has between the end of the piece before the marker and
the start of the piece after it. Matching ignores whitespace, so column-aligned tables still match.
"""

from __future__ import annotations

from fastapply.markers import split_inline


def _squash(text: str) -> tuple[str, list[int]]:
    """Text without whitespace, and for each kept char its index in text."""
    chars, pos = [], []
    for i, ch in enumerate(text):
        if not ch.isspace():
            chars.append(ch)
            pos.append(i)
    return "".join(chars), pos


def _fill_against(pieces: list[str], orig: str) -> tuple[int, str] | None:
    """(score, filled line) of pieces against one original line, or None when a marker has no
    anchor on either side."""
    sq, pos = _squash(orig)
    sq_pieces = [_squash(p)[0] for p in pieces]
    cursor = 0
    score = 0
    fillers: list[str] = []
    for i in range(len(pieces) - 1):
        left, right = sq_pieces[i], sq_pieces[i + 1]
        # longest suffix of the left piece found at/after the cursor
        start = None
        for n in range(len(left), 0, -1):
            j = sq.find(left[-n:], cursor)
            if j >= 0:
                start, score = j + n, score + n
                break
        if start is None:
            if left:
                return None
            start = cursor
        # longest prefix of the right piece after that
        end = None
        for n in range(len(right), 0, -1):
            j = sq.find(right[:n], start)
            if j >= 0:
                end, score = j, score + n
                break
        if end is None:
            if right:
                return None
            end = len(sq)
        if end <= start:
            return None
        a = pos[start] if start < len(pos) else len(orig)
        b = pos[end - 1] + 1
        fillers.append(orig[a:b])
        cursor = end
    out = pieces[0]
    for f, p in zip(fillers, pieces[1:]):
        out += f + p
    if _squash(out)[0] == sq:  # only the elided parts came from the original: keep its spacing
        out = orig
    return score, out


def fill_inline_markers(update_lines: list[str], original_lines: list[str]) -> tuple[list[str], list[str]]:
    """Return the update lines with inline markers filled, and reasons for lines that could not be."""
    original_set = set(original_lines)
    out, problems = [], []
    for n, line in enumerate(update_lines):
        pieces = None if line in original_set else split_inline(line)
        if not pieces:
            out.append(line)
            continue
        scored = []
        for orig in original_lines:
            r = _fill_against(pieces, orig)
            if r is not None:
                scored.append(r)
        scored.sort(key=lambda r: -r[0])
        if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0] and scored[0][1] != scored[1][1]):
            problems.append(f"update line {n + 1}: cannot tell which original line its inline marker elides")
            out.append(line)
            continue
        out.append(scored[0][1])
    return out, problems
