"""The apply prompt formats fastapply reads, as data: how each family's blocks are written and how
its answer is wrapped (pure). A new client format is one record here and its test.

| family   | who sends it                                   | blocks                                   | answer          |
|----------|------------------------------------------------|------------------------------------------|-----------------|
| morph    | Morph's SDK and MCP server, Kilo Code, avante   | [<instruction>] <code> <update>, nothing | bare            |
|          | .nvim, Continue with Morph's template           | around them                              |                 |
| kortix   | Kortix FastApply, FastEdit, fastapply-mcp,     | <code> <update> inside prose (an         | <updated-code>, |
|          | opencode-fast-apply                            | `Instruction:` line may be in it)        | as the prose    |
|          |                                                |                                          | names it        |
| osmosis  | Osmosis-Apply's MCP server and helper          | <code>\\n…\\n</code> <edit>\\n…\\n</edit>    | <code>          |
| aixapply | aiXapply-4B, its Continue template             | [<language>] <source_file>               | <update_file>   |
|          |                                                | <update_snippet>                         | when named      |
| continue | Continue's default apply prompt (any model     | ORIGINAL CODE: / SUGGESTED EDIT: fences, | bare            |
|          | without a template of its own)                 | the assistant prefilled with a fence     |                 |

Two clients send a *section* of the file as the original and splice the answer back in its place:
fastapply-mcp (the Kortix prompt with its `RULES:` list, which names "markdown") and Osmosis' MCP
server (its assistant turn prefilled with `<code>`). `section_prompt` and `section_prefill` name
them, and their requests are merged as sections (`ApplyRequest.section`).

`answer_tags` are the spellings a family's clients accept, the first its model's own. `wrap` says
when the file goes between them: `always` (Osmosis' clients cut the file out of `<code>` whatever
they asked), `named` (only when the prompt names the tag: Continue's aiXapply template asks for the
file bare), `never`. The file inside is the merge's, byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Lead:
    """An optional block before the file's: its role in the request and the names it is written with."""

    role: str  # "instruction" or "language"
    names: tuple[str, ...]


@dataclass(frozen=True)
class Tags:
    """Blocks written as tags, `<original>FILE</original>` then `<update>SNIPPET</update>`, with only
    whitespace between them, optional lead blocks just before."""

    original: str
    update: str
    leads: tuple[Lead, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.original, self.update, *(n for lead in self.leads for n in lead.names))


@dataclass(frozen=True)
class Fences:
    """Blocks written as labelled Markdown fences: `LABEL:` then a ```` ``` ```` fence per block."""

    original: str  # the original's label line, "ORIGINAL CODE:"
    update: str  # the snippet's, "SUGGESTED EDIT:"


@dataclass(frozen=True)
class Family:
    name: str  # as errors and findings name it
    title: str  # "Kortix FastApply"
    blocks: Tags | Fences
    example: str  # one line: what to send
    prose: bool = False  # may text stand around the blocks?
    answer_tags: tuple[str, ...] = ()
    wrap: str = "never"  # "always" | "named" | "never"
    # One newline after each opening tag and before each closing tag is the format's, not the file's.
    delimiter_newlines: bool = False
    instruction_line: str | None = None  # a prose line that carries the instruction
    # Assistant prefills that open the format's own wrapper, not the answer (Continue's fence).
    prefill: re.Pattern | None = None
    # A refusal answered the way the family's model refuses: its answer tags with nothing inside.
    refuses_empty: bool = False
    # Its clients end the file at the first closing tag (Osmosis' MCP server, Kortix's model card and
    # fastapply-mcp): a file that holds that tag itself would be written cut short, so it is refused.
    cut_at_first_close: bool = False
    # A client that sends a section of the file as the original, told by the prose before the file's
    # block (`section_prompt`) or by the assistant turn it prefills (`section_prefill`).
    section_prompt: re.Pattern | None = None
    section_prefill: str | None = None


INSTRUCTION = Lead("instruction", ("instruction", "instructions"))

MORPH = Family(
    "morph", "Morph", Tags("code", "update", (INSTRUCTION,)),
    "<instruction>WHAT</instruction>\\n<code>FILE</code>\\n<update>SNIPPET</update>")
KORTIX = Family(
    "kortix", "Kortix FastApply", Tags("code", "update", (INSTRUCTION,)),
    "Merge all changes from the <update> snippet into the <code> below. … enclosed within <updated-code> and "
    "</updated-code> tags.\\n\\n<code>FILE</code>\\n\\n<update>SNIPPET</update>",
    prose=True, answer_tags=("updated-code", "update-code", "updated_code"), wrap="named",
    instruction_line="Instruction:", cut_at_first_close=True,
    # fastapply-mcp's USER_PROMPT (`fast_apply_edit` edits a section): the model card's rules under a
    # `RULES:` line, "markdown" among what not to include
    section_prompt=re.compile(r"(?ms)^RULES:[ \t]*$.*\bplaceholders, markdown, ellipses\b"))
OSMOSIS = Family(
    "osmosis", "Osmosis-Apply", Tags("code", "edit"),
    "<code>\\nFILE\\n</code>\\n\\n<edit>\\nSNIPPET\\n</edit> (answer prefilled with <code>)",
    prose=True, answer_tags=("code",), wrap="always", delimiter_newlines=True, cut_at_first_close=True,
    section_prefill="<code>")  # its MCP server's `edit_snippet` prefills the answer and edits a section
AIXAPPLY = Family(
    "aixapply", "aiXapply", Tags("source_file", "update_snippet", (Lead("language", ("language",)),)),
    "<language>python</language>\\n\\n<source_file>FILE</source_file>\\n\\n<update_snippet>SNIPPET</update_snippet>",
    prose=True, answer_tags=("update_file",), wrap="named", refuses_empty=True)
CONTINUE = Family(
    "continue", "Continue default apply", Fences("ORIGINAL CODE:", "SUGGESTED EDIT:"),
    "ORIGINAL CODE:\\n```\\nFILE\\n```\\n\\nSUGGESTED EDIT:\\n```\\nSNIPPET\\n``` (answer prefilled with ```)",
    prose=True, prefill=re.compile(r"```[\w+#.-]*\n?"))

# In the order a message is tried; Morph before Kortix: the same blocks, Morph's with nothing around.
FAMILIES: tuple[Family, ...] = (MORPH, KORTIX, OSMOSIS, AIXAPPLY, CONTINUE)
