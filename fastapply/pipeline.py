"""One path for every request: check -> prepare (language, structural draft) -> decode -> validate.

`engine` picks the route: `auto` (the structural merge when it is sure; when it refuses with two
readings or more, the model judges them (`fastapply.judge`) and the best is returned when its
margin is enough; else the model generates, drafted by the readings, the original and the snippet,
and its file must pass the checks), `structural` (the merge itself, or a refusal), `speculative` (the model always,
drafted by the structural merge), `plain` (the model, no drafts).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import replace

from fastapply import judge as judge_mod
from fastapply.edit_checks import check_edit_applied
from fastapply.languages import detect_language, grammar_problem
from fastapply.markers import marker_flags, split_inline
from fastapply.merge import MergeResult, deadline, merge_text, structural_merge
from fastapply.merge.core import INPUT_CHECK
from fastapply.merge.fragment import SECTION_CHECK, SECTION_KIND
from fastapply.merge.readings import describe as describe_readings
from fastapply.refusal import context_hints, hint_line
from fastapply.types import (
    DEFAULT_MODEL_BUDGET_S,
    ApplyError,
    ApplyRequest,
    ApplyResult,
    Finding,
    ShouldStop,
    Stats,
    StreamEvent,
    TextDelta,
    check_request,
)
from fastapply.validate import validate


# The structural merge's input cap. Its time grows with the input (about 2 s per million characters
# on one core, 45 s for 15 MB), and a server runs it on a request thread: a bigger request is
# refused at once (`too_long`) instead of holding a core. Real source files are far smaller.
MAX_MERGE_CHARS = 1 << 20  # original + update, in characters (~1 MB)

# Seconds the resend hints of one refusal may take, all their merges together. The hints are
# bounded by a count of tries (`refusal.MAX_HINT_TRIES`: the same answer on every machine); this is
# the safety net where each try costs seconds. Past it the hints found so far are kept.
HINT_SECONDS = 2 * deadline.MERGE_SECONDS


# `auto`'s generation after a refusal: a model that writes more tokens than this that no draft (a
# reading, the original, the snippet) proposed is stopped and the request refused. A merge's file
# is made of those sources but for a few seams; a small model that strays writes thousands of
# tokens of its own (hard_dev on a 2-core CPU: 4 to 9 minutes, then the checks refused the file).
MAX_OWN_TOKENS = 256


def merge_too_large(req: ApplyRequest) -> str | None:
    """Why the structural merge will not take this request, or None."""
    size = len(req.original) + len(req.update)
    if size <= MAX_MERGE_CHARS:
        return None
    return (f"the original and the snippet are {size:,} characters, over the structural merge's cap of "
            f"{MAX_MERGE_CHARS:,}; nothing was merged (split the file, or send a smaller one)")


def draft_sources(req: ApplyRequest, language: str | None,
                  merge: MergeResult | None = None) -> tuple[list[tuple[str, str]], list[Finding]]:
    """The model engines' draft texts, best first: the structural merge when it is sure of itself
    (it then already holds the edit), else the readings it was choosing between; the caller's
    prediction; then the original file and the snippet for re-sync."""
    sources: list[tuple[str, str]] = []
    notes: list[Finding] = []
    too_large = merge_too_large(req)
    if too_large:  # the model drafts from the original and the snippet alone
        notes.append(Finding("draft", "structural draft skipped: " + too_large, "info"))
        return sources + resync_sources(req), notes
    merge = merge or structural_merge(req.original, req.update, language, req.path, req.section)
    if merge.ok:
        sources.append(("structural", merge.text))
    else:
        notes.append(Finding("draft", "structural draft unavailable: " + "; ".join(merge.reasons), "info"))
        sources += [(f"reading {i + 1}", r.text) for i, r in enumerate(merge.readings)]
    return sources + resync_sources(req), notes


def resync_sources(req: ApplyRequest) -> list[tuple[str, str]]:
    """The draft sources after the merge's own: the caller's prediction, the original, the snippet."""
    return prediction_source(req) + [("original", req.original), ("update", req.update)]


def prediction_source(req: ApplyRequest) -> list[tuple[str, str]]:
    """The caller's predicted file as a draft source; the plain engine drafts from nothing else."""
    return [("prediction", req.prediction)] if req.prediction else []


