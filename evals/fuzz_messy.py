"""The `messy` fuzz pattern: a random line edit or a rewritten function (`prop_random_edit`,
`prop_rewrite_fn`), then one of evals/messy_transforms.py's rewrites of it (tabs for spaces,
another indent width, a dedented snippet, no trailing whitespace, CRLF, a BOM, no final newline,
a fence, another marker wording), drawn among those that keep the expected file exact.
"""

from __future__ import annotations

from dataclasses import replace

from evals.fuzz_common import Edit, Pick, Source
from evals.fuzz_props import random_edit, rewrite_fn
from evals.messy_transforms import TRANSFORMS, Skip, Variant

BASES = (random_edit, rewrite_fn)


def messy(pick: Pick, src: Source) -> Edit | None:
    edit = pick.choice(BASES)(pick, src)
    if edit is None:
        return None
    clean = Variant(edit.language, edit.original, edit.update, edit.expected)
    for name in pick.shuffle(list(TRANSFORMS)):  # the first that applies to this edit
        try:
            v = TRANSFORMS[name](clean, pick)
        except Skip:
            continue
        return replace(edit, original=v.original, update=v.update, expected=v.expected,
                       variant=f"{edit.variant} {name}".strip())
    return None
