"""Morph's message format, read by its structure (pure).

One user message holds up to three blocks, in this order, with only whitespace around them:

    <instruction>what the edit does</instruction>      (optional; avante.nvim writes <instructions>)
    <code>THE ORIGINAL FILE</code>
    <update>THE UPDATE SNIPPET</update>

The text inside a block is taken exactly (a file that starts or ends with a newline keeps it) and is
never searched for another block's tag: the file or the snippet may hold `<code>`, `</code>`,
`<update>` or `</update>` themselves (an HTML page, a Markdown note about this format, a test of it),
and the instruction may hold `<code>` (Morph's SDK writes "The <code> block starts with ...").
Where each block ends is read from the structure around it:

- `<instruction>` ends at its first closing tag that whitespace and `<code>` follow: the
  instruction comes first, so nothing of the file can stand there yet.
- `<update>` ends at the message's last `</update>`: only whitespace may follow it.
- `<code>` ends at a `</code>` that whitespace and `<update>` follow. Usually there is one such
  place. When the file or the snippet holds that text too there are several, and the split is the
  one place after which both blocks' own text has its block tags balanced (each `<code>`,
  `<update>`, `<instruction>` opened and closed inside the block, in order), as a file quoting
  this format has them. No such place, or more than one: the message is ambiguous.

Refused, with a message that names the tag (400): a missing `<code>` or `<update>`; a block that
is not closed; blocks out of order; text outside the blocks; a repeated block (`</update>` then
`<update>` inside the update, with its tags unbalanced); a nested block (a block whose whole text is
wrapped in its own tag again); an ambiguous split. Nothing is merged from a message read two ways.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapply.api import ApplyError

FORM = "[<instruction>…</instruction>] <code>ORIGINAL FILE</code> <update>UPDATE SNIPPET</update>"
_TAG = re.compile(r"<(/?)(instructions?|code|update)>")
# A block's end next to the next block's start, inside one block's text: a repeated or misplaced block.
_BOUNDARY = re.compile(r"</(instructions?|code|update)>\s*<(instructions?|code|update)>")
_CODE_END = re.compile(r"</code>\s*<update>")


@dataclass(frozen=True)
class MorphMessage:
    instruction: str | None
    original: str
    update: str


def parse_morph_message(content: str) -> tuple[str | None, str, str]:
    """(instruction or None, original, update) from a Morph-format user message."""
    m = read_message(content)
    return m.instruction, m.original, m.update


def read_message(content: str) -> MorphMessage:
    instruction, rest = _instruction(content)
    original, update = _code_and_update(rest)
    return MorphMessage(instruction, original, update)


def _instruction(content: str) -> tuple[str | None, str]:
    """(the instruction or None, the message from `<code>` on)."""
    head = content.lstrip()
    m = re.match(r"<(instructions?)>", head)
    if m is None:
        return None, head
    tag = m.group(1)
    closer = re.compile(rf"</{tag}>(?=\s*<code>)")
    end = closer.search(head, m.end())
    if end is None:
        if f"</{tag}>" in head:
            raise _bad(f"the <{tag}> block is not followed by <code>; send {FORM}")
        raise _bad(f"the <{tag}> block is not closed (no </{tag}> before <code>); send {FORM}")
    text = head[m.end():end.start()]
    repeated = _BOUNDARY.search(text)
    if repeated:
        raise _bad(f"the <{tag}> block holds `{repeated.group(0).strip()}`: a repeated or misplaced block; "
                   f"send one <{tag}> block, then {FORM}")
    return text, head[end.end():].lstrip()


def _code_and_update(rest: str) -> tuple[str, str]:
    if not rest.startswith("<code>"):
        raise _bad(_before_code(rest))
    body = rest.rstrip()
    if not body.endswith("</update>"):
        if "<update>" not in body:
            raise _bad(f"the user message has no <update> block; send {FORM}")
        if "</update>" not in body:
            raise _bad(f"the <update> block is not closed (no </update>); send {FORM}")
        raise _bad(f"text after the last </update>: only whitespace may follow the <update> block; send {FORM}")
    body = body[len("<code>"):-len("</update>")]
    splits = [(body[:m.start()], body[m.end():]) for m in _CODE_END.finditer(body)]
    if not splits:
        if "</code>" not in body:
            raise _bad(f"the <code> block is not closed (no </code> before <update>); send {FORM}")
        if "<update>" not in body:
            raise _bad(f"the user message has no <update> block; send {FORM}")
        raise _bad(f"no </code> is followed by <update>: only whitespace may stand between the blocks; send {FORM}")
    if len(splits) == 1:
        original, update = splits[0]
        for name, text in (("code", original), ("update", update)):
            repeated = _BOUNDARY.search(text)
            if repeated and not _balanced(text):
                raise _bad(f"the <{name}> block holds `{repeated.group(0).strip()}` with its tags unbalanced: "
                           f"a repeated or misplaced block; send {FORM}")
    else:
        balanced = [s for s in splits if _balanced(s[0]) and _balanced(s[1])]
        if len(balanced) != 1:
            raise _bad(f"ambiguous message: {len(splits)} places where </code> is followed by <update> (the file "
                       f"or the snippet holds that text), and {len(balanced) or 'none'} of them leave(s) both "
                       f"blocks' tags balanced; send {FORM} once")
        original, update = balanced[0]
    for name, text in (("code", original), ("update", update)):
        inner = text.strip()
        if inner.startswith(f"<{name}>") and inner.endswith(f"</{name}>"):
            raise _bad(f"nested <{name}> blocks: the <{name}> block's text is wrapped in <{name}> again; "
                       f"send {FORM}")
    return original, update


def _before_code(rest: str) -> str:
    """Why the message (after any instruction) does not start with `<code>`."""
    first = _TAG.search(rest)
    if "<code>" not in rest:
        return f"the user message has no <code> block; send {FORM}"
    if first is not None and first.group(0) in ("<update>", "</update>"):
        return f"<update> comes before <code>: the blocks go in this order: {FORM}"
    if first is not None and first.group(2).startswith("instruction"):
        return f"the <{first.group(2)}> block must come first, before <code>: {FORM}"
    return f"text before <code>: only whitespace and one <instruction> block may come first; send {FORM}"


def _balanced(text: str) -> bool:
    """Every block tag inside `text` opened and closed in order (a quoted message, an HTML <code>)."""
    depth: dict[str, int] = {}
    for m in _TAG.finditer(text):
        name = m.group(2)
        depth[name] = depth.get(name, 0) + (-1 if m.group(1) else 1)
        if depth[name] < 0:
            return False
    return not any(depth.values())


def _bad(message: str) -> ApplyError:
    return ApplyError("invalid_argument", message)
