"""The structural merge on sections: every case's original cut to a fragment, as MCP clients send it.

    .venv/bin/python -m evals.sections --seed 1 --json out/sections.json [--mode text|flag]

Clients such as fastapply-mcp send the lines an agent chose ("edit only the sections you need") as
the original and splice the answer back in their place. For each case of every set this draws
sections `original[a:b]` (by lines) that hold every line the edit changes, so that the expected
section is derivable: the expected file is `original[:a] + section' + original[b:]`, its prefix
and suffix unchanged (a cut where it is not is skipped). Two families:

- `clear`: both cuts at least `CLEAR_LINES` lines from any line the snippet shows, or at the
  file's edge (the whole file is no section); `why` says `file edge` where a cut at the file's edge
  has a shown line within `CLEAR_LINES` of it (an import added at the top): told only that the
  original is a section, the merge cannot know that nothing stands beyond that edge, so `flag`
  refuses code written beyond it; and `shows beyond` where the snippet shows lines outside the
  section (clear of the cut, but lines the section does not hold: `flag` refuses them); `clear`
  where neither, the snippet inside the section and clear of both cuts;
- `close`: a cut within 0-2 lines of a shown line (`beside`), inside a definition the snippet
  restates (`definition`: its header shown or edited), or inside a multi-line comment or a run of
  line comments (`comment`).

A variant is `exact` (the merged section is the expected one, byte for byte; blank lines ignored
where `evals.verdicts` ignores them), `refused` or `wrong`, beside its case's verdict as a whole
file (`evals.verdicts`): on `clear` sections the merge should do as well as on whole files. The ids
of wrong variants are listed, and with `--json` their files are written under `<json stem>-wrong/`.

Two modes, each merging every variant: `text` (the request says nothing: the merge reads the cuts
from the section's text alone) and `flag` (`section=True`, as the HTTP front-end sets it for the
clients known to send sections: both edges are cuts). `--mode` picks one; the default runs both.
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evals.accuracy import blank_insensitive
from evals.common import load_cases, write_json
from evals.verdicts import SETS, verdict
from fastapply.languages import detect_language, parse
from fastapply.markers import marker_flags
from fastapply.merge import structural_merge
from fastapply.merge.whole_defs import original_definitions

CASES = Path(__file__).resolve().parent / "cases"
CLEAR_LINES = 3  # a `clear` cut stands at least this many lines from every line the snippet shows
PER_FAMILY = 3  # sections drawn per case and family (fewer where fewer cuts exist)
CLEAR_WHYS = ("clear", "file edge", "shows beyond")  # the `why` of a `clear` variant
MODES = ("text", "flag")  # the request says nothing / says the original is a section (`section=True`)


@dataclass(frozen=True)
class Variant:
    vid: str  # `set/case id#family:a-b`
    set: str
    family: str  # clear | close
    why: str  # clear, or what makes it close: beside | definition | comment
    language: str | None
    path: str | None
    section: str
    update: str
    expected: str
    blanks_ignored: bool


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _changed(orig: list[str], exp: list[str]) -> tuple[int, int, list[tuple[int, int]]] | None:
    """(first, end) of the original lines the edit touches (an insertion is a point), and the
    original's lines equal in the expected file as (original row, expected row) pairs; None: no change."""
    ops = difflib.SequenceMatcher(None, orig, exp, autojunk=False).get_opcodes()
    touched = [(i1, i2) for tag, i1, i2, _, _ in ops if tag != "equal"]
    if not touched:
        return None
    same = [(i1 + k, j1 + k) for tag, i1, i2, j1, _ in ops if tag == "equal" for k in range(i2 - i1)]
    return min(t[0] for t in touched), max(t[1] for t in touched), same


def _shown(orig: list[str], exp: list[str], upd: list[str], same: list[tuple[int, int]], lo: int, hi: int) -> set[int]:
    """Original rows the snippet shows: its non-marker lines aligned to the expected file (blank
    lines and indentation aside), mapped back through the unchanged lines, plus the rows the edit touches."""
    flags = marker_flags([x.rstrip("\r\n") for x in upd], [x.rstrip("\r\n") for x in orig])
    code = [x.strip() for x, m in zip(upd, flags) if not m and x.strip()]
    rows = [j for j, x in enumerate(exp) if x.strip()]
    sm = difflib.SequenceMatcher(None, code, [exp[j].strip() for j in rows], autojunk=False)
    in_exp = {rows[b.b + k] for b in sm.get_matching_blocks() for k in range(b.size)}
    back = {j: i for i, j in same}
    return {back[j] for j in in_exp if j in back} | set(range(lo, hi))


