"""fastapply error codes -> HTTP statuses, and OpenAI's error shape `{"error": {message, type, param, code}}`.

Keyed by the codes' string values, so `fastapply.types.ErrorCode` members (a StrEnum with the
same values) index it as well.
"""

from __future__ import annotations

from fastapply.api import ApplyError

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


def error_body(err: ApplyError) -> dict:
    """OpenAI's error object; a structural refusal also lists its reasons (they are in the message too)."""
    return error_object(status_of(err.code), str(err.code), err.message, err.reasons)


def error_object(status: int, code: str, message: str, reasons: list[str] | None = None) -> dict:
    error = {"message": message, "type": _OPENAI_TYPE.get(status, "server_error"), "param": None, "code": code}
    if reasons:
        error["reasons"] = list(reasons)
    return {"error": error}
