"""Safety checks on a merged file, used on the structural merge and on model output alike.

Each check returns findings; severity "error" means the result must not be used.
- parse: the merged file has more tree-sitter error nodes than the original; where the original
  does not parse (mostly: `languages.unparsable`), also a bracket balance other than the original's.
  Where the original is a fragment (a section of a file cut inside a block, `merge/fragment.py`),
  where the errors are instead of how many, and the bracket balance.
- section: what the merge writes beyond the first and last lines of an original that may be a
  section of a file (`SECTION_CHECKS`, `merge/checks/fragments.py`); with `section`, the request
  says it is one: both its edges are cuts, whatever its text looks like (`fragment.SAID`).
- empty_body: a function/class body that had statements is now empty (and the update did not say so).
- large_deletion: much of the original vanished although the update marks code as kept.
- marker_leak: an elision marker from the update ended up in the file, or a new line that reads like
  a note that code was left out (`markers.reads_like_elision`), marker or not.
- compile (Python): the merged file does not compile although the original does (`compile`, which
  parses and never runs; tree-sitter accepts an empty `if` block that Python rejects).
- dangling_attribute: an attribute line (`#[test]`, `@Override`) with nothing after it to apply to
  (the file's end, or a block's closer), more of them than the original has (tree-sitter-rust
  accepts `#[test]` at the end of a file).
- syntax (JSON, JSONC, TOML, YAML): the format's own parser rejects the merged file although it
  reads the original (stdlib `json` and `tomllib`, PyYAML); JSONC (and a JSON file that has them
  already) may hold comments and trailing commas.
- parse, per block (Vue, Svelte): a <script>, <style> or <template> block of the merged file parses
  worse under its own grammar (by `lang=`) than the original's blocks.

`unmergeable_input` is a check on the input: binary or minified text, which no merge by lines can edit.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter

import yaml

from fastapply.languages import BY_NAME, bracket_balance, detect_language, error_count, parse, unparsable
from fastapply.markers import INLINE_MARKER, marker_flags, reads_like_elision
from fastapply.memo import per_thread_lru
from fastapply.merge.checks import SECTION_CHECKS, named_refusal
from fastapply.merge.fragment import BESIDE_CUT, SECTION_KIND, Cuts, closed_errors, find_cuts, new_errors
from fastapply.merge.section import section_edit
from fastapply.merge.text import CLOSERS
from fastapply.types import Finding

# large_deletion: a file of at least MIN_LINES non-blank lines losing more than max(MIN_LOST, a third)
# of them is flagged; an error (not a warning) when the snippet has markers, more than half is gone and
# the snippet itself shows less than half of the file.
LARGE_DELETION_MIN_LINES = 20
LARGE_DELETION_MIN_LOST = 10
LARGE_DELETION_ERROR_RATIO = 0.5


@per_thread_lru(8)
def _defs_with_empty_body(tree, source: str, lang: str | None) -> Counter:
    """Header text of definitions whose body has no named child other than comments (the language's
    `body_defs`; its `body_types` are block bodies, any other body without statements is an expression).
    Kept per tree: every reading of a refusal is validated against the same original. Read-only."""
    out: Counter = Counter()
    info = BY_NAME.get(lang)
    if tree is None or info is None:
        return out
    text = source.encode("utf-8")
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in info.body_defs:
            body = node.child_by_field_name("body")
            if body is not None and body.type != "expression_statement" and \
                    not any("comment" not in ch.type for ch in body.named_children) and \
                    (body.named_child_count > 0 or body.type in info.body_types):
                # (an expression body without named children, as in an arrow function, is never "empty")
                header = text[node.start_byte:body.start_byte].decode("utf-8", "replace").strip()
                out[" ".join(header.split())] += 1
        stack.extend(node.named_children)
    return out


def _nonblank(text: str) -> Counter:
    return Counter(ln.strip() for ln in text.splitlines() if ln.strip())


def validate(original: str, update: str, merged: str, language: str | None, section: bool = False) -> list[Finding]:
    findings: list[Finding] = []
    lang = detect_language(language, None, original)

    # parse: no worse than the original
    t_orig = parse(lang, original)
    cuts = find_cuts(original.splitlines(), lang, t_orig, section)  # a section of a file, cut inside a block?
    if t_orig is not None:
        t_merged = parse(lang, merged)
        findings.extend(_parse_findings(original, merged, lang, t_orig, t_merged, cuts))
        # empty bodies that the original did not have and the update did not ask for
        empty_before = _defs_with_empty_body(t_orig, original, lang)
        empty_after = _defs_with_empty_body(t_merged, merged, lang)
        t_upd = parse(lang, update)
        empty_upd = _defs_with_empty_body(t_upd, update, lang)
        for header, n in (empty_after - empty_before).items():
            if empty_upd.get(header, 0) < n:
                findings.append(Finding("empty_body", f"the body of `{header[:80]}` became empty", "error"))

    broken = t_orig is not None and bool(original.strip()) and unparsable(t_orig, original)
    findings.extend(_section_findings(original, update, merged, lang, cuts, broken))

    # marker leak: a marker line (or inline marker) in the result that the original did not have
    orig_lines = original.splitlines()
    merged_lines = merged.splitlines()
    orig_set = set(ln.strip() for ln in orig_lines)
    for line, is_marker in zip(merged_lines, marker_flags(merged_lines, orig_lines)):
        if is_marker and line.strip() not in orig_set:
            findings.append(Finding("marker_leak", f"marker text left in the result: {line.strip()[:80]!r}", "error"))
            break
        if line.strip() not in orig_set and reads_like_elision(line):
            findings.append(Finding("marker_leak", f"a note that code was left out would be written into the file: "
                                                   f"{line.strip()[:80]!r}", "error"))
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
    dangling = _dangling_attributes(merged_lines) if lang not in _AT_IS_A_VARIABLE else []
    if dangling and len(dangling) > len(_dangling_attributes(orig_lines)):
        findings.append(Finding("dangling_attribute", f"`{dangling[-1][:60]}` would stand with nothing after it to "
                                                      "apply to", "error"))
    if lang == "python":
        findings.extend(python_compiles(original, merged))
    info = BY_NAME.get(lang) if lang else None
    if info is not None and info.config_parser:
        findings.extend(config_parses(original, merged, info.config_parser))
    if info is not None and info.component_blocks:
        findings.extend(blocks_parse(original, merged))
    return findings


def _parse_findings(original: str, merged: str, lang: str | None, t_orig, t_merged, cuts: Cuts) -> list[Finding]:
    """No more syntax error nodes than the original; where it does not parse (mostly), the same
    bracket balance. A fragment (a section of a file cut inside a block, `merge/fragment.py`) has
    errors of its own at its cuts, which move with any edit and let a count hide a new one: there,
    the same bracket balance (a section's edit keeps it, since the files before and after both
    close what they open) and no error where the original has none."""
    orig, new = original.splitlines(), merged.splitlines()
    cut = t_orig.root_node.has_error and cuts.in_text  # (a section whose text shows no cut parses as a file)
    out = []
    e_orig, e_merged = error_count(t_orig), error_count(t_merged)
    if e_merged > e_orig and not cut:
        out.append(Finding("parse", f"the merged file has {e_merged} syntax error node(s); the original has {e_orig}",
                           "error"))
    elif cut or unparsable(t_orig, original):
        before, after = bracket_balance(t_orig), bracket_balance(t_merged)
        if after != before:
            out.append(Finding("parse", f"the original {'is a fragment' if cut else 'does not parse'}, and the merged "
                                        f"file opens and closes brackets otherwise (open minus closed (), {{}}, []: "
                                        f"{before} -> {after})", "error"))
    closed = (closed_errors(original, t_orig, lang), closed_errors(merged, t_merged, lang)) \
        if cut and not cuts.head_in_text and not out else ()  # (a cut start leaves errors no closer mends)
    if closed and None not in closed and closed[1] > closed[0]:
        out.append(Finding("parse", f"with the brackets it leaves open closed, the merged section has {closed[1]} "
                                    f"syntax error node(s); the original has {closed[0]}", "error"))
    rows = new_errors(t_orig, t_merged, orig, new) if cut and not out else []
    if rows:
        out.append(Finding("parse", f"the merged section has a syntax error at its line {rows[0] + 1}, where the "
                                    "original (a fragment, with errors at its cuts) has none", "error"))
    return out


def _section_findings(original: str, update: str, merged: str, lang: str | None, cuts: Cuts,
                      broken: bool = False) -> list[Finding]:
    """The section rules (`SECTION_CHECKS`) on what the merge writes beyond the original's first and
    last lines, and on an original cut inside a block (`merge/fragment.py`); a grammar is not needed."""
    edit = section_edit(original.splitlines(), update.splitlines(), merged.splitlines(), lang, cuts, broken)
    found = named_refusal(SECTION_CHECKS, edit) if edit is not None else None
    if not found:
        return []
    reason = found[1]
    if cuts.unasked:  # nobody said "section": say what in the text did (once, where a rule names the edge)
        why = f"read as a section of a file: {cuts.why_unasked}"
        reason = reason.replace(f"({BESIDE_CUT})", f"({why})") if BESIDE_CUT in reason else f"{reason} ({why})"
    return [Finding(SECTION_KIND, reason, "error")]


# a line that is one outer attribute, decorator or annotation (`#![...]` applies to what encloses it)
_ATTRIBUTE_LINE = re.compile(r"(@[A-Za-z_][\w.]*(\(.*\))?|#\[.*\])")
# where `@name` on its own line is a variable (a Ruby method's value before its `end`), not an attribute
_AT_IS_A_VARIABLE = frozenset({"ruby", "coffeescript", "perl"})


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


# -- the format's own parser (JSON, JSONC, TOML, YAML): a config that parsed before must parse after -----------

def config_parses(original: str, merged: str, parser: str) -> list[Finding]:
    """The merged file must parse where the original did, under the same rules (a JSON file that
    already holds comments or trailing commas is read as JSONC). An original the parser rejects
    gives no verdict: the tree-sitter check still compares the two."""
    strict = parser != "jsonc" and _config_error(original, parser) is None
    rules = parser if strict else {"json": "jsonc"}.get(parser, parser)
    if not strict and _config_error(original, rules) is not None:
        return []
    problem = _config_error(merged, rules)
    if problem is None:
        return []
    name = {"json": "JSON", "jsonc": "JSON with comments", "toml": "TOML", "yaml": "YAML"}[rules]
    return [Finding("syntax", f"the merged file is not valid {name}, the original is: {problem}", "error")]


def _config_error(text: str, parser: str) -> str | None:
    """Why the parser rejects `text`, with the line (None: it parses)."""
    try:
        if parser == "json":
            json.loads(text)
        elif parser == "jsonc":
            json.loads(_without_jsonc_extras(text))
        elif parser == "toml":
            tomllib.loads(text)
        else:  # composed, not constructed: custom tags (`!Ref`) and anchors are the file's business
            for _ in yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                pass
    except json.JSONDecodeError as e:
        return f"{e.msg} (line {e.lineno}, column {e.colno})"
    except tomllib.TOMLDecodeError as e:
        return str(e)  # "... (at line 3, column 5)"
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        return f"{e.problem or e.context}" + (f" (line {mark.line + 1}, column {mark.column + 1})" if mark else "")
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        return f"{type(e).__name__}: {e}"
    return None


# a JSON string, a // or /* */ comment, or a comma before a closer (once comments are blanked)
_JSONC_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_JSONC_TRAILING_COMMA = re.compile(r'"(?:[^"\\\n]|\\.)*"|,(?=\s*[\]}])')


def _without_jsonc_extras(text: str) -> str:
    """JSONC read as JSON: comments and trailing commas blanked out (same length and lines, so that
    the parser's line numbers are the file's)."""
    def blank(m: re.Match) -> str:
        return m.group() if m.group().startswith('"') else re.sub(r"[^\n]", " ", m.group())

    return _JSONC_TRAILING_COMMA.sub(blank, _JSONC_COMMENT.sub(blank, text))


# -- single-file components (Vue, Svelte): each top-level block under its own grammar ----------------------

# a top-level block: its tags at column 0, as both frameworks write them
_BLOCK = re.compile(r"^<(script|style|template)\b([^>]*)>(.*?)^</\1\s*>", re.S | re.M)
_LANG_ATTR = re.compile(r"""\blang\s*=\s*["']?([\w-]+)""")
_BLOCK_GRAMMARS = {("script", ""): "javascript", ("script", "js"): "javascript", ("script", "javascript"): "javascript",
                   ("script", "ts"): "typescript", ("script", "typescript"): "typescript", ("script", "jsx"): "jsx",
                   ("script", "tsx"): "tsx", ("style", ""): "css", ("style", "css"): "css", ("style", "scss"): "scss",
                   ("template", ""): "html", ("template", "html"): "html"}


