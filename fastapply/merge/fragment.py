"""An original that is a fragment: a section of a file cut out by a client, read from its text alone.

MCP clients (fastapply-mcp, Osmosis) send the lines an agent chose ("edit only the sections you
need") as the original and splice the answer back in their place. Where a section is cut inside a
definition, a block or a comment, the snippet may restate lines the section does not hold (the
definition's header above the cut, its end below), and a merge that reads the section as a whole
file takes them for new code: the client's splice then holds them twice. New code at a file's own
first or last line is common (imports, a new function), so each edge counts as cut only by what a
file never does there (`find_cuts`): start inside a comment or with a blank line, start indented
deeper than the lines after it or on a continuation (`else`, `.then(`), close a bracket opened
above it; end with a bracket left open, a line that goes on (`:`, `,`), or a blank line. A request
that says the original is a section (`ApplyRequest.section`: the HTTP front-end sets it for the
clients known to send one) has both edges cut, whatever the text looks like (`SAID`): from the
text alone a section's clean edge (a top-level `import`, a Python section ending in a function's
body) looks exactly like a file's. So an original whose text shows a cut at one edge is merged as
such a section too (`BESIDE_CUT`: its other edge may be a cut that looks clean), unless only blank
edge lines say so, or only its end where it mostly fails to parse (a whole file may be either).

A fragment has syntax errors of its own at its cuts, which move with any edit: `new_errors` and
`closed_errors` let the parse check (`fastapply.validate`) compare where they are, not how many.
What a merge writes beyond a section's edges is `merge/section.py`'s, judged by `checks/fragments.py`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from fastapply.languages import BY_NAME, error_count, parse, unparsable
from fastapply.memo import per_thread_lru
from fastapply.merge.diff import line_pairs
from fastapply.merge.text import indent_of

SECTION_KIND = "section"  # the finding (`validate`) of a merge that writes beyond a fragment's cut
SECTION_CHECK = "section_cut"  # `MergeResult.check` of its refusal: the reason says what to send
SAID = "the request says it is a section"  # why an edge is cut where the request says so and the text does not
# why an edge is cut where the text shows a cut at the other edge: the original is a section, not a file
BESIDE_CUT = "its other edge is cut, so it is a section of a file"
# A blank first or last line: a section's cut, or a whole file's stray blank line (a file saved
# ending in "\n\n"; express `test/support/utils.js` has one at both ends). Read as a cut of its
# own, never as the word that the original is a section (`_says_section`). Most clients send whole
# files; those known to send sections say so (`ApplyRequest.section`).
_BLANK_HEAD, _BLANK_TAIL = "it starts with a blank line", "it ends with a blank line"

# Languages whose files may start or end on an indented line (a Python file ends in its last
# function's body, a Makefile in a recipe): there an indented edge says nothing; elsewhere a file
# starts and ends at column 0.
INDENTED_EDGES = frozenset({None, "python", "yaml", "make", "markdown", "toml", "sql", "dockerfile", "text"})
_OPENERS, _CLOSERS = "({[", ")}]"
_NOT_CODE = ("string", "comment", "template", "heredoc", "regex")  # node types whose brackets are text
# A line a file cannot start with: the rest of a statement or a clause begun above the cut.
_CONTINUES = re.compile(r"(else|elif|except|finally|catch)\b|\.[A-Za-z_]\w*\(|&&|\|\||\?\s")
# A line a file cannot end with: the statement goes on below the cut.
_GOES_ON = re.compile(r"(,|\\|=|&&|\|\||\+|\(|\[|\{)$")


@dataclass(frozen=True)
class Cuts:
    """Why the original starts and ends inside something ("": nothing says so; `SAID`: the request
    says so, the text does not), and the rows of the original's first and last non-blank lines."""

    head: str = ""
    tail: str = ""
    first: int = 0
    last: int = -1
    said: bool = False  # the request says the original is a section, or its text shows a cut: both edges are cut
    unasked: bool = False  # `said` by the text's cuts alone (`_says_section`), not by the request

    @property
    def fragment(self) -> bool:
        return bool(self.head or self.tail)

    @property
    def why_unasked(self) -> str:
        """What in the text says the original is a section, where the request did not ("" otherwise)."""
        if not self.unasked:
            return ""
        return self.head if self.head != BESIDE_CUT else self.tail

    @property
    def head_in_text(self) -> bool:
        """The start is cut by what the text shows (not only by the request's word)."""
        return bool(self.head) and self.head not in (SAID, BESIDE_CUT)

    @property
    def in_text(self) -> bool:
        """Either edge is cut by what the text shows: its syntax errors may stand at the cuts."""
        return self.head_in_text or bool(self.tail) and self.tail not in (SAID, BESIDE_CUT)


