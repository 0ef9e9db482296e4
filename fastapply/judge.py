"""The judge: which reading of a refused snippet does the model mean?

When the structural merge refuses with several readings (whole files it was choosing between,
`MergeResult.readings`), a model scores each under its apply prompt: the sum of the token
log-probabilities of the answer it would write (the reading, then the spec's end of answer). The
best reading is returned when it beats the next by the margin its doubt needs (`margin_needed`:
`MARGIN_NATS` for a reading of a marker wrap, `MARGIN_NATS_OTHER` for any other); below that the
judge abstains and the pipeline falls back to generation.

Scoring is one pass per reading. The prompt and the readings' common token prefix are computed
once (the prefix contributes the same to every score, so it is left out of all of them), and each
reading's remaining tokens are scored on top of that and cropped away again.

Two modes. `whole`: the prompt holds the whole original and snippet, the answers are the whole
readings. `window` (the default, `MODE`): only the lines where the readings differ, with
`CONTEXT_LINES` of shared lines on both sides; the original is cropped to the lines those stand
on, and the snippet to its regions that touch them when it is long. A window costs a few hundred
tokens where a whole file costs thousands, and it lifts the model's context limit for large files.
evals/RESULTS.md compares the two (exact, wrong, seconds).

Pure except `judge`, which drives a `Scorer` (the model engines implement it).

Example: readings A and B differ in one line of a 300-line file. `window_input` keeps that line
and 8 lines either side of A and B, and the 17 lines of the original they stand on; the model
scores A as -3.1 and B as -7.4 nats, a margin of 4.3: A is returned.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Protocol

from fastapply.markers import marker_flags
from fastapply.merge.readings import MAX_READINGS
from fastapply.types import ApplyError, ApplyRequest, ShouldStop

MODES = ("window", "whole")
MODE = "window"  # against "whole" in evals/RESULTS.md: ten times faster; whole files, once past the context, cannot be judged
# A reading is returned only when its score beats the next one's by a margin (nats) that depends on
# the doubt that made the best reading (its `how`), calibrated on the shared dev sets' refusals and
# our wrap-the-body table, then measured on held-out fuzz draws (evals/RESULTS.md "The judge").
# Readings of a marker wrap hold the same lines in another structure (which statement the new
# block takes, what stays after it): the log-probability then measures what the code means, and
# the shipped 0.5B model picks them well. Readings that put a region elsewhere or delete an
# unshown head or tail differ in how much text is scored, and a short reading wins by length: the
# 0.5B model picked such readings against the expected file at margins up to 10.6 nats on the dev
# sets and 26.6 on held-out draws, so it never answers them (infinity). A deployment whose model
# calibrates better (`evals.judge_calibration`) sets a number.
MARGIN_NATS = 3.5  # the best reading is a reading of a marker wrap (WRAP_READING in its `how`)
MARGIN_NATS_OTHER = float("inf")  # any other best reading (another placement, lines deleted, ...)
WRAP_READING = "read as wrapped code"  # merge/lineplace.py's label for the wrap readings
DELETED_EDGE = "deleted"  # ... and for a reading that deletes the unshown head or tail (lineplace.Variant.how)
# How a reading is scored. "sum": the log-probability of all its tokens after the readings' shared
# prefix. "branch": greedy decoding restricted to the readings, teacher-forced along their shared
# text; only the tokens where they part are scored (`branch_scores`). Measured against "sum" in
# evals/RESULTS.md ("Branch scoring"): no better on the dev sets' doubts, so not shipped.
SCORINGS = ("sum", "branch")
SCORING = "sum"
# Score what the snippet explains (log p under the snippet - log p under an empty one) instead of
# the plain log-probability: off, it picked far worse (evals/RESULTS.md, "Which model judges").
CONTRAST = False
CONTEXT_LINES = 8  # shared lines kept on each side of the window where the readings differ
SNIPPET_WHOLE_LINES = 80  # a snippet up to this long goes into a window prompt whole
MAX_JUDGED_READINGS = MAX_READINGS  # more readings than the merge's cap: refused, never scored
# All readings' scored tokens together (beyond the shared prompt): ~1 minute of a 0.5B model on
# two CPU cores. A request above it is refused rather than scored for minutes.
MAX_SCORED_TOKENS = 6000


class Scorer(Protocol):
    """What the judge needs from a model engine (`ModelEngine`, `VLLMEngine`)."""

    max_positions: int  # the model's context, in tokens

    def prompt_ids(self, req: ApplyRequest) -> list[int]:
        """The spec's apply prompt for `req`, as the engine feeds it."""
        ...

    def answer_ids(self, text: str, end: bool = True) -> list[int]:
        """The tokens of an answer: `text`, then (with `end`) the spec's end of answer."""
        ...

    def score(self, prompt_ids: list[int], answers: list[list[int]],
              should_stop: ShouldStop | None = None) -> list[float]:
        """Each answer's sum of token log-probabilities after `prompt_ids` (nats). Raises
        ApplyError('cancelled') within one forward pass of `should_stop()` turning true."""
        ...


