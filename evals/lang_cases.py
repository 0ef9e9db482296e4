"""Cases in the languages agents edit daily, from git mirrors of pinned repositories (issue 37).

    .venv/bin/python -m evals.lang_cases --out evals/cases/langs_commits.jsonl \\
        --meta evals/cases/langs_commits.meta.jsonl
    .venv/bin/python -m evals.lang_cases --agent --out evals/cases/langs_agent.jsonl \\
        --skip-commits-of evals/cases/langs_commits.jsonl

Each case is one modified file in a non-merge commit of a pinned repository (REPOS): `original` = the
file at the parent, `expected` = the file at the commit, byte-exact.

Commit cases (the default): the `update` is built from the diff like the shared commits_dev set: the
changed lines with 2-4 non-blank context lines (`context`), or the whole enclosing indentation block
(`block`: a YAML key, a Makefile rule, a method, a CSS rule), every other part replaced by a whole-line
marker in the language's comment syntax, indented like the code it stands for. A case is kept only
when `anchor_merge` (a unique-anchor merge that knows nothing else) rebuilds `expected` from
`original` + `update`, and when `fastapply.data.defined.why_undefined` finds each region's edges unique.

Agent-style cases (`--agent`): the same kind of edits written the way agents write snippets
(AGENT_VARIANTS: a bare block, a method restated inside its class, sparse context, loose markers,
deletions shown by adjacent context), plus edits written by hand on real files (HAND_EDITS). Each is
kept only when a reader rule for its shape rebuilds `expected` and the expected file parses
(`syntax_problem`).

The language comes from the path (EXTENSIONS, NAMES) or, for a file without an extension, from its
shebang. Deterministic for the given mirrors at the pinned commits: the walk is `git log` order from
each pin, and every choice is seeded by the commit sha and path.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import yaml

from fastapply.data.defined import has_marker_lines, why_undefined
from fastapply.data.gitcases import BlobReader, Commit, Limits, commits, text_of
from fastapply.data.hunks import Diff, diff, lines_of, whitespace_only
from fastapply.data.regions import Region, context_regions, spans_to_regions
from fastapply.data.snippets import Style
from fastapply.markers import looks_like_marker

# owner/name -> (pinned commit, licence). Walks start at the pin, so later pushes change nothing.
REPOS: dict[str, tuple[str, str]] = {
    "Seldaek/monolog": ("57eb1028342134e701e77c617565d51b6e5a2a53", "MIT"),
    "guzzle/guzzle": ("2779e868a00289e1b1fd854af030c43a06f4bcb4", "MIT"),
    "sinatra/sinatra": ("cb22afd7902b566b6eaba6c4ea89739494a65d12", "MIT"),
    "jekyll/jekyll": ("202df571314ba1d18e9fccd81d12aaad4a703c38", "MIT"),
    "serilog/serilog": ("60935b4d7abad71cf6157b45a10f5c3c65ead527", "Apache-2.0"),
    "AutoMapper/AutoMapper": ("4b9633f60ee386cf0efc69b967e04fa28405cf3e", "MIT"),
    "square/kotlinpoet": ("be2de914ce6eb3694092ed4e0f28626cbce1ffe0", "Apache-2.0"),
    "InsertKoinIO/koin": ("fff5291f333c04fe5d6d9447f72740647d40d186", "Apache-2.0"),
    "apple/swift-argument-parser": ("2f77f2fccb6e84fecff338c37b199e33e7dfd119", "Apache-2.0"),
    "SnapKit/SnapKit": ("2842e6e84e82eb9a8dac0100ca90d9444b0307f4", "MIT"),
    "com-lihaoyi/os-lib": ("e237000cbd4d97a4c4463df43d64556130d2bc50", "MIT"),
    "scalameta/munit": ("db8ab135f13f8ad32b5b357a5b74fcb8082ab6e7", "Apache-2.0"),
    "folke/lazy.nvim": ("306a05526ada86a7b30af95c5cc81ffba93fef97", "Apache-2.0"),
    "nvim-lualine/lualine.nvim": ("221ce6b2d999187044529f49da6554a92f740a96", "MIT"),
    "elixir-plug/plug": ("a898c454a04ca5ffad306bd751a15c7ac9ff6927", "Apache-2.0"),
    "elixir-ecto/ecto": ("c624abf4297b27589a5a7351b55feb2316f61e1c", "Apache-2.0"),
    "bats-core/bats-core": ("d22e41faad59f5fd942a88c992b4913a27a460c4", "MIT"),
    "asdf-vm/asdf": ("25b3911c7239a0f7cb7ee86acb4d81aed4d7d930", "MIT"),
    "h5bp/html5-boilerplate": ("b7e31d67f4cf83e23d51f4decc73618bf8bd77ba", "MIT"),
    "bigskysoftware/htmx": ("4dd2685fbed0b3985f0475756f1d79b0c9ad5686", "0BSD"),
    "StartBootstrap/startbootstrap-sb-admin-2": ("f0309881ef82794a1bd6257cd321801bc38a0f3d", "MIT"),
    "necolas/normalize.css": ("fc091cce1534909334c1911709a39c22d406977b", "MIT"),
    "primer/css": ("0875df4f25373511874f5bfcd117a1bc2006762f", "MIT"),
    "picocss/pico": ("1039a4788d6abc368d5485ae6bac84a8f0e3096f", "MIT"),
    "jekyll/minima": ("b3385fe64e9d79e75260668cad1852a3913b1829", "MIT"),
    "sqlc-dev/sqlc": ("99a7d7d0c7b913ded6a60a9d038ece99dcdf7892", "MIT"),
    "pgvector/pgvector": ("e48241b4dcc045b18902914f668d03d1d399dfbe", "PostgreSQL"),
    "docker-library/postgres": ("6edb0a8c4def40c371514b34aef9037ec82d9110", "MIT"),
    "nodejs/docker-node": ("f27d936f7d7ccdeec25cd2de33584c1a841f561d", "MIT"),
    "prometheus/node_exporter": ("a7dcc3a01545180d4f2087db70994cbc3abfed13", "Apache-2.0"),
    "kubernetes-sigs/kind": ("fed268827e21ca48a74c38215c316dd343364ef5", "Apache-2.0"),
    "kubernetes/examples": ("279e8e4fe314f6cb7bc55fa3fbc21bbeaa48c0ea", "Apache-2.0"),
    "terraform-aws-modules/terraform-aws-vpc": ("82d1929e669efef4e2ad00611b8a68e7a56e049c", "Apache-2.0"),
    "terraform-aws-modules/terraform-aws-eks": ("bef29c4d9523523e57fe898643fde2895106b339", "Apache-2.0"),
    "PanJiaChen/vue-element-admin": ("6858a9ad67483025f6a9432a926beb9327037be3", "MIT"),
    "vbenjs/vue-vben-admin": ("e3369bd63523831abb24a604da7721ba4f8c8db6", "MIT"),
    "huntabyte/shadcn-svelte": ("bf4f461d88526359d0e96e1950f637912bbeebe7", "MIT"),
    "skeletonlabs/skeleton": ("d7ce9208d2fcae318552d60fc39d38ed1b23213f", "MIT"),
    "helix-editor/helix": ("079a789e8cb08ead67f19e1971a1b7438b37354b", "MPL-2.0"),
    "starship/starship": ("6f33dcec91b758ccbae4ed850eaa6feabff798f9", "ISC"),
}

# Extension -> language; whole file names and their prefixes are in NAMES.
EXTENSIONS = {
    ".php": "php", ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".cs": "csharp", ".kt": "kotlin",
    ".kts": "kotlin", ".swift": "swift", ".scala": "scala", ".sc": "scala", ".sbt": "scala", ".lua": "lua",
    ".ex": "elixir", ".exs": "elixir", ".sh": "bash", ".bash": "bash", ".yml": "yaml", ".yaml": "yaml",
    ".json": "json", ".toml": "toml", ".md": "markdown", ".markdown": "markdown", ".html": "html",
    ".htm": "html", ".css": "css", ".scss": "scss", ".sql": "sql", ".dockerfile": "dockerfile", ".mk": "make",
    ".tf": "hcl", ".tfvars": "hcl", ".hcl": "hcl", ".vue": "vue", ".svelte": "svelte",
}
NAMES = {"Dockerfile": "dockerfile", "Containerfile": "dockerfile", "Makefile": "make", "GNUmakefile": "make",
         "makefile": "make", "Gemfile": "ruby", "Rakefile": "ruby"}
# vendored, generated or lock files: their edits are tools' output, not edits anyone writes
SKIP_PATH = re.compile(r"(^|/)(node_modules|vendor|dist|third_party|Pods)/|\.min\.|(^|/)[^/]*lock[^/]*\.(json|yaml)$|"
                       r"(^|/)CHANGELOG|\.template$|(^|/)gradlew$")
SHEBANG = re.compile(r"^#!\s*(?:/usr/bin/env\s+)?\S*?/?(?:bash|sh)\b")

# The marker a language's comments make (the first wording agents use); vue/svelte/html pick by section.
COMMENT = {
    "php": "//", "csharp": "//", "kotlin": "//", "swift": "//", "scala": "//", "json": "//", "scss": "//",
    "ruby": "#", "elixir": "#", "bash": "#", "yaml": "#", "toml": "#", "dockerfile": "#", "make": "#",
    "hcl": "#", "lua": "--", "sql": "--", "css": "/*", "markdown": "<!--", "html": "<!--", "vue": "<!--",
    "svelte": "<!--",
}
WORDS = "... existing code ..."
# Languages whose blocks end with a closing line at the header's indentation (`}`, `end`, `]`).
CLOSERS = re.compile(r"^(\}|\]|\)|end\b|</|fi\b|done\b|esac\b)")
COMMENT_LINE = re.compile(r"^(#|//|--|/\*|\*|<!--)")
# Lines at the block's own indentation that go on with it (`} else {`, `rescue`, `) {`), not end it.
CONTINUES = re.compile(r"^([)\]}]\s*)?(else|elsif|elseif|elif|rescue|ensure|catch|finally)\b|^[)\]}].*[{(\[]$")
BLOCK_LANGS = {"php", "ruby", "csharp", "kotlin", "swift", "scala", "lua", "elixir", "bash", "yaml", "json",
               "toml", "css", "scss", "make", "hcl", "vue", "svelte", "html"}
MAX_BLOCK_LINES = 60  # a whole block longer than this is not how agents show a small edit


@dataclass(frozen=True)
class Select:
    min_lines: int = 30
    max_lines: int = 800
    max_hunks: int = 4
    max_changed: int = 100
    max_files: int = 6  # a commit touching more files is a sweep (a rename, a licence header), not an edit
    per_commit: int = 2
    per_path: int = 3
    per_repo_lang: int = 6
    per_lang: int = 12


def language_of(path: str, text: str = "") -> str | None:
    """The language of a repository path: by whole name, extension, or (no extension) a shell shebang."""
    if SKIP_PATH.search(path):
        return None
    base = os.path.basename(path)
    if base in NAMES or base.startswith("Dockerfile.") or base.startswith("Makefile."):
        return NAMES.get(base) or ("dockerfile" if base.startswith("Dockerfile") else "make")
    ext = os.path.splitext(base)[1].lower()
    if ext:
        return EXTENSIONS.get(ext)
    return "bash" if SHEBANG.match(text) else None


def marker_line(language: str, lines: list[str], at: int, indent: str, words: str = WORDS) -> str:
    """The marker standing for lines from `at` on, in the comment syntax of the code above it (in a
    Vue or Svelte file, the section the line before `at` is in)."""
    opener = COMMENT[language]
    if language in ("vue", "svelte", "html"):
        opener = {"script": "//", "style": "/*"}.get(section_at(lines, at), "<!--")
    if opener == "<!--" and in_front_matter(lines, at):
        opener = "#"
    close = {"/*": " */", "<!--": " -->"}.get(opener, "")
    return f"{indent}{opener} {words}{close}"


def in_front_matter(lines: list[str], at: int) -> bool:
    """A marker before line `at` stands inside a `---` YAML front matter block at the top of the file."""
    if not lines or lines[0].strip() != "---":
        return False
    close = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), len(lines))
    return 0 < at <= close


def section_at(lines: list[str], at: int) -> str:
    """Which part of an HTML-like file line `at` is in: 'script', 'style' or 'markup'."""
    state = "markup"
    for line in lines[:at]:
        s = line.strip().lower()
        if s.startswith("<script") and "</script>" not in s:
            state = "script"
        elif s.startswith("<style") and "</style>" not in s:
            state = "style"
        elif s.startswith("</script>") or s.startswith("</style>"):
            state = "markup"
    return state


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _first_indent(lines: list[str], lo: int, hi: int) -> str:
    for line in lines[lo:hi]:
        if line.strip():
            return line[: indent_of(line)]
    return ""


def render(language: str, regions: list[Region], exp: list[str], column0: bool = False,
           lead: bool = True, trail: bool = True, words: str = WORDS) -> str:
    """The expected file's regions joined by markers, each in the comment syntax of what it stands for."""
    out: list[str] = []
    pos = 0
    for k, r in enumerate(regions):
        if r.start > pos and (k > 0 or lead):  # in the syntax of the code the snippet shows above it
            out.append(marker_line(language, exp, pos, "" if column0 else _first_indent(exp, pos, r.start), words))
        out.extend(exp[r.start:r.end])
        pos = r.end
    if pos < len(exp) and trail:
        out.append(marker_line(language, exp, pos, "" if column0 else _first_indent(exp, pos, len(exp)), words))
    return "\n".join(out) + "\n"


