"""A request's apply prompt -> the file, the snippet and the shape of the answer (pure).

The prompt is the last user message of a chat, or a completion's `prompt` string. A chat's trailing
assistant message is a prefill: the answer continues after it and never repeats it (Osmosis' MCP
server prefills `<code>` and prepends it to what comes back; Continue prefills a fence). A completion
prompt that ends with its answer's opening tag is prefilled the same way. System messages and the
text around the blocks are read for the answer tag they name.

A prompt of a client that sends a section of the file (fastapply-mcp's, Osmosis' MCP server's:
`Family.section_prompt`, `section_prefill`) is read as one: `Prompt.section`.

Every family of `formats.FAMILIES` whose blocks the text holds is tried. One reading: that family.
Two families reading different blocks: a 400 that names both. None: the nearest family's own error
(a block missing, reversed, ambiguous), or, where the text holds no family's blocks at all, a 400
that lists the families with a one-line example of the nearest.

HTML-escaped blocks (`escaping.py`) are read unescaped; the answer is escaped the same way.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace

from fastapply.api import ApplyError, Finding
from fastapply.httpapi import escaping
from fastapply.httpapi.formats import FAMILIES, KORTIX, MORPH, Family, Fences
from fastapply.httpapi.message import Blocks, read_blocks


@dataclass(frozen=True)
class Answer:
    """How the merged file is sent: between `open` and `close` (empty: bare), escaped or not."""

    open: str = ""  # "" also when the client prefilled it
    close: str = ""
    escaping: escaping.Escaping | None = None
    refuses_empty: bool = False  # a refusal is the empty tags, the family's model's own refusal
    cut_at_close: bool = False  # the client ends the file at the first `close`

    def whole(self, merged: str) -> str:
        return self.open + self.text(merged) + self.close

    def text(self, piece: str) -> str:
        return self.escaping.encode(piece) if self.escaping is not None else piece

    def cut_short(self, merged: str) -> bool:
        """Would the client cut this file short (it holds the closing tag the client ends it at)?"""
        return self.cut_at_close and self.close in self.text(merged)


@dataclass(frozen=True)
class Prompt:
    family: Family
    blocks: Blocks  # unescaped
    answer: Answer
    notes: tuple[Finding, ...] = ()
    section: bool = False  # the client sends a section of the file (`ApplyRequest.section`)


def read_prompt(text: str, context: str = "", prefill: str | None = None) -> Prompt:
    """`text`: the user message or completion prompt; `context`: the system messages; `prefill`: a
    chat's trailing assistant message."""
    family, blocks = _family_of(text)
    if family.instruction_line and blocks.instruction is None:
        m = re.search(rf"(?m)^{re.escape(family.instruction_line)}[ \t]*(.*?)[ \t]*$", blocks.head)
        if m and m.group(1):
            blocks = replace(blocks, instruction=m.group(1))
    section = _sends_section(family, blocks.head, prefill)
    if prefill is None:
        prefill = _completion_prefill(family, blocks.tail)
    esc = escaping.detect({"the file": blocks.original, "the snippet": blocks.update})
    notes = []
    if esc is not None:
        blocks = replace(blocks, original=esc.decode(blocks.original), update=esc.decode(blocks.update))
        notes.append(Finding("escaping", f"the {family.title} blocks were HTML-escaped ({esc.names()}): read "
                                         "unescaped, answered escaped the same way", "info"))
    answer = _answer(family, "\n".join((context, blocks.head, blocks.tail, prefill or "")), prefill, esc)
    return Prompt(family, blocks, answer, tuple(notes), section)


def _sends_section(family: Family, head: str, prefill: str | None) -> bool:
    """Is this prompt one of a client that sends a section of the file: its prose before the file's
    block, or the assistant turn it prefills (a chat's only, not a completion prompt's end)?"""
    return bool(family.section_prompt is not None and family.section_prompt.search(head) or
                family.section_prefill is not None and prefill == family.section_prefill)


