"""An original that is a section of a file (MCP clients send the lines an agent chose, and splice the
answer back in their place): merged as a fragment (`merge/fragment.py`, `checks/fragments.py`).

A definition the snippet restates but the section holds only in part, a restated definition that
would land inside another, a blank line new at a cut edge: refused, the reason's first words saying
what to send. A snippet clear of the cuts: merged exactly. Then the parse check's error positions,
and `evals.sections` on three cases.

Told that the original is a section (`section=True`: `ApplyRequest.section`, set by the HTTP
front-end for fastapply-mcp's and Osmosis' MCP server's prompts, by a `section` body field, the
CLI's `--section` and the gRPC field), both edges are cuts whatever the text looks like: the
flag-mode cases, in Go, Rust, TypeScript, Python and Java, then the front-ends that set it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_http_families import KORTIX_SYSTEM, kortix, osmosis

from evals import sections
from fastapply.api import Applier, ApplyError, ApplyRequest
from fastapply.httpapi.parse import chat_call, ollama_chat_call, relace_call
from fastapply.languages import parse
from fastapply.merge import structural_merge
from fastapply.merge.checks.fragments import unheld_line_at_marked_edge
from fastapply.merge.fragment import BESIDE_CUT, SAID, SECTION_CHECK, SECTION_KIND, find_cuts
from fastapply.merge.section import section_edit
from fastapply.validate import validate

GO = """package retry

import "time"

func Backoff(attempt int) time.Duration {
	d := time.Duration(attempt) * time.Second
	if d > time.Minute {
		d = time.Minute
	}
	return d
}

func Do(fn func() error, attempts int) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(Backoff(i))
	}
	return err
}
"""

RUST = """use std::fmt;

/// Parses a port.
///
/// Returns None when it is out of range.
pub fn parse_port(s: &str) -> Option<u16> {
    let n: u32 = s.parse().ok()?;
    if n > 65535 {
        return None;
    }
    Some(n as u16)
}

/// Joins a host and a port.
pub fn join(host: &str, port: u16) -> String {
    format!("{}:{}", host, port)
}

pub fn show(port: u16) -> String {
    let s = port.to_string();
    s
}
"""

TS = """import { describe, it, expect } from 'vitest'
import { slug } from './slug'

describe('slug', () => {
  it('lowercases', () => {
    expect(slug('ABC')).toBe('abc')
    expect(slug('Abc')).toBe('abc')
  })

  it('joins words', () => {
    expect(slug('a b')).toBe('a-b')
    expect(slug('a  b')).toBe('a-b')
    expect(slug('a   b')).toBe('a-b')
  })

  it('drops accents', () => {
    expect(slug('é')).toBe('e')
  })
})
"""

PY = """import re


def slugify(text):
    text = text.strip().lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    return text.strip("-")


def test_slugify_basic():
    assert slugify("Hello World") == "hello-world"
    assert slugify("  a  ") == "a"


def test_slugify_symbols():
    assert slugify("a&b") == "a-b"
    assert slugify("a--b") == "a-b"
"""

JAVA = """package demo;

public class Box {
  private int size;

  public Box(int size) {
    this.size = size;
  }

  public int size() {
    return size;
  }

  public Box grow(int by) {
    return new Box(size + by);
  }