# -- the unique-anchor merge that decides whether a case is well defined --

def _find(hay: list[str], needle: list[str]) -> list[int]:
    n = len(needle)
    return [i for i in range(len(hay) - n + 1) if hay[i:i + n] == needle]


def _chunks(update_lines: list[str]) -> tuple[list[list[str]], bool, bool]:
    """The update's runs of code between whole-line markers, and whether it starts / ends with a marker."""
    flags = [looks_like_marker(x) for x in update_lines]
    chunks, cur = [], []
    for line, is_marker in zip(update_lines, flags):
        if is_marker:
            if cur:
                chunks.append(cur)
            cur = []
        else:
            cur.append(line)
    if cur:
        chunks.append(cur)
    return chunks, bool(flags and flags[0]), bool(flags and flags[-1])


def _anchor(stripped: list[str], chunk: list[str], from_end: bool) -> int | None:
    """Where the chunk's shortest unique head (or tail) stands in the original: the index of its first
    (or one past its last) line; None when no head made of unchanged lines is unique."""
    key = [x.strip() for x in chunk]
    for n in range(1, len(key) + 1):
        part = key[-n:] if from_end else key[:n]
        if not any(part):
            continue
        hits = _find(stripped, part)
        if not hits:
            return None
        if len(hits) == 1:
            return hits[0] + n if from_end else hits[0]
    return None


