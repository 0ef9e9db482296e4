"""File rules (context: `LinePlan`): control flow the splice would break.

An elided statement that leaves its block (`return data, err`, `raise`, `throw`, `break`) kept
right before new lines the snippet adds in the same block: those lines could never run. The
snippet more likely replaces that statement (a retry loop wrapped around a body whose old last
`return` gives way to a new check), or goes elsewhere; the readings hold the replacement
(`lineplace`'s wrap variant "replace_last").
"""

from __future__ import annotations

import re

from fastapply.merge.checks.base import LinePlan
from fastapply.merge.splice import apply_edits
from fastapply.merge.text import CLOSERS, indent_of, is_blank
from fastapply.merge.unanchored import bracket_delta

# A statement that leaves its block: nothing after it in the same block runs.
_EXIT = re.compile(r"(return|raise|throw|break|continue)\b|panic\(|os\.Exit\(|process\.exit\(|sys\.exit\(")
# Lines that may follow an exit in the same block and still run: another branch, a label, a closer.
_BRANCH = re.compile(r"(case\b|default\s*:|else\b|elif\b|except\b|catch\b|finally\b|\}|\)|\]|end\b|[A-Za-z_]\w*:\s*$)")


def new_code_after_kept_exit(plan: LinePlan) -> str | None:
    """An original `return` (`raise`, `throw`, `break`, ...) the snippet does not show stays in
    place, and the next line at its depth is one the snippet adds: dead code, so more likely the
    snippet's new lines replace that statement (or belong elsewhere) than follow it."""
    merged = apply_edits(plan.orig, plan.spans)
    if merged is None:
        return None
    shown = {x.strip() for r in plan.regions for x in r.lines if not is_blank(x)}
    known = {x.strip() for x in plan.orig if not is_blank(x)}
    for i, line in enumerate(merged):
        s = line.strip()
        if not _EXIT.match(s) or s in shown or bracket_delta(s) != 0 or s.endswith(("\\", ",")):
            continue
        k = next((j for j in range(i + 1, len(merged)) if not is_blank(merged[j])), None)
        if k is None or indent_of(merged[k]) != indent_of(line):
            continue
        nxt = merged[k].strip()
        if nxt in known or nxt not in shown or nxt in CLOSERS or _BRANCH.match(nxt):
            continue
        return (f"the original's `{s[:40]}` (not shown) would stand right before the snippet's new `{nxt[:40]}`, "
                "which could then never run: does the new code replace that statement?")
    return None
