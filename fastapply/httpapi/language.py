"""The language of an HTTP request that names none (Morph's and Relace's formats carry no file name).

`languages.guess_language` reads it from the original's content (a shebang; a format that says what
it is: a JSON document, `<?php`, an HTML doctype, Dockerfile instructions; then tree-sitter parse
scores), so that the tree merge and the syntax checks run. A guess must never cost a merge: the
request is tried under the guessed language first and, where the merge refuses, again as text
(language None), which is what the request got before any guess:

    structural   guessed structural -> text structural
    auto         guessed structural -> text structural -> guessed auto (the model, its file checked
                 with the guessed grammar)
    speculative, plain   guessed (the model runs once; its file is checked with the guessed grammar)

Each answer carries a `language` finding that says what was guessed and what was used.

The guess parses the file's head with every family's grammar (tens of ms for an 8 KB file on this
project's 2-core CPU, as much as the merge itself) unless the file reads plainly as one family
(`languages._likely_alone`: its grammars only, a few ms); each guess is remembered by the file's
digest (`GUESSES`): a file sent again (a retry after a refusal, another edit of the same version) is
guessed once. It is what an HTTP request costs beyond a gRPC one that names its language
(evals/RESULTS.md, "HTTP beside gRPC").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastapply.api import ApplyRequest, Finding
from fastapply.httpapi.cache import DigestCache
from fastapply.languages import LanguageGuess, guess_language

GUESSES = DigestCache(1024)  # file digest -> its LanguageGuess


@dataclass(frozen=True)
class Attempt:
    """One try of a request, and the finding its answer carries."""

    request: ApplyRequest
    note: Finding | None


def attempts(req: ApplyRequest) -> list[Attempt]:
    """The tries for `req`, in order; the caller moves to the next one when a try is refused."""
    if req.language or req.path:
        return [Attempt(req, None)]
    guess = remembered_guess(req.original)
    if guess.language is None:
        return [Attempt(req, _note(f"no language guessed ({guess.reason}); merged as text"))]
    guessed = replace(req, language=guess.language)
    note = _note(f"language {guess.language} guessed from the content: {guess.reason}")
    if req.engine not in ("structural", "auto"):
        return [Attempt(guessed, note)]
    text = _note(f"language {guess.language} guessed from the content ({guess.reason}), but the merge "
                 f"refused under it; merged as text")
    tries = [Attempt(replace(guessed, engine="structural"), note), Attempt(replace(req, engine="structural"), text)]
    if req.engine == "auto":
        tries.append(Attempt(guessed, note))
    return tries


def remembered_guess(text: str) -> LanguageGuess:
    key = GUESSES.key(text)
    guess = GUESSES.get(key)
    if guess is None:
        guess = guess_language(text)
        GUESSES.put(key, guess)
    return guess


def _note(message: str) -> Finding:
    return Finding("language", message, "info")
