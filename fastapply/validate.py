"""Safety checks on a merged file, used on the structural merge and on model output alike.

Each check returns findings; severity "error" means the result must not be used.
- parse: the merged file has more tree-sitter error nodes than the original; where the original
  does not parse (mostly: `languages.unparsable`), also a bracket balance other than the original's.
- empty_body: a function/class body that had statements is now empty (and the update did not say so).
- large_deletion: much of the original vanished although the update marks code as kept.
- marker_leak: an elision marker from the update ended up in the file.
- compile (Python): the merged file does not compile although the original does (`compile`, which
  parses and never runs; tree-sitter accepts an empty `if` block that Python rejects).
- dangling_attribute: an attribute line (`#[test]`, `@Override`) with nothing after it to apply to
  (the file's end, or a block's closer), more of them than the original has (tree-sitter-rust
  accepts `#[test]` at the end of a file).
"""

from __future__ import annotations

import re
from collections import Counter

from fastapply.languages import bracket_balance, detect_language, error_count, parse, union, unparsable
from fastapply.markers import INLINE_MARKER, marker_flags
from fastapply.merge.text import CLOSERS
from fastapply.types import Finding

_BODY_DEFS = union("body_defs")  # definitions whose body must not become empty (per language: languages.py)
_BLOCK_BODIES = union("body_types")  # block bodies; any other body without statements is an expression

# large_deletion: a file of at least MIN_LINES non-blank lines losing more than max(MIN_LOST, a third)
# of them is flagged; an error (not a warning) when the snippet has markers, more than half is gone and
# the snippet itself shows less than half of the file.
LARGE_DELETION_MIN_LINES = 20
LARGE_DELETION_MIN_LOST = 10
LARGE_DELETION_ERROR_RATIO = 0.5


def _defs_with_empty_body(tree, text: bytes) -> Counter:
    """Header text of definitions whose body has no named child other than comments."""
    out: Counter = Counter()
    if tree is None:
        return out
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _BODY_DEFS:
            body = node.child_by_field_name("body")
            if body is not None and body.type != "expression_statement" and \
                    not any("comment" not in ch.type for ch in body.named_children) and \
                    (body.named_child_count > 0 or body.type in _BLOCK_BODIES):
                # (an expression body without named children, as in an arrow function, is never "empty")
                header = text[node.start_byte:body.start_byte].decode("utf-8", "replace").strip()
                out[" ".join(header.split())] += 1
        stack.extend(node.named_children)
    return out


def _nonblank(text: str) -> Counter:
    return Counter(ln.strip() for ln in text.splitlines() if ln.strip())


