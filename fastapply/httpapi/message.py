"""A prompt's blocks, read by their structure (pure): the file and the snippet of any family in
`formats.FAMILIES`, never by the first tag the text happens to hold.

Tag families (Morph, Kortix, Osmosis, aiXapply) write `<A>FILE</A>` then `<B>SNIPPET</B>` with only
whitespace between, optional lead blocks (an instruction, a language) just before, and, where the
family has prose, any text around them: Kortix's instruction names `<update>` and `<code>` as words
before the real blocks. The text inside a block is taken exactly and is never searched for another
block's tag: the file or the snippet may hold `<code>`, `</code>`, `<update>` or `</update>`
themselves (an HTML page, a note about this format), and the instruction may hold `<code>` (Morph's
SDK writes "The <code> block starts with ..."). Where each block ends is read from the structure:

- `<B>` ends at the text's last `</B>`: after it comes only whitespace, or the family's prose.
- `<A>` ends at a `</A>` that whitespace and `<B>` follow, and opens at an `<A>` that starts a line
  (or the text, or follows a lead block): a tag that a sentence names is not a block.
- When the file or the snippet holds those boundaries too there are several readings; the one whose
  blocks all have their tags balanced (each opened and closed inside, in order) is the message's,
  and text around the blocks that closes a block (`</code>`) is a repeated block, not prose. No such
  reading, or more than one: the message is ambiguous.

Continue's default apply prompt writes fences instead (`ORIGINAL CODE:` then a ```` ``` ```` fence,
`SUGGESTED EDIT:` then another): the file ends at the one `\\n```\\n\\nSUGGESTED EDIT:\\n```\\n`, the snippet
at the last fence line.

Refused, with a message that names the family, the tag and what to send (400): a missing block; a
block that is not closed; blocks out of order; a repeated block (`</update>` then `<update>` inside the
update, with its tags unbalanced); a nested block (a block wrapped in its own tag again); an
ambiguous split; text around the blocks of a family that has no prose (Morph's: then it is Kortix's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapply.api import ApplyError
from fastapply.httpapi.formats import MORPH, Family, Fences, Tags


@dataclass(frozen=True)
class Blocks:
    """What a prompt's blocks hold, and the text around them (where a prompt names its answer tag)."""

    original: str
    update: str
    instruction: str | None = None
    language: str | None = None
    head: str = ""  # the text before the blocks
    tail: str = ""  # the text after them: a completion prompt's prefill ends it

    @property
    def prose(self) -> bool:
        return bool(self.head.strip() or self.tail.strip())


def parse_morph_message(content: str) -> tuple[str | None, str, str]:
    """(instruction or None, original, update) from a Morph-format user message."""
    b = read_blocks(content, MORPH)
    return b.instruction, b.original, b.update


def read_blocks(text: str, family: Family) -> Blocks:
    """The blocks of `text` in `family`'s format; ApplyError(invalid_argument) saying why not."""
    if isinstance(family.blocks, Fences):
        return _read_fences(text, family)
    blocks = _read_tags(text, family)
    if not family.prose and blocks.prose:
        where = "before <code>" if blocks.head.strip() else f"after the last </{family.blocks.update}>"
        raise _bad(family, f"text {where}: only whitespace and one <instruction> block may stand around "
                           f"the blocks (text around them is Kortix's format)")
    return blocks


# -- tags ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Reading:
    start: int  # where <A> opens
    split: re.Match  # </A> ws <B>
    leads: dict[str, tuple[int, int]]  # role -> (start, end) of its text
    head_end: int