def find_cuts(lines: list[str], lang: str | None, tree, section: bool = False) -> Cuts:
    """Where the original `lines` (parsed as `tree`, or None) is cut, read from its text; `section`:
    the request says it is a section of a file, so both edges are cuts (the text's reason, else `SAID`)."""
    first = next((i for i, x in enumerate(lines) if x.strip()), None)
    if first is None:
        return Cuts(said=section)
    last = next(i for i in range(len(lines) - 1, -1, -1) if lines[i].strip())
    dip, open_row = _bracket_cuts(tree)
    info = BY_NAME.get(lang) if lang else None
    slashes = info is not None and any("/*" in t or "//" in t for t in info.marker_templates)
    head = _head_cut(lines, first, dip, slashes, lang)
    ends_in_error = tree is not None and tree.root_node.has_error and any(e >= last for _, e in _error_spans(tree))
    tail = _tail_cut(lines, last, open_row, slashes, lang, ends_in_error)
    if section:
        head, tail = head or SAID, tail or SAID
    elif _says_section(lines, tree, head, tail):
        return Cuts(head or BESIDE_CUT, tail or BESIDE_CUT, first, last, True, unasked=True)
    return Cuts(head, tail, first, last, section)


def _says_section(lines: list[str], tree, head: str, tail: str) -> bool:
    """The text's cuts say the original is a section, not a file: a cut other than a blank edge line,
    at the start where tree-sitter mostly fails to parse it (a whole file being written leaves a
    bracket open at its end, a `)` missing: evals.fuzz --broken-original; one that starts inside
    a block or a comment is none)."""
    if tree is not None and unparsable(tree, "\n".join(lines)):
        return head not in ("", _BLANK_HEAD)
    return bool({head, tail} - {"", _BLANK_HEAD, _BLANK_TAIL})


def _head_cut(lines: list[str], first: int, dip: int | None, slashes: bool, lang: str | None) -> str:
    top = lines[first].strip()
    if first > 0:
        return _BLANK_HEAD
    if slashes and (top.startswith(("* ", "*/")) or top == "*" or ("*/" in top and "/*" not in top)):
        return "it starts inside a comment"
    if dip is not None:
        return f"line {dip + 1} closes a bracket opened above it"
    depth = len(indent_of(lines[first]))
    shallower = next((i for i, x in enumerate(lines) if x.strip() and len(indent_of(x)) < depth), None) \
        if depth else None
    if shallower is not None:
        return f"its first line is indented deeper than line {shallower + 1}"
    if depth and lang not in INDENTED_EDGES:
        return "its first line is indented"
    if _CONTINUES.match(top):
        return "its first line goes on from a line above it"
    return ""


def _tail_cut(lines: list[str], last: int, open_row: int | None, slashes: bool, lang: str | None,
              ends_in_error: bool) -> str:
    end = lines[last].strip()
    if last < len(lines) - 1:
        return _BLANK_TAIL
    if slashes and ("/*" in end and "*/" not in end or end.startswith("* ") or end == "*"):
        return "it ends inside a comment"
    if open_row is not None:
        return f"line {open_row + 1} opens a bracket it does not close"
    if (_GOES_ON.search(end) or lang == "python" and end.endswith(":")) and not end.startswith(("#", "//")):
        return "its last line goes on below it"
    if indent_of(lines[last]) and lang not in INDENTED_EDGES and ends_in_error:
        return "its last line is indented, inside a block it does not close"
    return ""