def validate(original: str, update: str, merged: str, language: str | None) -> list[Finding]:
    findings: list[Finding] = []
    lang = detect_language(language, None, original)

    # parse: no worse than the original
    t_orig = parse(lang, original)
    if t_orig is not None:
        t_merged = parse(lang, merged)
        e_orig, e_merged = error_count(t_orig), error_count(t_merged)
        if e_merged > e_orig:
            findings.append(Finding("parse", f"the merged file has {e_merged} syntax error node(s); "
                                             f"the original has {e_orig}", "error"))
        elif unparsable(t_orig, original):
            before, after = bracket_balance(t_orig), bracket_balance(t_merged)
            if after != before:
                findings.append(Finding("parse", "the original does not parse, and the merged file opens and closes "
                                                 f"brackets otherwise (open minus closed (), {{}}, []: {before} -> "
                                                 f"{after})", "error"))
        # empty bodies that the original did not have and the update did not ask for
        empty_before = _defs_with_empty_body(t_orig, original.encode("utf-8"))
        empty_after = _defs_with_empty_body(t_merged, merged.encode("utf-8"))
        t_upd = parse(lang, update)
        empty_upd = _defs_with_empty_body(t_upd, update.encode("utf-8"))
        for header, n in (empty_after - empty_before).items():
            if empty_upd.get(header, 0) < n:
                findings.append(Finding("empty_body", f"the body of `{header[:80]}` became empty", "error"))

    # marker leak: a marker line (or inline marker) in the result that the original did not have
    orig_lines = original.splitlines()
    merged_lines = merged.splitlines()
    orig_set = set(ln.strip() for ln in orig_lines)
    for line, is_marker in zip(merged_lines, marker_flags(merged_lines, orig_lines)):
        if is_marker and line.strip() not in orig_set:
            findings.append(Finding("marker_leak", f"marker text left in the result: {line.strip()[:80]!r}", "error"))
            break
    else:
        orig_inline = len(INLINE_MARKER.findall(original))
        if len(INLINE_MARKER.findall(merged)) > orig_inline:
            findings.append(Finding("marker_leak", "an inline marker was left in the result", "error"))

    # large unexplained deletion: original lines gone that the update neither shows nor replaces
    before, after, upd = _nonblank(original), _nonblank(merged), _nonblank(update)
    lost = before - after
    n_lost = sum(lost.values())
    n_before = sum(before.values())
    if n_before >= LARGE_DELETION_MIN_LINES and n_lost > max(LARGE_DELETION_MIN_LOST, n_before // 3):
        has_markers = any(marker_flags(update.splitlines(), orig_lines))
        ratio = n_lost / n_before
        shown_little = sum(upd.values()) < n_before * LARGE_DELETION_ERROR_RATIO
        severity = "error" if has_markers and ratio > LARGE_DELETION_ERROR_RATIO and shown_little else "warning"
        findings.append(Finding("large_deletion", f"{n_lost} of {n_before} non-blank original lines are gone "
                                                  f"({ratio:.0%})", severity))
    dangling = _dangling_attributes(merged_lines)
    if dangling and len(dangling) > len(_dangling_attributes(orig_lines)):
        findings.append(Finding("dangling_attribute", f"`{dangling[-1][:60]}` would stand with nothing after it to "
                                                      "apply to", "error"))
    if lang == "python":
        findings.extend(python_compiles(original, merged))
    return findings


# a line that is one outer attribute, decorator or annotation (`#![...]` applies to what encloses it)
_ATTRIBUTE_LINE = re.compile(r"(@[A-Za-z_][\w.]*(\(.*\))?|#\[.*\])")


def _dangling_attributes(lines: list[str]) -> list[str]:
    """Attribute lines followed by no item: by the end of the file or a block's closer."""
    code = [x.strip() for x in lines if x.strip()]
    return [x for i, x in enumerate(code) if _ATTRIBUTE_LINE.fullmatch(x) and
            (i + 1 == len(code) or code[i + 1] in CLOSERS)]


# -- exact syntax oracle (Python): the language's own compiler ------------------------------------------------

def _compile_error(text: str) -> str | None:
    """Why this Python's compiler rejects `text` (None: it compiles). `compile` parses and builds
    bytecode; it never runs the code. Deep nesting exhausts the compiler's recursion: a reason too."""
    try:
        compile(text, "<merged>", "exec", dont_inherit=True)
    except SyntaxError as e:  # IndentationError, TabError included
        return f"{type(e).__name__}: {e.msg} (line {e.lineno})"
    except (RecursionError, MemoryError) as e:
        return f"too deeply nested for the compiler ({type(e).__name__})"
    except ValueError as e:  # NUL bytes, bad encodings
        return f"ValueError: {e}"
    return None


def python_compiles(original: str, merged: str) -> list[Finding]:
    """The merged file must compile where the original did. An original this Python already rejects
    (newer syntax, a fragment) gives no verdict: compare, never refuse for that alone."""
    if _compile_error(original) is not None:
        return []
    problem = _compile_error(merged)
    if problem is None:
        return []
    return [Finding("compile", f"Python cannot compile the merged file: {problem}", "error")]