def anchor_merge(original: str, update: str) -> str | None:
    """Splice each chunk of the update between its unique head and tail anchors in the original; the
    parts behind markers stay. None when a chunk has no unique anchor or the chunks overlap. A chunk
    at the file's start (end) with no marker before (after) it anchors at the start (end)."""
    orig = lines_of(original)
    stripped = [x.strip() for x in orig]
    chunks, lead, trail = _chunks(lines_of(update))
    out, pos = [], 0
    for k, chunk in enumerate(chunks):
        start = _anchor(stripped, chunk, False)
        if start is None and k == 0 and not lead:
            start = 0
        end = _anchor(stripped, chunk, True)
        if end is None and k == len(chunks) - 1 and not trail:
            end = len(orig)
        if start is None or end is None or start < pos or end < start:
            return None
        out += orig[pos:start] + chunk
        pos = end
    text = "\n".join(out + orig[pos:])
    return text + "\n" if original.endswith("\n") else text


# -- regions: context around each change, or the whole enclosing block --

def block_regions(d: Diff, language: str) -> list[Region] | None:
    """For each change, the smallest indentation block around it: the nearest line above indented less
    than the change, down to its closing line (`}`, `end`, ...) or the last line indented deeper."""
    if language not in BLOCK_LANGS:
        return None
    spans: list[tuple[int, int]] = []
    for _, _, j1, j2 in d.hunks:
        span = _block_span(d.exp, j1, j2)
        if span is None or span[1] - span[0] > MAX_BLOCK_LINES:
            return None
        if spans and span[0] < spans[-1][1]:
            if span[1] > spans[-1][1] or span[0] < spans[-1][0]:
                return None  # overlapping blocks
            continue
        spans.append(span)
    return spans_to_regions(d, spans)


def _block_span(exp: list[str], j1: int, j2: int) -> tuple[int, int] | None:
    changed = [x for x in exp[j1:j2] if x.strip()]
    inner = min((indent_of(x) for x in changed), default=None)
    if inner is None:  # a pure deletion: the block of the line after it
        after = next((x for x in exp[j2:] if x.strip()), None)
        inner = indent_of(after) if after is not None else 0
    head = next((i for i in range(j1 - 1, -1, -1) if exp[i].strip() and indent_of(exp[i]) < inner), None)
    if head is None:
        return None
    head = signature_of(exp, head)
    end = block_end(exp, head)
    return (head, end) if end >= j2 else None


def signature_of(lines: list[str], i: int) -> int:
    """A `{` alone on its line (Allman style) opens the block of the line above it."""
    if lines[i].strip() == "{":
        k = next((k for k in range(i - 1, -1, -1) if lines[k].strip()), None)
        if k is not None and indent_of(lines[k]) == indent_of(lines[i]):
            return k
    return i


def block_end(lines: list[str], head: int) -> int:
    """One past the last line of the block whose first line is `head`: up to its closing line at the
    same indentation (`}`, `end`, `fi`, `</div>`), or the last line indented deeper; a `{` alone on
    the next line at the same indentation belongs to the header."""
    depth = indent_of(lines[head])
    start = head + 1
    nxt = next((k for k in range(head + 1, len(lines)) if lines[k].strip()), None)
    if nxt is not None and lines[nxt].strip() == "{" and indent_of(lines[nxt]) == depth:
        start = nxt + 1
    end = len(lines)
    for i in range(start, len(lines)):
        line = lines[i].strip()
        if line and indent_of(lines[i]) <= depth:
            if indent_of(lines[i]) == depth and (CONTINUES.match(line) or COMMENT_LINE.match(line)):
                continue  # `else`, `rescue`, or a comment before one (a closer may still follow)
            end = i + 1 if CLOSERS.match(line) and indent_of(lines[i]) == depth else i
            break
    while end > head + 1 and (not lines[end - 1].strip() or (COMMENT_LINE.match(lines[end - 1].strip())
                                                           and indent_of(lines[end - 1]) <= depth)):
        end -= 1  # trailing blank lines and the next item's comments belong to the gap, not the block
    return end