@per_thread_lru(8)
def _bracket_tokens(tree) -> tuple[tuple[int, str], ...]:
    """(row, bracket) for the tree's bracket tokens in text order, outside strings and comments (the
    parser's MISSING tokens not counted). Kept per tree (`languages.parse` keeps the trees): the
    section rules ask it of the same original for every reading."""
    tokens: list[tuple[int, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            if not node.is_missing and len(node.type) == 1 and node.type in _OPENERS + _CLOSERS:
                tokens.append((node.start_point[0], node.type))
        elif not any(w in node.type for w in _NOT_CODE):
            stack.extend(reversed(node.children))
    return tuple(tokens)


def _bracket_cuts(tree) -> tuple[int | None, int | None]:
    """(the row of the first closer whose opener is above the text, the row of the outermost opener
    left open at its end), where the parser found an error."""
    if tree is None or not tree.root_node.has_error:  # a cut shows as an error: none, no walk
        return None, None
    tokens = _bracket_tokens(tree)
    depths, depth, dip = [], 0, None
    for row, bracket in tokens:
        depth += 1 if bracket in _OPENERS else -1
        depths.append(depth)
        if depth < 0 and dip is None:
            dip = row
    low = min([0] + depths)
    # a bracket the grammar reads otherwise (a shell `case` pattern's `)`) is no cut: only where the
    # parser found an error there, or after the opener left open (its MISSING closer at the end)
    spans = _error_spans(tree)
    if dip is not None and not any(s <= dip <= e for s, e in spans):
        dip = None
    if depth <= low:
        return dip, None
    opened = tokens[max((k for k, d in enumerate(depths) if d == low), default=-1) + 1][0]
    return dip, opened if any(e >= opened for _, e in spans) else None


def closed_errors(text: str, tree, lang: str | None) -> int | None:
    """Syntax error nodes of a fragment with the brackets it leaves open closed (a closer a line
    after its end for each), or None when it leaves none open: a section cut inside a function
    parses whole again, so that a new error below its start shows in the count (one ERROR node
    swallows a fragment's tail otherwise)."""
    if tree is None or not tree.root_node.has_error:
        return None
    opened: list[str] = []
    for _, bracket in _bracket_tokens(tree):
        if bracket in _OPENERS:
            opened.append(bracket)
        elif opened:  # a closer of a bracket opened above the text closes nothing here
            opened.pop()
    if not opened:
        return None
    tail = "".join("\n" + _CLOSERS[_OPENERS.index(b)] for b in reversed(opened))
    return error_count(parse(lang, text.rstrip("\n") + tail + "\n"))


def new_errors(t_orig, t_merged, orig: list[str], merged: list[str]) -> list[int]:
    """Rows of the merged text's syntax errors (outermost ERROR / MISSING nodes) that stand where
    the original has none: each original error's rows, mapped through a line diff to the merged
    text, cover the old ones; and a lone token the original has as often, MISSING (a `}` the parser
    makes up where it gives up) or stray (the `}` of a block opened above the cut), is the same one
    wherever it moved (a line diff may pair a kept `}` with a new one; a new stray bracket changes
    the bracket balance, which the parse check compares). A fragment has errors of its own at its
    cuts; a new error elsewhere (a function pasted into another's body) may leave the count as it
    was."""
    old = _error_nodes(t_orig)
    if not old and not t_merged.root_node.has_error:
        return []
    where = line_map(orig, merged)
    covered = set()
    for _, s, e in old:
        rows = [where[r] for r in range(s, e + 1) if r in where]
        lo = min(rows, default=None)
        if lo is None:  # every row of it changed: its neighbours bound where it went
            before = [where[r] for r in where if r < s]
            after = [where[r] for r in where if r > e]
            lo, hi = (max(before) + 1 if before else 0), (min(after) - 1 if after else len(merged) - 1)
        else:
            hi = max(rows)
        covered.update(range(lo, hi + 1))
    missing = Counter(kind for kind, _, _ in old if kind)
    out = []
    for kind, s, e in _error_nodes(t_merged):
        if kind and missing[kind] > 0:
            missing[kind] -= 1
        elif not covered.intersection(range(s, e + 1)):
            out.append(s)
    return out


def line_map(orig: list[str], merged: list[str], pin_head: bool = True, pin_tail: bool = True) -> dict[int, int]:
    """Original row -> merged row, for the lines the merge kept as written (`diff.line_pairs`); the
    end of the text maps to the end (a MISSING closer stands there). Without `pin_tail`
    (`pin_head`) the common tail (head) is left to the diff: new code after a section's last `}`
    that ends in a `}` of its own is then seen as new."""
    return line_pairs(orig, merged, pin_head=pin_head, pin_tail=pin_tail) | {len(orig): len(merged)}


def _error_nodes(tree) -> list[tuple[str, int, int]]:
    """(what it is, if it is a lone token: the token a MISSING node stands for, the bracket an ERROR
    node holds alone, else ""; its first row; its last row) of each outermost ERROR or MISSING node."""
    out, stack = [], [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        if node.is_missing:
            out.append(("missing " + node.type, node.start_point[0], node.end_point[0]))
        elif node.is_error:
            text = node.text.decode("utf-8", "replace").strip() if node.end_byte - node.start_byte <= 3 else ""
            out.append((("stray " + text) if text and text in _OPENERS + _CLOSERS else "", node.start_point[0],
                        node.end_point[0]))
        elif node.has_error:
            stack.extend(node.children)
    return out


def _error_spans(tree) -> list[tuple[int, int]]:
    """(first row, last row) of each outermost ERROR or MISSING node."""
    return [(s, e) for _, s, e in _error_nodes(tree)]