def _read_tags(text: str, family: Family) -> Blocks:
    spec = family.blocks
    a, b = spec.original, spec.update
    end = text.rfind(f"</{b}>")
    if end < 0:
        opened = any(_line_start(text, m.start()) or _after_closer(text, m.start(), (f"</{a}>",))
                     for m in re.finditer(f"<{b}>", text))  # not a tag a sentence names
        raise _bad(family, f"the <{b}> block is not closed (no </{b}>)" if opened
                   else f"the user message has no <{b}> block")
    splits = list(re.finditer(rf"</{a}>\s*<{b}>", text[:end]))
    if not splits:
        raise _bad(family, _no_split(text, spec))
    readings = [r for s in _starts(text, spec) for m in splits if s < m.start()
                for r in [_reading(text, spec, s, m)] if r is not None and not _closer_in_prose(text, r, end, spec)]
    if not readings:
        raise _bad(family, f"no <{a}> opens the file where a block can start (at the start of a line, after "
                           f"whitespace or a lead block, before </{a}> and <{b}>)")
    if len(readings) > 1:
        balanced = [r for r in readings if all(_balanced(t, spec) for t in _texts(text, r, end, spec))]
        if len(balanced) != 1:
            lines = sorted({text.count("\n", 0, r.split.start()) + 1 for r in readings})
            raise _bad(family, f"ambiguous message: it reads {len(readings)} ways (the file could end at line "
                               f"{' or '.join(map(str, lines[:2]))} of the message; {len(balanced) or 'none'} of "
                               f"them leave(s) every block's tags balanced)")
        readings = balanced
    r = readings[0]
    for lead in spec.leads:
        opened = next((n for n in lead.names if re.search(rf"(?m)^[ \t]*<{n}>", text[:r.head_end])), None)
        if opened is not None and lead.role not in r.leads:
            raise _bad(family, f"the <{opened}> block is not closed (no </{opened}> before <{a}>)")
    original, update = text[r.start + len(a) + 2:r.split.start()], text[r.split.end():end]
    _check_blocks(family, spec, {a: original, b: update} | {
        role: text[s:e] for role, (s, e) in r.leads.items()})
    if family.delimiter_newlines:
        original, update = _undelimit(original), _undelimit(update)
    leads = {role: text[s:e] for role, (s, e) in r.leads.items()}
    return Blocks(original, update, leads.get("instruction"), leads.get("language"),
                  text[:r.head_end], text[end + len(b) + 3:])


def _starts(text: str, spec: Tags) -> list[int]:
    """Where `<A>` may open the file: at the start of a line (whitespace before it on the line), or
    right after a lead block's closing tag."""
    closers = tuple(f"</{n}>" for lead in spec.leads for n in lead.names)
    out = []
    for m in re.finditer(f"<{spec.original}>", text):
        if _line_start(text, m.start()) or _after_closer(text, m.start(), closers):
            out.append(m.start())
    return out


def _reading(text: str, spec: Tags, start: int, split: re.Match) -> _Reading | None:
    """The reading with the file opening at `start`, its lead blocks peeled off the text before it."""
    head_end, leads = start, {}
    for lead in reversed(spec.leads):
        before = text[:head_end].rstrip()
        name = next((n for n in lead.names if before.endswith(f"</{n}>")), None)
        if name is None:
            continue
        opener = next((m for m in re.finditer(f"<{name}>", before) if _line_start(before, m.start())), None)
        if opener is None:
            return None
        leads[lead.role] = (opener.end(), len(before) - len(name) - 3)
        head_end = opener.start()
    return _Reading(start, split, leads, head_end)


def _texts(text: str, r: _Reading, end: int, spec: Tags) -> list[str]:
    return [text[r.start + len(spec.original) + 2:r.split.start()], text[r.split.end():end],
            *(text[s:e] for s, e in r.leads.values())]


def _closer_in_prose(text: str, r: _Reading, end: int, spec: Tags) -> bool:
    """Prose names the blocks' tags (Kortix: "the <update> snippet into the <code> below") but
    never closes one: text around the blocks that holds `</code>` is a repeated block, not prose."""
    closers = (f"</{spec.original}>", f"</{spec.update}>")
    head, tail = text[:r.head_end], text[end + len(spec.update) + 3:]
    return any(c in head or c in tail for c in closers)