# -- the walk --

def seeded_int(*parts: str) -> int:
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8], 16)


def usable(d: Diff, sel: Select) -> bool:
    return (0 < len(d.hunks) <= sel.max_hunks and d.changed_lines() <= sel.max_changed
            and not whitespace_only(d) and not has_marker_lines(d))


def _well_defined(language: str, d: Diff, regions: list[Region], original: str, expected: str) -> str | None:
    """The update when both checks agree that it determines the expected file; else None."""
    update = render(language, regions, d.exp)
    markers = {x.strip() for x in lines_of(update) if looks_like_marker(x)}
    if any(m in {x.strip() for x in d.orig} for m in markers):
        return None
    if why_undefined(d, regions, Style(next(iter(markers), WORDS))) is not None:
        return None
    return update if anchor_merge(original, update) == expected else None


def snippet_for(language: str, sha: str, path: str, original: str, expected: str) -> tuple[str, str, dict] | None:
    """(update, mode, details) for one file edit, or None when no snippet is well defined."""
    d = diff(original, expected)
    pick = seeded_int(sha, path)
    if pick % 3 == 0:  # a third of the cases try the whole enclosing block first
        regions = block_regions(d, language)
        if regions:
            update = _well_defined(language, d, regions, original, expected)
            if update:
                return update, "block", {"context_lines": None}
    base = 2 + pick % 3
    for n in range(base, base + 3):
        regions = context_regions(d, n)
        if regions:
            update = _well_defined(language, d, regions, original, expected)
            if update:
                return update, "context", {"context_lines": n}
    return None


@dataclass(frozen=True)
class Edit:
    repo: str
    commit: Commit
    path: str
    language: str
    original: str
    expected: str


def edits_of(git_dir: str, repo: str, pin: str, sel: Select):
    """Usable file edits of a repository in walk order, at most `per_commit` per commit."""
    reader, limits = BlobReader(git_dir), Limits(max_bytes=200_000)
    try:
        for c in commits(git_dir, pin):
            mods = [f for f in c.files if f[0] == "M"]
            if c.parent == "0" * 40 or not mods or len(c.files) > sel.max_files:
                continue
            taken = 0
            for _, old, new, path in mods:
                if taken >= sel.per_commit or (language_of(path) is None and os.path.splitext(path)[1]):
                    continue
                original, expected = text_of(reader.read(old), limits), text_of(reader.read(new), limits)
                if original is None or expected is None or original == expected:
                    continue
                language = language_of(path, original)
                if language is None or not sel.min_lines <= original.count("\n") <= sel.max_lines:
                    continue
                if original.endswith("\n") != expected.endswith("\n") or not expected.strip():
                    continue
                d = diff(original, expected)
                if not d.orig[-1].strip() or not d.exp[-1].strip() or not usable(d, sel):
                    continue
                taken += 1
                yield Edit(repo, c, path, language, original, expected)
    finally:
        reader.close()


def mirror_of(mirrors: str, repo: str) -> str:
    base = os.path.join(mirrors, repo.replace("/", "+"), "repo")
    return os.path.join(base, ".git") if os.path.isdir(os.path.join(base, ".git")) else base


def commit_cases(mirrors: str, repos: dict[str, tuple[str, str]], sel: Select) -> list[tuple[dict, dict]]:
    """(case, meta) pairs: each language's cases taken round-robin over the repositories that have
    them (in table order), so that no one repository's workflows or READMEs fill a language."""
    found: dict[str, dict[str, list]] = {}
    for repo, (pin, licence) in repos.items():
        per_path: Counter = Counter()
        for e in edits_of(mirror_of(mirrors, repo), repo, pin, sel):
            mine = found.setdefault(e.language, {}).setdefault(repo, [])
            if per_path[e.path] >= sel.per_path or len(mine) >= sel.per_repo_lang:
                continue
            got = snippet_for(e.language, e.commit.sha, e.path, e.original, e.expected)
            if got is not None:
                per_path[e.path] += 1
                mine.append(_case(e, licence, *got))
    out: list[tuple[dict, dict]] = []
    for language in sorted(found):
        order = sorted(found[language], key=lambda repo: seeded_int(language, repo))  # no repo always first
        queues = [list(found[language][repo]) for repo in order if found[language][repo]]
        taken = 0
        while taken < sel.per_lang and any(queues):
            for q in queues:
                if q and taken < sel.per_lang:
                    out.append(q.pop(0))
                    taken += 1
    return out


def _case(e: Edit, licence: str, update: str, mode: str, details: dict) -> tuple[dict, dict]:
    d = diff(e.original, e.expected)
    case_id = f"{e.repo}@{e.commit.sha[:12]}:{e.path}#{mode}"
    case = {"id": case_id, "source": f"{e.repo}@{e.commit.sha}:{e.path}", "language": e.language,
            "path": e.path, "original": e.original, "update": update, "expected": e.expected,
            "license": licence, "variant": mode}
    n_markers = sum(looks_like_marker(x) for x in lines_of(update))
    meta = {"id": case_id, "commit": e.commit.sha, "parent": e.commit.parent, "path": e.path,
            "subject": e.commit.subject, "language": e.language, "mode": mode, "hunks": len(d.hunks),
            "lines_before": len(d.orig), "lines_after": len(d.exp), "changed_lines": d.changed_lines(),
            "snippet_lines": len(lines_of(update)), "n_markers": n_markers, **details}
    return case, meta


# -- agent-style cases: the same kind of real edits, written the way coding agents write snippets --