  public boolean empty() {
    return size == 0;
  }
}
"""


def _lines(text: str, a: int, b: int) -> str:
    return "".join(text.splitlines(keepends=True)[a:b])


# (id, language, file, section's first row, its end row, snippet)
REFUSED = [
    # a definition the snippet restates whole, its header above the section's first line
    ("go-header-above-cut", "go", GO, 6, 22,
     "func Backoff(attempt int) time.Duration {\n\td := time.Duration(attempt) * 2 * time.Second\n"
     "\tif d > time.Minute {\n\t\td = time.Minute\n\t}\n\treturn d\n}\n// ... existing code ...\n"),
    # ... a Go function (and the header of the one the section starts inside) pasted into that body
    ("go-function-into-body", "go", GO, 13, 22,
     "// ... existing code ...\nfunc Retry(fn func() error) error {\n\treturn Do(fn, 3)\n}\n\n"
     "func Do(fn func() error, attempts int) error {\n\tvar err error\n// ... existing code ...\n"),
    # a definition whose end is below the section, restated whole
    ("rust-fn-end-below-cut", "rust", RUST, 0, 8,
     "// ... existing code ...\npub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n"
     "    if n > 65535 {\n        return None;\n    }\n    Some(n as u16)\n}\n// ... existing code ...\n"),
    # a doc comment the section starts inside, restated whole
    ("rust-doc-comment-cut", "rust", RUST, 3, 22,
     "/// Parses a port.\n///\n/// Returns None when it is out of range (above 65535).\n"
     "pub fn parse_port(s: &str) -> Option<u16> {\n// ... existing code ...\n"),
    # a test whose end is below the section, restated whole: it would stand there twice
    ("ts-test-end-below-cut", "typescript", TS, 0, 11,
     "// ... existing code ...\n  it('joins words', () => {\n    expect(slug('a b')).toBe('a-b')\n"
     "    expect(slug('a  b')).toBe('a-b')\n    expect(slug('a-b')).toBe('a-b')\n  })\n// ... existing code ...\n"),
    # a blank line new above the first line of a section that starts with a blank line
    ("py-blank-line-at-edge", "python", PY, 8, 17,
     "# ... existing code ...\n\n\n\ndef test_slugify_basic():\n"
     "    assert slugify(\"Hello World\") == \"hello-world\"\n"
     "    assert slugify(\"  b  \") == \"b\"\n# ... existing code ...\n"),
    # a Python function whose `def` line is above the section, restated
    ("py-def-above-cut", "python", PY, 4, 17,
     "def slugify(text):\n    text = text.strip().lower()\n    text = re.sub(r\"[^a-z0-9]+\", \"_\", text)\n"
     "# ... existing code ...\n"),
    # a Java method restated with the class header the section starts inside
    ("java-class-header-above-cut", "java", JAVA, 9, 22,
     "// ... existing code ...\npublic class Box {\n  public int size() {\n    return this.size;\n  }\n"
     "  // ... existing code ...\n}\n"),
]

# (id, language, file, first row, end row, snippet, the expected section)
EXACT = [
    ("go-clear", "go", GO, 6, 22,
     "// ... existing code ...\n\t\ttime.Sleep(Backoff(i + 1))\n\t}\n\treturn err\n}\n",
     _lines(GO, 6, 22).replace("Backoff(i))", "Backoff(i + 1))")),
    ("rust-clear", "rust", RUST, 3, 22,
     "// ... existing code ...\npub fn join(host: &str, port: u16) -> String {\n    format!(\"{host}:{port}\")\n}\n"
     "// ... existing code ...\n",
     _lines(RUST, 3, 22).replace('"{}:{}", host, port', '"{host}:{port}"')),
    ("ts-clear", "typescript", TS, 4, 20,
     "// ... existing code ...\n  it('drops accents', () => {\n    expect(slug('é')).toBe('e')\n"
     "    expect(slug('ü')).toBe('u')\n  })\n})\n",
     _lines(TS, 4, 20).replace("toBe('e')\n", "toBe('e')\n    expect(slug('ü')).toBe('u')\n")),
    ("py-clear", "python", PY, 5, 17,
     "# ... existing code ...\ndef test_slugify_symbols():\n    assert slugify(\"a+b\") == \"a-b\"\n"
     "    assert slugify(\"a--b\") == \"a-b\"\n",
     _lines(PY, 5, 17).replace('"a&b"', '"a+b"')),
    ("java-clear", "java", JAVA, 6, 22,
     "  // ... existing code ...\n  public Box grow(int by) {\n    return new Box(size + 2 * by);\n  }\n"
     "  // ... existing code ...\n",
     _lines(JAVA, 6, 22).replace("size + by", "size + 2 * by")),
]


@pytest.mark.parametrize("name, lang, text, a, b, snippet", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_section_cut_through_what_the_snippet_shows_is_refused(name, lang, text, a, b, snippet):
    res = structural_merge(_lines(text, a, b), snippet, lang)
    assert not res.ok, (name, res.text)
    assert res.check == SECTION_CHECK and res.reasons[0].startswith("send "), res.reasons


@pytest.mark.parametrize("name, lang, text, a, b, snippet, expected", EXACT, ids=[c[0] for c in EXACT])
def test_a_section_whose_snippet_is_clear_of_the_cuts_merges_exactly(name, lang, text, a, b, snippet, expected):
    res = structural_merge(_lines(text, a, b), snippet, lang)
    assert res.ok, (name, res.reasons)
    assert res.text == expected


def test_the_reason_names_the_definition_and_the_refusal_leads_with_it():
    res = structural_merge(_lines(GO, 6, 22), REFUSED[0][5], "go")
    assert res.reasons[0].startswith("send the whole of `func Backoff(attempt int) time.Duration {`")
    from fastapply.pipeline import refusal
    from fastapply.types import ApplyRequest
    err = refusal(res, ApplyRequest(original=_lines(GO, 6, 22), update=REFUSED[0][5], language="go"))
    assert str(err).splitlines()[0].startswith("Send the whole of `func Backoff")


def test_whole_files_are_no_fragments():
    for lang, text in (("go", GO), ("rust", RUST), ("typescript", TS), ("python", PY), ("java", JAVA)):
        assert not find_cuts(text.splitlines(), lang, parse(lang, text)).fragment, lang


def test_cuts_are_read_from_the_text():
    def cuts(lang, text, a, b):
        section = _lines(text, a, b)
        return find_cuts(section.splitlines(), lang, parse(lang, section))

    go = cuts("go", GO, 6, 22)  # a `}` closes a bracket from above: a section, so its clean end is a cut too
    assert go.head_in_text and go.tail == BESIDE_CUT and go.said
    assert cuts("go", GO, 0, 8).tail  # `func Backoff(...) {` left open
    assert cuts("python", PY, 4, 17).head  # starts indented deeper than the lines after
    assert cuts("java", JAVA, 9, 22).head  # starts indented, a `}` closes the class
    assert cuts("python", PY, 8, 17).head  # starts with a blank line
    # blank edge lines, and a bracket left open in a file tree-sitter mostly fails to parse: a whole
    # file may have either, so its edges read as cuts of their own, not as the word that it is a section
    for text in ("\n" + JAVA + "\n", JAVA + "\n", "\n" + JAVA):
        blank = find_cuts(text.splitlines(), "java", parse("java", text))
        assert blank.fragment and not blank.said, repr(text[:9])
    broken = "describe('a', () => {\n  test('b', () => {\n    run();\n  });\n}\n"  # `});` written `}`
    cuts_broken = find_cuts(broken.splitlines(), "javascript", parse("javascript", broken))
    assert cuts_broken.tail and not cuts_broken.said


def test_a_fragment_parses_no_worse_where_its_errors_are():
    """A fragment has syntax errors of its own at its cuts, and an edit moves them: no count to
    compare. What counts is a new error where the section has none (its rows mapped through the
    edit), and, where it leaves brackets open, the error count with them closed."""
    def errors(section: str, merged: str, lang: str) -> list[str]:
        return [f.line() for f in validate(section, "", merged, lang) if f.severity == "error"]

    section = _lines(GO, 6, 22)  # from inside `Backoff`: its `}` closes a bracket opened above
    assert errors(section, section.replace("Backoff(i))", "Backoff(i + 1))"), "go") == []
    assert errors(section, section.replace("\tvar err error\n", "\tvar err error\n\tvar = 1\n"), "go")
    section = _lines(TS, 0, 12)  # into `it('joins words'`: brackets left open, one ERROR node to the end
    assert errors(section, section.replace("  it('joins", "  const = 1\n  it('joins"), "typescript")
    assert errors(section, section.replace("'a  b'", "'a    b'"), "typescript") == []


# -- the eval's machinery ------------------------------------------------------------------------------

CASE = {"id": "demo", "language": "go", "original": GO,
        "update": "// ... existing code ...\n\t\ttime.Sleep(Backoff(i + 1))\n\t}\n\treturn err\n}\n",
        "expected": GO.replace("Backoff(i))", "Backoff(i + 1))")}


def test_variants_are_drawn_deterministically_and_their_expected_sections_derive():
    drawn = sections.variants("demo", CASE, seed=3)
    assert drawn == sections.variants("demo", CASE, seed=3)
    assert {v.family for v in drawn} == {"clear", "close"}
    lines, exp = GO.splitlines(keepends=True), CASE["expected"].splitlines(keepends=True)
    for v in drawn:
        a, b = map(int, v.vid.rsplit(":", 1)[1].split("-"))
        assert v.section == "".join(lines[a:b])
        assert "".join(exp[:a]) + v.expected + "".join(lines[b:]) == CASE["expected"]
        assert "Backoff(i))" in v.section and "Backoff(i + 1))" in v.expected  # the changed line is inside


def test_sections_run_scores_and_writes_wrong_files(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    wrong = dict(CASE, id="wrong", expected=GO.replace("Backoff(i))", "Backoff(i + 2))"))  # no merge gives this
    refused = dict(CASE, id="refused",
                   update="// ... existing code ...\nnothing like the file\n// ... existing code ...\n")
    (cases / "demo.jsonl").write_text("".join(json.dumps(c) + "\n" for c in (CASE, wrong, refused)))
    out = tmp_path / "out" / "sections.json"
    assert sections.main(["--sets", "demo", "--cases", str(cases), "--seed", "3", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["variants"]
    by = {r["id"].split("#")[0]: set() for r in rows}
    for r in rows:
        by[r["id"].split("#")[0]].add(r["verdict"])
    assert "exact" in by["demo/demo"] and "wrong" in by["demo/wrong"] and by["demo/refused"] == {"refused"}
    kept = sorted((tmp_path / "out" / "sections-wrong").iterdir())
    assert len(kept) == sum(r["verdict"] == "wrong" for r in rows)
    assert (kept[0] / "merged").read_text() != (kept[0] / "expected").read_text()
    assert "per language" in sections.tables(rows)


# -- the request says it is a section (`section=True`) ------------------------------------------------

G, P = "// ... existing code ...\n", "# ... existing code ...\n"

# Files for the flag-mode cases below: a block's closers edited before the last marker, far from
# the cut; a comment edited above a definition shown up to a marker; look-alike keys at a cut.
JS_FLAGS = """export function render(flags, out) {
  out.push('start');
  flags.forEach((flag) => {
    for (const key of flag.keys) {
      switch (key) {
        case 'required':
          out.push(`--${flag.name}`);
      }
    }
  });
  out.push('end');
}

