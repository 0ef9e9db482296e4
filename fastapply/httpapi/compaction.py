"""Morph's large-file protocol ("anchor compaction"), the server's side (pure functions).

From `anchorCompactionThreshold` characters (default 128 KiB), `@morphllm/morphsdk` (0.2.196,
`tools/fastapply/anchors.ts`) sends the header `X-Morph-Apply-Context: extralong` and, as the
`<code>` block, the original file as a table of fragments plus a skeleton:

    ⟪MORPH_DEFINITIONS_BEGIN_N⟫
    ⟪MN:0:line⟫="the exact text of one line, as a JSON string"
    ⟪MN:1:line⟫="..."
    ⟪MORPH_DEFINITIONS_END_N⟫
    ⟪MORPH_CODE_BEGIN_N⟫
    the file, each anchored fragment replaced by its placeholder ⟪MN:ID:KIND⟫

N is the smallest number whose prefix `⟪MN:` occurs in none of the file, the snippet and the
instruction. A fragment is a line of 24 characters or more (KIND `line`, line breaks stay in the
skeleton) or, for an HTML page, a tag or a text run (KIND the tag's name, or `text`); equal
fragments share one id, ids run 0, 1, 2, ... in order. The instruction gets a paragraph
"LARGE-FILE ANCHOR PROTOCOL: ..." (which mentions `<code>`). The SDK expands the answer: it keeps
what follows the last `⟪MORPH_CODE_BEGIN_N⟫` (all of it when there is none), replaces each
placeholder of its table by its fragment, and fails when any `⟪MN:` is left.

Here the original is rebuilt exactly, the protocol paragraph is dropped from the instruction, the
core API merges the real file, and the answer is the merged file itself: the SDK's expansion leaves
it as it is when it holds neither `⟪MN:` nor `⟪MORPH_CODE_BEGIN_N⟫` (`check_answer`; a file that
holds either is refused rather than handed over to be cut). Refused as bad input (400, with the
reason): a placeholder that does not resolve, a malformed table, and a table that contradicts the
skeleton (a definition the skeleton never uses, a KIND that does not fit its fragment, a `line`
placeholder that does not stand alone on its line, a rebuilt file that holds its own namespace).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from fastapply.api import ApplyError

HEADER = "x-morph-apply-context"
HEADER_VALUE = "extralong"
PROTOCOL_PARAGRAPH = "\n\nLARGE-FILE ANCHOR PROTOCOL:"  # the start of the SDK's instruction suffix
_TABLE_START = re.compile(r"⟪MORPH_DEFINITIONS_BEGIN_(\d+)⟫\n")
_HTML_LABEL = re.compile(r"^<\s*(!doctype|/?[a-zA-Z][\w:-]*)")


@dataclass(frozen=True)
class Compacted:
    """A rebuilt request: the real original, the instruction without the protocol paragraph, and
    the namespace N the answer must leave alone."""

    original: str
    instruction: str
    namespace: int
    placeholders: int  # anchored fragments in the skeleton (for the answer's findings)


def requested(headers: Mapping[str, str], instruction: str | None, code: str) -> bool:
    """Whether the message uses the protocol: the SDK's header, or (a proxy that drops headers) a
    `<code>` block that opens with the table and an instruction that carries the protocol paragraph."""
    if headers.get(HEADER, "").strip().lower() == HEADER_VALUE:
        return True
    return _TABLE_START.match(code) is not None and PROTOCOL_PARAGRAPH in (instruction or "")


def expand_request(instruction: str | None, code: str) -> Compacted:
    """The real original and instruction from a compacted message; ApplyError(invalid_argument)
    with the reason when the table and the skeleton do not rebuild one file exactly."""
    start = _TABLE_START.match(code)
    if start is None:
        raise _bad(f"{HEADER}: {HEADER_VALUE} says the <code> block is anchor-compacted, but it does not "
                   "start with the table's ⟪MORPH_DEFINITIONS_BEGIN_N⟫ line")
    n = int(start.group(1))
    end_line, code_line = f"⟪MORPH_DEFINITIONS_END_{n}⟫", f"⟪MORPH_CODE_BEGIN_{n}⟫"
    lines = code[start.end():].split("\n")  # JSON strings hold no raw line break: one definition a line
    if end_line not in lines:
        raise _bad(f"the anchor table is not closed: no {end_line} line")
    table_len = lines.index(end_line)
    if table_len + 1 >= len(lines) or lines[table_len + 1] != code_line:
        raise _bad(f"the anchor table's {end_line} line is not followed by {code_line}")
    markers, values = _table(lines[:table_len], n)
    skeleton = "\n".join(lines[table_len + 2:])
    original, used = _rebuild(skeleton, n, markers, values)
    unused = [markers[i] for i in range(len(markers)) if i not in used]
    if unused:
        raise _bad(f"the anchor table contradicts the skeleton: {len(unused)} definition(s) never used, "
                   f"first {unused[0]}")
    if f"⟪M{n}:" in original:
        raise _bad(f"the anchor table contradicts the skeleton: the rebuilt file holds ⟪M{n}:, the namespace "
                   f"its placeholders use")
    cut = (instruction or "").rfind(PROTOCOL_PARAGRAPH)
    real_instruction = (instruction or "")[:cut] if cut >= 0 else (instruction or "")
    return Compacted(original, real_instruction, n, sum(used.values()))


def check_answer(merged: str, namespace: int) -> None:
    """Refuse (422) a merged file that the SDK's expansion would change: one holding a placeholder
    prefix or the code delimiter of this namespace."""
    for token in (f"⟪M{namespace}:", f"⟪MORPH_CODE_BEGIN_{namespace}⟫"):
        if token in merged:
            raise ApplyError("refused", f"the merged file holds {token}, which Morph's SDK would expand or cut "
                                        "(anchor compaction); send it with anchorCompaction: false")


def _table(lines: list[str], n: int) -> tuple[list[str], list[str]]:
    """The table's placeholders and fragments, ids 0, 1, 2, ... in order."""
    if not lines:
        raise _bad("the anchor table is empty: a compacted file has at least one placeholder")
    definition = re.compile(rf"(⟪M{n}:(\d+):([^⟫]+)⟫)=(.*)")
    markers, values = [], []
    for i, line in enumerate(lines):
        m = definition.fullmatch(line)
        if m is None:
            raise _bad(f"anchor table line {i + 1} is not `⟪M{n}:ID:KIND⟫=\"JSON string\"`: {line[:80]!r}")
        marker, ident, kind, raw = m.groups()
        if int(ident) != i:
            raise _bad(f"anchor table line {i + 1} defines id {ident}; ids run 0, 1, 2, ... in order")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as e:
            raise _bad(f"anchor table line {i + 1} ({marker}): the fragment is not a JSON string: {e.msg}") from None
        if not isinstance(value, str):
            raise _bad(f"anchor table line {i + 1} ({marker}): the fragment is not a JSON string")
        if kind == "line" and ("\n" in value or "\r" in value):
            raise _bad(f"the anchor table contradicts itself: {marker} is a line but its fragment holds a line break")
        if kind != "line" and kind != _html_label(value):
            raise _bad(f"the anchor table contradicts itself: {marker} says {kind!r} but its fragment is "
                       f"{_html_label(value)!r}: {value[:60]!r}")
        markers.append(marker)
        values.append(value)
    return markers, values


