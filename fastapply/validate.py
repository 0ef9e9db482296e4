"""Safety checks on a merged file, used on the structural merge and on model output alike.

Each check returns findings; severity "error" means the result must not be used.
- parse: the merged file has more tree-sitter error nodes than the original.
- empty_body: a function/class body that had statements is now empty (and the update did not say so).
- large_deletion: much of the original vanished although the update marks code as kept.
- marker_leak: an elision marker from the update ended up in the file.
"""

from __future__ import annotations

from collections import Counter

from fastapply.types import Finding
from fastapply.languages import detect_language, error_count, parse
from fastapply.markers import INLINE_MARKER, marker_flags

_BODY_FIELDS = ("body",)
_DEF_SUFFIXES = ("function_definition", "function_declaration", "method_definition", "method_declaration",
                 "class_definition", "class_declaration", "function_item", "impl_item", "trait_item",
                 "constructor_declaration", "interface_declaration", "enum_declaration", "func_literal",
                 "arrow_function", "function_expression", "struct_item", "enum_item")


def _defs_with_empty_body(tree, text: bytes) -> Counter:
    """Header text of definitions whose body has no named child other than comments."""
    out: Counter = Counter()
    if tree is None:
        return out
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _DEF_SUFFIXES:
            body = node.child_by_field_name("body")
            if body is not None:
                named = [ch for ch in body.named_children if "comment" not in ch.type]
                if not named and body.type not in ("expression_statement",) and body.end_byte - body.start_byte >= 0:
                    header = text[node.start_byte:body.start_byte].decode("utf-8", "replace").strip()
                    if body.named_child_count == 0 and body.type not in ("block", "statement_block",
                                                                           "class_body", "declaration_list",
                                                                           "field_declaration_list", "compound_statement",
                                                                           "enum_variant_list", "interface_body",
                                                                           "class_block", "constructor_body",
                                                                           "enum_body"):
                        pass  # expression bodies (arrow functions) are never "empty"
                    else:
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
    if n_before >= 20 and n_lost > max(10, n_before // 3):
        has_markers = any(marker_flags(update.splitlines(), orig_lines))
        ratio = n_lost / n_before
        severity = "error" if has_markers and ratio > 0.5 and sum(upd.values()) < n_before * 0.5 else "warning"
        findings.append(Finding("large_deletion", f"{n_lost} of {n_before} non-blank original lines are gone "
                                                  f"({ratio:.0%})", severity))
    return findings