export function count(flags) {
  let n = 0;
  for (const flag of flags) {
    n += 1;
  }
  return n;
}

export function title() {
  return 'flags';
}
"""

JS_FLAGS_EDIT = """// ... existing code ...
  out.push('start');
  flags.forEach((flag) => {
    if (flag.required) {
      out.push(`--${flag.name}`);
    }
  });
// ... existing code ...
"""

JSON_TARGETS = """{
  "name": "demo",
  "targets": {
    "linux": {
      "flags": {
        "opt": "O2"
      },
      "libs": {
        "ssl": "3.0"
      }
    },
    "mac": {
      "flags": {
        "opt": "O2"
      },
      "libs": {
      }
    },
    "wasm": {
      "libs": {
        "ssl": "3.0"
      }
    }
  }
}
"""

JSON_TARGETS_EDIT = """  "name": "demo",
  "targets": {
    "wasm": {
      "libs": {
// ... rest of code ...
"""

PY_LOADER = '''def load(path):
    with open(path) as f:
        return f.read()


# Loads every file under the the root.
def load_all(root):
    for p in walk(root):
        if p.endswith(".txt"):
            yield load(p)


def walk(root):
    return sorted(glob(root + "/*"))
'''

PY_LOADER_EDIT = '''# ... existing code ...
        return f.read()


# Loads every file under the root.
def load_all(root):
    for p in walk(root):
        # ... existing code ...
'''


# (id, language, file, section's first row, its end row, snippet), by what makes each a refusal
FLAG_REFUSED = [
    # the snippet shows lines the section does not hold: the file's first lines, above the section
    ("go-lines-above", "go", GO, 2, 22, "package retry\n\nimport \"time\"\n" + G +
     "func Do(fn func() error, attempts int) error {\n\tvar err error\n\tfor i := 0; i < 2*attempts; i++ {\n"
     "\t\tif err = fn(); err == nil {\n" + G),
    ("rust-lines-above", "rust", RUST, 2, 22, "use std::fmt;\n\n/// Parses a port.\n" + G +
     "pub fn parse_port(s: &str) -> Option<u16> {\n    let n: u32 = s.trim().parse().ok()?;\n    if n > 65535 {\n" + G),
    ("ts-lines-above", "typescript", TS, 1, 19, "import { describe, it, expect } from 'vitest'\nimport { slug } from "
     "'./slug'\n" + G + "  it('drops accents', () => {\n    expect(slug('é')).toBe('e')\n    expect(slug('ü')).toBe('u')\n"
     "  })\n" + G),
    ("py-lines-above", "python", PY, 3, 17, "import re\n\n\ndef slugify(text):\n    text = text.strip().casefold()\n"
     "    text = re.sub(r\"[^a-z0-9]+\", \"-\", text)\n" + P),
    ("java-lines-above", "java", JAVA, 2, 21, "package demo;\n\npublic class Box {\n  " + G +
     "  public Box grow(int by) {\n    return new Box(size + 2 * by);\n  }\n  " + G + "}\n"),
    # code written beyond the section's last line: a new definition after it
    ("go-code-below", "go", GO, 12, 22, G + "\treturn err\n}\n\nfunc Retry(fn func() error) error {\n\treturn Do(fn, 3)\n}\n"),
    ("rust-code-below", "rust", RUST, 13, 17, G + "    format!(\"{}:{}\", host, port)\n}\n\n"
     "pub fn join_default(host: &str) -> String {\n    join(host, 80)\n}\n"),
    ("ts-code-below", "typescript", TS, 15, 18, G + "    expect(slug('é')).toBe('e')\n  })\n\n  it('keeps digits', () => {\n"
     "    expect(slug('a1')).toBe('a1')\n  })\n"),
    ("py-code-below", "python", PY, 9, 17, P + "    assert slugify(\"a--b\") == \"a-b\"\n\n\ndef test_slugify_empty():\n"
     "    assert slugify(\"\") == \"\"\n"),
    ("java-code-below", "java", JAVA, 17, 20, "  " + G + "    return size == 0;\n  }\n\n  public boolean full() {\n"
     "    return size > 100;\n  }\n"),
    # a definition restated whole that the section holds only in part (it ends inside it)
    ("go-partial-definition", "go", GO, 0, 10, G + "func Backoff(attempt int) time.Duration {\n"
     "\td := time.Duration(attempt) * 2 * time.Second\n\tif d > time.Minute {\n\t\td = time.Minute\n\t}\n\treturn d\n}\n"),
    ("rust-partial-definition", "rust", RUST, 0, 11, G + "pub fn parse_port(s: &str) -> Option<u16> {\n"
     "    let n: u32 = s.trim().parse().ok()?;\n    if n > 65535 {\n        return None;\n    }\n    Some(n as u16)\n}\n" + G),
    ("ts-partial-definition", "typescript", TS, 0, 12, G + "  it('joins words', () => {\n    expect(slug('a b')).toBe('a-b')\n"
     "    expect(slug('a  b')).toBe('a-b')\n    expect(slug('a   b')).toBe('a-b')\n    expect(slug('a_b')).toBe('a-b')\n"
     "  })\n" + G),
    ("py-partial-definition", "python", PY, 0, 6, P + "def slugify(text):\n    text = text.strip().lower()\n"
     "    text = re.sub(r\"[^a-z0-9]+\", \"_\", text)\n    return text.strip(\"-\")\n"),
    ("java-partial-definition", "java", JAVA, 0, 11, "  " + G + "  public int size() {\n    return this.size;\n  }\n  " + G),
    # the header of the definition the section starts inside, restated: it would land inside it
    ("go-header-inside", "go", GO, 13, 22, "func Do(fn func() error, attempts int) error {\n\tvar err error\n"
     "\tfor i := 0; i < 2*attempts; i++ {\n" + G),
    ("rust-header-inside", "rust", RUST, 6, 22, "pub fn parse_port(s: &str) -> Option<u16> {\n"
     "    let n: u32 = s.parse().ok()?;\n    if n > 99999 {\n" + G),
    ("ts-header-inside", "typescript", TS, 10, 19, "  it('joins words', () => {\n    expect(slug('a b')).toBe('a-b')\n"
     "    expect(slug('x y')).toBe('x-y')\n" + G),
    ("py-header-inside", "python", PY, 4, 17, "def slugify(text):\n    text = text.strip().lower()\n"
     "    text = re.sub(r\"[^a-z0-9]+\", \"_\", text)\n" + P),
    ("java-header-inside", "java", JAVA, 9, 22, G + "public class Box {\n  public int size() {\n    return this.size;\n  }\n  "
     + G + "}\n"),
    # the snippet's last region ends on a key the section holds twice (`"libs": {`), after a new one:
    # that key may be the file's own below the cut, not the look-alike the merge would pair it with
    ("json-look-alike-below", "json", JSON_TARGETS, 1, 18, JSON_TARGETS_EDIT),
]

# Cases whose section's edges look like a file's: read from the text alone, the merge takes them.
MERGED_WITHOUT_FLAG = {"go-lines-above", "rust-lines-above", "ts-lines-above", "py-lines-above", "java-lines-above",
                       "go-code-below", "rust-code-below", "py-code-below", "py-partial-definition"}


@pytest.mark.parametrize("name, lang, text, a, b, snippet", FLAG_REFUSED, ids=[c[0] for c in FLAG_REFUSED])
def test_told_it_is_a_section_the_merge_refuses_what_may_stand_beyond_its_cuts(name, lang, text, a, b, snippet):
    section = _lines(text, a, b)
    res = structural_merge(section, snippet, lang, section=True)
    assert not res.ok, (name, res.text)
    assert res.check == SECTION_CHECK and res.reasons[0].startswith("send "), res.reasons
    assert "or the whole file" in res.reasons[0]
    if name in MERGED_WITHOUT_FLAG:  # the text alone shows no cut: today's reading merges it
        assert structural_merge(section, snippet, lang).ok
    elif find_cuts(section.splitlines(), lang, parse(lang, section)).said:
        # the text shows a cut (it starts inside a block): read as a section unasked, and it says why
        unasked = structural_merge(section, snippet, lang).reasons[0]
        assert "(read as a section of a file: " in unasked and unasked.count("(") <= res.reasons[0].count("(") + 1
        assert unasked.split(" (")[0] == res.reasons[0].split(" (")[0], unasked


def test_the_reason_says_what_to_send_first():
    name, lang, text, a, b, snippet = FLAG_REFUSED[3]  # py-lines-above
    res = structural_merge(_lines(text, a, b), snippet, lang, section=True)
    assert res.reasons[0].startswith("send the lines above the section too (the snippet shows `import re`")


# (id, language, file, first row, end row, snippet, the expected section): clear of both cuts
FLAG_EXACT = EXACT + [
    ("go-clear-context-first", "go", GO, 6, 22, "// ... existing code ...\n\t\t}\n\t\ttime.Sleep(Backoff(i + 1))\n"
     "\t}\n\treturn err\n}\n", _lines(GO, 6, 22).replace("Backoff(i))", "Backoff(i + 1))")),
    # the region's lines after its anchor are edited (fewer closers than the section's), and the
    # section holds more lines below them: the marker stands for those, not for lines beyond the cut
    ("js-closers-edited", "javascript", JS_FLAGS, 0, 21, JS_FLAGS_EDIT, _lines(JS_FLAGS, 0, 21).replace(
        "    for (const key of flag.keys) {\n      switch (key) {\n        case 'required':\n"
        "          out.push(`--${flag.name}`);\n      }\n    }\n",
        "    if (flag.required) {\n      out.push(`--${flag.name}`);\n    }\n")),
    # an edited comment above a definition whose header and first line stand in place after it
    ("py-comment-edited", "python", PY_LOADER, 0, 12, PY_LOADER_EDIT,
     _lines(PY_LOADER, 0, 12).replace("the the root", "the root")),
]


@pytest.mark.parametrize("name, lang, text, a, b, snippet, expected", FLAG_EXACT, ids=[c[0] for c in FLAG_EXACT])
def test_told_it_is_a_section_a_snippet_clear_of_the_cuts_merges_exactly(name, lang, text, a, b, snippet, expected):
    res = structural_merge(_lines(text, a, b), snippet, lang, section=True)
    assert res.ok, (name, res.reasons)
    assert res.text == expected


TS_JOBS = """import { db } from './db'

export async function transferJob(id: number, to: string) {
  const tx = await db.begin()
  await tx.run('UPDATE jobs SET owner = ? WHERE id = ?', to, id)
  await record(tx, 'job.transfer', id)
  return tx.commit()
}

export async function purgeJob(id: number) {
  const tx = await db.begin()
  await tx.run('DELETE FROM jobs WHERE id = ?', id)
  await tx.run('DELETE FROM runs WHERE job = ?', id)
  await record(tx, 'job.purge', id)
  return tx.commit()
}

export async function record(tx: Tx, action: string, id: number) {
  await tx.run('INSERT INTO audit VALUES (?, ?)', action, id)
}
"""

def _ts_case(name: str) -> str:
    """One `case` of `run`: each alike but for its name, the look-alike blocks the rule is about."""
    return (f"    case '{name}':\n      if (!{name}(rest)) {{\n        console.error('{name}: failed')\n"
            f"        return 1\n      }}\n      break\n")


TS_SWITCH = ("export function run(cmd: string, rest: string[]): number {\n  switch (cmd) {\n"
             + "".join(_ts_case(n) for n in ("push", "gc", "fsck", "verify"))
             + "    default:\n      return 2\n  }\n  return 0\n}\n")

PY_TIMEOUTS = """import time


def wait_for(check, attempts=5):
    for i in range(attempts):
        if check():
            return True
        time.sleep(backoff(i))
    return False


def backoff(i):
    return min(2 ** i, 30)
"""


def test_told_it_is_a_section_a_line_edited_in_place_past_the_first_marker_merges():
    """Told it is a section, a snippet whose first line after its marker is an edit of the section's
    line there, one line edited inside one function and clear of the cut: the marker stands for the
    section's lines above it, so the merge answers (it used to refuse: that line might have been
    the file's own above the cut). Read from its text, this Python section shows no cut and merges
    the same."""
    section = _lines(PY_TIMEOUTS, 3, 14)  # `def wait_for` to the end: clear of the cut
    snippet = "# ... existing code ...\n        time.sleep(backoff(i) / 2)\n    return False\n# ... existing code ...\n"
    expected = section.replace("time.sleep(backoff(i))", "time.sleep(backoff(i) / 2)")
    res = structural_merge(section, snippet, "python", section=True)
    assert res.ok, res.reasons
    assert res.text == expected


# (id, language, file, first row, end row, snippet): edited lines past the first marker that read as
# well as the file's own lines above the cut (a look-alike of the section's), refused when told
FLAG_LOOK_ALIKE_REFUSED = [
    # the end of `transferJob` above the cut, then `record`: `purgeJob` deleted. The region reaches
    # `record`'s header from the lines before it, so it is no edit of `purgeJob`'s end in place.
    ("ts-function-end-above-cut", "typescript", TS_JOBS, 9, 21,
     "// ... existing code ...\n  await record(tx, 'job.transfer', id)\n  return tx.commit()\n}\n\n"
     "export async function record(tx: Tx, action: string, id: number) {\n// ... existing code ...\n"),
    # one edited line, but within `EDGE_RUN` lines of the cut
    ("py-edit-next-to-cut", "python", PY_TIMEOUTS, 5, 14,
     "# ... existing code ...\n        if check(i):\n            return True\n# ... existing code ...\n"),
]


@pytest.mark.parametrize("name, lang, text, a, b, snippet", FLAG_LOOK_ALIKE_REFUSED,
                         ids=[c[0] for c in FLAG_LOOK_ALIKE_REFUSED])
def test_told_it_is_a_section_edited_lines_that_may_stand_above_the_cut_are_refused(name, lang, text, a, b, snippet):
    res = structural_merge(_lines(text, a, b), snippet, lang, section=True)
    assert not res.ok, (name, res.text)
    assert res.check == SECTION_CHECK and res.reasons[0].startswith("send the lines above the section too"), res.reasons


def test_both_edges_are_cuts_when_the_request_says_so():
    section = _lines(GO, 12, 22)  # `func Do` whole: a file's edges
    assert not find_cuts(section.splitlines(), "go", parse("go", section)).fragment
    cuts = find_cuts(section.splitlines(), "go", parse("go", section), section=True)
    assert cuts.head == cuts.tail == SAID and cuts.said and not cuts.in_text
    cut = _lines(GO, 6, 22)  # the text's own reason is kept
    cuts = find_cuts(cut.splitlines(), "go", parse("go", cut), section=True)
    assert cuts.head_in_text and cuts.tail == SAID


def test_every_answer_in_section_mode_carries_the_section_finding():
    name, lang, text, a, b, snippet, expected = FLAG_EXACT[0]
    applier = Applier()
    result = applier.apply(ApplyRequest(_lines(text, a, b), snippet, language=lang, engine="structural", section=True))
    assert result.merged == expected and result.findings[0].kind == SECTION_KIND
    plain = applier.apply(ApplyRequest(_lines(text, a, b), snippet, language=lang, engine="structural"))
    assert all(f.kind != SECTION_KIND for f in plain.findings)


# -- who says so: the HTTP front-end, the CLI, gRPC ------------------------------------------------------

ORIG, UPDATE = _lines(PY, 9, 17), P + "    assert slugify(\"a--b\") == \"a-b\"\n\n\ndef test_slugify_empty():\n" \
    "    assert slugify(\"\") == \"\"\n"


def fastapply_mcp(original: str, update: str) -> str:
    """fastapply-mcp's USER_PROMPT (shared/reference/apply-clients.md 1.4): the Kortix prompt with RULES:."""
    return kortix(original, update).replace("below.\n", "below.\n\nRULES:\n").replace(
        "placeholders, ellipses", "placeholders, markdown, ellipses")


def _chat(messages: list[dict], **body) -> ApplyRequest:
    return chat_call({"model": "fastapply-structural", "messages": messages, **body}).request


def test_http_sets_section_for_the_clients_that_send_sections():
    system = {"role": "system", "content": KORTIX_SYSTEM}
    assert _chat([system, {"role": "user", "content": fastapply_mcp(ORIG, UPDATE)}]).section
    prefilled = [{"role": "user", "content": osmosis(ORIG, UPDATE)}, {"role": "assistant", "content": "<code>"}]
    assert _chat(prefilled).section  # Osmosis' MCP server
    assert ollama_chat_call({"model": "Osmosis/Osmosis-Apply-1.7B", "messages": prefilled}).request.section
    assert not _chat([system, {"role": "user", "content": kortix(ORIG, UPDATE)}]).section  # the model card's prompt
    assert not _chat([{"role": "user", "content": osmosis(ORIG, UPDATE)}]).section  # its call_snippet.py helper
    mcp = [system, {"role": "user", "content": fastapply_mcp(ORIG, UPDATE)}]
    assert not _chat(mcp, section=False).section  # the body's word decides
    assert _chat([system, {"role": "user", "content": kortix(ORIG, UPDATE)}], section=True).section
    assert relace_call({"initial_code": ORIG, "edit_snippet": UPDATE, "section": True}).request.section
    assert not relace_call({"initial_code": ORIG, "edit_snippet": UPDATE}).request.section


def test_a_section_from_fastapply_mcp_is_refused_where_the_whole_file_reading_would_merge():
    req = _chat([{"role": "user", "content": fastapply_mcp(ORIG, UPDATE)}])
    assert Applier().apply(replace(req, section=False)).ok  # read as a whole file: merged
    with pytest.raises(ApplyError) as e:
        Applier().apply(req)
    first = e.value.message.splitlines()[0]
    assert e.value.code == "refused" and first.startswith("Send ") and "or the whole file" in first


def test_cli_section_flag(tmp_path):
    f, u = tmp_path / "section.py", tmp_path / "update.py"
    f.write_text(ORIG)
    u.write_text(UPDATE)

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "fastapply.cli", "apply", str(f), "--update", str(u),
                               "--engine", "structural", *extra], capture_output=True, text=True,
                              cwd=Path(__file__).resolve().parents[1], timeout=300)

    assert run().returncode == 0  # read as a whole file, the new test is appended
    r = run("--section")
    assert r.returncode == 1 and "Send the whole of `def test_slugify_symbols():`" in r.stderr.splitlines()[0], r.stderr


def test_grpc_section_field_round_trip():
    from fastapply.grpc_convert import request_from_proto, request_to_proto
    m = request_to_proto(ApplyRequest(ORIG, UPDATE, section=True))
    assert m.HasField("section") and m.section
    assert request_from_proto(m).section
    plain = request_to_proto(ApplyRequest(ORIG, UPDATE))
    assert not plain.HasField("section") and not request_from_proto(plain).section


def test_a_definition_parsed_from_inside_a_cut_doc_comment_takes_its_signatures_indentation():
    """A section cut inside a Javadoc: tree-sitter reads the comment's words (`default Config values
    (...) {@link ...}`) as the start of the method below, so the node starts mid-line at the
    section's first row. Its indentation is its signature's, not that comment line's (a method
    restated whole was written one column deeper: `evals.sections` seed 29)."""
    from fastapply.merge.tree import _indented_line
    from fastapply.merge.whole_defs import original_definitions

    section = ("   * not use default Config values (which would hide {@link IOException}).\n   *\n"
               "   * <p>The default config lives in the user's home.\n   */\n"
               "  @Test\n  public void testLoadsDefaults() {\n    Config c = Config.load(null);\n  }\n\n"
               "  @Test\n  public void testLoadsPath() {\n    Config c = Config.load(\"a.toml\");\n  }\n")
    lines = section.splitlines()
    d = next(d for d in original_definitions(lines, "java") if d.name == "testLoadsDefaults")
    assert d.node.start_point[1] > 3  # the node starts in the comment's words
    assert _indented_line(d, lines) == "  public void testLoadsDefaults() {"
    ordinary = next(d for d in original_definitions(lines, "java") if d.name == "testLoadsPath")
    assert _indented_line(ordinary, lines) == lines[ordinary.node_start]


JAVA_READER = """class Reader {
  public double nextDouble() throws IOException {
    Token token = peek();
    if (token != Token.NUMBER) {
      throw new IllegalStateException(
          "Expected a number but was " + token);
    }
    double result = ((Primitive) peekStack()).getAsDouble();
    popStack();
    return result;
  }

  public long nextLong() throws IOException {
    Token token = peek();
    if (token != Token.NUMBER) {
      throw new IllegalStateException(
          "Expected a number but was " + token);
    }
    long result = ((Primitive) peekStack()).getAsLong();
    popStack();
    return result;
  }
}
"""
JAVA_READER_EDIT = """// ... existing code ...
  }

  public double nextDouble() throws IOException {
    Token token = peek();
    if (token != Token.NUMBER) {
      throw new IllegalStateException(
          "Expected a number but was " + token);
    }
    Primitive primitive = (Primitive) peekStack();
    double result = primitive.getAsDouble();
    popStack();
    return result;
  }
// ... existing code ...
"""


@pytest.mark.parametrize("first", [4, 5])
def test_a_section_cut_inside_a_block_of_the_method_the_snippet_restates_is_refused(first):
    """The section starts inside the `if` of `nextDouble`, whose header is above the cut, and the
    snippet restates that method whole with that `if` as written: read from the text alone, the
    section starts inside it (`SectionEdit.restated_around_head`), and the merge would write the
    method again below the section's part of it."""
    res = structural_merge(_lines(JAVA_READER, first, 22), JAVA_READER_EDIT, "java")
    assert not res.ok and res.check == SECTION_CHECK
    assert res.reasons[0].startswith("send the whole of `public double nextDouble() throws IOException {` "
                                     "(the section starts inside it"), res.reasons


JS_CALLBACK = """    // Old: pass the state as it was read. In the asynchronous case the state
    // may have changed since the callback above set it, so passing what
    // was read is wrong; it is kept for now, since changing it would break
    // callers that compare the two.
    onDone?.(loaded, undefined)

    // The callback may have changed the state: read it again.
    loaded = get()
    done = true
  })
  .catch((e) => {
    if (stale) {
      return
    }
    onDone?.(undefined, e)
  })
}
"""


def test_told_it_is_a_section_an_edge_line_written_twice_is_refused():
    """The snippet's region is a `}` above the cut, a new call, and a comment the section holds once:
    placed by the `}` of an `if` further down and a look-alike call there, the answer would hold the
    comment twice. Told it is a section, refused; read from its text (it starts indented: cut), the same."""
    snippet = (G + "    }\n    onDone?.(get(), undefined)\n\n"
               "    // The callback may have changed the state: read it again.\n" + G)
    res = structural_merge(JS_CALLBACK, snippet, "typescript", section=True)
    assert not res.ok and res.check == SECTION_CHECK
    assert res.reasons[0].startswith("send the lines around the section too, or the whole file: the answer would "
                                     "hold `// The callback may have changed the state: read it again.` twice")
    unasked = structural_merge(JS_CALLBACK, snippet, "typescript").reasons[0]
    assert unasked.startswith(res.reasons[0]) and unasked.endswith("(read as a section of a file: line 10 "
                                                                   "closes a bracket opened above it)"), unasked


def test_told_it_is_a_section_a_markerless_snippet_ending_past_its_last_line_is_refused():
    """The snippet restates the whole file without markers, down to an `export default` the section
    (cut above it) does not hold: the answer would end with it, and the client's splice would hold
    it twice. Read as a whole file, it is the file's new last line."""
    section = "class Box {\n  size() {\n    return 1;\n  }\n}\n"
    snippet = "class Box {\n  size() {\n    return 2;\n  }\n}\n\nexport default Box;\n"
    res = structural_merge(section, snippet, "javascript", section=True)
    assert not res.ok and res.check == SECTION_CHECK
    assert res.reasons[0].startswith("send the lines below the section too (the snippet ends with "
                                     "`export default Box;`"), res.reasons
    assert structural_merge(section, snippet, "javascript").text == snippet


def test_the_section_rule_reads_several_edited_lines_as_a_look_alike_block_beyond_the_cut():
    """The rule itself, on the answer that reads the snippet's `case 'push':` block as an edit of
    the section's `fsck` block in place: three lines each like the section's are as well the file's
    own block above the cut (the section's `fsck` deleted), so it names the first of them; with one
    line edited (`console.error('fsck: broken')`) the same answer stands."""
    section = _lines(TS_SWITCH, 8, 31)  # from `case 'gc':`, `EDGE_RUN` lines above the `fsck` block
    orig = section.splitlines()
    cuts = find_cuts(orig, "typescript", parse("typescript", section), section=True)
    block = ["    case 'push':", "      if (!push(rest)) {", "        console.error('push: failed')"]
    one = ["    case 'fsck':", "      if (!fsck(rest)) {", "        console.error('fsck: broken')"]
    at = orig.index("    case 'fsck':")
    for lines, refused in ((block, True), (one, False)):
        upd = ["    // ... existing code ..."] + lines + orig[at + 3:at + 7] + ["      // ... existing code ..."]
        merged = orig[:at] + lines + orig[at + 3:]
        ctx = section_edit(orig, upd, merged, "typescript", cuts)
        found = unheld_line_at_marked_edge(ctx)
        assert (found is not None) == refused, (lines, found)
        if refused:
            assert found.startswith("send the lines above the section too (the snippet shows `case 'push':`")


TS_ARGS = """export function validate(args: string[]): string | null {
  for (const a of args) {
    if (!a) {
      return 'empty argument'
    }
  }
  return null
}

// Arbitrary accepts anything.
export function arbitrary(args: string[]): string | null {
  return null
}

// Minimum requires at least n args.
export function minimum(n: number) {
  return (args: string[]) => (args.length < n ? `need ${n}` : null)
}
"""


def test_a_section_whose_text_shows_one_cut_is_read_as_a_section_at_both_edges():
    """Nothing in the request says it is a section, but its first line is indented inside a block
    (a cut): its last line, a comment that looks like a file's end, may be a cut too. The snippet
    ends with the function below that comment, no marker after it: read as a whole file, the merge
    wrote it below the section's last line, and the client's splice held it twice. Read as a
    section at both edges, refused with what to send."""
    section = _lines(TS_ARGS, 2, 10)  # `if (!a) {` .. `// Arbitrary accepts anything.`
    cuts = find_cuts(section.splitlines(), "typescript", parse("typescript", section))
    assert cuts.head_in_text and cuts.tail == BESIDE_CUT and cuts.said
    snippet = ("// ... existing code ...\n  return null\n}\n\n// unique rejects repeated args.\n"
               "export function unique(args: string[]): string | null {\n"
               "  return new Set(args).size === args.length ? null : 'repeated argument'\n}\n\n"
               "// Arbitrary accepts anything.\nexport function arbitrary(args: string[]): string | null {\n"
               "  return null\n}\n")
    res = structural_merge(section, snippet, "typescript")
    assert not res.ok, res.text
    assert res.check == SECTION_CHECK and res.reasons[0].startswith("send the lines below the section too"), res.reasons
    assert res.reasons[0].endswith("(read as a section of a file: line 4 closes a bracket opened above it)")


JAVA_CART_TEST = """package shop;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class CartTest {
  @Test
  public void emptyCartCostsNothing() {
    Cart cart = new Cart();
    assertEquals(0, cart.total());
    assertEquals(0, cart.size());
  }

  @Test
  public void singleItemTotalIsItsPrice() {
    // one item: the total is its price
    Cart cart = new Cart();
    cart.add("apple", 3);
    assertEquals(3, cart.total());
  }

  @Test
  public void twoItemsAddUp() {
    Cart cart = new Cart();
    cart.add("plum", 4);
    cart.add("pear", 2);
    assertEquals(6, cart.total());
  }
}
"""


def test_told_it_is_a_section_a_renamed_header_past_the_first_marker_merges():
    """Told it is a section, a region whose first lines rename a test (its annotation held more than
    once) and lead to a line the section holds once, a comment between them deleted: the region
    edits the section in place (`_up_to_anchor`), clear of the cut, and merges as the whole file does
    (on the previous code: refused, the header possibly the file's own above the cut)."""
    section = _lines(JAVA_CART_TEST, 6, 31)  # from `public class CartTest {`
    snippet = ("  // ... existing code ...\n  @Test\n  public void oneItemTotalIsItsPrice() {\n    Cart cart = new Cart();\n"
               "    cart.add(\"apple\", 3);\n    // ... existing code ...\n")
    expected = section.replace("  public void singleItemTotalIsItsPrice() {\n    // one item: the total is its price\n",
                               "  public void oneItemTotalIsItsPrice() {\n")
    head = JAVA_CART_TEST[:JAVA_CART_TEST.index("public class")]
    assert structural_merge(JAVA_CART_TEST, snippet, "java").text == head + expected  # as the whole file
    res = structural_merge(section, snippet, "java", section=True)
    assert res.ok, res.reasons
    assert res.text == expected
