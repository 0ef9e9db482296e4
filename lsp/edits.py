"""Minimal LSP text edits between two versions of a document (pure functions, no pygls).

`minimal_edits(old, new, encoding)` diffs the two texts line by line (difflib opcodes), then trims
the common prefix and suffix inside every changed block, so an edit covers only the characters
that really change: the editor keeps cursor, marks, folds and undo history everywhere else.

Positions follow the LSP rules: lines end at "\\n", "\\r\\n" or "\\r" (and nothing else, unlike
`str.splitlines`); columns count code units of the negotiated position encoding ("utf-16" is the
LSP default, "utf-8" and "utf-32" are the others).
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")

ENCODINGS = ("utf-8", "utf-16", "utf-32")


def normalize_encoding(encoding: str | None) -> str:
    enc = (encoding or "utf-16").lower().replace("_", "-")
    if enc not in ENCODINGS:
        raise ValueError(f"unknown position encoding {encoding!r}")
    return enc


def split_lines(text: str) -> list[str]:
    """Lines with their terminators ("\\n", "\\r\\n" or "\\r"); "" -> []."""
    return _LINE.findall(text)


def units(text: str, encoding: str = "utf-16") -> int:
    """Length of `text` in code units of `encoding`."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _cut_back(units_: int, text: str, encoding: str) -> int:
    """Code points of the longest prefix of `text` whose length is <= `units_` code units."""
    n = used = 0
    for ch in text:
        w = units(ch, encoding)
        if used + w > units_:
            break
        used += w
        n += 1
    return n


@dataclass(frozen=True)
class Position:
    line: int
    character: int


@dataclass(frozen=True)
class TextEdit:
    start: Position
    end: Position
    new_text: str

    def to_lsp(self) -> dict:
        return {"range": {"start": {"line": self.start.line, "character": self.start.character},
                          "end": {"line": self.end.line, "character": self.end.character}},
                "newText": self.new_text}


class _Index:
    """Offset (code points) -> LSP position for one text."""

    def __init__(self, text: str, encoding: str):
        self.text = text
        self.encoding = encoding
        self.lines = split_lines(text)
        self.starts = []
        pos = 0
        for line in self.lines:
            self.starts.append(pos)
            pos += len(line)

    def position(self, line_no: int, offset_in_line: int) -> Position:
        """`offset_in_line` code points into line `line_no` (which may be one past the last line)."""
        if line_no >= len(self.lines):
            # The end of the text: after a final terminator that is the start of a new empty line.
            if self.lines and not self.lines[-1].endswith(("\n", "\r")):
                last = self.lines[-1]
                return Position(len(self.lines) - 1, units(last, self.encoding))
            return Position(len(self.lines), 0)
        line = self.lines[line_no]
        body = line.rstrip("\r\n")
        if offset_in_line > len(body):  # inside the terminator: only its start is addressable
            offset_in_line = len(body) if offset_in_line < len(line) else len(line)
            if offset_in_line == len(line):
                return Position(line_no + 1, 0)
        return Position(line_no, units(body[:offset_in_line], self.encoding))

    def locate(self, offset: int) -> Position:
        """Absolute code-point offset -> position."""
        i = bisect.bisect_right(self.starts, offset) - 1
        if i < 0:
            return Position(0, 0)
        if i < len(self.lines) and offset >= self.starts[i] + len(self.lines[i]):
            return self.position(i + 1, 0)
        return self.position(i, offset - self.starts[i])


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    n = min(len(a), len(b)) - limit
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _safe_prefix(old: str, new: str, p: int) -> int:
    # Never split a "\r\n" pair: a position between "\r" and "\n" does not exist in LSP.
    while p > 0 and ((old[p - 1] == "\r" and p < len(old) and old[p] == "\n")
                     or (new[p - 1] == "\r" and p < len(new) and new[p] == "\n")):
        p -= 1
    return p


def _safe_suffix(old: str, new: str, p: int, s: int) -> int:
    while s > 0:
        oi, ni = len(old) - s, len(new) - s
        if (old[oi] == "\n" and oi > 0 and old[oi - 1] == "\r") or (new[ni] == "\n" and ni > 0 and new[ni - 1] == "\r"):
            s -= 1
        else:
            break
    return s


def minimal_edits(old: str, new: str, encoding: str = "utf-16") -> list[TextEdit]:
    """Non-overlapping TextEdits, in document order, that turn `old` into `new`.

    All ranges refer to `old` (as LSP requires for the edits of one TextDocumentEdit).
    """
    encoding = normalize_encoding(encoding)
    if old == new:
        return []
    idx = _Index(old, encoding)
    a, b = idx.lines, split_lines(new)
    edits: list[TextEdit] = []
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        o, n = "".join(a[i1:i2]), "".join(b[j1:j2])
        p = _safe_prefix(o, n, _common_prefix(o, n))
        s = _safe_suffix(o, n, p, _common_suffix(o, n, p))
        if p == len(o) and p == len(n):
            continue
        base = idx.starts[i1] if i1 < len(a) else len(old)
        start = idx.locate(base + p)
        end = idx.locate(base + len(o) - s)
        edits.append(TextEdit(start, end, n[p:len(n) - s]))
    return edits


def changed_lines(old: str, new: str) -> tuple[int, int]:
    """(lines removed, lines added) by a line diff of the two texts."""
    a, b = split_lines(old), split_lines(new)
    removed = added = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return removed, added


def unified_diff(old: str, new: str, path: str = "file", context: int = 3) -> str:
    a, b = split_lines(old), split_lines(new)
    out = []
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context):
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def offset_at(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """LSP position -> code-point offset in `text` (a client's view; used by tests and evals)."""
    encoding = normalize_encoding(encoding)
    lines = split_lines(text)
    if line >= len(lines):
        return len(text)
    start = sum(len(x) for x in lines[:line])
    body = lines[line].rstrip("\r\n")
    return start + min(_cut_back(character, body, encoding), len(body))


def apply_edits(text: str, edits: list[TextEdit] | list[dict], encoding: str = "utf-16") -> str:
    """Apply non-overlapping edits whose ranges refer to `text` (what a client does)."""
    spans = []
    for e in edits:
        if isinstance(e, dict):
            r = e["range"]
            s = offset_at(text, r["start"]["line"], r["start"]["character"], encoding)
            t = offset_at(text, r["end"]["line"], r["end"]["character"], encoding)
            spans.append((s, t, e["newText"]))
        else:
            spans.append((offset_at(text, e.start.line, e.start.character, encoding),
                          offset_at(text, e.end.line, e.end.character, encoding), e.new_text))
    spans.sort(key=lambda x: (x[0], x[1]))
    out, pos = [], 0
    for s, t, new_text in spans:
        if s < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:s])
        out.append(new_text)
        pos = t
    out.append(text[pos:])
    return "".join(out)
