"""A refusal for its reader: the readings as structured choices, and a first line that says what to resend.

Every front-end that answers a refusal (gRPC, HTTP, LSP, codemod, CLI) sends `payload(...)`:

    {"hint": "one line: what to resend",
     "hints": [{"reading": 1, "region": 2, "side": "above", "lines": ["..."], "original_lines": [41, 41]}, ...],
     "reasons": ["...", ...],
     "readings": [{"index": 1, "how": "...", "original_lines": [a, b], "reading_lines": [c, d],
                   "diff": "--- original\\n+++ reading 1\\n...", "text": "whole file" | null}, ...],
     "texts_omitted": false}

`readings` are the merge's (or the judge's) order, best first, at most the merge's cap. A range is
1-based and inclusive, `[first, last]`; an empty one (`last == first - 1`) is a point between lines:
where this reading differs from the others (the lines every reading shares above and below are left
out), in the original and in the reading. Where a client's message limit is smaller than the whole
files, `text` is null and `texts_omitted` true; the diffs (against the original, which the client
holds) still rebuild each file, and no file is ever sent cut short.

The hints are computed, not guessed: for each reading, the fewest lines of that reading, added
next to one snippet region, with which the structural merge answers exactly that reading
(`context_hints`). A hint is only given where the merge confirmed it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fastapply.markers import marker_flags

MAX_HINT_LINES = 12  # context lines a hint may ask for, next to one region
MAX_HINTED_READINGS = 4  # readings a hint is computed for
# Merges tried for the hint of one reading: each is milliseconds to tens of
# them (hard_dev's refusals: 0.1-2.5 s for every try on a loaded 2-core CPU), and a count keeps the
# answer the same on every machine, where a clock would not.
MAX_HINT_TRIES = 30  # per reading
SNIPPET_QUOTE_CHARS = 48  # how much of a line the one-line hint quotes


@dataclass(frozen=True)
class ReadingView:
    """One reading as a client shows it."""

    index: int  # 1-based, best first
    how: str
    original_lines: tuple[int, int]  # where it differs from the others, in the original (1-based, inclusive)
    reading_lines: tuple[int, int]  # ... and in the reading
    diff: str  # unified diff: the original -> this reading
    text: str | None  # the whole file; None when left out for size

    def to_dict(self) -> dict:
        return {"index": self.index, "how": self.how, "original_lines": list(self.original_lines),
                "reading_lines": list(self.reading_lines), "diff": self.diff, "text": self.text}


@dataclass(frozen=True)
class Hint:
    """Lines of reading `reading` to add next to snippet region `region` (`side` of it) so that the
    merge answers exactly that reading."""

    reading: int  # 1-based
    region: int  # 1-based snippet region (a run of lines between markers)
    side: str  # "above" or "below"
    lines: tuple[str, ...]  # the lines to add, as they stand in the reading (and in the original)
    original_lines: tuple[int, int]  # where they stand in the original (1-based, inclusive); (0, -1): nowhere
    marker: bool = False  # the line is a marker: the code goes on past the region there (it is kept)

    def to_dict(self) -> dict:
        return {"reading": self.reading, "region": self.region, "side": self.side, "lines": list(self.lines),
                "original_lines": list(self.original_lines), "marker": self.marker}


# -- where readings differ ------------------------------------------------------------------------

def _shared_ends(texts: Sequence[list[str]]) -> tuple[int, int]:
    """Lines every text shares at its start, and at its end (not overlapping)."""
    shortest = min(len(t) for t in texts)
    head = 0
    while head < shortest and all(t[head] == texts[0][head] for t in texts):
        head += 1
    tail = 0
    while tail < shortest - head and all(t[-1 - tail] == texts[0][-1 - tail] for t in texts):
        tail += 1
    return head, tail


def _original_span(orig: list[str], lines: list[str], lo: int, hi: int) -> tuple[int, int]:
    """The original's lines [a, b) that the reading's lines [lo, hi) stand for: the diff's blocks that
    touch them (a deletion touches the point it sits at); a point when none does."""
    a = b = None
    point = len(orig)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, orig, lines, autojunk=False).get_opcodes():
        if tag == "equal":
            if j1 <= lo < j2 or (j1 == j2 == lo):
                point = min(point, i1 + (lo - j1))
            s, e = max(j1, lo), min(j2, hi)
            if s >= e:
                continue
            i_s, i_e = i1 + (s - j1), i1 + (e - j1)
        elif tag == "delete":
            if not lo <= j1 <= hi:
                continue
            i_s, i_e = i1, i2
        else:
            if j2 <= lo or j1 >= hi:
                if j1 == lo:
                    point = min(point, i1)
                continue
            i_s, i_e = i1, i2
        a = i_s if a is None else min(a, i_s)
        b = i_e if b is None else max(b, i_e)
    if a is None:
        return point, point
    return a, b


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str) -> str:
    """difflib's unified diff of two lists of lines (ends kept), with `\\ No newline at end of file`
    after a last line that has none, as `patch` and `rebuild` read it."""
    out = []
    for line in difflib.unified_diff(a, b, fromfile, tofile, n=3):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def reading_views(original: str, readings: Sequence[tuple[str, str]], with_texts: bool = True) -> list[ReadingView]:
    """Each reading (how, whole file) as a view: where it differs from the others, its diff, its text."""
    orig = original.splitlines(keepends=True)
    split = [text.splitlines(keepends=True) for _, text in readings]
    head, tail = _shared_ends(split) if len(split) > 1 else (0, 0)
    views = []
    for i, ((how, text), lines) in enumerate(zip(readings, split), 1):
        if len(split) > 1:
            lo, hi = head, len(lines) - tail
        else:  # one reading: where it differs from the original
            h, t = _shared_ends([orig, lines])
            lo, hi = h, len(lines) - t
        a, b = _original_span(orig, lines, lo, hi)
        diff = unified_diff(orig, lines, "original", f"reading {i}")
        views.append(ReadingView(i, how, (a + 1, b), (lo + 1, hi), diff, text if with_texts else None))
    return views


# -- hints: what to resend ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Region:
    index: int  # 1-based
    lines: list[str]  # the snippet's lines of this region
    start: int  # its first line in the snippet (0-based)
    marker_before: bool = True  # a marker stands above it in the snippet
    marker_after: bool = True  # ... and below it


def snippet_regions(original: str, update: str) -> list[_Region]:
    """The snippet's regions: runs of non-marker lines (blank edges dropped)."""
    upd = update.splitlines()
    flags = marker_flags(upd, original.splitlines())
    runs, run, start = [], [], 0
    for k, (line, is_marker) in enumerate([*zip(upd, flags), ("", True)]):
        if is_marker:
            while run and not run[-1].strip():
                run.pop()
            if run:
                runs.append((start, run))
            run = []
        elif run or line.strip():
            start = k if not run else start
            run.append(line)
    return [_Region(i, lines, start, any(flags[:start]), any(flags[start + len(lines):]))
            for i, (start, lines) in enumerate(runs, 1)]