def refusal(merge: MergeResult, req: ApplyRequest, prefix: str = "structural merge refused: ",
            more: list[str] | None = None, code: str = "refused") -> ApplyError:
    """The merge's refusal as an error. Its message's first line says what to resend (the lines
    that would make one reading the merge's only one, `fastapply.refusal`); then the reasons (and
    `more`, what the model found), how many readings there were and where they differ. The
    readings and hints ride along for the front-ends' structured answers."""
    reasons = merge.reasons + list(more or []) + [f"read so: {n}" for n in merge.notes]
    texts = [r.text for r in merge.readings]
    if merge.check in (INPUT_CHECK, SECTION_CHECK):  # the input itself, a section cut: its reason says what to send
        hints, hint = [], merge.reasons[0][:1].upper() + merge.reasons[0][1:] + "."
    else:
        # one deadline over every hint's merge (each keeps the outer one): a safety net where each
        # try costs seconds (a 764-line Rust file whose placement tries 1.3 s: 16 s of hints before)
        with deadline.limit(HINT_SECONDS):
            hints = context_hints(req.original, req.update, texts, _merged_text(merge.language, req.path, req.section),
                                  stop=deadline.expired)
        hint = hint_line(req.original, req.update, hints, len(texts))
    message = hint + "\n" + prefix + "; ".join(reasons) + " [" + describe_readings(merge.readings) + "]"
    return ApplyError(code, message, reasons, [(r.how, r.text) for r in merge.readings], hint, hints)


def _merged_text(language: str | None, path: str | None, section: bool = False) -> Callable[[str, str], str | None]:
    """The structural merge's answer, or None (its readings are not needed: a hint is a sure answer)."""
    def merged(original: str, update: str) -> str | None:
        return merge_text(original, update, language, path, section)
    return merged


def run(get_model: Callable[[], object], model_lock: threading.Lock, req: ApplyRequest,
        should_stop: ShouldStop | None) -> Iterator[StreamEvent]:
    """Serve one request. `get_model()` gives the model engine (loading it on first use; never
    called when the structural merge answers). An engine that is not `concurrent` serves one
    request at a time: concurrent callers queue on `model_lock`. A section's answer says so first
    (`SECTION_FINDING`)."""
    for ev in _served(get_model, model_lock, req, should_stop):
        if req.section and isinstance(ev, ApplyResult):
            ev.findings.insert(0, SECTION_FINDING)
        yield ev


# On every answer to a request whose original is a section (`ApplyRequest.section`).
SECTION_FINDING = Finding(SECTION_KIND, "the original was merged as a section of a file: both its edges are cuts, "
                                        "nothing was written beyond its first or last line", "info")


def _served(get_model: Callable[[], object], model_lock: threading.Lock, req: ApplyRequest,
            should_stop: ShouldStop | None) -> Iterator[StreamEvent]:
    check_request(req)
    language = detect_language(req.language, req.path, req.original)
    if not req.original.strip():  # nothing to merge into
        yield from _new_file(req, language)
        return
    # a language without a grammar (none installed, or its wheel fails to load) is merged by lines: say so
    lines_only = [Finding("language", why, "info") for why in [grammar_problem(language)] if why]
    if req.engine in ("structural", "auto"):
        too_large = merge_too_large(req)
        if too_large:
            raise ApplyError("too_long", too_large)
        merge = structural_merge(req.original, req.update, language, req.path, req.section)
        if merge.ok:
            yield TextDelta(merge.text)
            yield ApplyResult(merge.text, "structural", language, Stats(),
                              lines_only + [Finding("normalised", n, "info") for n in merge.notes]
                              + [Finding("doubt", r, "info") for r in merge.reasons])
            return
        if req.engine == "structural":
            raise refusal(merge, req)
        yield from _auto_model(get_model, model_lock, req, language, merge, should_stop)
        return
    notes: list[Finding] = list(lines_only)
    sources = None
    if req.engine == "speculative":
        sources, drafted = draft_sources(req, language)
        notes += drafted
    elif req.prediction:
        sources = prediction_source(req)
    yield from _model(get_model, model_lock, req, language, sources, notes, should_stop)


def empty_original_error(original: str, update: str, what: str = "the original") -> ApplyError | None:
    """An empty original (`what`, as the caller names it) with a snippet that holds markers: the
    markers stand for code the caller did not send (Continue's Relace provider sends an empty
    `initialCode`), so nothing is merged; the error says what to send instead. None otherwise."""
    if original.strip():
        return None
    lines = update.splitlines()
    for i, (line, flag) in enumerate(zip(lines, marker_flags(lines, []), strict=True), 1):
        if flag or split_inline(line):
            return ApplyError("invalid_argument", (
                f"send the file's current content as {what}: {what} is empty, but line {i} of the snippet "
                f"(`{line.strip()[:60]}`) is a marker for code it leaves out; to create a new file, send "
                "a snippet without markers"))
    return None


