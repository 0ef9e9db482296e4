"""HTML/XML-escaped blocks, read unescaped and answered escaped the same way (pure).

Some clients escape the file and the snippet before they put them in the prompt: fastapply-mcp
(`&amp; &lt; &gt; &quot; &apos;`, "to prevent prompt injection"), and Continue's Handlebars
templates written with double braces (`{{original_code}}`: `&lt; &gt; &amp; &quot; &#x27; &#x60;
&#x3D;`). They unescape the answer. The merge must see the real text (`<!-- ... -->` markers, the
language's syntax), so the blocks are decoded and the merged file is encoded again with the
client's own spellings.

The blocks are taken as escaped when they hold no raw `<` or `>`, every `&` starts an entity, and
each escaped character is spelled one way and never appears raw. Anything else is raw text, left
as it is: decoding and encoding again with the same spellings gives back the same bytes, so a raw
file that merely looks escaped (`a &amp;&amp; b` in a comment, nothing else) loses nothing either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from fastapply.api import ApplyError

_ENTITY = re.compile(r"&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]*);")
_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_DEFAULT = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


@dataclass(frozen=True)
class Escaping:
    """How a client spelled each escaped character (`'` -> `&apos;` or `&#x27;`)."""

    spelling: dict[str, str]

    def decode(self, text: str) -> str:
        return _ENTITY.sub(lambda m: _char(m.group(1)), text)

    def encode(self, text: str) -> str:
        return text.translate({ord(c): e for c, e in self.spelling.items()})

    def names(self) -> str:
        return " ".join(sorted(set(self.spelling.values())))


def detect(blocks: dict[str, str]) -> Escaping | None:
    """The escaping of `blocks` (name -> text: the file and the snippet), or None when they are raw.
    An entity that cannot be a character (`&#xD800;`) in blocks that are otherwise escaped is a 400
    naming the block and the line."""
    spellings: dict[str, set[str]] = {}
    for text in blocks.values():
        if "<" in text or ">" in text:
            return None
        entities = list(_ENTITY.finditer(text))
        if len(entities) != text.count("&"):
            return None  # a raw `&`: nobody escaped this
        for m in entities:
            name = m.group(1)
            if not name.startswith("#") and name not in _NAMED:
                return None  # `&nbsp;` is not what an escaping client writes
            spellings.setdefault(_char(name, partial(_undecodable, blocks, m.group(0))), set()).add(m.group(0))
    if not spellings:
        return None
    raw = "".join(_ENTITY.sub("", t) for t in blocks.values())
    if any(len(s) > 1 or c in raw for c, s in spellings.items()):
        return None  # one character spelled two ways, or raw beside its entity: not one client's escaping
    return Escaping({**_DEFAULT, **{c: next(iter(s)) for c, s in spellings.items()}})


def _char(name: str, fail=None) -> str:
    if not name.startswith("#"):
        return _NAMED[name]
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        if fail is None:
            raise ValueError(name)
        raise fail()
    return chr(code)


def _undecodable(blocks: dict[str, str], entity: str) -> ApplyError:
    where = next(f"{name}, line {text[:text.index(entity)].count(chr(10)) + 1}"
                 for name, text in blocks.items() if entity in text)
    return ApplyError("invalid_argument", f"send the blocks unescaped, or escape each character once: they look "
                                          f"HTML-escaped, but `{entity}` ({where}) is no character")