def component_blocks(text: str) -> Counter:
    """(tag, grammar) -> syntax error nodes over the component's top-level blocks that have a grammar
    here (a `lang="pug"` template or a `lang="less"` style has none: not counted)."""
    errors: Counter = Counter()
    for m in _BLOCK.finditer(text):
        tag, attrs, body = m.groups()
        lang = _LANG_ATTR.search(attrs)
        grammar = _BLOCK_GRAMMARS.get((tag, lang.group(1).lower() if lang else ""))
        tree = parse(grammar, body) if grammar else None
        if tree is not None:
            errors[(tag, grammar)] += error_count(tree)
    return errors


def blocks_parse(original: str, merged: str) -> list[Finding]:
    """Each block kind of the merged component parses no worse than the original's."""
    before, after = component_blocks(original), component_blocks(merged)
    return [Finding("parse", f"the merged file's <{tag}> block ({grammar}) has {n} syntax error node(s); the "
                             f"original's has {before[(tag, grammar)]}", "error")
            for (tag, grammar), n in sorted(after.items()) if n > before[(tag, grammar)]]


# -- input the merge cannot edit: binary or minified text ----------------------------------------------------

# A line this long is generated or minified code, when the file's lines are long on average too (a
# data file with one long line among short ones is still merged). The merge places code by lines:
# an edit inside such a line has nowhere to go, and its similarity search over it takes seconds.
MINIFIED_LINE_CHARS = 5_000
MINIFIED_MEAN_LINE_CHARS = 300


def unmergeable_input(original: str, update: str) -> str | None:
    """Why the merge will not take this input (binary, minified), or None; said in milliseconds."""
    for text, what in ((original, "original"), (update, "snippet")):
        if "\x00" in text:
            return (f"the {what} holds NUL bytes: binary content, which the merge does not edit; send text, or "
                    "leave the file to a tool that knows its format")
    lines = original.splitlines() or [""]
    longest = max(range(len(lines)), key=lambda i: len(lines[i]))
    mean = len(original) / len(lines)
    if len(lines[longest]) > MINIFIED_LINE_CHARS and mean > MINIFIED_MEAN_LINE_CHARS:
        return (f"edit the source this file is built from: it looks minified or generated (line {longest + 1} has "
                f"{len(lines[longest]):,} characters, the lines average {mean:,.0f}); the merge places code by lines "
                "and cannot place an edit inside such a line")
    return None