def _new_file(req: ApplyRequest, language: str | None) -> Iterator[StreamEvent]:
    """An empty original: a snippet without markers is the new file; one with markers is refused."""
    error = empty_original_error(req.original, req.update)
    if error is not None:
        raise error
    yield TextDelta(req.update)
    yield ApplyResult(req.update, "structural", language, Stats(),
                      [Finding("new_file", "the original is empty: the snippet is the new file", "info")])


def _auto_model(get_model, model_lock, req: ApplyRequest, language: str | None, merge: MergeResult,
                should_stop: ShouldStop | None) -> Iterator[StreamEvent]:
    """The merge refused. With two readings or more the model judges them (`fastapply.judge`) and
    the best is returned when its margin is enough; else the model generates, drafted by the
    readings (the judge's best first), the original and the snippet (where the merge named
    readings, in the judge's dtype: `ModelEngine.confirm`). Its file passes every check,
    or the request is refused with the merge's reasons and readings and the model's findings.
    All of it within the request's model budget (`Budget`): when it runs out, the refusal."""
    readings = [r.text for r in merge.readings]
    too_many = judge_mod.over_cap(len(readings))
    if too_many:  # before any model is loaded
        raise refusal(merge, req, "the structural merge refused: ", [too_many])
    get_model = _installed(get_model, merge, req)
    notes: list[Finding] = []
    budget = Budget(req.model_budget_s)
    if len(readings) >= 2:
        model = get_model()
        if getattr(model, "score", None) is not None:
            _prepare_judge(model)
            budget.start()
            verdict = _judged(model, model_lock, req, merge, budget.stop(should_stop))
            judged = _judged_result(req, language, readings, verdict)
            if isinstance(judged, ApplyResult):
                yield TextDelta(judged.merged)
                yield judged
                return
            notes.append(judged)
            order = sorted(range(len(readings)), key=lambda i: -verdict.scores[i])
            readings = [readings[i] for i in order]
            merge = replace(merge, readings=tuple(merge.readings[i] for i in order))  # the judge's best first
    sources = [(f"reading {i + 1}", text) for i, text in enumerate(readings)] + resync_sources(req)
    result = None
    own = _OwnTokens(should_stop, Stats(), [r.text for r in merge.readings], budget)
    try:
        for ev in _model(get_model, model_lock, req, language, sources, notes, own.should_stop, own.stats,
                         confirm=bool(merge.readings), on_loaded=budget.start):
            if isinstance(ev, ApplyResult):
                result = ev
            else:
                if isinstance(ev, TextDelta):
                    own.wrote(ev.text)
                yield ev
    except ApplyError as e:
        if e.code != "cancelled" or own.cancelled or not (own.tripped or own.departed or own.out_of_budget):
            raise
        if own.out_of_budget:
            raise refusal(merge, req, "the structural merge refused and the model's budget ran out: ", [
                budget.spent_line("writing the file")]) from None
        if own.departed:
            raise refusal(merge, req, "the structural merge refused and the model's file is none of its readings: ", [
                f"the model departed from all {len(merge.readings)} reading(s) at character {len(own.text)}; "
                "stopped there (`--show-readings` prints them)"]) from None
        raise refusal(merge, req, "the structural merge refused and the model went its own way: ", [
            f"the model wrote over {MAX_OWN_TOKENS} tokens that neither the readings, the original nor the snippet "
            "proposed; stopped (a merge needs few)"]) from None
    assert result is not None
    if not result.ok:
        bad = [f.line() for f in result.findings if f.severity == "error"]
        raise refusal(merge, req, "the structural merge refused and the model's file failed its checks: ", bad)
    # Where the merge named its readings, the model confirms one of them (it drafts from them, and
    # its greedy verification keeps a reading whole or departs from it). A file of its own there
    # was right in none of the shared dev sets' cases and wrong in one that passed every check
    # (serde-rs/json fcb5e83e44ab: a `///` line), while the readings held the expected file in
    # 17 of hard_dev's 25 refusals then (evals/RESULTS.md, "The judge and auto").
    if merge.readings and result.merged not in {r.text for r in merge.readings}:
        raise refusal(merge, req, "the structural merge refused and the model's file is none of its readings: ", [
            f"the model wrote a file other than the merge's {len(merge.readings)} reading(s); "
            "`--show-readings` prints them"])
    result.findings.insert(0, Finding("auto", "the structural merge refused (" + "; ".join(merge.reasons)
                                      + "); the model's file passed the checks", "info"))
    yield result