def _check_blocks(family: Family, spec: Tags, texts: dict[str, str]) -> None:
    """A repeated block (a boundary inside a block whose tags do not balance) or a nested one."""
    boundary = re.compile(rf"</({'|'.join(spec.names)})>\s*<({'|'.join(spec.names)})>")
    for role, text in texts.items():
        name = role if role in spec.names else next(n for lead in spec.leads if lead.role == role for n in lead.names)
        repeated = boundary.search(text)
        if repeated and not _balanced(text, spec):
            raise _bad(family, f"the <{name}> block holds `{repeated.group(0).strip()}` with its tags unbalanced: "
                               f"a repeated or misplaced block; send one <{name}> block")
        inner = text.strip()
        if inner.startswith(f"<{name}>") and inner.endswith(f"</{name}>"):
            raise _bad(family, f"nested <{name}> blocks: the <{name}> block's text is wrapped in <{name}> again")


def _no_split(text: str, spec: Tags) -> str:
    a, b = spec.original, spec.update
    if f"<{a}>" not in text:
        return f"the user message has no <{a}> block"
    first = {t: next((m.start() for m in re.finditer(f"<{t}>", text) if _line_start(text, m.start())), len(text))
             for t in (a, b)}
    if first[b] < first[a]:
        return f"<{b}> comes before <{a}>: the file's block goes first"
    if f"</{a}>" not in text:
        return f"the <{a}> block is not closed (no </{a}> before <{b}>)"
    return f"no </{a}> is followed by <{b}>: only whitespace may stand between the blocks"


def _line_start(text: str, at: int) -> bool:
    return not text[text.rfind("\n", 0, at) + 1:at].strip(" \t")


def _after_closer(text: str, at: int, closers: tuple[str, ...]) -> bool:
    """Only whitespace between one of `closers` and `at` (scanned back, never copying the text)."""
    while at > 0 and text[at - 1] in " \t\r\n":
        at -= 1
    return text.endswith(closers, 0, at)


def _balanced(text: str, spec: Tags) -> bool:
    """Every block tag inside `text` opened and closed in order (a quoted message, an HTML <code>)."""
    depth: dict[str, int] = {}
    for m in re.finditer(rf"<(/?)({'|'.join(spec.names)})>", text):
        depth[m.group(2)] = depth.get(m.group(2), 0) + (-1 if m.group(1) else 1)
        if depth[m.group(2)] < 0:
            return False
    return not any(depth.values())


def _undelimit(text: str) -> str:
    """Osmosis writes `<code>\\nFILE\\n</code>`: those two newlines are the format's."""
    text = text[1:] if text.startswith("\n") else text
    return text[:-1] if text.endswith("\n") else text


# -- fences ----------------------------------------------------------------------------------------------------

_FENCE_LINE = re.compile(r"\n```[ \t]*(?=\n|$)")


def _read_fences(text: str, family: Family) -> Blocks:
    spec = family.blocks
    opened = list(re.finditer(rf"(?m)^{re.escape(spec.original)}[ \t]*\n```[^\n`]*\n", text))
    if not opened:
        raise _bad(family, f"no `{spec.original}` line followed by a ``` fence")
    split = re.compile(rf"\n```[ \t]*\n\s*{re.escape(spec.update)}[ \t]*\n```[^\n`]*\n")
    start = opened[0].end() - 1  # the fence line's newline: an empty file ends right there
    splits = list(split.finditer(text, start))
    if not splits:
        raise _bad(family, f"no `{spec.update}` fence after the `{spec.original}` block" if spec.update in text
                   else f"the user message has no `{spec.update}` block")
    if len(splits) > 1:
        lines = [text.count("\n", 0, m.start()) + 2 for m in splits[:2]]
        raise _bad(family, f"ambiguous message: `{spec.update}` follows a closing fence {len(splits)} times (lines "
                           f"{lines[0]} and {lines[1]}); the file or the snippet holds that text")
    fences = [m.start() for m in _FENCE_LINE.finditer(text, splits[0].end() - 1)]
    if not fences:
        raise _bad(family, f"the `{spec.update}` fence is not closed (no ``` line after it)")
    original = text[opened[0].end():max(opened[0].end(), splits[0].start())]
    update = text[splits[0].end():max(splits[0].end(), fences[-1])]
    return Blocks(original, update, head=text[:opened[0].start()], tail=text[fences[-1] + 4:])


def _bad(family: Family, message: str) -> ApplyError:
    return ApplyError("invalid_argument", f"{message}; send the {family.title} format: {family.example}")
