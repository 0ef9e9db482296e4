"""Messy snippets: the shapes real agents send that our case sets do not (tabs where the file has
spaces, another indent width, a dedented member, stripped trailing whitespace, CRLF, a BOM, no
final newline, a Markdown fence, another marker wording), each applied to a clean case so that the
expected file stays known exactly.

A transform is a pure function `(Variant, rng) -> Variant` that raises `Skip` when it cannot keep
the expected file exact, or would leave the case as it was. `rng` needs only `.choice`, so that a
`random.Random` (evals.messy) and a fuzz `Pick` (evals.fuzz_messy) both drive it. Written without
reading the merge: the markers are found by a regex of our own, over the snippet's new lines.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Variant:
    language: str
    original: str
    update: str
    expected: str


class Skip(Exception):
    """The transform does not apply to this case; the message says why (counted per reason)."""


# -- indentation

def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _leads(text: str) -> list[str]:
    """Leading whitespace of the indented code lines (a block comment's ` *` lines sit off the grid)."""
    return [_lead(x) for x in text.split("\n") if x.strip() and _lead(x) and not x.lstrip().startswith("*")]


def indent_style(text: str) -> str | None:
    """'tab' (a stray space-indented line or two allowed), 'space' (no tab-indented line), or None."""
    leads = _leads(text)
    tabs = sum(x.startswith("\t") for x in leads)
    if tabs and len(leads) - tabs <= 0.05 * len(leads):
        return "tab"
    if leads and not any("\t" in x for x in leads):
        return "space"
    return None


def indent_unit(text: str) -> int | None:
    """2 or 4 where the file's space indentation clearly steps by it, else None (a few alignment
    lines off the grid are allowed)."""
    if indent_style(text) != "space":
        return None
    sizes = [len(x) for x in _leads(text)]
    off4 = sum(n % 4 == 2 for n in sizes)
    if len(sizes) < 3 or sum(n % 2 for n in sizes) > 0.05 * len(sizes):
        return None
    if off4 >= max(2, 0.1 * len(sizes)):
        return 2
    return 4 if off4 <= 0.02 * len(sizes) else None


def _reindent(update: str, lead_of) -> str:
    """Every line's leading whitespace rewritten by `lead_of` (whitespace-only lines too: an editor
    converts them alike); the rest of each line is kept byte for byte."""
    return "\n".join(lead_of(_lead(x)) + x[len(_lead(x)):] for x in update.split("\n"))


def _changed(v: Variant, update: str, what: str) -> Variant:
    if update == v.update:
        raise Skip(f"no {what} in the snippet")
    return replace(v, update=update)


def tabs_to_spaces(v: Variant, rng) -> Variant:
    """A tab-indented file's snippet written with 4 spaces per tab."""
    if indent_style(v.original) != "tab" or indent_style(v.expected) != "tab":
        raise Skip("file not tab-indented")
    if any(_lead(x).startswith("    ") for x in v.update.split("\n")):
        raise Skip("snippet has a space-indented line (it would read as a converted tab)")
    return _changed(v, _reindent(v.update, lambda s: s.replace("\t", "    ")), "tab indentation")


def _space_unit(v: Variant, unit: int | None = None) -> int:
    got = indent_unit(v.original)
    if got is None or indent_style(v.expected) != "space" or (unit and got != unit):
        raise Skip(f"file's indent unit is not clearly {unit or '2 or 4'} spaces")
    if any("\t" in _lead(x) for x in v.update.split("\n")):
        raise Skip("snippet has tab indentation")
    return got


def spaces_to_tabs(v: Variant, rng) -> Variant:
    """A space-indented file's snippet written with one tab per indent unit (the remainder stays)."""
    if v.language == "yaml":
        raise Skip("tabs are no indentation in yaml")
    unit = _space_unit(v)
    return _changed(v, _reindent(v.update, lambda s: "\t" * (len(s) // unit) + " " * (len(s) % unit)), "indentation")


def indent_2_to_4(v: Variant, rng) -> Variant:
    _space_unit(v, 2)
    return _changed(v, _reindent(v.update, lambda s: " " * (len(s) // 2 * 4 + len(s) % 2)), "indentation")


def indent_4_to_2(v: Variant, rng) -> Variant:
    _space_unit(v, 4)
    if any(len(_lead(x)) % 4 >= 2 for x in v.update.split("\n")):
        raise Skip("an alignment indent would land on the 2-space grid")
    return _changed(v, _reindent(v.update, lambda s: " " * (len(s) // 4 * 2 + len(s) % 4)), "indentation")


def dedent_member(v: Variant, rng) -> Variant:
    """The snippet shifted left so that its least-indented line is at column 0."""
    lines = v.update.split("\n")
    common = os.path.commonprefix([_lead(x) for x in lines if x.strip()])
    if not common:
        raise Skip("snippet already at column 0")
    out = [x[len(common):] if x.startswith(common) else x.lstrip(" \t") for x in lines]
    return replace(v, update="\n".join(out))


def strip_trailing_ws(v: Variant, rng) -> Variant:
    """Trailing whitespace removed from every snippet line, where the edit neither adds nor removes
    a line with trailing whitespace: such a line in the snippet is then one of the original's,
    shown as it is (a new line's trailing whitespace would be part of the edit, unknowable once gone)."""
    def trailing(text: str) -> Counter:
        return Counter(x for x in text.split("\n") if x != x.rstrip(" \t"))

    if not trailing(v.original):
        raise Skip("original has no trailing whitespace")
    if trailing(v.original) != trailing(v.expected):
        raise Skip("the edit adds or removes a line with trailing whitespace")
    return _changed(v, "\n".join(x.rstrip(" \t") for x in v.update.split("\n")), "trailing whitespace")


# -- the file's bytes

def _lf_only(v: Variant) -> None:
    if any("\r" in t for t in (v.original, v.update, v.expected)):
        raise Skip("case already has CR bytes")


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def crlf(v: Variant, rng) -> Variant:
    _lf_only(v)
    return Variant(v.language, _crlf(v.original), _crlf(v.update), _crlf(v.expected))


def crlf_file_lf_snippet(v: Variant, rng) -> Variant:
    """A CRLF file, and the LF snippet an agent sends for it."""
    _lf_only(v)
    return replace(v, original=_crlf(v.original), expected=_crlf(v.expected))


def bom(v: Variant, rng) -> Variant:
    if v.original.startswith("\ufeff") or v.expected.startswith("\ufeff"):
        raise Skip("file already has a BOM")
    return replace(v, original="\ufeff" + v.original, expected="\ufeff" + v.expected)


def no_final_newline(v: Variant, rng) -> Variant:
    """Original and expected without their final newline, where the edit keeps the file's last two
    lines (so that no reading of the edit moves the file's end)."""
    o, e = v.original, v.expected
    if not (o.endswith("\n") and e.endswith("\n")) or o.endswith("\n\n") or e.endswith("\n\n"):
        raise Skip("file does not end in exactly one newline")
    if len(o.split("\n")) < 3 or o.split("\n")[-3:] != e.split("\n")[-3:]:
        raise Skip("the edit touches the file's last lines")
    return replace(v, original=o[:-1], expected=e[:-1])


# -- fences

FENCE_TAGS = {"python": ("python", "py"), "javascript": ("javascript", "js"), "typescript": ("typescript", "ts"),
              "bash": ("bash", "sh", "shell"), "csharp": ("csharp", "cs"), "make": ("makefile", "make"),
              "yaml": ("yaml", "yml"), "rust": ("rust", "rs"), "kotlin": ("kotlin", "kt"), "ruby": ("ruby", "rb"),
              "dockerfile": ("dockerfile", "Dockerfile"), "hcl": ("hcl", "terraform")}
PROSE = ("Here is the updated code:", "Here's the updated file:", "I'll make the following change:",
         "Sure! Here are the changes:", "Updated code:")


def _fenceable(v: Variant) -> None:
    if v.language == "markdown":
        raise Skip("markdown file")
    if any(x.lstrip().startswith("```") for t in (v.original, v.update) for x in t.split("\n")):
        raise Skip("file has a fence line")


def _fenced(update: str, tag: str) -> str:
    body = update if update.endswith("\n") else update + "\n"
    return f"```{tag}\n{body}```\n"


def fence(v: Variant, rng) -> Variant:
    _fenceable(v)
    return replace(v, update=_fenced(v.update, ""))


def fence_lang(v: Variant, rng) -> Variant:
    _fenceable(v)
    return replace(v, update=_fenced(v.update, rng.choice(FENCE_TAGS.get(v.language, (v.language,)))))


def fence_prose(v: Variant, rng) -> Variant:
    """One line of prose, maybe a blank line, then the snippet in a tagged fence."""
    _fenceable(v)
    head = rng.choice(PROSE) + rng.choice(("\n", "\n\n"))
    return replace(v, update=head + _fenced(v.update, rng.choice(FENCE_TAGS.get(v.language, (v.language,)))))


# -- marker wording

COMMENTS = {  # syntax -> (opener, closer); tried in this order (`{/*` before `/*`)
    "{/* */}": ("{/*", "*/}"), "<!-- -->": ("<!--", "-->"), "/* */": ("/*", "*/"), "//": ("//", ""),
    "#": ("#", ""), "--": ("--", ""), ";": (";", ""), "%": ("%", ""), "REM": ("REM ", ""), "'": ("'", ""),
}
# "...", "…", or words between two ellipses ("... existing code ...", "... (unchanged) ...")
MARKER_BODY = re.compile(r"(?:\.\.\.|…)(?:[\w\s()'-]*?(?:\.\.\.|…))?")
WORDINGS = ("rest of file unchanged", "... rest of code ...", "... (unchanged) ...", "...", "…", "existing code...",
            "...existing code...", "keep the rest", "rest of the code remains the same", "unchanged")
_SLASH, _HASH = ("//", "/* */"), ("#",)
OWN = {  # language -> its own comment syntaxes (a marker in any other is a wrong one)
    **dict.fromkeys(("python", "ruby", "elixir", "bash", "yaml", "toml", "dockerfile", "make"), _HASH),
    **dict.fromkeys(("javascript", "typescript", "go", "rust", "java", "csharp", "kotlin", "swift", "scala",
                     "scss", "json"), _SLASH),
    "jsx": _SLASH + ("{/* */}",), "tsx": _SLASH + ("{/* */}",), "php": _SLASH + _HASH, "hcl": _SLASH + _HASH,
    "css": ("/* */",), "lua": ("--",), "sql": ("--", "/* */"), "html": ("<!-- -->",),
    "markdown": ("<!-- -->",), "vue": ("<!-- -->",) + _SLASH, "svelte": ("<!-- -->",) + _SLASH,
}


def comment_syntax(line: str) -> tuple[str, str] | None:
    """(syntax, body) when the line is only a comment, else None."""
    s = line.strip()
    for syntax, (opener, closer) in COMMENTS.items():
        if s.startswith(opener) and s.endswith(closer) and len(s) >= len(opener) + len(closer):
            return syntax, s[len(opener):len(s) - len(closer)].strip()
    return None


def markers(v: Variant) -> dict[int, str]:
    """Snippet row -> comment syntax, for each marker line: a whole-line comment reading "..." or
    "... words ...", found in neither the original nor the expected file."""
    known = {x.strip() for x in v.original.split("\n")} | {x.strip() for x in v.expected.split("\n")}
    out = {}
    for i, line in enumerate(v.update.split("\n")):
        got = comment_syntax(line)
        if got and MARKER_BODY.fullmatch(got[1]) and line.strip() not in known:
            out[i] = got[0]
    return out


def write_marker(syntax: str, wording: str) -> str:
    opener, closer = COMMENTS[syntax]
    return f"{opener}{'' if opener.endswith(' ') else ' '}{wording}{' ' + closer if closer else ''}"


def ordered(rng, items) -> list:
    """`items` in an order drawn with `rng.choice` only (a fuzz `Pick` has no shuffle in place)."""
    left, out = list(items), []
    while left:
        out.append(left.pop(left.index(rng.choice(left))))
    return out


def _reworded(v: Variant, found: dict[int, str], syntax_of, wording: str) -> str | None:
    """The snippet with each marker in `syntax_of(old syntax)` and `wording`, or None when a new
    marker line equals a line of the original or the expected file, or an old marker line."""
    known = {x.strip() for t in (v.original, v.expected) for x in t.split("\n")}
    lines = v.update.split("\n")
    for i, old in found.items():
        new = write_marker(syntax_of(old), wording)
        if new in known or new == lines[i].strip():
            return None
        lines[i] = _lead(lines[i]) + new
    return "\n".join(lines)


def marker_wording(v: Variant, rng) -> Variant:
    """Every marker in another wording, each in the comment syntax it had."""
    found = markers(v)
    if not found:
        raise Skip("no marker line")
    for wording in ordered(rng, WORDINGS):
        update = _reworded(v, found, lambda s: s, wording)
        if update is not None:
            return replace(v, update=update)
    raise Skip("every wording collides with a line of the file")


def marker_foreign_syntax(v: Variant, rng) -> Variant:
    """Every marker in another wording and a comment syntax not the language's (`//` in Python)."""
    found = markers(v)
    if not found:
        raise Skip("no marker line")
    foreign = [s for s in COMMENTS if s not in OWN.get(v.language, ()) and s not in found.values()]
    for syntax in ordered(rng, foreign):
        for wording in ordered(rng, WORDINGS):
            update = _reworded(v, found, lambda s: syntax, wording)
            if update is not None:
                return replace(v, update=update)
    raise Skip("every wording collides with a line of the file")


TRANSFORMS = {
    "tabs_to_spaces": tabs_to_spaces, "spaces_to_tabs": spaces_to_tabs,
    "indent_2_to_4": indent_2_to_4, "indent_4_to_2": indent_4_to_2, "dedent_member": dedent_member,
    "strip_trailing_ws": strip_trailing_ws, "crlf": crlf, "crlf_file_lf_snippet": crlf_file_lf_snippet,
    "bom": bom, "no_final_newline": no_final_newline, "fence": fence, "fence_lang": fence_lang,
    "fence_prose": fence_prose, "marker_wording": marker_wording, "marker_foreign_syntax": marker_foreign_syntax,
}