def _installed(get_model, merge: MergeResult, req: ApplyRequest) -> Callable[[], object]:
    """`get_model` for auto: where the model extra is not installed (`fastapply.extras`), the
    merge's refusal with its readings, the line that names the extra among its reasons; the merge's
    sure answers never get here, so an install without the model stack still answers them."""
    from fastapply.extras import ExtraMissing

    def model():
        try:
            return get_model()
        except ExtraMissing as e:
            raise refusal(merge, req, "the structural merge refused and the judge is not installed: ",
                          [e.message]) from None
    return model


def _prepare_judge(model) -> None:
    """The judge's copy of the weights (bf16 on a CPU), made once per model: loading, which no
    request's budget pays (the first such request waits for it, a few seconds for 0.5B)."""
    prepare = getattr(model, "judge_backend", None)
    if prepare is not None:
        prepare()


class Budget:
    """`auto`'s model budget for one request: a clock started when the model takes the request up
    (after loading: a first request's load is not the request's cost), read before every forward
    pass (`due`). It is due once the deadline would pass by the end of the next step: a step is the
    time between two reads (a pass and its bookkeeping), and the longest seen so far is kept in
    reserve, so a request stops before its deadline rather than one pass after it (on this CPU a
    pass takes ~1 s: evals/RESULTS.md, "auto in bounded time")."""

    def __init__(self, seconds: float | None):
        self.seconds = DEFAULT_MODEL_BUDGET_S if seconds is None else seconds
        self.deadline: float | None = None
        self.last: float | None = None
        self.step = 0.0

    def start(self) -> None:
        if self.deadline is None and self.seconds:
            self.deadline = time.monotonic() + self.seconds

    def due(self) -> bool:
        """Read before a step: is the budget spent, or would it be by the step's end?"""
        now = time.monotonic()
        if self.last is not None:
            self.step = max(self.step, now - self.last)
        self.last = now
        return self.spent()

    def spent(self) -> bool:
        return self.deadline is not None and time.monotonic() + self.step >= self.deadline

    def stop(self, caller: ShouldStop | None) -> _BudgetStop:
        """The caller's should_stop, or the budget due."""
        return _BudgetStop(self, caller)

    def spent_line(self, doing: str) -> str:
        return (f"the model budget of {self.seconds:g} s ran out while {doing} (on this request: "
                "--model-budget SECONDS, 0 for none; the readings are the merge's own)")


class _BudgetStop:
    """A should_stop that is true when the caller's is, or when the budget is due."""

    def __init__(self, budget: Budget, caller: ShouldStop | None):
        self.budget, self.caller = budget, caller

    def __call__(self) -> bool:
        return self.cancelled() or self.budget.due()

    def cancelled(self) -> bool:
        return self.caller is not None and self.caller()

    def budget_spent(self) -> bool:
        """Stopped for the budget, not by the caller (a caller's cancel stays a cancel)."""
        return self.budget.spent() and not self.cancelled()


class _OwnTokens:
    """`should_stop` for `auto`'s generation: the caller's; true once the model has written more
    than `MAX_OWN_TOKENS` tokens no draft proposed (`Stats`: output minus accepted draft tokens);
    true once the model budget is spent;
    and, where the merge named readings, true as soon as the text written so far begins none of
    them. The file must then be one of them (below), and streamed text is a prefix of the final
    file (`SpecEngine.text_events`), so a departure decides the request: stopping there changes no
    answer and saves the rest of the file's decoding."""

    def __init__(self, caller: ShouldStop | None, stats: Stats, readings: list[str] | None = None,
                 budget: Budget | None = None):
        self.caller = caller
        self.budget = budget
        self.out_of_budget = False
        self.stats = stats
        self.readings = list(readings or [])  # those the text written so far still begins
        self.text = ""
        self.tripped = False
        self.departed = False
        self.cancelled = False  # the caller asked to stop: that stays a cancel

    def wrote(self, delta: str) -> None:
        # (only the readings the text still begins are kept, and each is checked at the new text
        # alone: the stream's deltas are checked once, not the whole text again per delta)
        at = len(self.text)
        self.text += delta
        if self.readings:
            self.readings = [r for r in self.readings if r.startswith(delta, at)]
            self.departed = not self.readings

    def should_stop(self) -> bool:
        if self.caller is not None and self.caller():
            self.cancelled = True
            return True
        if self.departed:
            return True
        if self.budget is not None and self.budget.due():
            self.out_of_budget = True
            return True
        self.tripped = self.stats.output_tokens - self.stats.accepted_tokens > MAX_OWN_TOKENS
        return self.tripped