@dataclass(frozen=True)
class JudgeInput:
    """What the model is asked: an original and snippet (cropped in window mode) and one answer
    text per reading."""

    original: str
    update: str
    answers: tuple[str, ...]
    window: tuple[int, int] | None = None  # lines [start, end) of reading 1 kept; None: whole files
    # The answers run to the end of the file, so each ends with the spec's end of answer. A window
    # that stops mid-file is scored as the beginning of an answer: an end tag there would be
    # scored as the model's wish to stop mid-file, which differs from reading to reading.
    ends: bool = True


@dataclass(frozen=True)
class Verdict:
    """The judge's scores and decision. `picked` is the index of the reading to return, or None
    when the judge abstains (margin below the threshold)."""

    scores: tuple[float, ...]  # per reading, nats (the shared prefix left out)
    best: int
    margin: float  # best score minus the next one's (nats)
    picked: int | None
    mode: str
    scored_tokens: int  # tokens run through the model: the shared part once, each reading's rest
    seconds: float
    rest_tokens: tuple[int, ...] = ()  # per reading: its scored tokens after the shared prefix
    null_scores: tuple[float, ...] = ()  # contrast: per reading, its score under an empty snippet
    needed: float = 0.0  # the margin the best reading needed (margin_needed of its doubt)

    def line(self) -> str:
        order = sorted(range(len(self.scores)), key=lambda i: -self.scores[i])
        ranked = ", ".join(f"reading {i + 1} {self.scores[i]:.2f}" for i in order)
        return f"{self.mode} scores (nats): {ranked}; margin {self.margin:.2f} (needed {self.needed:.1f})"


def margin_needed(how: str | None) -> float:
    """The margin a best reading made by the doubt `how` needs over the next (see MARGIN_NATS). A
    wrap reading that also deletes the unshown head or tail carries the length bias of the other
    doubts: it needs theirs (wrong picks of this kind on held-out fuzz seeds 83911 and 40917, at
    8.4 and 4.3 nats)."""
    if how is not None and WRAP_READING in how and DELETED_EDGE not in how:
        return MARGIN_NATS
    return MARGIN_NATS_OTHER


def decide(scores: Sequence[float], threshold: float | Sequence[float]) -> tuple[int, float, int | None]:
    """(best index, margin over the next, picked index or None). `threshold`: one margin for all,
    or one per reading (the best reading's applies). The first of equal scores is the best
    (readings come best first from the merge); a tie has margin 0 and is never picked."""
    if len(scores) < 2:
        raise ValueError("the judge compares at least two readings")
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    margin = scores[order[0]] - scores[order[1]]
    return order[0], margin, order[0] if margin >= _needed(threshold, order[0]) and margin > 0 else None