# Marker wordings per comment opener (the first is the standard one).
WORDINGS = {
    "#": ("... existing code ...", "...", "... rest of code ...", "... unchanged ..."),
    "//": ("... existing code ...", "...", "... rest of code ...", "... unchanged ..."),
    "--": ("... existing code ...", "...", "... rest of code ..."),
    "/*": ("... existing code ...", "...", "... rest of code ..."),
    "<!--": ("... existing code ...", "...", "... rest of content ..."),
}
_MODS = (r"(?:(?:public|private|protected|internal|static|final|abstract|override|open|async|virtual|sealed|"
         r"inline|suspend|fileprivate|mutating|readonly|partial|lazy|implicit)\s+)*")
# First lines of the blocks agents paste whole: definitions, and the keys or rules of config files.
DEF_HEADER = {
    "php": rf"{_MODS}function\b",
    "ruby": r"(def|class|module)\b|.*\bdo(\s*\|[^|]*\|)?$",
    "csharp": (rf"(?!(else|if|for|foreach|while|switch|catch|using|lock|return|new)\b){_MODS}"
               rf"[\w<>\[\],.? ]+\s+\w+\s*(<[^>]*>)?\(.*\)\s*(\{{)?$"),
    "kotlin": rf"{_MODS}(fun|class|object|interface|val|var)\b.*\{{$|@Test\b",
    "swift": rf"{_MODS}(func|init|var|class|struct|enum|extension)\b.*\{{$",
    "scala": rf"{_MODS}(def|class|object|trait)\b.*[{{=(]$|test\(",
    "lua": r"(local\s+)?function\b|[\w.\[\]\"']+\s*=\s*\{$",
    "elixir": r"(def|defp|defmacro|defmodule|test|describe)\b.*\bdo$",
    "bash": r"(function\s+)?[\w:-]+\s*\(\)\s*\{|function\s+[\w:-]+\s*\{",
    "yaml": r"(- )?[\w.\-\"' ]+:\s*$|- name: .+",
    "json": r"\"[^\"]+\":\s*[\[{]$",
    "toml": r"[\w.\-]+\s*=\s*[\[{]$",
    "css": r"[^{};]+\{$", "scss": r"[^{};]+\{$",
    "hcl": r"[\w\-]+(\s+\"[^\"]*\")*\s*(=\s*)?[{\[]$",
    "make": r"[\w.$()/%\- ]+:(?!=)",
    "html": r"<[a-zA-Z][^/]*>$",
    "vue": r"<[a-zA-Z][^/]*>$|(async\s+)?\w+\s*\(.*\)\s*\{$|\w+:\s*[\[{]$",
    "svelte": r"<[a-zA-Z][^/]*>$|(export\s+)?(async\s+)?function\b|\w+:\s*[\[{]$",
}
# First lines of the containers a method may be restated inside.
CONTAINER_HEADER = {
    "php": r"((abstract|final|readonly)\s+)*(class|interface|trait|enum)\b",
    "ruby": r"(class|module)\b",
    "csharp": rf"{_MODS}(class|struct|interface|record)\b",
    "kotlin": rf"{_MODS}(data\s+|enum\s+)?(class|object|interface)\b.*\{{$|companion object",
    "swift": rf"{_MODS}(class|struct|extension|enum|protocol|actor)\b.*\{{$",
    "scala": rf"{_MODS}(case\s+)?(class|object|trait)\b.*\{{$",
    "elixir": r"defmodule\b.*\bdo$",
}
CONTAINER_LANGS = set(CONTAINER_HEADER)
AGENT_VARIANTS = ("bare_block", "restated_in_container", "sparse_context", "loose_markers", "deletion_context")
# tree-sitter grammars that check the expected files of languages without a stricter parser here
GRAMMARS = {"php": ("tree_sitter_php", "language_php"), "ruby": ("tree_sitter_ruby", "language"),
            "csharp": ("tree_sitter_c_sharp", "language"), "kotlin": ("tree_sitter_kotlin", "language"),
            "swift": ("tree_sitter_swift", "language"), "scala": ("tree_sitter_scala", "language"),
            "lua": ("tree_sitter_lua", "language"), "elixir": ("tree_sitter_elixir", "language"),
            "css": ("tree_sitter_css", "language"), "scss": ("tree_sitter_scss", "language"),
            "html": ("tree_sitter_html", "language"), "markdown": ("tree_sitter_markdown", "language"),
            "sql": ("tree_sitter_sql", "language"), "dockerfile": ("tree_sitter_dockerfile", "language"),
            "make": ("tree_sitter_make", "language"), "hcl": ("tree_sitter_hcl", "language")}


@lru_cache(maxsize=None)
def _parser(language: str) -> tree_sitter.Parser:
    module, fn = GRAMMARS[language]
    with warnings.catch_warnings():  # some wheels still hand over the language as an int pointer
        warnings.simplefilter("ignore", DeprecationWarning)
        return tree_sitter.Parser(tree_sitter.Language(getattr(importlib.import_module(module), fn)()))


def _errors(language: str, text: str) -> int | None:
    """ERROR and MISSING nodes in the file's tree-sitter parse; None without a grammar."""
    if language not in GRAMMARS:
        return None
    tree = _parser(language).parse(text.encode("utf-8"))
    bad, stack = 0, [tree.root_node]
    while stack:
        node = stack.pop()
        bad += node.is_error or node.is_missing
        stack.extend(node.children)
    return bad


def syntax_problem(language: str, original: str, expected: str) -> str | None:
    """Why the expected file does not parse (None when it does): the real parser for JSON, TOML and
    YAML, `bash -n` for shell, else no more tree-sitter errors than the original had."""
    try:
        if language == "json":
            json.loads(expected)
        elif language == "toml":
            tomllib.loads(expected)
        elif language == "yaml":
            list(yaml.safe_load_all(expected))
    except Exception as e:  # noqa: BLE001 - any parser error means the file is broken
        return f"{language} parse: {str(e).splitlines()[0]}"
    if language == "bash":
        r = subprocess.run(["bash", "-n"], input=expected.encode(), capture_output=True)
        return None if r.returncode == 0 else f"bash -n: {r.stderr.decode(errors='replace').strip()[:80]}"
    before, after = _errors(language, original), _errors(language, expected)
    if before is not None and after > before:
        return f"tree-sitter {language}: {after} error nodes (original {before})"
    return None


