"""A body wrapped in a new block with a branch (`else`, `except`, `catch`) whose lines read like the
wrapped code's: `} else { Ok(()) }` round a body ending `Ok(())`, `except KeyError: return None`
round one that returns None early. The branch's lines are its own: pairing one with the wrapped
code's copy would move that line out of the block the marker says holds the code unchanged
(`wrap_regions.opens_new_branch`). Written as an agent writes the edit, in six languages; each
was refused on 9b63fe1, and in Go with the early `return err` deleted as "a common line".
"""

from __future__ import annotations

import pytest

from fastapply.merge import structural_merge

# language -> (original, snippet, expected)
BRANCH_REPEATS_A_WRAPPED_LINE = {
    "python": (
        """import logging

log = logging.getLogger(__name__)


class Store:
    def find(self, key):
        row = self.db.get(key)
        if row is None:
            return None
        return Item(row)

    def close(self):
        self.db.close()
""",
        """# ... existing code ...
    def find(self, key):
        try:
            # ... existing code ...
        except KeyError:
            return None

    def close(self):
        # ... existing code ...
""",
        """import logging

log = logging.getLogger(__name__)


class Store:
    def find(self, key):
        try:
            row = self.db.get(key)
            if row is None:
                return None
            return Item(row)
        except KeyError:
            return None

    def close(self):
        self.db.close()
""",
    ),
    "javascript": (
        """const fs = require('fs');

function readConfig(path) {
  const text = fs.readFileSync(path, 'utf8');
  if (!text) {
    return null;
  }
  return JSON.parse(text);
}

module.exports = { readConfig };
""",
        """// ... existing code ...
function readConfig(path) {
  try {
    // ... existing code ...
  } catch (err) {
    return null;
  }
}
// ... existing code ...
""",
        """const fs = require('fs');

function readConfig(path) {
  try {
    const text = fs.readFileSync(path, 'utf8');
    if (!text) {
      return null;
    }
    return JSON.parse(text);
  } catch (err) {
    return null;
  }
}

module.exports = { readConfig };
""",
    ),
    "java": (
        """package app;

class UserService {
  private final UserRepository repo;

  User find(long id) {
    User user = repo.byId(id);
    if (user == null) {
      return null;
    }
    return user;
  }
}
""",
        """// ... existing code ...
  User find(long id) {
    try {
      // ... existing code ...
    } catch (RepositoryException e) {
      return null;
    }
  }
}
""",
        """package app;

class UserService {
  private final UserRepository repo;

  User find(long id) {
    try {
      User user = repo.byId(id);
      if (user == null) {
        return null;
      }
      return user;
    } catch (RepositoryException e) {
      return null;
    }
  }
}
""",
    ),
    "go": (
        """package server

func (s *Server) Stop() error {
	s.ln.Close()
	s.wg.Wait()
	return nil
}

func (s *Server) Addr() string {
	return s.addr
}
""",
        """// ... existing code ...
func (s *Server) Stop() error {
	if s.ln != nil {
		// ... existing code ...
	} else {
		return nil
	}
}
// ... existing code ...
""",
        """package server

func (s *Server) Stop() error {
	if s.ln != nil {
		s.ln.Close()
		s.wg.Wait()
		return nil
	} else {
		return nil
	}
}

func (s *Server) Addr() string {
	return s.addr
}
""",
    ),
    "rust": (
        """use std::num::ParseIntError;

fn parse_port(s: &str) -> Option<u16> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    t.parse().ok()
}
""",
        """// ... existing code ...
fn parse_port(s: &str) -> Option<u16> {
    if s.is_ascii() {
        // ... existing code ...
    } else {
        return None;
    }
}
""",
        """use std::num::ParseIntError;

fn parse_port(s: &str) -> Option<u16> {
    if s.is_ascii() {
        let t = s.trim();
        if t.is_empty() {
            return None;
        }
        t.parse().ok()
    } else {
        return None;
    }
}
""",
    ),
}
BRANCH_REPEATS_A_WRAPPED_LINE["typescript"] = tuple(
    x.replace("const fs = require('fs');", "import * as fs from 'fs';")
     .replace("function readConfig(path)", "function readConfig(path: string): Config | null")
     .replace("module.exports = { readConfig };", "export { readConfig };")
    for x in BRANCH_REPEATS_A_WRAPPED_LINE["javascript"])


@pytest.mark.parametrize("lang", sorted(BRANCH_REPEATS_A_WRAPPED_LINE))
def test_a_branch_repeating_a_wrapped_line_keeps_the_body_whole(lang):
    original, update, expected = BRANCH_REPEATS_A_WRAPPED_LINE[lang]
    r = structural_merge(original, update, lang)
    assert r.ok, r.reasons
    assert r.text == expected


def test_a_finally_repeating_the_wrapped_codes_last_line_stays_a_question():
    """`finally: conn.close()` round a body ending `conn.close()` may move that line into the
    `finally` (the usual reason to write one) or add a second call: not a branch of its own."""
    original = "def save(conn, row):\n    conn.insert(row)\n    conn.close()\n"
    update = ("def save(conn, row):\n    try:\n        # ... existing code ...\n    finally:\n"
              "        conn.close()\n")
    r = structural_merge(original, update, "python")
    assert not r.ok


# `finally:` / `lock.release()` after `try:` and a marker for the body, over a body that is itself a
# `try:` / `finally: client.close()`, with the marker after written at column 0: the new lines may
# go at the top of the old `finally` (its `client.close()` kept after them, hidden by that marker)
# or a new try/finally may wrap the old one (held-out fuzz seed 65123, `wrap_body` #916, Python,
# wrong on 9b63fe1 too: `checks.clause_top_under_other_marker`).
TRY_AROUND_TRY_LOOSE = {
    "python": ("def close_all(pool):\n    try:\n        conn = pool.get()\n        conn.flush()\n    finally:\n"
               "        conn.close()\n\n\ndef other():\n    return 1\n",
               "# ... existing code ...\ndef close_all(pool):\n    try:\n        # ... existing code ...\n    finally:\n"
               "        lock.release()\n# ... existing code ...\n"),
    "javascript": ("function closeAll(pool) {\n  try {\n    const conn = pool.get();\n    conn.flush();\n  } finally {\n"
                   "    conn.close();\n  }\n}\n\nfunction other() {\n  return 1;\n}\n",
                   "// ... existing code ...\nfunction closeAll(pool) {\n  try {\n    // ... existing code ...\n"
                   "  } finally {\n    lock.release();\n// ... existing code ...\n"),
    "java": ("class Pool {\n  void closeAll() {\n    try {\n      Conn conn = get();\n      conn.flush();\n    } finally {\n"
             "      conn.close();\n    }\n  }\n}\n",
             "// ... existing code ...\n  void closeAll() {\n    try {\n      // ... existing code ...\n    } finally {\n"
             "      lock.release();\n// ... existing code ...\n"),
}


@pytest.mark.parametrize("lang", sorted(TRY_AROUND_TRY_LOOSE))
def test_new_lines_atop_an_old_finally_under_a_loose_marker_are_a_question(lang):
    original, update = TRY_AROUND_TRY_LOOSE[lang]
    r = structural_merge(original, update, lang)
    assert not r.ok, r.text
