"""Whole definitions in a region: a function the snippet restates in full replaces all of the old one.

Line anchors place a region by the lines it shares with the original. When a region rewrites a
function whose header is the only shared line, the last anchor is that header, and the marker after
the region seems to keep the old body's remaining lines (Python has no closing `}` to anchor on).
The region shows the definition complete when
- more snippet code follows it at its own level or above (a new sibling, the class's next line)
  that is not code of the old definition;
- the marker after it is indented (so not a column-0 "loose" marker) no deeper than its header:
  the marker stands for siblings, not for the rest of the body;
- or the region ends the file, or is followed by a column-0 marker while the header is at column 0,
  and its body shares no line with the old body (a region that keeps old lines and then stops may
  just have left out a marker: the rest's fate stays open).
Then the old body is replaced as a whole.
"""

from __future__ import annotations

import re
from collections import Counter

from fastapply.languages import parse
from fastapply.merge.defs import Definition, collect, flatten, names_header, parse_definitions, restates_header
from fastapply.merge.text import dedent, indent_of, is_trivial
from fastapply.memo import per_thread_lru


def original_definitions(orig: list[str], lang: str | None) -> list[Definition]:
    """Every definition of `orig`, flattened (read-only: they are kept for the next caller)."""
    if lang is None:
        return []
    return list(_definitions(lang, "\n".join(orig) + "\n"))


@per_thread_lru(8)
def _definitions(lang: str, src: str) -> tuple[Definition, ...]:
    tree = parse(lang, src)
    return tuple(flatten(collect(tree, src.encode("utf-8")))) if tree is not None else ()


def header_counts(defs: list[Definition]) -> Counter:
    """(enclosing definitions' names, name, header line) of each definition (`original_definitions`):
    `__init__` of class A and of class B are different definitions with the same header; so are
    two Java methods whose header line is `@Test`."""
    out: Counter = Counter()
    stack: list = []
    for d in sorted(defs, key=lambda d: (d.start, -d.end)):
        while stack and stack[-1].end < d.start:
            stack.pop()
        out[(tuple(p.name for p in stack), d.name, d.header)] += 1
        stack.append(d)
    return out


def deletes_unnamed_definition(orig: list[str], upd: list[str], merged: list[str], lang: str | None) -> str | None:
    """The name of an original definition that `merged` has fewer of, while the snippet's text never
    names it: a whole function, class or test deleted that the snippet does not mention. None when
    there is none."""
    if lang is None:
        return None
    old_defs, new_defs = original_definitions(orig, lang), original_definitions(merged, lang)

    def names(defs: list[Definition]) -> Counter:
        return Counter((path, name) for (path, name, _), n in header_counts(defs).items() for _ in range(n))

    text = "\n".join(upd)
    kept = _shown_bodies(merged, new_defs, upd)
    gone = {name for _, name in names(old_defs) - names(new_defs) if name not in text}
    return next((d.name for d in old_defs if d.name in gone and _body(orig, d) not in kept), None)


def _body(lines: list[str], d: Definition) -> tuple[str, ...]:
    return tuple(x.strip() for x in lines[d.node_start + 1:d.end + 1] if x.strip())


def _shown_bodies(merged: list[str], defs: list[Definition], upd: list[str]) -> set[tuple[str, ...]]:
    """The bodies of the merged file's definitions (`defs`) whose header the snippet shows, where they
    hold three lines or more: a definition deleted whose body is one of them was a copy the snippet
    merged into one it names (two tests alike but for their names, express `res.location.js`); its
    code stays in the file."""
    shown = {x.strip() for x in upd}
    return {b for d in defs if d.header in shown for b in [_body(merged, d)] if sum(not is_trivial(x) for x in b) >= 3}


def defined_twice(orig: list[str], upd: list[str], merged: list[str], lang: str | None) -> str | None:
    """The header of a definition the original has once (by enclosing definitions, name and header
    line) that `merged` has more often, while the snippet shows that header less than twice: the
    snippet's copy went next to the old one instead of replacing it. None when there is none."""
    if lang is None:
        return None
    old_defs, new_defs = original_definitions(orig, lang), original_definitions(merged, lang)
    before, after = header_counts(old_defs), header_counts(new_defs)
    shown = Counter(x.strip() for x in upd)
    for (path, name, header), n in after.items():
        if n > before[(path, name, header)] >= 1 and shown[header] < 2:
            return header
    return _named_twice(old_defs, new_defs, upd, lang)


# Languages where two functions of one name in one scope are never overloads: the second replaces
# the first (Python, JavaScript) or does not compile (Go). Not Rust: the `fn from` of two
# `impl From<...> for Value` blocks share the name that scopes them here (serde `from.rs`).
# PHP (a fatal redeclaration), Ruby, Lua and shell functions (the second replaces the first) neither.
_NO_OVERLOADS = frozenset({"python", "javascript", "jsx", "go", "php", "ruby", "lua", "bash"})