def _unique_line(lines: list[str], line: str, lo: int = 0, hi: int | None = None) -> int | None:
    hits = [i for i in range(lo, len(lines) if hi is None else hi) if lines[i].strip() == line.strip()]
    return hits[0] if len(hits) == 1 else None


def read_bare_block(original: str, update: str) -> str | None:
    """A careful reader's merge of one pasted block without markers: its first line names the block
    (once in the original); the block there, by indentation, is replaced."""
    orig, block = lines_of(original), lines_of(update)
    head = _unique_line(orig, block[0])
    if head is None or block_end(block, 0) != len(block):
        return None
    out = orig[:head] + block + orig[block_end(orig, head):]
    return "\n".join(out) + ("\n" if original.endswith("\n") else "")


def read_restated(original: str, update: str) -> str | None:
    """A careful reader's merge of `[marker] container header / marker / member / marker / container
    closer [marker]`: the header names the container (once in the original), the member's first line
    names the member (once inside it), and the member is replaced."""
    orig, snip = lines_of(original), lines_of(update)
    while snip and looks_like_marker(snip[0]):
        snip = snip[1:]  # the markers around the container stand for the code around it
    while snip and looks_like_marker(snip[-1]):
        snip = snip[:-1]
    flags = [looks_like_marker(x) for x in snip]
    top = 2 if len(snip) > 2 and snip[1].strip() == "{" else 1  # Allman: the header's `{` line
    body = [x for x, m in zip(snip[top:-1], flags[top:-1]) if not m]
    if not body or flags[0] or flags[-1]:
        return None
    c = _unique_line(orig, snip[0])
    if c is None:
        return None
    c_end = block_end(orig, c)
    if orig[c_end - 1].strip() != snip[-1].strip():
        return None
    m = _unique_line(orig, body[0], c + 1, c_end)
    if m is None or block_end(body, 0) != len(body):
        return None
    out = orig[:m] + body + orig[block_end(orig, m):]
    return "\n".join(out) + ("\n" if original.endswith("\n") else "")


def _one_block(d: Diff, language: str) -> tuple[int, int] | None:
    """The single indentation block (expected lines) that holds every change, if there is one."""
    regions = block_regions(d, language)
    if not regions or len(regions) != 1:
        return None
    r = regions[0]
    if r.end - r.start < 3 or not CLOSERS.match(d.exp[r.end - 1].strip()) and language not in ("yaml", "make"):
        return None
    if d.exp[r.start].strip() != d.orig[r.ostart].strip() or block_end(d.exp, r.start) != r.end:
        return None
    if not re.match(DEF_HEADER[language], d.exp[r.start].strip()):
        return None  # a block agents would not paste on its own (a `match`, an `#if`, a call's arguments)
    return r.start, r.end


BLOCK_COMMENT = {**{x: ("<!--", "-->") for x in ("html", "vue", "svelte", "markdown")},
                 **{x: ("/*", "*/") for x in ("css", "scss", "php", "csharp", "kotlin", "swift", "scala", "hcl")}}
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)")
_OPEN_TAG = re.compile(r"^<[a-zA-Z][\w.:-]*(\s|$)")
_ATTRIBUTE = re.compile(r"^[:@#]?[\w.:-]+=[\"'{]")  # `mode="vertical"`, `:collapse="x"`, `size={3}`


def marker_in_string(update: str, language: str) -> bool:
    """A marker inside a long string (`[[ ... ]]`, triple quotes), a heredoc, a block comment or a tag's
    attribute list of the code shown above it: there the marker would be text or a comment's words,
    and agents do not put one there."""
    long_str, quotes, heredoc, in_tag, comment = 0, 0, None, False, 0
    opener, closer = BLOCK_COMMENT.get(language, (None, None))
    for line in lines_of(update):
        s = line.strip()
        if looks_like_marker(line):
            if long_str > 0 or quotes % 2 or heredoc or in_tag or comment > 0:
                return True
            long_str, quotes, heredoc, in_tag, comment = 0, 0, None, False, 0  # the elided code may close anything
            continue
        if opener:
            comment += line.count(opener) - line.count(closer)
        if heredoc:
            heredoc = None if s == heredoc else heredoc
            continue
        if language == "lua":
            long_str += line.count("[[") - line.count("]]")
        if language in ("scala", "kotlin", "swift", "elixir", "toml"):
            quotes += line.count('"""') + line.count("'''")
        m = _HEREDOC.search(line) if language in ("bash", "ruby", "php", "dockerfile") else None
        heredoc = m.group(1) if m else None
        if language in ("html", "vue", "svelte") and (_OPEN_TAG.match(s) or _ATTRIBUTE.match(s)) \
                and not s.endswith(">"):
            in_tag = True
        elif in_tag and s.endswith(">"):
            in_tag = False
    return False


def agent_snippet(variant: str, language: str, d: Diff, original: str, expected: str,
                  pick: int) -> tuple[str, dict] | None:
    """(update, details) for one variant of one edit, or None when the variant does not fit or its
    snippet does not determine the expected file."""
    if variant == "bare_block":
        span = _one_block(d, language)
        if span is None:
            return None
        update = "\n".join(d.exp[span[0]:span[1]]) + "\n"
        return (update, {"block_lines": span[1] - span[0]}) if read_bare_block(original, update) == expected else None
    if variant == "restated_in_container":
        return _restated(d, language, original, expected)
    if variant in ("sparse_context", "deletion_context"):
        if variant == "deletion_context" and any(j1 != j2 for _, _, j1, j2 in d.hunks):
            return None  # only edits that delete lines and add none
        regions = context_regions(d, 1)
        update = regions and _well_defined(language, d, regions, original, expected)
        return (update, {"context_lines": 1}) if update else None
    if variant == "loose_markers":
        regions = context_regions(d, 2)
        if not regions:
            return None
        omit = pick % 3  # both markers, no leading, no trailing
        wording = pick // 3 % 3 + 1
        update = render_loose(language, regions, d.exp, wording, lead=omit != 1, trail=omit != 2)
        if update is None or not any(looks_like_marker(x) for x in lines_of(update)):
            return None  # no marker at all: that shape is bare_block's
        if anchor_merge(original, update) != expected:
            return None
        if why_undefined(d, regions, Style(WORDS)) is not None:
            return None
        return update, {"lead_marker_omitted": omit == 1, "trail_marker_omitted": omit == 2}
    raise ValueError(f"unknown variant {variant!r}")


