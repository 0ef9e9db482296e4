"""An item deleted from a family whose items end alike (tests ending in the same asserts, methods
ending `return this;` / `}`), written as an agent writes it: the previous item's tail, the blank
seam, the next item's head, markers around. Read at the nearest copy of that tail, the snippet
changes nothing; on 24aa034 each came back unchanged with exit 0 (`checks.changes_nothing` let an
edit that occurs once verbatim pass as already applied). Now the merge refuses, and its readings
hold the deletion (`lineplace._at_seam_copies`). Applied again to the file with the item deleted,
the snippet is an edit already applied: the file comes back unchanged."""

from __future__ import annotations

import pytest

from fastapply.merge import structural_merge
from fastapply.merge.checks.helpers import copies_after, copies_before, seam_runs
from fastapply.merge.readings import read_all


def _deleted(text: str, start: int, end: int) -> str:
    lines = text.splitlines(keepends=True)
    del lines[start:end]
    return "".join(lines)


CASES = {  # name: (language, original, snippet, (first, end) of the original lines deleted)
    "python": ("python", '''\
from app import make


def test_a():
    client = make()
    resp = client.get("/a")
    assert resp.status_code == 200
    assert resp.json() == {"ok": True}


def test_b():
    client = make()
    resp = client.get("/b")
    assert resp.status_code == 200
    assert resp.json() == {"ok": True}


def test_c():
    client = make()
    resp = client.post("/c")
    assert resp.status_code == 201
''', '''\
# ... existing code ...
    assert resp.status_code == 200
    assert resp.json() == {"ok": True}


def test_c():
# ... existing code ...
''', (10, 17)),
    "javascript": ("javascript", '''\
const { render } = require("./render");

describe("render", () => {
  it("renders a title", () => {
    const out = render({ title: "a" });
    expect(out).toMatchSnapshot();
  });

  it("renders a subtitle", () => {
    const out = render({ subtitle: "b" });
    expect(out).toMatchSnapshot();
  });

  it("renders nothing", () => {
    expect(render({})).toBe("");
  });
});
''', '''\
// ... existing code ...
    expect(out).toMatchSnapshot();
  });

  it("renders nothing", () => {
// ... existing code ...
''', (8, 13)),
    "go": ("go", '''\
package store

import "testing"

func TestPut(t *testing.T) {
	s := New()
	if err := s.Put("a", 1); err != nil {
		t.Fatal(err)
	}
}

func TestPutTwice(t *testing.T) {
	s := New()
	s.Put("a", 1)
	if err := s.Put("a", 2); err != nil {
		t.Fatal(err)
	}
}

func TestGet(t *testing.T) {
	s := New()
	if _, ok := s.Get("a"); ok {
		t.Fatal("found")
	}
}
''', '''\
// ... existing code ...
		t.Fatal(err)
	}
}

func TestGet(t *testing.T) {
// ... existing code ...
''', (11, 19)),
    "rust": ("rust", '''\
use crate::parse;

#[test]
fn parses_empty() {
    let got = parse("").unwrap();
    assert!(got.is_empty());
}

#[test]
fn parses_blank() {
    let got = parse("   ").unwrap();
    assert!(got.is_empty());
}

#[test]
fn rejects_junk() {
    assert!(parse("%%").is_err());
}
''', '''\
// ... existing code ...
    assert!(got.is_empty());
}

#[test]
fn rejects_junk() {
// ... existing code ...
''', (8, 14)),
    "java": ("java", '''\
package demo;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class MathTest {
    private final int want = 3;

    @Test
    public void addsSmall() {
        int got = MathUtil.add(1, 2);
        assertEquals(want, got);
    }

    @Test
    public void addsLarge() {
        int got = MathUtil.add(1000, 2000);
        assertEquals(want, got);
    }

    @Test
    public void subtracts() {
        assertEquals(1, MathUtil.sub(3, 2));
    }
}
''', '''\
// ... existing code ...
        assertEquals(want, got);
    }

    @Test
    public void subtracts() {
// ... existing code ...
''', (15, 21)),
    "typescript": ("typescript", '''\
export class Flags {
  private on = new Set<string>();

  /**
   * Turn a flag on.
   * @param name the flag
   * @returns this, for chaining
   */
  enable(name: string): this {
    this.on.add(name);
    return this;
  }

  /**
   * Turn a flag off.
   * @param name the flag
   * @returns this, for chaining
   */
  disable(name: string): this {
    this.on.delete(name);
    return this;
  }

  has(name: string): boolean {
    return this.on.has(name);
  }
}
''', '''\
  // ... existing code ...
    return this;
  }

  has(name: string): boolean {
  // ... existing code ...
''', (13, 23)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_deleting_an_item_among_look_alikes_is_refused_with_the_deletion_as_a_reading(name):
    lang, original, snippet, (start, end) = CASES[name]
    expected = _deleted(original, start, end)
    res = structural_merge(original, snippet, lang)
    assert not res.ok, "the unchanged file came back as the merge"
    assert "changes nothing" in res.reasons[0]
    assert expected in [r.text for r in read_all(original, snippet, lang).kept]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_deletion_applied_again_changes_nothing(name):
    lang, original, snippet, (start, end) = CASES[name]
    expected = _deleted(original, start, end)
    res = structural_merge(expected, snippet, lang)
    assert res.ok and res.text == expected


def test_seam_runs_and_copies():
    assert seam_runs(["", "a", "b", "", "c", "", "", "d", ""]) == [(["a", "b"], ["c", "", "", "d"]),
                                                                    (["a", "b", "", "c"], ["d"])]
    assert seam_runs(["a", "b"]) == []
    assert seam_runs(["a", "},", "{", "b"]) == [(["a", "},"], ["{", "b"])]  # (after a closer)
    keys = ["x", "a", "b", "y", "a", "b", "z"]
    assert copies_before(keys, ["a", "b"], 0, 4, 3) == [1]
    assert copies_before(keys, ["a", "b"], 0, 7, 3) == [4, 1]
    assert copies_after(keys, ["a", "b"], 3, 7, 3) == [5]
    assert copies_after(keys, ["a", "b"], 0, 7, 1) == [2]


def test_a_seam_whose_lines_after_it_stand_again_below_is_refused():
    """The other side of the seam: the snippet shows a unique tail, then `@Test` / `@Timeout(5)` and a
    marker. At the next test's head it changes nothing; at the one after it deletes `second()`. On
    24aa034 the unchanged file came back."""
    original = '''\
public class T {
    @Test
    @Timeout(5)
    public void first() {
        run("a");
    }

    @Test
    @Timeout(5)
    public void second() {
        run("b");
    }

    @Test
    @Timeout(5)
    public void third() {
        run("c");
    }
}
'''
    snippet = '''\
    // ... existing code ...
        run("a");
    }

    @Test
    @Timeout(5)
    // ... existing code ...
'''
    res = structural_merge(original, snippet, "java")
    assert not res.ok and "`@Test` also stand at line 14" in res.reasons[0]
    assert _deleted(original, 6, 12) in [r.text for r in read_all(original, snippet, "java").kept]


def test_an_edit_applied_again_beside_a_lone_closer_comes_back_unchanged():
    """Re-run idempotency: a function added after `}` and applied, sent again. The lone `}` before
    the seam stands at every function's end, so it shows no deletion (`evals.reapply` on the dev
    sets' 370 exact cases: 331 come back unchanged on 24aa034, 299 under a first cut of the seam
    rule that took a lone `}` for an item's tail, 322 now)."""
    original = "package x\n\nfunc z() int {\n\treturn 0\n}\n\nfunc a() int {\n\treturn 1\n}\n\nfunc b() int {\n\treturn 2\n}\n"
    snippet = "// ... existing code ...\n}\n\nfunc b() int {\n\treturn 2\n}\n"
    res = structural_merge(original, snippet, "go")
    assert res.ok and res.text == original


def test_an_edit_with_lines_of_its_own_applied_again_comes_back_unchanged():
    """A region whose lines before each seam, and after it, stand nowhere else whole (here the first
    test's tail, the whole middle test, the last one's header): applied again it is an edit already
    applied, unchanged (a guard against refusing every seam)."""
    lang, original, _, _ = CASES["python"]
    snippet = ('# ... existing code ...\n    assert resp.status_code == 200\n    assert resp.json() == {"ok": True}\n'
               '\n\ndef test_b():\n    client = make()\n    resp = client.get("/b")\n    assert resp.status_code == 200\n'
               '    assert resp.json() == {"ok": True}\n\n\ndef test_c():\n# ... existing code ...\n')
    res = structural_merge(original, snippet, lang)
    assert res.ok and res.text == original


PACKED = {  # name: (language, original, snippet, the entry deleted): entries one after the other, no blank line
    "go": ("go", '''\
package calc

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{
			name: "empty",
			in:   "",
			want: 0,
		},
		{
			name: "space",
			in:   " ",
			want: 0,
		},
		{
			name: "two",
			in:   "ab",
			want: 2,
		},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}
''', '''\
// ... existing code ...
			want: 0,
		},
		{
			name: "two",
			// ... existing code ...
''', '''\
		{
			name: "space",
			in:   " ",
			want: 0,
		},
'''),
    "rust": ("rust", '''\
pub fn code(kind: Kind) -> u16 {
    match kind {
        Kind::NotFound => {
            log::debug!("miss");
            404
        }
        Kind::Gone => {
            log::debug!("miss");
            404
        }
        Kind::Denied => {
            log::warn!("denied");
            403
        }
    }
}
''', '''\
    // ... existing code ...
            log::debug!("miss");
            404
        }
        Kind::Denied => {
    // ... existing code ...
''', '''\
        Kind::Gone => {
            log::debug!("miss");
            404
        }
'''),
    "python": ("python", '''\
ROUTES = [
    {
        "path": "/a",
        "auth": True,
    },
    {
        "path": "/b",
        "auth": True,
    },
    {
        "path": "/c",
        "auth": False,
    },
]
''', '''\
# ... existing code ...
        "auth": True,
    },
    {
        "path": "/c",
# ... existing code ...
''', '''\
    {
        "path": "/b",
        "auth": True,
    },
'''),
    "typescript": ("typescript", '''\
export const columns = [
  {
    key: "name",
    sortable: true,
  },
  {
    key: "email",
    sortable: true,
  },
  {
    key: "role",
    sortable: false,
  },
];
''', '''\
// ... existing code ...
    sortable: true,
  },
  {
    key: "role",
// ... existing code ...
''', '''\
  {
    key: "email",
    sortable: true,
  },
'''),
}


@pytest.mark.parametrize("name", sorted(PACKED))
def test_deleting_an_entry_among_look_alikes_is_refused_with_the_deletion_as_a_reading(name):
    """A table entry or match arm deleted, its neighbours set apart by no blank line: the seam is
    the line after the previous entry's closer (`},`, `}`). On 0121a7d each came back unchanged."""
    lang, original, snippet, gone = PACKED[name]
    expected = original.replace(gone, "", 1)
    res = structural_merge(original, snippet, lang)
    assert not res.ok and "changes nothing" in res.reasons[0]
    assert expected in [r.text for r in read_all(original, snippet, lang).kept]