def _needed(threshold: float | Sequence[float], best: int) -> float:
    return threshold if isinstance(threshold, (int, float)) else threshold[best]


def common_prefix(seqs: Sequence[Sequence]) -> int:
    """Length of the longest prefix every sequence shares."""
    n = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(n):
        if any(s[i] != first[i] for s in seqs[1:]):
            return i
    return n


def branch_scores(scorer: Scorer, prompt: list[int], answers: Sequence[Sequence[int]],
                  should_stop: ShouldStop | None = None) -> tuple[list[float], int]:
    """Greedy decoding restricted to the answers: from the shared prefix on, at every token where
    the answers still in play part (a fork), the model's next-token log-probabilities of the
    tokens they go on with are compared and the best is followed. The answer so reached scores 0;
    every other answer scores its token's log-probability minus the followed token's at the fork
    where it left the path (< 0). So `decide` picks the followed answer, and its margin is the
    narrowest lead it had at any fork. The text between forks is the same for every answer that
    reaches it and is never scored: a longer answer pays nothing for its length, only for its
    choices. When the model alone would write one of the answers greedily, that answer is the one
    followed.

    One `scorer.score` call per fork on the path (the prompt and the text before the fork, then
    one token per branch). An answer that ends where another goes on (a window cut mid-file) is
    no choice of the model's: the answers at that fork tie (margin 0, never picked). Returns the
    scores and the tokens run."""
    scores = [0.0] * len(answers)
    run = 0
    members, start = list(range(len(answers))), 0
    while len(members) > 1:
        at = start + common_prefix([answers[i][start:] for i in members])
        nexts: dict[int, list[int]] = {}
        for i in members:
            if at >= len(answers[i]):
                return scores, run  # (the members left tie at 0)
            nexts.setdefault(answers[i][at], []).append(i)
        toks = list(nexts)
        lps = scorer.score(prompt + list(answers[members[0]][:at]), [[t] for t in toks], should_stop)
        run += len(prompt) + at + len(toks)
        best = max(range(len(toks)), key=lambda k: (lps[k], -k))
        for k, tok in enumerate(toks):
            if k != best:
                for i in nexts[tok]:
                    scores[i] = lps[k] - lps[best]
        members, start = nexts[toks[best]], at + 1
    return scores, run


def window_input(original: str, update: str, readings: Sequence[str], context: int = CONTEXT_LINES,
                 snippet_whole: int = SNIPPET_WHOLE_LINES) -> JudgeInput:
    """The hunks where the readings differ, each with `context` shared lines on both sides; hunks
    farther apart than twice `context` are joined by one gap line in the snippet's marker style
    (the same in every answer: the lines it stands for are the same in every reading). The
    original is cropped to the lines the hunks stand on in reading 1 (a line alignment), the
    snippet to the regions that touch them when it is longer than `snippet_whole` lines."""
    lines = [r.splitlines(keepends=True) for r in readings]
    gap_min = 2 * context
    aligned = [SequenceMatcher(None, lines[0], other, autojunk=False).get_opcodes() for other in lines[1:]]
    hunks = _hunks([(i1, i2) for ops in aligned for tag, i1, i2, _, _ in ops if tag != "equal"],
                   len(lines[0]), context, gap_min)
    gap = _gap_line(update, original)
    answers = [_cut(lines[0], hunks, gap)]
    for other, ops in zip(lines[1:], aligned):
        answers.append(_cut(other, [_map_span(ops, a, b, len(other)) for a, b in hunks], gap))
    orig = original.splitlines(keepends=True)
    to_orig = SequenceMatcher(None, lines[0], orig, autojunk=False).get_opcodes()
    cropped = _cut(orig, [_map_span(to_orig, a, b, len(orig)) for a, b in hunks], gap)
    kept = [ln for a, b in hunks for ln in lines[0][a:b]]
    return JudgeInput(cropped, _crop_snippet(update, original, kept, snippet_whole), tuple(answers),
                      (hunks[0][0], hunks[-1][1]), ends=hunks[-1][1] == len(lines[0]))