def _spans(orig: list[str], shown: set[int], lang: str | None) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(definitions the snippet restates, multi-line comments and line-comment runs) as inclusive row spans."""
    text = [x.rstrip("\r\n") for x in orig]
    defs = [(d.start, d.end) for d in original_definitions(text, lang) if d.node_start in shown and d.end > d.start]
    tree = parse(lang, "".join(orig)) if lang else None
    comments: list[tuple[int, int]] = []
    stack = [tree.root_node] if tree is not None else []
    while stack:
        node = stack.pop()
        if "comment" in node.type:
            s, e = node.start_point[0], node.end_point[0] - (node.end_point[1] == 0)
            run = comments and comments[-1][1] + 1 == s and \
                orig[s].lstrip().startswith(orig[comments[-1][0]].lstrip()[:2])
            if run:  # a run of line comments (`///` docs) is one comment
                comments[-1] = (comments[-1][0], e)
            else:
                comments.append((s, e))
        else:
            stack.extend(reversed(node.children))
    return defs, [c for c in comments if c[1] > c[0]]


def _why_close(cut: int, n: int, shown: set[int], defs, comments) -> str | None:
    """What makes a cut (between rows cut-1 and cut) close, or None when it is clear."""
    if cut in (0, n):
        return None
    if any(s <= cut - 1 and cut <= e for s, e in defs):
        return "definition"
    if any(s <= cut - 1 and cut <= e for s, e in comments):
        return "comment"
    if any(cut - CLEAR_LINES <= r < cut + CLEAR_LINES for r in shown):
        return "beside"
    return None


def _why_clear(a: int, b: int, n: int, shown: set[int]) -> str:
    """`file edge` where a cut at the file's edge has a shown (or changed) row within `CLEAR_LINES`
    of it, `shows beyond` where a shown row is outside the section, else `clear`."""
    near_top = a == 0 and any(r < CLEAR_LINES for r in shown)
    near_end = b == n and any(r >= n - CLEAR_LINES for r in shown)
    if near_top or near_end:
        return "file edge"
    return "shows beyond" if any(not a <= r < b for r in shown) else "clear"


def variants(name: str, case: dict, seed: int, per: int = PER_FAMILY) -> list[Variant]:
    """The sections drawn for one case (deterministic in the seed, the set and the case id)."""
    orig, exp, upd = _lines(case["original"]), _lines(case["expected"]), _lines(case["update"])
    found = _changed(orig, exp)
    if found is None or len(orig) < 2:
        return []
    lo, hi, same = found
    n, lang = len(orig), detect_language(case.get("language"), case.get("path"), case["original"])
    shown = _shown(orig, exp, upd, same, lo, hi)
    defs, comments = _spans(orig, shown, lang)
    why_a = {a: _why_close(a, n, shown, defs, comments) for a in range(0, lo + 1)}
    why_b = {b: _why_close(b, n, shown, defs, comments) for b in range(hi, n + 1)}
    rng = random.Random(f"{seed}:{name}:{case['id']}")
    picks: dict[tuple[int, int], str] = {}
    clear_a = [a for a, w in why_a.items() if w is None]
    clear_b = [b for b, w in why_b.items() if w is None]
    pairs = [(a, b) for a in clear_a for b in clear_b if (a, b) != (0, n)]
    for a, b in rng.sample(pairs, min(per, len(pairs))):
        picks[(a, b)] = _why_clear(a, b, n, shown | {lo, max(lo, hi - 1)})
    close = [(a, "a", w) for a, w in why_a.items() if w] + [(b, "b", w) for b, w in why_b.items() if w]
    reasons = sorted({w for _, _, w in close})
    for _ in range(per * 3):  # a reason drawn first, so that rare ones (a cut comment) are seen too
        if not reasons or sum(f not in CLEAR_WHYS for f in picks.values()) >= per:
            break
        w = rng.choice(reasons)
        cut, side, _ = rng.choice([c for c in close if c[2] == w])
        pair = (cut, rng.randint(hi, n)) if side == "a" else (rng.randint(0, lo), cut)
        picks.setdefault(pair, w)
    out = []
    for (a, b), why in sorted(picks.items()):
        tail = n - b
        if b - a < 2 or exp[:a] != orig[:a] or exp[len(exp) - tail:] != orig[b:] or len(exp) - tail < a:
            continue  # the expected section is not derivable from this cut
        family = "clear" if why in CLEAR_WHYS else "close"
        out.append(Variant(f"{name}/{case['id']}#{family}:{a}-{b}", name, family, why, lang, case.get("path"),
                           "".join(orig[a:b]), case["update"], "".join(exp[a:len(exp) - tail]),
                           blank_insensitive(case)))
    return out


def score(v: Variant, mode: str = "text") -> tuple[str, str | None]:
    """(`exact` | `refused` | `wrong`, the merged section), merged in `mode` (`MODES`)."""
    res = structural_merge(v.section, v.update, v.language, v.path, section=mode == "flag")
    if not res.ok:
        return "refused", None
    same = res.text == v.expected or v.blanks_ignored and \
        [x for x in res.text.splitlines() if x.strip()] == [x for x in v.expected.splitlines() if x.strip()]
    return ("exact" if same else "wrong"), res.text


def run(sets: list[str], seed: int, per: int = PER_FAMILY, cases_dir: Path = CASES,
        limit: int | None = None, modes: tuple[str, ...] = MODES) -> list[dict]:
    """One row per variant and mode."""
    rows = []
    for name in sets:
        for case in load_cases(cases_dir / f"{name}.jsonl", limit=limit):
            drawn = variants(name, case, seed, per)
            whole = verdict(case)["verdict"] if drawn else None
            for v in drawn:
                for mode in modes:
                    got, merged = score(v, mode)
                    rows.append({"id": v.vid, "mode": mode, "set": v.set, "family": v.family, "why": v.why,
                                 "language": v.language or "?", "verdict": got, "whole_file": whole,
                                 "files": None if got != "wrong" else
                                 {"section": v.section, "update": v.update, "expected": v.expected, "merged": merged}})
    return rows


def tables(rows: list[dict]) -> str:
    """The tables of each mode in `rows`, one after the other."""
    modes = [m for m in MODES if any(r.get("mode", "text") == m for r in rows)]
    return "\n\n".join(f"== mode {m} ==\n" + _tables([r for r in rows if r.get("mode", "text") == m])
                       for m in modes)


def _tables(rows: list[dict]) -> str:
    out = []
    for by in ("family", "why", "set", "language"):
        counts: dict[str, Counter] = {}
        for r in rows:
            counts.setdefault(r[by], Counter())[r["verdict"]] += 1
        out.append(f"{'per ' + by:22} {'variants':>8} {'exact':>6} {'refused':>8} {'wrong':>6}")
        for k in sorted(counts):
            c = counts[k]
            out.append(f"  {k:20} {sum(c.values()):8} {c['exact']:6} {c['refused']:8} {c['wrong']:6}")
        out.append("")
    total = Counter(r["verdict"] for r in rows)
    out.append(f"{'all':22} {len(rows):8} {total['exact']:6} {total['refused']:8} {total['wrong']:6}")
    for label, mine in (("clear", [r for r in rows if r["family"] == "clear"]),
                        ("clear, inside the section", [r for r in rows if r["why"] == "clear"]),
                        ("close", [r for r in rows if r["family"] == "close"])):
        whole = Counter(r["whole_file"] for r in mine)
        both = sum(r["verdict"] == "exact" and r["whole_file"] == "exact" for r in mine)
        out.append(f"{label}: exact {sum(r['verdict'] == 'exact' for r in mine)}/{len(mine)} sections, their cases "
                   f"exact as whole files {whole['exact']}/{len(mine)}; sections of whole-file-exact cases exact "
                   f"{both}/{whole['exact']}")
    return "\n".join(out)


def _write_wrong(json_path: str, rows: list[dict]) -> Path:
    folder = Path(json_path).with_name(Path(json_path).stem + "-wrong")
    for k, r in enumerate(x for x in rows if x["verdict"] == "wrong"):
        d = folder / f"{r.get('mode', 'text')}-{k:03d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "id.txt").write_text(r["id"] + "\n", encoding="utf-8")
        for what, text in r["files"].items():
            (d / what).write_text(text or "", encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--per", type=int, default=PER_FAMILY, help="sections per case and family")
    ap.add_argument("--cases", default=str(CASES), help="the folder of the sets' JSONL files")
    ap.add_argument("--mode", choices=MODES, help="merge in this mode only (default: both)")
    ap.add_argument("--json", help="write every variant's verdict here, the wrong ones' files beside it")
    args = ap.parse_args(argv)
    modes = (args.mode,) if args.mode else MODES
    rows = run(args.sets, args.seed, args.per, Path(args.cases), modes=modes)
    print(tables(rows))
    wrong = [f"{r['mode']} {r['id']}" for r in rows if r["verdict"] == "wrong"]
    for vid in wrong:
        print("wrong: " + vid)
    if args.json:
        write_json(args.json, {"seed": args.seed, "per": args.per, "modes": list(modes),
                               "variants": [{k: v for k, v in r.items() if k != "files"} for r in rows]})
        if wrong:
            print(f"wrong variants' files: {_write_wrong(args.json, rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
