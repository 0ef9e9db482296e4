"""Proto <-> core types for the gRPC front-end, shared by the server and the client.

Also the error vocabulary on the wire: every `ErrorCode` has its gRPC status (`STATUS`), the code
itself travels in trailing metadata (`CODE_KEY`, with a refusal's reasons under `REASON_KEY`), and
`CODE_OF_STATUS` reads a status that gRPC itself produced (no metadata) back into a code.
"""

from __future__ import annotations

import grpc

from fastapply.grpc_gen import fastapply_pb2 as pb
from fastapply.refusal import payload as refusal_payload
from fastapply.types import (
    DEFAULT_ENGINE,
    ApplyError,
    ApplyRequest,
    ApplyResult,
    ErrorCode,
    Finding,
    Sampling,
    Stats,
    decode_utf8,
)

CODE_KEY = "fastapply-code"
REASON_KEY = "fastapply-reason-bin"  # "-bin": values are bytes (UTF-8), so any reason text fits

# fastapply error code -> gRPC status
STATUS: dict[ErrorCode, grpc.StatusCode] = {
    ErrorCode.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.USAGE: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorCode.TOO_LONG: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ErrorCode.QUEUE_FULL: grpc.StatusCode.RESOURCE_EXHAUSTED,
    ErrorCode.REFUSED: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorCode.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    ErrorCode.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    ErrorCode.CANCELLED: grpc.StatusCode.CANCELLED,
    ErrorCode.DEADLINE_EXCEEDED: grpc.StatusCode.DEADLINE_EXCEEDED,
    ErrorCode.INTERNAL: grpc.StatusCode.INTERNAL,
}

# gRPC status without our metadata (message size, concurrency limit, transport) -> fastapply code.
# Where two codes share a status, the first one above is the reading (a concurrency-limit message
# is recognised separately: see client.error_from_rpc).
CODE_OF_STATUS: dict[grpc.StatusCode, ErrorCode] = {}
for _code, _status in STATUS.items():
    CODE_OF_STATUS.setdefault(_status, _code)


def request_from_proto(m: pb.ApplyEditRequest) -> ApplyRequest:
    """Proto -> ApplyRequest; non-UTF-8 content is refused (ApplyError invalid_argument)."""
    s = m.sampling
    return ApplyRequest(
        original=decode_utf8(m.original, "the original"),
        update=decode_utf8(m.update, "the update"),
        instruction=m.instruction if m.HasField("instruction") else None,
        language=m.language if m.HasField("language") and m.language else None,
        path=m.path if m.HasField("path") and m.path else None,
        engine=m.engine or DEFAULT_ENGINE,
        sampling=Sampling(temperature=s.temperature, top_p=s.top_p if s.HasField("top_p") else 1.0,
                          seed=s.seed if s.HasField("seed") else None),
        max_output_tokens=m.max_output_tokens if m.HasField("max_output_tokens") else None,
        model_budget_s=m.model_budget_s if m.HasField("model_budget_s") else None,
        section=m.section if m.HasField("section") else False,
    )


def request_to_proto(req: ApplyRequest) -> pb.ApplyEditRequest:
    m = pb.ApplyEditRequest(
        original=req.original.encode("utf-8") if isinstance(req.original, str) else req.original,
        update=req.update.encode("utf-8") if isinstance(req.update, str) else req.update,
        engine=req.engine,
        sampling=pb.Sampling(temperature=req.sampling.temperature, top_p=req.sampling.top_p),
    )
    if req.instruction is not None:
        m.instruction = req.instruction
    if req.language is not None:
        m.language = req.language
    if req.path is not None:
        m.path = req.path
    if req.sampling.seed is not None:
        m.sampling.seed = req.sampling.seed
    if req.model_budget_s is not None:
        m.model_budget_s = req.model_budget_s
    if req.max_output_tokens is not None:
        m.max_output_tokens = req.max_output_tokens
    if req.section:
        m.section = True
    return m