def _hunks(spans: list[tuple[int, int]], n: int, context: int, gap_min: int) -> list[tuple[int, int]]:
    """Differing line spans of reading 1 widened by `context` lines and merged where they overlap
    or stand fewer than `gap_min` lines apart."""
    out: list[tuple[int, int]] = []
    for i1, i2 in sorted(spans):
        a, b = max(0, i1 - context), min(n, i2 + context)
        if out and a - out[-1][1] < gap_min:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out or [(0, n)]


def _map_span(ops, start: int, end: int, n: int) -> tuple[int, int]:
    """The lines [a, b) of the second sequence of an alignment that lines [start, end) of the first
    stand on: equal runs map line by line; a changed run maps to the whole of its counterpart."""
    a = b = None
    for tag, i1, i2, j1, j2 in ops:
        if a is None and (i1 <= start < i2 or start == i1 == i2):
            a = j1 + (start - i1) if tag == "equal" else j1
        if i1 < end <= i2 or end == i1 == i2:
            b = j1 + (end - i1) if tag == "equal" else j2
    a = 0 if a is None else a
    b = n if b is None else b
    return a, max(a, b)


def _cut(lines: list[str], spans: list[tuple[int, int]], gap: str) -> str:
    """The lines of `spans`, with `gap` between two spans that do not touch."""
    parts: list[str] = []
    for k, (a, b) in enumerate(spans):
        if k and a > spans[k - 1][1]:
            parts.append(gap)
        parts.extend(lines[a:b])
    return "".join(parts)


def _gap_line(update: str, original: str) -> str:
    """One line standing for the lines left out between hunks: the snippet's first marker, unindented."""
    lines = update.splitlines()
    for line, is_marker in zip(lines, marker_flags(lines, original.splitlines())):
        if is_marker:
            return line.strip() + "\n"
    return "...\n"


def _crop_snippet(update: str, original: str, window_lines: list[str], snippet_whole: int) -> str:
    """The snippet whole when it is short; else its regions (runs between markers) that share a
    distinctive line with the window, the others each replaced by the marker before them."""
    lines = update.splitlines(keepends=True)
    if len(lines) <= snippet_whole:
        return update
    flags = marker_flags([ln.rstrip("\r\n") for ln in lines], original.splitlines())
    window = {ln.strip() for ln in window_lines if len(ln.strip()) >= 8}
    out: list[str] = []
    region: list[str] = []
    marker = None

    def flush() -> None:
        if any(ln.strip() in window for ln in region):
            out.extend(region)
        elif region and marker is not None and (not out or out[-1] != marker):
            out.append(marker)

    for ln, is_marker in zip(lines, flags):
        if is_marker:
            flush()
            region = []
            marker = ln
            if not out or out[-1] != ln:
                out.append(ln)
        else:
            region.append(ln)
    flush()
    kept = "".join(out)
    return kept if kept.strip() and any(not f for f in flags) else update


def judge_input(req: ApplyRequest, readings: Sequence[str], mode: str = MODE,
                context: int = CONTEXT_LINES) -> JudgeInput:
    if mode == "whole":
        return JudgeInput(req.original, req.update, tuple(readings))
    if mode == "window":
        return window_input(req.original, req.update, readings, context)
    raise ValueError(f"judge mode must be one of {', '.join(MODES)}, not {mode!r}")


def over_cap(count: int) -> str | None:
    """Why the judge does not take this many readings, or None."""
    if count <= MAX_JUDGED_READINGS:
        return None
    return (f"{count} readings, over the judge's cap of {MAX_JUDGED_READINGS}; nothing was scored (give the "
            "snippet more context lines around the edit, so that it has fewer readings)")