def _family_of(text: str) -> tuple[Family, Blocks]:
    tried = [f for f in FAMILIES if any(mark in text for mark in _marks(f))]
    read: list[tuple[Family, Blocks]] = []
    errors: dict[str, ApplyError] = {}
    for family in tried:
        if family is KORTIX and any(f is MORPH for f, _ in read):
            continue  # the same blocks, with nothing around them: Morph's
        try:
            read.append((family, read_blocks(text, family)))
        except ApplyError as e:
            errors[family.name] = e
    distinct = {(b.original, b.update): (f, b) for f, b in reversed(read)}
    if len(distinct) > 1:
        (f1, b1), (f2, b2) = read[0], next(r for r in read[1:] if (r[1].original, r[1].update) != (
            read[0][1].original, read[0][1].update))
        raise _bad(f"send one prompt format: the message reads as the {f1.title} format ({_size(b1)}) and as the "
                   f"{f2.title} format ({_size(b2)}); the file or the snippet holds the other format's blocks")
    if read:
        return read[0]
    if errors:
        raise errors.get(_nearest_error(text, tried).name) or next(iter(errors.values()))
    raise _bad(f"send an apply prompt fastapply reads: the user message holds the blocks of none of "
               f"{', '.join(f.title for f in FAMILIES)}; the nearest, {_nearest(text).title}: {_nearest(text).example}")


def _marks(family: Family) -> tuple[str, ...]:
    b = family.blocks
    return (b.original, b.update) if isinstance(b, Fences) else (f"<{b.original}>", f"<{b.update}>")


def _nearest_error(text: str, tried: list[Family]) -> Family:
    """The family whose error explains a message that none read: the one with most of its blocks
    there; for Morph's blocks, Kortix's when prose stands around them."""
    best = max(tried, key=lambda f: sum(mark in text for mark in _marks(f)))
    if best is MORPH and (not text.lstrip().startswith("<") or any(f"<{t}>" in text for t in KORTIX.answer_tags)):
        return KORTIX
    return best


def _nearest(text: str) -> Family:
    """By the tags (or labels) the text holds, the family whose own are most alike; Morph else."""
    found = set(re.findall(r"</?([A-Za-z][\w-]*)>", text)) | {w for w in re.findall(r"(?m)^([A-Z][A-Z ]+):", text)}
    score = {f.name: max((difflib.SequenceMatcher(None, w.lower(), m.strip("<>:").lower()).ratio()
                          for w in found for m in _marks(f)), default=0.0) for f in FAMILIES}
    return max(FAMILIES, key=lambda f: (score[f.name] > 0.5, score[f.name])) if found else MORPH


def _completion_prefill(family: Family, tail: str) -> str | None:
    """A completion prompt that ends with its answer's opening tag has prefilled it."""
    return next((f"<{t}>" for t in family.answer_tags if tail.endswith(f"<{t}>")), None)


def _answer(family: Family, context: str, prefill: str | None, esc: escaping.Escaping | None) -> Answer:
    tag = None
    if family.wrap == "always":
        tag = family.answer_tags[0]
    elif family.wrap == "named":
        named = [(context.find(f"<{t}>"), t) for t in family.answer_tags if f"<{t}>" in context]
        tag = min(named)[1] if named else None
    open_, close = (f"<{tag}>", f"</{tag}>") if tag else ("", "")
    if prefill and prefill.strip():
        if family.prefill is not None and family.prefill.fullmatch(prefill):
            pass  # the family's own wrapper (Continue's fence): the answer goes on bare
        elif open_ and prefill == open_:
            open_ = ""
        else:
            wanted = f"`{open_}`" if open_ else "nothing (the answer is the file itself)"
            raise _bad(f"send no assistant message, or one that opens the answer: the assistant message "
                       f"`{prefill[:40]}` prefills the answer, but this {family.title} prompt's answer begins "
                       f"with {wanted}")
    return Answer(open_, close, esc, family.refuses_empty and bool(tag), family.cut_at_first_close and bool(tag))


def _size(blocks: Blocks) -> str:
    return f"a file of {blocks.original.count(chr(10)) + 1} lines"


def _bad(message: str) -> ApplyError:
    return ApplyError("invalid_argument", message)
