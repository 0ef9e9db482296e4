"""Drafters: propose the next tokens of the output from token sequences we already hold.

Pure Python over token lists (no torch), so they are tested without a model.

A `SourceDrafter` walks one or more *sources* in order, each with a pointer: the structural
merge (or the original file) first, then the original file and the update snippet, then the
model's own output. While the output follows a source, the pointer advances with it. When the
model departs (new code, a deletion), the pointer is lost and is re-synchronised by finding the
last n-gram of the output in the source, preferring the place nearest at or after the old pointer
so that repeated lines (`}`, `return nil`) do not send the draft back to the top of the file.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class Drafter(Protocol):
    """What the verify loop needs from a draft source (HF's candidate generator, in three calls)."""

    def propose(self, max_k: int) -> list[int]:
        """At most max_k tokens that we guess come next in the output; the drafter's own length
        policy decides how many below that."""
        ...

    def update(self, new_tokens: Sequence[int]) -> None:
        """The output grew by `new_tokens` (accepted draft plus the model's own token)."""
        ...

    def observe(self, drafted: int, accepted: int) -> None:
        """The verifier's feedback on the last proposal: `accepted` of `drafted` tokens were kept."""
        ...

    # Where the last proposal came from, in order: (source name, tokens), e.g. [("structural", 12),
    # ("model", 4)]. The verify loop attributes accepted tokens to sources with it (`Stats.by_source`).
    last_segments: list[tuple[str, int]]


DrafterFactory = Callable[..., Drafter]  # (sources: [(name, tokens)], k_max=int) -> Drafter


@dataclass
class DraftLength:
    """Adaptive draft length: double after a fully accepted draft, halve after a rejection."""

    k: int = 16
    lo: int = 4
    hi: int = 128

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted == 0:
            return
        if accepted == drafted:
            self.k = min(self.hi, self.k * 2)
        else:
            self.k = max(self.lo, self.k // 2)


# How much matched context counts as evidence. Past this, nearness to the old pointer decides.
_CONTEXT_CAP = 16
# Candidates examined on each side of the old pointer during a re-sync (bounds the work per step).
_NEIGHBOURS = 24


@dataclass
class _Source:
    name: str
    tokens: list[int]
    ngram: int
    grows: bool = False  # the output itself: its index is extended as it grows
    pointer: int | None = None  # index in `tokens` of the next token to propose
    run: int = 0  # output tokens just matched by tokens[pointer - run:pointer]
    index: dict[tuple[int, ...], list[int]] = field(default_factory=dict)  # n-gram -> end positions

    def __post_init__(self) -> None:
        self.extend_index(self.ngram, len(self.tokens))

    def extend_index(self, start: int, stop: int) -> None:
        n, t = self.ngram, self.tokens
        for end in range(max(start, n), stop + 1):
            self.index.setdefault(tuple(t[end - n:end]), []).append(end)


class SourceDrafter:
    """Draft from token sources in priority order; see the module docstring.

    `sources` are (name, tokens) pairs; the first is the primary draft and is assumed to start
    where the output starts (its pointer begins at 0). `use_history` adds the output itself as a
    last source (prompt lookup over what was already generated). The draft length adapts to the
    verifier's feedback (`DraftLength`: x2 after a full accept, /2 after a rejection, up to k_max).

    Example: the primary source is the structural merge; the model writes 9 where it had 4.

    >>> d = SourceDrafter([("merge", [1, 2, 3, 4, 5, 6])], ngram=1)
    >>> d.propose(4)            # the primary source's pointer starts at 0
    [1, 2, 3, 4]
    >>> d.observe(4, 3)         # the verifier kept 3 of 4: the next drafts are shorter (16 -> 8)
    >>> d.update([1, 2, 3, 9])  # accepted 1, 2, 3; the model's own token is 9
    >>> d.propose(4)            # 9 occurs in no source: the pointer is lost, nothing to propose
    []
    >>> d.update([5])           # the output is back on the merge: `5` re-synchronises the pointer
    >>> d.propose(4)
    [6]
    """

    def __init__(self, sources: Sequence[tuple[str, Sequence[int]]], ngram: int = 3, use_history: bool = True,
                 k_max: int = 128):
        self.ngram = ngram
        self.length = DraftLength(hi=k_max)
        self.history: list[int] = []
        self.sources = [_Source(name, list(toks), ngram) for name, toks in sources]
        if self.sources:
            self.sources[0].pointer = 0
        if use_history:
            self.sources.append(_Source("history", self.history, ngram, grows=True))
        self.last_source: str | None = None
        self.last_segments: list[tuple[str, int]] = []

    def propose(self, max_k: int) -> list[int]:
        k = min(self.length.k, max_k)
        best = None
        for s in self.sources:
            if s.pointer is None or s.pointer >= len(s.tokens):
                continue
            if best is None or s.run > best.run:
                best = s
        if best is None or k <= 0:
            self.last_source, self.last_segments = None, []
            return []
        self.last_source = best.name
        draft = best.tokens[best.pointer:best.pointer + k]
        self.last_segments = [(best.name, len(draft))]
        return draft

    def observe(self, drafted: int, accepted: int) -> None:
        self.length.observe(drafted, accepted)

    def update(self, new_tokens: Sequence[int]) -> None:
        new = list(new_tokens)
        if not new:
            return
        start = len(self.history)
        self.history.extend(new)
        for s in self.sources:
            p = s.pointer
            if p is not None and s.tokens[p:p + len(new)] == new:
                s.pointer = p + len(new)
                s.run += len(new)
            else:
                # For the history source the index still ends before this step's tokens, so
                # the output's tail cannot match itself.
                self._resync(s)
            if s.grows:
                s.extend_index(start + 1, len(self.history))

    def _resync(self, s: _Source) -> None:
        """Find where the output's tail occurs in `s`; keep the pointer there (or drop it)."""
        n, h = self.ngram, self.history
        old = s.pointer if s.pointer is not None else 0
        s.pointer, s.run = None, 0
        if len(h) < n:
            return
        ends = s.index.get(tuple(h[-n:]))
        if not ends:
            return
        i = bisect.bisect_left(ends, old)
        best_key, best_end, best_len = None, None, 0
        for end in ends[max(0, i - _NEIGHBOURS):i + _NEIGHBOURS]:
            length = _match_back(s.tokens, end, h, _CONTEXT_CAP)
            after = end >= old
            key = (length, after, -abs(end - old))
            if best_key is None or key > best_key:
                best_key, best_end, best_len = key, end, length
        if best_end is not None:
            s.pointer, s.run = best_end, best_len


def _match_back(tokens: list[int], end: int, history: list[int], cap: int) -> int:
    """How many tokens before `end` in `tokens` equal the tail of `history` (at most cap)."""
    n = 0
    while n < cap and n < end and n < len(history) and tokens[end - 1 - n] == history[-1 - n]:
        n += 1
    return n


def prompt_lookup_propose(sequence: Sequence[int], k: int, max_ngram: int = 2, min_ngram: int = 1) -> list[int]:
    """Hugging Face's prompt-lookup rule (`PromptLookupCandidateGenerator`), as a pure function.

    `sequence` is prompt + output so far. For n from max_ngram down to min_ngram, find the first
    earlier occurrence of the last n tokens and propose the k tokens that followed it.
    """
    seq = list(sequence)
    L = len(seq)
    for n in range(min(max_ngram, L - 1), min_ngram - 1, -1):
        tail = seq[L - n:]
        for i in range(0, L - n):
            if seq[i:i + n] == tail:
                start = i + n
                if start < L:
                    return seq[start:min(start + k, L)]
    return []


class PromptLookupDrafter:
    """`prompt_lookup_propose` over prompt + output, with an index instead of a scan per step.

    The rule takes the *first* occurrence of an n-gram, and a first occurrence never moves as the
    sequence grows, so remembering where each n-gram first ended is enough.
    """

    def __init__(self, prompt: Sequence[int], max_ngram: int = 2, min_ngram: int = 1, k_max: int = 128):
        self.sequence: list[int] = []
        self.max_ngram, self.min_ngram = max_ngram, min_ngram
        self.length = DraftLength(hi=k_max)
        self._first_end: dict[tuple[int, ...], int] = {}
        self.last_segments: list[tuple[str, int]] = []
        self.update(prompt)

    def propose(self, max_k: int) -> list[int]:
        k = min(self.length.k, max_k)
        seq, L = self.sequence, len(self.sequence)
        draft: list[int] = []
        for n in range(min(self.max_ngram, L - 1), self.min_ngram - 1, -1):
            end = self._first_end.get(tuple(seq[L - n:]))
            if end is not None and end < L:
                draft = seq[end:min(end + k, L)]
                break
        self.last_segments = [("prompt_lookup", len(draft))] if draft else []
        return draft

    def observe(self, drafted: int, accepted: int) -> None:
        self.length.observe(drafted, accepted)

    def update(self, new_tokens: Sequence[int]) -> None:
        seq = self.sequence
        for t in new_tokens:
            seq.append(t)
            L = len(seq)
            for n in range(self.min_ngram, self.max_ngram + 1):
                if L >= n:
                    self._first_end.setdefault(tuple(seq[L - n:]), L)


# -- a model after the file ------------------------------------------------------------------------

class Continuer(Protocol):
    """A drafter that can continue a given draft: the model drafter (`fastapply.model_draft`)."""

    length: ModelDraftLength

    def propose_after(self, prefix: Sequence[int], max_k: int) -> list[int]:
        """At most max_k tokens to follow the output so far plus `prefix` (tokens not yet verified)."""
        ...

    def update(self, new_tokens: Sequence[int]) -> None: ...

    def observe(self, drafted: int, accepted: int) -> None: ...


@dataclass
class ModelDraftLength:
    """A draft model's run length, Hugging Face's "heuristic" schedule (`AssistedCandidateGenerator`):
    +2 after a fully accepted run, -1 otherwise. The run also stops early where the model is unsure
    (its confidence threshold), so `k` is a cap, not a promise."""

    k: int = 8
    lo: int = 1
    hi: int = 32

    def observe(self, drafted: int, accepted: int) -> None:
        if drafted == 0:
            return
        self.k = min(self.hi, self.k + 2) if accepted == drafted else max(self.lo, self.k - 1)


class FileModelDrafter:
    """The file sources draft first; a small model extends where they have nothing or stop early.

    A file proposal as long as the model's own run cap (`model.length.k`) goes out alone: the file
    is then on a copy run and the model is not consulted (it costs no draft-model step). A shorter
    one (none at all inside new code, a few tokens at a source's end) is extended by the model from
    its end, up to that cap. Feedback goes to each part: the file's length policy sees its own
    tokens; the model's sees its tokens only when the verifier reached them.

    Example: the file holds 2 more tokens, the model continues with 3 of its own.

    >>> class Model:  # a stand-in continuer that always proposes 7, 8, 9
    ...     length = ModelDraftLength(k=5)
    ...     def propose_after(self, prefix, max_k): return [7, 8, 9][:max_k]
    ...     def update(self, new): pass
    ...     def observe(self, drafted, accepted): pass
    >>> d = FileModelDrafter(SourceDrafter([("merge", [1, 2])], use_history=False), Model())
    >>> d.propose(16)
    [1, 2, 7, 8, 9]
    >>> d.last_segments
    [('merge', 2), ('model', 3)]
    """

    def __init__(self, file: Drafter, model: Continuer):
        self.file, self.model = file, model
        self.last_segments: list[tuple[str, int]] = []

    def propose(self, max_k: int) -> list[int]:
        draft = self.file.propose(max_k)
        file_segments = list(getattr(self.file, "last_segments", None) or ([("file", len(draft))] if draft else []))
        room = min(max_k, self.model.length.k) - len(draft)
        extra = self.model.propose_after(draft, room) if room > 0 else []
        self.last_segments = file_segments + ([("model", len(extra))] if extra else [])
        return draft + extra

    def update(self, new_tokens: Sequence[int]) -> None:
        self.file.update(new_tokens)
        self.model.update(new_tokens)

    def observe(self, drafted: int, accepted: int) -> None:
        n_model = sum(n for name, n in self.last_segments if name == "model")
        n_file = drafted - n_model
        self.file.observe(n_file, min(accepted, n_file))
        if n_model and accepted >= n_file:  # the verifier reached the model's tokens
            self.model.observe(n_model, accepted - n_file)