def judge(scorer: Scorer, req: ApplyRequest, readings: Sequence[str], mode: str = MODE,
          threshold: float | None = None, max_scored: int | None = None,
          context: int = CONTEXT_LINES, contrast: bool | None = None,
          hows: Sequence[str] | None = None, scoring: str | None = None,
          should_stop: ShouldStop | None = None) -> Verdict:
    """Score each reading under `scorer`'s apply prompt and decide. Raises ApplyError: 'refused'
    above the readings cap or the scored-token cap, 'too_long' when the prompt and a reading do
    not fit the model's context (nothing is truncated). `threshold` defaults to each reading's
    `margin_needed(how)` (`hows`: the merge's labels; without them, `MARGIN_NATS_OTHER`), and
    `max_scored` to `MAX_SCORED_TOKENS`. With `contrast` (default `CONTRAST`) each score is
    the reading's log-probability under the snippet minus the same under an empty snippet: what
    the snippet explains, with the cost of copying the original (which a reading that deletes
    more lines pays less of) taken out. `scoring` (default `SCORING`): "sum" or "branch"
    (`branch_scores`; contrast does not apply to it). `should_stop` (a client gone, a budget spent)
    stops the scoring within one forward pass: ApplyError('cancelled')."""
    if threshold is None:
        threshold = [margin_needed(h) for h in hows] if hows is not None else MARGIN_NATS_OTHER
    scoring = SCORING if scoring is None else scoring
    if scoring not in SCORINGS:
        raise ValueError(f"judge scoring must be one of {', '.join(SCORINGS)}, not {scoring!r}")
    contrast = (CONTRAST if contrast is None else contrast) and scoring == "sum"
    max_scored = MAX_SCORED_TOKENS if max_scored is None else max_scored
    too_many = over_cap(len(readings))
    if too_many:
        raise ApplyError("refused", too_many)
    t0 = time.perf_counter()
    q = judge_input(req, readings, mode, context)
    prompt = scorer.prompt_ids(ApplyRequest(q.original, q.update, req.instruction, req.language, req.path))
    answers = [scorer.answer_ids(a, q.ends) for a in q.answers]
    longest = len(prompt) + max(len(a) for a in answers)
    if longest > scorer.max_positions:
        hint = "" if mode == "window" else " (the window mode scores only where the readings differ)"
        raise ApplyError("too_long", f"the judge's prompt and the longest reading are {longest} tokens, over the "
                                     f"model's context of {scorer.max_positions}; nothing was scored{hint}")
    shared = common_prefix(answers)
    shared = min(shared, min(len(a) for a in answers) - 1)  # every reading keeps a token to score
    rest = [a[shared:] for a in answers]
    # What runs beyond one pass of the prompt and the shared prefix: each reading's rest ("sum"),
    # or a pass to each further fork, at most one per reading beyond the second ("branch").
    scored = sum(len(r) for r in rest) if scoring == "sum" else (len(answers) - 2) * longest
    if scored > max_scored:
        raise ApplyError("refused", f"scoring the {len(readings)} readings would run {scored} tokens beyond the "
                                    f"shared prompt, over the judge's cap of {max_scored}; nothing was scored")
    if scoring == "branch":
        scores, tokens = branch_scores(scorer, prompt, answers, should_stop)
        mode += "+branch"
    else:
        scores = scorer.score(prompt + answers[0][:shared], rest, should_stop)
        tokens = len(prompt) + shared + scored
    null: list[float] = []
    if contrast:
        empty = scorer.prompt_ids(ApplyRequest(q.original, "", req.instruction, req.language, req.path))
        null = scorer.score(empty + answers[0][:shared], rest, should_stop)
        scores = [s - n for s, n in zip(scores, null)]
        tokens += len(empty) + shared + scored
    best, margin, picked = decide(scores, threshold)
    return Verdict(tuple(scores), best, margin, picked, mode + ("+contrast" if contrast else ""), tokens,
                   time.perf_counter() - t0, tuple(len(r) for r in rest), tuple(null), _needed(threshold, best))
