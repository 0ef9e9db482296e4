"""Read a request once, in front of every rule: the snippet as agents really send it, made into the
snippet the merge's rules read, with a note for each thing done.

Small ordered steps, each named for what it removes (the shape of Continue's
`filterEnglishLinesAtStart` / `filterCodeBlockLines` and vLLM's input processors):

1. `FileForm.of`         the original's BOM and line endings, put back on the answer (merge/form.py);
                         the snippet's own are dropped (an agent's CRLF says nothing about the file's)
2. `unfence`             a snippet wrapped whole in a markdown fence, after at most one line of prose
3. `refuse_unwritable`   a note that reads like an elision note but is no marker (never written);
                         a snippet of markers or prose only
4. `read_markers`        elision notes in any comment syntax and wording, written as the file's marker
5. `rebase_indentation`  the snippet's indentation re-based to the file's (merge/indent.py)
6. `trailing_space`      a line the file has with trailing whitespace, shown without it, is that line

A step that cannot be sure refuses with a first line that says what to send instead: a refusal of
the input, as an empty or binary one is (`core.INPUT_CHECK`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fastapply.languages import BY_NAME
from fastapply.markers import comment_opener, marker_flags, reads_like_elision
from fastapply.merge.form import BOM, FileForm
from fastapply.merge.indent import rebase

# A fence line: ``` or ~~~ and an optional info string (a language tag).
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.\-]*)\s*$")
# One line of prose before a fence: a sentence ending in ':' ("Here is the updated function:").
_PROSE = re.compile(r"^[A-Z][^`{}();=<>]*:\s*$")
# Prose an agent leads a snippet with (Continue's `filterEnglishLinesAtStart` list).
_LEADING_PROSE = re.compile(r"^(here is|here's|sure[,!]|sure thing|certainly|of course|below is|the updated)\b", re.I)


class Refused(Exception):
    """The request cannot be read for sure; the message says what to send instead."""


@dataclass(frozen=True)
class Intake:
    original: str  # LF, no BOM: what the merge reads
    update: str  # the snippet, read (the same text when nothing needed doing)
    form: FileForm
    notes: tuple[str, ...] = ()  # what was done, each one line (findings)


def read_request(original: str, update: str, lang: str | None) -> Intake:
    """The request as the merge reads it, or `Refused`."""
    form, original = FileForm.of(original)
    update = update.removeprefix(BOM).replace("\r\n", "\n")
    trailing = update.endswith("\n")
    lines = (update[:-1] if trailing else update).split("\n")
    orig_lines = original.split("\n")
    notes = list(form.describe())
    for step in (unfence, refuse_unwritable, read_markers, rebase_indentation, trailing_space):
        lines, note = step(lines, orig_lines, lang)
        if note:
            notes.append(note)
    text = "\n".join(lines) + ("\n" if trailing else "")
    return Intake(original, text, form, tuple(notes))


def unfence(lines: list[str], orig_lines: list[str], lang: str | None) -> tuple[list[str], str]:
    """A snippet wrapped whole in a markdown fence (after at most one line of prose ending in ':'),
    in a file that has no such lines and is not Markdown: the code inside. A fence that may be the
    file's own (Markdown, a file with fence lines) is refused, naming it."""
    first = next((i for i, x in enumerate(lines) if x.strip()), None)
    if first is None:
        return lines, ""
    last = max(i for i, x in enumerate(lines) if x.strip())
    prose = None
    if not _FENCE.match(lines[first]) and _PROSE.match(lines[first].strip()):
        nxt = next((i for i in range(first + 1, last + 1) if lines[i].strip()), None)
        if nxt is not None and _FENCE.match(lines[nxt]):
            prose, first = lines[first].strip(), nxt
    if not _FENCE.match(lines[first]):
        if _LEADING_PROSE.match(lines[first].strip()) and lines[first].rstrip().endswith(":") and \
                lines[first].strip() not in {x.strip() for x in orig_lines}:
            raise Refused(f"Send the code alone: the snippet starts with prose (`{lines[first].strip()[:60]}`), "
                          "which would be written into the file")
        return lines, ""
    opener = lines[first].strip()
    if last == first or not _FENCE.match(lines[last]):
        if prose is None and _fence_lines(orig_lines):
            return lines, ""  # a fence line of the file's own (a Markdown code block), shown as context
        raise Refused(f"Send the code without the markdown fence: the snippet opens with a fence ({opener}) "
                      "but does not end with a closing one, so where the code ends is not clear")
    inner = lines[first + 1:last]
    if not any(x.strip() for x in inner):
        raise Refused(f"Send the code itself: the snippet is only a markdown fence ({opener}) with nothing inside")
    if lang == "markdown" or _fence_lines(orig_lines) or _fence_lines(inner):
        if prose is None and opener in {x.strip() for x in orig_lines}:
            return lines, ""  # the file's own fenced block (a Markdown code block), shown as context
        raise Refused(f"Send the code without the markdown fence ({opener} ... ```): "
                      f"{'this Markdown file' if lang == 'markdown' else 'the file'} may have such lines of its own, "
                      "so the fence cannot be told from content")
    what = f"fence ({opener})" + (f" and the prose line before it (`{prose[:40]}`)" if prose else "")
    return inner, f"unwrapped the snippet from its markdown {what}"