def _judged(model, model_lock, req: ApplyRequest, merge: MergeResult, should_stop: ShouldStop) -> judge_mod.Verdict:
    """The judge's verdict on the merge's readings; a request it cannot score, or whose budget runs
    out while it scores, is refused with the merge's reasons and readings as well. A caller that
    goes away stops it within one forward pass (`cancelled`)."""
    try:
        with nullcontext() if getattr(model, "concurrent", False) else model_lock:
            return judge_mod.judge(model, req, [r.text for r in merge.readings], hows=[r.how for r in merge.readings],
                                   should_stop=should_stop)
    except ApplyError as e:
        if e.code == "cancelled" and isinstance(should_stop, _BudgetStop) and should_stop.budget_spent():
            raise refusal(merge, req, "the structural merge refused and the model's budget ran out: ",
                          [should_stop.budget.spent_line("judging the readings")]) from None
        if e.code not in ("too_long", "refused"):
            raise
        raise refusal(merge, req, "the structural merge refused and the judge could not score its readings: ",
                      [e.message], e.code) from None


def _judged_result(req: ApplyRequest, language: str | None, readings: list[str],
                   verdict: judge_mod.Verdict) -> ApplyResult | Finding:
    """The picked reading as the result (engine `judge`), or why not (a note): the judge abstained,
    or its pick fails the edit checks a model's file must pass."""
    if verdict.picked is None:
        why = (f"margin below {verdict.needed:.1f}" if verdict.needed != float("inf") else
               "its best reading answers a doubt other than a marker wrap: judge.MARGIN_NATS_OTHER is infinite")
        return Finding("judge", f"the judge abstained ({why}): "
                                f"{verdict.line()}", "info")
    text = readings[verdict.picked]
    failed = [f.line() for f in check_edit_applied(req.original, req.update, text) if f.severity == "error"]
    if failed:
        return Finding("judge", f"the judge's pick (reading {verdict.picked + 1}) fails the edit checks: "
                                + "; ".join(failed), "info")
    stats = Stats(prompt_tokens=verdict.scored_tokens, judge_s=verdict.seconds)
    found = Finding("judge", f"the structural merge refused; the model judged reading {verdict.picked + 1} of "
                             f"{len(readings)} best by {verdict.margin:.2f} nats ({verdict.line()})", "info")
    return ApplyResult(text, "judge", language, stats, [found], margin=round(verdict.margin, 3))


def _model(get_model, model_lock, req: ApplyRequest, language: str | None, sources, notes: list[Finding],
           should_stop: ShouldStop | None, stats: Stats | None = None, confirm: bool = False,
           on_loaded: Callable[[], None] | None = None) -> Iterator[StreamEvent]:
    """Decode with the model engine, then check its file like any merge (plus the edit checks).
    `confirm`: the file must be one of the merge's readings; an engine that judges in another
    dtype decodes it so (`ModelEngine.confirm`). `on_loaded` is called once the model is loaded."""
    model = get_model()
    if confirm:
        _prepare_judge(model)
    if on_loaded is not None:
        on_loaded()
    stats = stats if stats is not None else Stats()
    merged, findings = "", []
    write = getattr(model, "confirm", None) if confirm else None
    with nullcontext() if getattr(model, "concurrent", False) else model_lock:
        for ev in (write or model.generate)(req, sources, should_stop, stats):
            if isinstance(ev, TextDelta):
                yield ev
            else:
                merged, findings = ev
    if merged.strip():
        # A model's file can parse and still be wrong: the edit ignored, or code it never touched gone.
        findings += validate(req.original, req.update, merged, language, req.section)
        findings += check_edit_applied(req.original, req.update, merged)
    else:
        findings.append(Finding("empty", "the model returned an empty file"))
    engine = "speculative" if req.engine == "auto" else req.engine
    yield ApplyResult(merged, engine, language, stats, notes + findings)