def _rebuild(skeleton: str, n: int, markers: list[str], values: list[str]) -> tuple[str, dict[int, int]]:
    """The skeleton with each placeholder replaced by its fragment; every `⟪MN:` must be one."""
    used: dict[int, int] = {}
    pieces, last = [], 0
    for m in re.finditer(rf"⟪M{n}:(\d+):([^⟫]+)⟫", skeleton):
        ident = int(m.group(1))
        if ident >= len(markers):
            raise _bad(f"placeholder {m.group(0)} does not resolve: the anchor table defines ids 0 to {len(markers) - 1}")
        if m.group(0) != markers[ident]:
            raise _bad(f"placeholder {m.group(0)} does not resolve: the anchor table defines {markers[ident]}")
        if m.group(2) == "line" and not _alone_on_line(skeleton, m.start(), m.end()):
            raise _bad(f"the anchor table contradicts the skeleton: {m.group(0)} is a whole line but shares its "
                       "line with other text")
        used[ident] = used.get(ident, 0) + 1
        pieces += [skeleton[last:m.start()], values[ident]]
        last = m.end()
    pieces.append(skeleton[last:])
    if any(f"⟪M{n}:" in piece for piece in pieces[::2]):  # the skeleton's own text, between placeholders
        raise _bad(f"the skeleton holds ⟪M{n}: that is not a placeholder ⟪M{n}:ID:KIND⟫")
    return "".join(pieces), used


def _alone_on_line(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else "\n"
    after = text[end] if end < len(text) else "\n"
    return before in "\r\n" and after in "\r\n"


def _html_label(value: str) -> str:
    """The SDK's `htmlLabel`: `text` for a text run, else the tag's name (`/div`, `!doctype`) or `tag`."""
    if not value.startswith("<"):
        return "text"
    m = _HTML_LABEL.match(value)
    return m.group(1).lower() if m else "tag"


def _bad(message: str) -> ApplyError:
    return ApplyError("invalid_argument", message)
