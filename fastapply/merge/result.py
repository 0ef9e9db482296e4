"""What the structural merge returns: the merged text, or a refusal with its reasons."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reading:
    """One whole file the snippet may mean: the merge's splice of it under one reading."""

    text: str
    how: str  # how the merge read the snippet there ("cheapest placement", "region 2 at its next place", ...)


@dataclass(frozen=True)
class MergeResult:
    text: str | None  # the merged file; None when the merge refused
    confidence: float  # 0..1
    reasons: list[str] = field(default_factory=list)  # why it refused, or doubts when accepted
    language: str | None = None
    method: str = ""  # "tree-sitter", "line-anchor", ...
    # The files the merge was choosing between (each a valid splice of the snippet that passes
    # validation), best first. One when it answers; on a refusal, what a judge may pick from.
    readings: tuple[Reading, ...] = ()
    check: str = ""  # the named check whose doubt refused it (line anchors), if one did
    # what reading the request took (merge/intake.py): a fence unwrapped, markers read, indentation re-based
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class OtherSide:
    """One other reading of a doubt: its lines (unchecked), or None when it cannot be spliced at all
    (`unspliced` says why: its placement overlaps another region's)."""

    how: str
    lines: list[str] | None
    unspliced: str = ""


@dataclass(frozen=True)
class OneSidedDoubt:
    """A refusal whose doubt has a known set of sides: the placement with that check passed over
    (`kept`, every other check passed) and the other readings (`others`). The caller validates
    them: when none is a valid file, `kept` is the one reading that survives."""

    reason: str
    kept: list[str]
    others: tuple[OtherSide, ...]
    # the sides are places of a region the anchors found, which may not be all of its places: then
    # `kept` may not delete original code the snippet does not show (core._one_reading_left)
    places: bool = False


@dataclass
class Placement:
    """How one strategy (tree, line anchors, members) placed the snippet in the original: the
    merged lines, or a refusal."""

    lines: list[str] | None  # None: refused
    reasons: list[str] = field(default_factory=list)  # why it refused, or doubts when placed
    confidence: float = 0.0
    final: bool = False  # a refusal the next strategy must not override
    reaches_end: bool = False  # the last region replaces the end of the file (its final newline is the snippet's)
    doubt: OneSidedDoubt | None = None  # a refusal whose other side may fail validation
    check: str = ""  # the named check that refused, if one did

    @property
    def ok(self) -> bool:
        return self.lines is not None


# Confidence of an accepted merge (0..1), by how it was placed.
CONFIDENCE_IDENTITY = 1.0  # the snippet is the file
CONFIDENCE_TREE = 0.9  # marker-free snippet: each definition replaced by kind and name
CONFIDENCE_MEMBERS = 0.75  # line anchors failed; class members aligned by kind and name
# Line anchors, by the cost margin to the next-best ordered placement: >= 2, 1, 0 (see anchor.py).
CONFIDENCE_LINES_CLEAR, CONFIDENCE_LINES_CLOSE, CONFIDENCE_LINES_TIGHT = 0.95, 0.8, 0.7
FUZZY_PENALTY = 0.05  # per region edge line matched by similarity rather than equality ...
FUZZY_PENALTY_LINES = 4  # ... counting at most this many
CONFIDENCE_LOOSE_EDGES = 0.7  # at most: an unshown head or tail kept because the markers are loose
CONFIDENCE_ONE_LEFT = 0.6  # at most: a two-sided doubt whose other side fails validation
CONFIDENCE_WARNING = 0.6  # at most: the checks found a warning (a large deletion the snippet may mean)