def response_from_result(r: ApplyResult, include_merged: bool = True) -> pb.ApplyEditResponse:
    s = r.stats
    errors = [f for f in r.findings if f.severity == "error"]
    return pb.ApplyEditResponse(
        merged=r.merged if include_merged else "",
        engine=r.engine,
        language=r.language or "",
        stats=pb.Stats(output_tokens=s.output_tokens, forward_passes=s.forward_passes,
                       drafted_tokens=s.drafted_tokens, accepted_tokens=s.accepted_tokens,
                       prompt_tokens=s.prompt_tokens, prefill_ms=s.prefill_s * 1000, decode_ms=s.decode_s * 1000,
                       tokens_per_s=s.tokens_per_s, tokens_per_pass=s.tokens_per_pass),
        validation=pb.Validation(
            ok=r.ok,
            parses=not any(f.kind == "parse" for f in errors),
            marker_leak=any(f.kind == "marker_leak" for f in r.findings),
            findings=[pb.Finding(kind=f.kind, message=f.message, severity=f.severity) for f in r.findings],
        ),
    )


def result_from_response(m: pb.ApplyEditResponse, merged: str | None = None) -> ApplyResult:
    s = m.stats
    stats = Stats(output_tokens=s.output_tokens, forward_passes=s.forward_passes, drafted_tokens=s.drafted_tokens,
                  accepted_tokens=s.accepted_tokens, prompt_tokens=s.prompt_tokens,
                  prefill_s=s.prefill_ms / 1000, decode_s=s.decode_ms / 1000)
    findings = [Finding(f.kind, f.message, f.severity) for f in m.validation.findings]
    return ApplyResult(m.merged if merged is None else merged, m.engine, m.language or None, stats, findings)


# -- a refusal's structured detail (the rich error model) ----------------------------------------

DETAILS_KEY = "grpc-status-details-bin"  # google.rpc.Status, as grpcio-status reads it
# Everything a refusal puts in trailing metadata (message, reasons, this detail) must pass the
# client's metadata limit: gRPC's default is 8 KiB, so the detail keeps to this much unless the
# request says its client takes more (`max_refusal_bytes`, as fastapply's own client does).
REFUSAL_DETAIL_BYTES = 6 * 1024


def refusal_to_proto(req: ApplyRequest, err: ApplyError, max_bytes: int = REFUSAL_DETAIL_BYTES) -> pb.Refusal:
    """The refusal's readings and hints (`fastapply.refusal.payload`) as a `Refusal`: whole files
    where they fit `max_bytes`, else the diffs alone (`texts_omitted`), else neither (`diffs_omitted`)."""
    body = refusal_payload(req.original, req.update, err.reasons, err.readings, err.hints, err.hint)
    m = pb.Refusal(hint=body["hint"], reasons=body["reasons"])
    for h in body["hints"]:
        m.hints.add(reading=h["reading"], region=h["region"], side=h["side"], lines=h["lines"],
                    original_lines=_range(h["original_lines"]), marker=h["marker"])
    for r in body["readings"]:
        m.readings.add(index=r["index"], how=r["how"], original_lines=_range(r["original_lines"]),
                       reading_lines=_range(r["reading_lines"]), diff=r["diff"], text=r["text"])
    if m.ByteSize() > max_bytes:
        m.texts_omitted = True
        for r in m.readings:
            r.ClearField("text")
    if m.ByteSize() > max_bytes:
        m.diffs_omitted = True
        for r in m.readings:
            r.diff = ""
    return m


def _range(pair) -> pb.LineRange:
    first, last = pair
    return pb.LineRange(first=max(first, 0), last=max(last, 0))


def status_details(status: grpc.StatusCode, message: str, refusal: pb.Refusal) -> bytes:
    """The `grpc-status-details-bin` value: a google.rpc.Status (its code and message must be the
    call's own, or readers refuse it) with the refusal packed in its details."""
    from google.protobuf import any_pb2
    from google.rpc import status_pb2

    detail = any_pb2.Any()
    detail.Pack(refusal)
    return status_pb2.Status(code=status.value[0], message=message, details=[detail]).SerializeToString()


def refusal_from_metadata(metadata) -> pb.Refusal | None:
    """The `Refusal` in a call's trailing metadata, or None."""
    from google.rpc import status_pb2

    for key, value in metadata or ():
        if key == DETAILS_KEY:
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(pb.Refusal.DESCRIPTOR):
                    refusal = pb.Refusal()
                    detail.Unpack(refusal)
                    return refusal
    return None