def render_loose(language: str, regions: list[Region], exp: list[str], wording: int, lead: bool,
                 trail: bool) -> str | None:
    """Markers at column 0 in one of the other wordings of the language's comment syntax."""
    opener = COMMENT[language]
    words = WORDINGS[opener][wording % len(WORDINGS[opener])]
    update = render(language, regions, exp, column0=True, lead=lead, trail=trail, words=words)
    have = {x.strip() for x in exp}
    return None if any(looks_like_marker(x) and x.strip() in have for x in lines_of(update)) else update


def _restated(d: Diff, language: str, original: str, expected: str) -> tuple[str, dict] | None:
    if language not in CONTAINER_LANGS:
        return None
    span = _one_block(d, language)
    if span is None:
        return None
    s, e = span
    inner = indent_of(d.exp[s])
    c = next((i for i in range(s - 1, -1, -1) if d.exp[i].strip() and indent_of(d.exp[i]) < inner), None)
    if c is None:
        return None
    c = signature_of(d.exp, c)
    if not re.match(CONTAINER_HEADER[language], d.exp[c].strip()):
        return None
    c_end = block_end(d.exp, c)
    if c_end <= e or not CLOSERS.match(d.exp[c_end - 1].strip()):
        return None
    pad = d.exp[s][:inner]
    opened = c + 1 if d.exp[c + 1].strip() == "{" else c  # Allman: the `{` line goes with the header
    outer = d.exp[c][:indent_of(d.exp[c])]
    # code around the container is elided by markers too: a snippet that stops at the closer would not say
    # whether the lines after it stay
    out = [marker_line(language, d.exp, 0, outer)] if any(x.strip() for x in d.exp[:c]) else []
    out += d.exp[c:opened + 1]
    if s > opened + 1:
        out.append(marker_line(language, d.exp, s, pad))
    out += d.exp[s:e]
    if c_end - 1 > e:
        out.append(marker_line(language, d.exp, e, pad))
    out.append(d.exp[c_end - 1])
    if any(x.strip() for x in d.exp[c_end:]):
        out.append(marker_line(language, d.exp, c_end, outer))
    if not (s > opened + 1 or c_end - 1 > e):
        return None  # the container holds only this member: that is a whole block
    update = "\n".join(out) + "\n"
    return (update, {"block_lines": e - s}) if read_restated(original, update) == expected else None


@dataclass(frozen=True)
class HandEdit:
    """An edit written by hand on a real file at its repository's pin: `expected` is the file with
    each `(old, new)` replaced (each `old` occurs once), `update` the snippet an agent would send."""
    repo: str
    path: str
    replacements: tuple[tuple[str, str], ...]
    update: str
    variant: str
    subject: str


HAND_EDITS = (
    HandEdit("sqlc-dev/sqlc", "Makefile",
             ((".PHONY: build build-endtoend test test-ci test-examples test-endtoend start psql mysqlsh proto\n",
               ".PHONY: build build-endtoend test test-ci test-examples test-endtoend start psql mysqlsh proto "
               "vet lint\n"),
              ("vet:\n\tgo vet ./...\n", "vet:\n\tgo vet ./...\n\nlint:\n\tgolangci-lint run ./...\n")),
             ".PHONY: build build-endtoend test test-ci test-examples test-endtoend start psql mysqlsh proto vet lint\n"
             "# ... existing code ...\n"
             "vet:\n\tgo vet ./...\n\nlint:\n\tgolangci-lint run ./...\n"
             "# ... existing code ...\n",
             "phony_before_marker", "Add a lint target"),
    HandEdit("kubernetes-sigs/kind", "Makefile",
             (("# all tests\ntest:\n\thack/make-rules/test.sh\n",
               "# all tests\ntest:\n\thack/make-rules/test.sh\n# end-to-end tests against a local cluster\n"
               "e2e:\n\thack/ci/e2e.sh\n"),
              (".PHONY: all kind build install unit clean update generate gofmt verify lint shellcheck\n",
               ".PHONY: all kind build install unit integration test e2e clean update generate gofmt verify lint "
               "shellcheck\n")),
             "# ... existing code ...\n"
             "# all tests\ntest:\n\thack/make-rules/test.sh\n# end-to-end tests against a local cluster\n"
             "e2e:\n\thack/ci/e2e.sh\n"
             "# ... existing code ...\n"
             ".PHONY: all kind build install unit integration test e2e clean update generate gofmt verify lint "
             "shellcheck\n",
             "phony_after_marker", "Add an e2e target"),
    HandEdit("kubernetes/examples", "AI/vllm-deployment/vllm-deployment.yaml",
             (("spec:\n  replicas: 1\n", "spec:\n  replicas: 3\n"),),
             "# ...\nspec:\n  replicas: 3\n  selector:\n# ...\n",
             "yaml_changed_key", "Run three replicas"),
    HandEdit("bats-core/bats-core", ".github/workflows/tests.yml",
             (("  shfmt:\n    runs-on: ubuntu-22.04\n", "  shfmt:\n    runs-on: ubuntu-24.04\n"),),
             "# ... existing code ...\n  shfmt:\n    runs-on: ubuntu-24.04\n    # ... existing code ...\n",
             "yaml_changed_key", "Run shfmt on ubuntu-24.04"),
)


def hand_cases(mirrors: str, edits, table: dict[str, tuple[str, str]]) -> list[tuple[dict, dict]]:
    """Cases for edits written by hand; an edit whose `old` text is not found once, or whose expected
    file does not parse, stops the run (the table is wrong, not the data)."""
    import subprocess
    out = []
    for h in edits:
        pin, licence = table[h.repo]
        original = subprocess.run(["git", "--git-dir", mirror_of(mirrors, h.repo), "show", f"{pin}:{h.path}"],
                                  check=True, capture_output=True).stdout.decode("utf-8")
        expected = original
        for old, new in h.replacements:
            if expected.count(old) != 1:
                raise SystemExit(f"lang_cases: hand edit of {h.repo}:{h.path}: {old[:40]!r} is not found once")
            expected = expected.replace(old, new)
        language = language_of(h.path, original)
        problem = syntax_problem(language, original, expected)
        if problem:
            raise SystemExit(f"lang_cases: hand edit of {h.repo}:{h.path} does not parse: {problem}")
        e = Edit(h.repo, Commit(pin, pin, h.subject, ()), h.path, language, original, expected)
        case, meta = _agent_case(e, licence, h.variant, h.update, {"hand_written": True})
        case["id"] = f"{h.repo}@{pin[:12]}:{h.path}#{h.variant}"
        meta["id"] = case["id"]
        out.append((case, meta))
    return out