def _named_twice(old_defs: list[Definition], new_defs: list[Definition], upd: list[str], lang: str) -> str | None:
    """The same by name, for a function whose header the snippet edited (`def foo(x, z):` for
    `def foo(x):`): the merged file defines it twice in one scope where the original has it once,
    and the snippet restates it once; the new header went in beside the old body. Only where a
    name cannot be overloaded, and only for plain identifiers (not `it("...")` tests)."""
    if lang not in _NO_OVERLOADS:
        return None
    def names(defs: list[Definition]) -> tuple[Counter, dict]:
        counts: Counter = Counter()
        where: dict = {}
        for (path, name, header), n in header_counts(defs).items():
            if re.fullmatch(r"[\w.$]+", name or ""):
                counts[(path, name)] += n
                where[(path, name)] = header
        return counts, where
    before, _ = names([d for d in old_defs if d.kind == "fn"])
    after, where = names([d for d in new_defs if d.kind == "fn"])
    for key, n in after.items():
        if n > before[key] >= 1:
            d = next(d for d in new_defs if d.name == key[1])
            if sum(1 for x in upd if names_header(d, x) and x.rstrip().endswith((":", "{"))) < 2:
                return where[key]
    return None


def _complete_in_region(rest: list[str], header: str, header_indent: str, marker_indent: str | None,
                        ends_file: bool, lang: str, old_def: list[str]) -> bool:
    """Whether the definition at the top of `rest` (the region from the header on, as the snippet
    wrote it) is complete. marker_indent: the next marker's indentation (None: no marker follows);
    ends_file: the region is the end of the file (the last one, no marker after it)."""
    code, _ = dedent(rest)
    found = parse_definitions(code, lang)
    if not found or found[0].node_start != 0 or found[0].header != header or found[0].end == 0:
        return False  # not this definition, or only its header (`class A:` before a marker)
    after = [x.strip() for x in code[found[0].end + 1:] if not is_trivial(x)]
    if after:
        # Code follows the definition inside the region: complete, unless that code is still part of
        # the old definition (then the snippet's brackets, not the definition, ended early).
        old = {x.strip() for x in old_def}
        return not any(x in old for x in after)
    whole = code[:found[0].end + 1]
    if marker_indent and len(marker_indent) <= len(header_indent):
        # A marker at the header's depth follows: complete, if the region closes it (a body whose
        # `}` the parser had to invent leaves the closer to the marker, as an unclosed `/**` can hide).
        return not parse(lang, "\n".join(whole) + "\n").root_node.has_error
    if ends_file or (marker_indent == "" and header_indent == ""):
        if parse(lang, "\n".join(whole) + "\n").root_node.has_error:
            return False  # e.g. its closing bracket is not in the region
        body = {x.strip() for x in whole[1:] if not is_trivial(x)}
        return not any(x.strip() in body for x in old_def[1:])
    return False


def extend_to_whole_definition(start: int, end: int, repl: list[str], written: list[str], orig: list[str],
                               defs: list[Definition], limit: int, lang: str | None,
                               marker_indent: str | None, ends_file: bool) -> int:
    """New end (exclusive) of the original span [start, end) that a region replaces (`repl`, re-indented
    for the original; `written`, as the snippet has it): past the rest of a definition that starts
    inside the span and that the region restates completely. `limit`: where the next span begins."""
    if lang is None or len(written) != len(repl):
        return end
    for d in defs:
        if not (start <= d.node_start < end <= d.end < limit):
            continue
        heads = [h for h, x in enumerate(repl) if x.strip() == d.header] or _edited_headers(d, repl, orig)
        if len(heads) != 1 or sum(1 for x in orig[start:end] if x.strip() == d.header) != 1:
            continue  # the header is missing or repeated: no safe pairing
        h = heads[0]
        if _complete_in_region(written[h:], repl[h].strip(), indent_of(written[h]), marker_indent, ends_file, lang,
                               orig[d.node_start:d.end + 1]):
            return d.end + 1
    return end


def _edited_headers(d: Definition, repl: list[str], orig: list[str]) -> list[int]:
    """The lines of `repl` that restate `d`'s header edited (a new parameter or return type): they
    name `d` before its parameters and begin with the same word at the same indentation. A region
    that restates `def foo(x, z):` and a new body replaces all of the old `def foo(x):`, not only its
    header line (which left the old body after the new one: a silent wrong before this rule)."""
    return [h for h, x in enumerate(repl) if restates_header(d, x, orig[d.node_start])]