def marker_line(original: str, update: str) -> str | None:
    """The snippet's own marker line (its first), indentation stripped."""
    upd = update.splitlines()
    for line, is_marker in zip(upd, marker_flags(upd, original.splitlines())):
        if is_marker:
            return line.strip()
    return None


def _locate(region: _Region, lines: list[str], frm: int) -> tuple[int, int] | None:
    """Where a region's lines stand in a reading (stripped, in order, from `frm`): [first, last]."""
    wanted = [x.strip() for x in region.lines if x.strip()]
    k, first = 0, None
    for i in range(frm, len(lines)):
        if k < len(wanted) and lines[i].strip() == wanted[k]:
            first = i if first is None else first
            k += 1
            if k == len(wanted):
                return first, i
        elif k and lines[i].strip():  # a region stands together in a reading (blank lines aside)
            if lines[i].strip() not in wanted[k:k + 1]:
                k, first = 0, None
                if lines[i].strip() == wanted[0]:
                    first, k = i, 1
    return None


def _with_context(update: str, region: _Region, side: str, added: list[str]) -> str:
    upd = update.splitlines(keepends=True)
    at = region.start if side == "above" else region.start + len(region.lines)
    nl = "\r\n" if upd and upd[0].endswith("\r\n") else "\n"
    if at > 0 and not upd[at - 1].endswith(("\n", "\r")):
        upd[at - 1] += nl
    return "".join(upd[:at] + [x + nl for x in added] + upd[at:])


def _original_lines(orig: list[str], added: list[str]) -> tuple[int, int]:
    n = len(added)
    for i in range(len(orig) - n + 1):
        if orig[i:i + n] == added:
            return i + 1, i + n
    return 0, -1