def agent_cases(mirrors: str, repos: dict[str, tuple[str, str]], sel: Select, per_lang: int,
                skip: set[str]) -> list[tuple[dict, dict]]:
    """Agent-style (case, meta) pairs: for each language, up to per_lang cases, variants and
    repositories taken in turn. Commits in `skip` (used elsewhere) are passed over."""
    found: dict[str, dict[str, list]] = {}
    for repo, (pin, licence) in repos.items():
        paths: set[str] = set()
        for e in edits_of(mirror_of(mirrors, repo), repo, pin, sel):
            if e.commit.sha in skip or e.path in paths:
                continue
            d = diff(e.original, e.expected)
            if d.changed_lines() > 40:
                continue
            pick = seeded_int("agent", e.commit.sha, e.path)
            order = AGENT_VARIANTS[pick % len(AGENT_VARIANTS):] + AGENT_VARIANTS[:pick % len(AGENT_VARIANTS)]
            for variant in order:
                per = found.setdefault(e.language, {}).setdefault(variant, [])
                if sum(c["id"].startswith(repo + "@") for c, _ in per) >= 2:
                    continue
                got = agent_snippet(variant, e.language, d, e.original, e.expected, pick)
                if got is not None and not marker_in_string(got[0], e.language) \
                        and syntax_problem(e.language, e.original, e.expected) is None:
                    per.append(_agent_case(e, licence, variant, *got))
                    paths.add(e.path)
                    break
    return _pick_round_robin(found, per_lang)


def _pick_round_robin(found: dict[str, dict[str, list]], per_lang: int) -> list[tuple[dict, dict]]:
    """Per language, the variants in turn; from each variant's queue the case of the repository used least
    so far (so that a language's cases come from all its repositories), never two from one commit."""
    out = []
    for language in sorted(found):
        queues = [list(found[language][v]) for v in AGENT_VARIANTS if found[language].get(v)]
        taken, used, repos = 0, set(), Counter()
        while taken < per_lang and any(queues):
            for q in queues:
                q[:] = [(c, m) for c, m in q if m["commit"] not in used]
                if q and taken < per_lang:
                    k = min(range(len(q)), key=lambda i: (repos[q[i][0]["source"].split("@")[0]], i))
                    case, meta = q.pop(k)
                    used.add(meta["commit"])
                    repos[case["source"].split("@")[0]] += 1
                    out.append((case, meta))
                    taken += 1
    return out


def by_rounds(pairs: list[tuple[dict, dict]]) -> list[tuple[dict, dict]]:
    """The cases reordered so that every language's first case comes first, then every second one, ..."""
    seen: Counter = Counter()
    ranked = []
    for k, (case, meta) in enumerate(pairs):
        ranked.append((seen[case["language"]], k, (case, meta)))
        seen[case["language"]] += 1
    return [pair for _, _, pair in sorted(ranked, key=lambda x: x[:2])]


def _agent_case(e: Edit, licence: str, variant: str, update: str, details: dict) -> tuple[dict, dict]:
    case, meta = _case(e, licence, update, variant, details)
    meta["variant"] = meta.pop("mode")
    return case, meta


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", default="/work/.mirror", help="folder of owner+name/repo bare mirrors")
    p.add_argument("--out", required=True)
    p.add_argument("--meta", default=None)
    p.add_argument("--repos", nargs="*", default=None, help="only these owner/name (default: all of REPOS)")
    p.add_argument("--agent", action="store_true", help="agent-style snippets (AGENT_VARIANTS) instead")
    p.add_argument("--per-lang", type=int, default=4, help="agent-style cases per language (default 4)")
    p.add_argument("--skip-commits-of", nargs="*", default=(), help="JSONL case files whose commits to pass over")
    p.add_argument("--pins", default=None, help="JSON {owner/name: [commit, licence]} for repositories not in REPOS")
    p.add_argument("--max-cases", type=int, default=None,
                   help="agent-style: at most this many cases, hand-written ones included (languages in turn)")
    p.add_argument("--hand", default=None,
                   help="JSON list of HandEdit fields to use instead of HAND_EDITS (agent-style cases written by hand)")
    args = p.parse_args(argv)
    table = REPOS | ({k: tuple(v) for k, v in json.load(open(args.pins)).items()} if args.pins else {})
    repos = {r: table[r] for r in (args.repos or REPOS)}
    missing = [r for r in repos if not os.path.isdir(mirror_of(args.mirrors, r))]
    if missing:
        print(f"lang_cases: fetch these mirrors first: {', '.join(missing)}", file=sys.stderr)
        return 1
    if args.agent:
        skip = {json.loads(line)["source"].split("@")[1].split(":")[0]
                for path in args.skip_commits_of for line in open(path, encoding="utf-8")}
        pairs = agent_cases(args.mirrors, repos, Select(), args.per_lang, skip)
        hand = HAND_EDITS if args.hand is None else [
            HandEdit(**{**h, "replacements": tuple(map(tuple, h["replacements"]))}) for h in json.load(open(args.hand))]
        if args.max_cases:
            keep = {c["id"] for c, _ in by_rounds(pairs)[:max(0, args.max_cases - len(hand))]}
            pairs = [(c, m) for c, m in pairs if c["id"] in keep]
        pairs += hand_cases(args.mirrors, hand, table)
    else:
        pairs = commit_cases(args.mirrors, repos, Select())
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(_jsonl([c for c, _ in pairs]))
    if args.meta:
        with open(args.meta, "w", encoding="utf-8") as f:
            f.write(_jsonl([m for _, m in pairs]))
    by_lang = Counter(c["language"] for c, _ in pairs)
    print(f"lang_cases: {len(pairs)} cases -> {args.out}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(by_lang.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
