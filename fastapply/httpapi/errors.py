"""fastapply error codes -> HTTP statuses, and OpenAI's error shape `{"error": {message, type, param, code}}`.

Keyed by the codes' string values, so `fastapply.types.ErrorCode` members (a StrEnum with the
same values) index it as well.

A refusal (422) carries, beside OpenAI's `error` object (which the SDKs read, unchanged), the
structured refusal of `fastapply.refusal.payload` at the top level: `hint` (one line: what to
resend; `error.message` starts with it), `hints`, `reasons`, `readings` (the files the merge was
choosing between, each with its diff) and `texts_omitted`.
"""

from __future__ import annotations

from fastapply.api import ApplyError, ApplyRequest
from fastapply.refusal import payload

HTTP_STATUS = {
    "invalid_argument": 400,
    "usage": 400,
    "too_long": 413,  # the request body, or the file for the model's context
    "refused": 422,  # the structural merge refused, or the model's file failed validation
    "queue_full": 429,
    "unauthenticated": 401,
    "unavailable": 503,  # the model could not be loaded
    "cancelled": 499,  # the client went away: nobody reads this answer
    "deadline_exceeded": 504,
    "internal": 500,
}

# OpenAI's error `type` for each status, as its SDKs and clients expect them.
_OPENAI_TYPE = {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error",
                405: "invalid_request_error", 413: "invalid_request_error", 422: "invalid_request_error",
                429: "rate_limit_error"}


def status_of(code: str) -> int:
    return HTTP_STATUS.get(str(code), 500)


def error_body(err: ApplyError, request: ApplyRequest | None = None, max_bytes: int | None = None) -> dict:
    """OpenAI's error object; a structural refusal also lists its reasons (they are in the message
    too). A refusal of `request` adds the structured refusal (`refusal_fields`)."""
    body = error_object(status_of(err.code), str(err.code), err.message, err.reasons)
    if err.code == "refused" and request is not None:
        body.update(refusal_fields(err, request, max_bytes))
    return body


def refusal_fields(err: ApplyError, request: ApplyRequest, max_bytes: int | None = None) -> dict:
    """`hint`, `hints`, `reasons`, `readings`, `texts_omitted` of a refusal. One with neither hint nor
    readings (the merged file failed validation) gets its message's first line as its hint.
    `max_bytes`: whole files that would pass it are left out (their diffs stay)."""
    if err.hint is None and not err.readings:
        return {"hint": err.message.split("\n", 1)[0], "hints": [], "reasons": list(err.reasons), "readings": [],
                "texts_omitted": False}
    return payload(request.original, request.update, err.reasons, err.readings, err.hints, err.hint, max_bytes)


def error_object(status: int, code: str, message: str, reasons: list[str] | None = None) -> dict:
    error = {"message": message, "type": _OPENAI_TYPE.get(status, "server_error"), "param": None, "code": code}
    if reasons:
        error["reasons"] = list(reasons)
    return {"error": error}