def context_hints(original: str, update: str, readings: Sequence[str],
                  merge: Callable[[str, str], str | None], max_tries: int = MAX_HINT_TRIES,
                  stop: Callable[[], bool] = lambda: False) -> list[Hint]:
    """For each reading (the first `MAX_HINTED_READINGS`), the fewest lines of it that, added above or
    below one snippet region, make `merge(original, snippet)` answer exactly that reading; at most
    `max_tries` merges per reading. The sides nearest where the readings part are tried first,
    with `HINT_SIZES` lines each. Readings with no such lines found get no hint. `stop()` true: no
    more tries (the caller's time is up), the hints found so far kept."""
    regions = snippet_regions(original, update)
    orig = original.splitlines()
    split = [text.splitlines() for text in readings[:MAX_HINTED_READINGS]]
    head, tail = _shared_ends(split) if len(split) > 1 else (0, 0)
    hints = []
    for r_index, (text, lines) in enumerate(zip(readings, split), 1):
        if len(split) == 1:
            head, tail = _shared_ends([orig, lines])
        sides = _sides_nearest(regions, lines, head, len(lines) - tail)
        hint = _first_hint(original, update, text, lines, orig, sides, merge, r_index, max_tries,
                           marker_line(original, update), stop)
        if hint is not None:
            hints.append(hint)
    return hints


# Context lines tried at a side, fewest first: a few at every region side, then more at the sides
# nearest where the readings part (`HINT_NEAR_SIDES` of them).
HINT_FEW = (1, 2, 3)
HINT_MORE = (5, 8, MAX_HINT_LINES)
HINT_NEAR_SIDES = 3


def _sides_nearest(regions: list[_Region], lines: list[str], lo: int, hi: int) -> list[tuple[_Region, str, int, int]]:
    """(region, side, first line, last line) for every region side in a reading, nearest to its
    lines [lo, hi) (where it parts from the others) first."""
    spans, frm = [], 0
    for region in regions:
        span = _locate(region, lines, frm)
        if span is not None:
            spans.append((region, span))
            frm = span[1] + 1
    sides = []
    for region, (first, last) in spans:
        for side, at in (("above", first), ("below", last + 1)):
            gap = 0 if lo <= at <= hi else min(abs(at - lo), abs(at - hi))
            sides.append((gap, region.index, side, region, first, last))
    sides.sort(key=lambda x: (x[0], x[1], x[2]))
    return [(region, side, first, last) for _, _, side, region, first, last in sides]


def _first_hint(original, update, text, lines, orig, sides, merge, r_index, max_tries, marker, stop) -> Hint | None:
    tries = 0
    merge = _unless(stop, merge)
    if marker is not None:  # a region at the snippet's edge without a marker: the code goes on?
        for region, side, first, last in sides:
            if (region.marker_after if side == "below" else region.marker_before) or tries >= max_tries:
                continue
            # indented like the region's edge line, or like its other end (a marker after a whole
            # function stands at the function's own depth, not its last line's)
            ends = [region.lines[-1], region.lines[0]] if side == "below" else [region.lines[0], region.lines[-1]]
            for indent in dict.fromkeys(x[:len(x) - len(x.lstrip())] for x in ends):
                if tries >= max_tries:
                    break
                tries += 1
                added = [indent + marker]
                if merge(original, _with_context(update, region, side, added)) == text:
                    return Hint(r_index, region.index, side, tuple(added), (0, -1), marker=True)
    stages = [(n, sides) for n in HINT_FEW] + [(n, sides[:HINT_NEAR_SIDES]) for n in HINT_MORE]
    for n, where in stages:
        for region, side, first, last in where:
            lo, hi = (max(first - n, 0), first) if side == "above" else (last + 1, min(last + 1 + n, len(lines)))
            added = lines[lo:hi]
            if len(added) < n and (n == 1 or len(added) < n - 1 and n <= 3) or not any(x.strip() for x in added):
                continue  # (the file's edge is nearer: a smaller size already tried these lines)
            if tries >= max_tries:
                return None
            tries += 1
            if merge(original, _with_context(update, region, side, added)) == text:
                return Hint(r_index, region.index, side, tuple(added), _original_lines(orig, added))
    return None


def _unless(stop: Callable[[], bool], merge: Callable[[str, str], str | None]) -> Callable[[str, str], str | None]:
    """`merge`, answering None without merging once `stop()` is true."""
    return lambda original, update: None if stop() else merge(original, update)