def _fence_lines(lines: list[str]) -> bool:
    return any(_FENCE.match(x) for x in lines)


def refuse_unwritable(lines: list[str], orig_lines: list[str], lang: str | None) -> tuple[list[str], str]:
    """What would be written into the file and must not be: a new comment that reads like an
    elision note but is no marker (`// TODO: rest of the implementation here`); a snippet that is
    only markers, or only prose."""
    flags = marker_flags(lines, orig_lines)
    have = {x.strip() for x in orig_lines}
    for i, (line, is_marker) in enumerate(zip(lines, flags)):
        s = line.strip()
        if not is_marker and s not in have and reads_like_elision(s):
            raise Refused(f"Write `{s[:60]}` (snippet line {i + 1}) as a marker on a line of its own, such as "
                          f"`{_template(lang)}`, or reword it: it reads like a note that code was left out, and "
                          "fastapply does not write such notes into files")
    if any(flags) and all(f or not x.strip() for x, f in zip(lines, flags)):
        raise Refused("Send the changed code with markers around it: the snippet is only markers")
    if _only_prose(lines, orig_lines, lang):
        raise Refused("Send the code itself: the snippet is only prose, which would be written into the file")
    return lines, ""


def read_markers(lines: list[str], orig_lines: list[str], lang: str | None) -> tuple[list[str], str]:
    """Elision notes in another comment syntax or wording than the file's marker (`REM ... existing
    code ...`, `# rest of file unchanged`, `// ...` in Python), written as the file's marker where the
    file's language has a grammar that must parse the snippet. A comment the original has is content
    (`marker_flags` decides, as ever)."""
    flags = marker_flags(lines, orig_lines)
    have = {x.strip() for x in orig_lines}
    native = _native_openers(lang)
    out, rewritten = list(lines), []
    for i, (line, is_marker) in enumerate(zip(lines, flags)):
        s = line.strip()
        if not is_marker or s in have or native is None:
            continue
        if comment_opener(s) in native and ("..." in s or "…" in s):
            continue  # the file's own comment syntax, dotted: as the merge's rules know markers
        out[i] = line[: len(line) - len(line.lstrip())] + _template(lang)
        rewritten.append(s)
    if not rewritten:
        return lines, ""
    shown = ", ".join(f"`{x[:40]}`" for x in dict.fromkeys(rewritten))
    return out, f"read {shown} as {'a marker' if len(rewritten) == 1 else 'markers'}"


# A sentence: capitalised words, no code punctuation, ending in '.', ':', '!' or '?'.
_SENTENCE = re.compile(r"^[A-Z][a-z']*(?:[ ,]+[\w'-]+)+[.:!?]$")
# Where sentences are the file's content, or valid code, prose is not told apart.
_PROSE_IS_CONTENT = frozenset({None, "markdown", "html", "yaml", "toml", "text", "plaintext", "vue", "svelte"})


def _only_prose(lines: list[str], orig_lines: list[str], lang: str | None) -> bool:
    code = [x.strip() for x in lines if x.strip()]
    if lang in _PROSE_IS_CONTENT or not code:
        return False
    have = {x.strip() for x in orig_lines}
    return all(_SENTENCE.match(x) and x not in have for x in code)


def _template(lang: str | None) -> str:
    info = BY_NAME.get(lang or "")
    return info.marker_templates[0] if info is not None and info.marker_templates else "// ... existing code ..."


def _native_openers(lang: str | None) -> set[str] | None:
    """The comment tokens of the language's own markers; None where nothing parses the snippet."""
    info = BY_NAME.get(lang or "")
    if info is None or info.grammar is None or not info.marker_templates:
        return None
    return {comment_opener(t) for t in info.marker_templates}


def rebase_indentation(lines: list[str], orig_lines: list[str], lang: str | None) -> tuple[list[str], str]:
    """The snippet's indentation in the file's style (merge/indent.py), or `Refused`."""
    flags = marker_flags(lines, orig_lines)
    done = rebase(lines, orig_lines, flags)
    if done is None:
        return lines, ""
    if done.lines is None:
        raise Refused(done.note[:1].upper() + done.note[1:])
    return done.lines, done.note


def trailing_space(lines: list[str], orig_lines: list[str], lang: str | None) -> tuple[list[str], str]:
    """A snippet line equal to original lines but for trailing whitespace, which all those lines
    have alike (Markdown's two-space line break, a stray space): the original's line. Blank lines
    are the merge's business."""
    ends: dict[str, set[str]] = {}
    exact = set(orig_lines)
    for ln in orig_lines:
        if ln.strip():
            ends.setdefault(ln.rstrip(), set()).add(ln[len(ln.rstrip()):])
    out, n = list(lines), 0
    for i, ln in enumerate(lines):
        if not ln.strip() or ln in exact:
            continue
        found = ends.get(ln.rstrip())
        if found and len(found) == 1:
            tail = next(iter(found))
            if tail and tail != ln[len(ln.rstrip()):]:
                out[i], n = ln.rstrip() + tail, n + 1
    if not n:
        return lines, ""
    return out, f"gave {n} snippet line(s) the trailing whitespace the file has on them"