def with_hint(update: str, original: str, hint: Hint) -> str:
    """The snippet with a hint's lines added: what an agent resends."""
    region = snippet_regions(original, update)[hint.region - 1]
    return _with_context(update, region, hint.side, list(hint.lines))


def _quote(line: str) -> str:
    s = line.strip()
    return f"`{s[:SNIPPET_QUOTE_CHARS]}{'…' if len(s) > SNIPPET_QUOTE_CHARS else ''}`"


def hint_line(original: str, update: str, hints: Sequence[Hint], n_readings: int) -> str:
    """The refusal's first line, for a person or an agent: what to resend."""
    regions = snippet_regions(original, update)
    if not hints:
        if n_readings == 0:
            return ("Resend the snippet with more unchanged lines around each edited part (or the whole "
                    "function): no reading of it passes the checks.")
        return (f"Resend the snippet with more unchanged lines around each edited part: it has {n_readings} "
                f"reading(s) and no added line makes one of them sure; or pick a reading.")
    lead_hint = hints[0]
    region = regions[lead_hint.region - 1] if lead_hint.region - 1 < len(regions) else None
    head = _quote(next((x for x in region.lines if x.strip()), "")) if region else f"region {lead_hint.region}"
    parts = []
    for h in hints:
        first, last = h.original_lines
        where = ("a marker: the code goes on" if h.marker else f"line {first}" if first == last else
                 f"lines {first}-{last}" if first else "new")
        what = " / ".join(_quote(x) for x in h.lines if x.strip())
        parts.append(f"{what} ({where}) {h.side} region {h.region} for reading {h.reading}")
    lead = (f"Resend with context: snippet region {lead_hint.region} ({head}) has {n_readings} readings; "
            if n_readings > 1 else f"Resend with context: snippet region {lead_hint.region} ({head}) is doubted; ")
    return lead + "add " + "; or ".join(parts) + "."


# -- the payload every front-end sends -------------------------------------------------------------

def payload(original: str, update: str, reasons: Sequence[str], readings: Sequence[tuple[str, str]],
            hints: Sequence[Hint] = (), hint: str | None = None, max_bytes: int | None = None) -> dict:
    """The structured refusal (see the module docstring). `max_bytes`: a client's message limit;
    whole files that would pass it are left out (`texts_omitted`), never cut."""
    views = reading_views(original, readings)
    body = {"hint": hint if hint is not None else hint_line(original, update, hints, len(readings)),
            "hints": [h.to_dict() for h in hints], "reasons": list(reasons),
            "readings": [v.to_dict() for v in views], "texts_omitted": False}
    if max_bytes is not None and _size(body) > max_bytes:
        for v in body["readings"]:
            v["text"] = None
        body["texts_omitted"] = True
    return body


def _size(body: dict) -> int:
    return sum(len((r["text"] or "").encode()) + len(r["diff"].encode()) for r in body["readings"])


def rebuild(original: str, diff: str) -> str:
    """A reading's whole file from its diff against the original (what a client does when the texts
    were left out for size). Raises ValueError when the diff does not apply to `original`."""
    orig = original.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    lines = diff.splitlines(keepends=True)
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        i += 1  # the --- / +++ header
    while i < len(lines):
        head = lines[i]
        if not head.startswith("@@"):
            raise ValueError(f"not a hunk header: {head!r}")
        start = int(head.split()[1][1:].split(",")[0])
        count = head.split()[1][1:].split(",")
        start = start - 1 if len(count) == 1 or int(count[1]) > 0 else start  # an empty old side is a point
        if start < pos:
            raise ValueError("hunks overlap")
        out += orig[pos:start]
        pos = start
        i += 1
        last = ""
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][:1], lines[i][1:]
            if tag == "\\":  # "\ No newline at end of file": the line before it has none
                if last in (" ", "+") and out:
                    out[-1] = out[-1].rstrip("\r\n")
                i += 1
                continue
            if tag in (" ", "-"):
                if pos >= len(orig) or orig[pos].rstrip("\r\n") != text.rstrip("\r\n"):
                    raise ValueError(f"the diff does not apply at original line {pos + 1}")
                if tag == " ":
                    out.append(orig[pos])
                pos += 1
            elif tag == "+":
                out.append(text)
            else:
                raise ValueError(f"not a diff line: {lines[i]!r}")
            last = tag
            i += 1
    return "".join(out + orig[pos:])
