from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ApplyEditRequest(_message.Message):
    __slots__ = ("original", "update", "instruction", "language", "path", "engine", "sampling", "max_output_tokens", "model_budget_s", "max_refusal_bytes", "section")
    ORIGINAL_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    SAMPLING_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_BUDGET_S_FIELD_NUMBER: _ClassVar[int]
    MAX_REFUSAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    original: bytes
    update: bytes
    instruction: str
    language: str
    path: str
    engine: str
    sampling: Sampling
    max_output_tokens: int
    model_budget_s: float
    max_refusal_bytes: int
    section: bool
    def __init__(self, original: _Optional[bytes] = ..., update: _Optional[bytes] = ..., instruction: _Optional[str] = ..., language: _Optional[str] = ..., path: _Optional[str] = ..., engine: _Optional[str] = ..., sampling: _Optional[_Union[Sampling, _Mapping]] = ..., max_output_tokens: _Optional[int] = ..., model_budget_s: _Optional[float] = ..., max_refusal_bytes: _Optional[int] = ..., section: _Optional[bool] = ...) -> None: ...

class Sampling(_message.Message):
    __slots__ = ("temperature", "top_p", "seed")
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    top_p: float
    seed: int
    def __init__(self, temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., seed: _Optional[int] = ...) -> None: ...

class Stats(_message.Message):
    __slots__ = ("output_tokens", "forward_passes", "drafted_tokens", "accepted_tokens", "prompt_tokens", "prefill_ms", "decode_ms", "tokens_per_s", "tokens_per_pass")
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FORWARD_PASSES_FIELD_NUMBER: _ClassVar[int]
    DRAFTED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PREFILL_MS_FIELD_NUMBER: _ClassVar[int]
    DECODE_MS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_S_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_PASS_FIELD_NUMBER: _ClassVar[int]
    output_tokens: int
    forward_passes: int
    drafted_tokens: int
    accepted_tokens: int
    prompt_tokens: int
    prefill_ms: float
    decode_ms: float
    tokens_per_s: float
    tokens_per_pass: float
    def __init__(self, output_tokens: _Optional[int] = ..., forward_passes: _Optional[int] = ..., drafted_tokens: _Optional[int] = ..., accepted_tokens: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., prefill_ms: _Optional[float] = ..., decode_ms: _Optional[float] = ..., tokens_per_s: _Optional[float] = ..., tokens_per_pass: _Optional[float] = ...) -> None: ...

class Finding(_message.Message):
    __slots__ = ("kind", "message", "severity")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    kind: str
    message: str
    severity: str
    def __init__(self, kind: _Optional[str] = ..., message: _Optional[str] = ..., severity: _Optional[str] = ...) -> None: ...

class Validation(_message.Message):
    __slots__ = ("ok", "parses", "marker_leak", "findings")
    OK_FIELD_NUMBER: _ClassVar[int]
    PARSES_FIELD_NUMBER: _ClassVar[int]
    MARKER_LEAK_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    parses: bool
    marker_leak: bool
    findings: _containers.RepeatedCompositeFieldContainer[Finding]
    def __init__(self, ok: _Optional[bool] = ..., parses: _Optional[bool] = ..., marker_leak: _Optional[bool] = ..., findings: _Optional[_Iterable[_Union[Finding, _Mapping]]] = ...) -> None: ...

class ApplyEditResponse(_message.Message):
    __slots__ = ("merged", "engine", "language", "stats", "validation")
    MERGED_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    merged: str
    engine: str
    language: str
    stats: Stats
    validation: Validation
    def __init__(self, merged: _Optional[str] = ..., engine: _Optional[str] = ..., language: _Optional[str] = ..., stats: _Optional[_Union[Stats, _Mapping]] = ..., validation: _Optional[_Union[Validation, _Mapping]] = ...) -> None: ...

class ApplyEditChunk(_message.Message):
    __slots__ = ("text", "final")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    text: str
    final: ApplyEditResponse
    def __init__(self, text: _Optional[str] = ..., final: _Optional[_Union[ApplyEditResponse, _Mapping]] = ...) -> None: ...

class Refusal(_message.Message):
    __slots__ = ("hint", "reasons", "readings", "hints", "texts_omitted", "diffs_omitted")
    HINT_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    READINGS_FIELD_NUMBER: _ClassVar[int]
    HINTS_FIELD_NUMBER: _ClassVar[int]
    TEXTS_OMITTED_FIELD_NUMBER: _ClassVar[int]
    DIFFS_OMITTED_FIELD_NUMBER: _ClassVar[int]
    hint: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    readings: _containers.RepeatedCompositeFieldContainer[Reading]
    hints: _containers.RepeatedCompositeFieldContainer[Hint]
    texts_omitted: bool
    diffs_omitted: bool
    def __init__(self, hint: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ..., readings: _Optional[_Iterable[_Union[Reading, _Mapping]]] = ..., hints: _Optional[_Iterable[_Union[Hint, _Mapping]]] = ..., texts_omitted: _Optional[bool] = ..., diffs_omitted: _Optional[bool] = ...) -> None: ...

class LineRange(_message.Message):
    __slots__ = ("first", "last")
    FIRST_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    first: int
    last: int
    def __init__(self, first: _Optional[int] = ..., last: _Optional[int] = ...) -> None: ...

class Reading(_message.Message):
    __slots__ = ("index", "how", "original_lines", "reading_lines", "diff", "text")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    HOW_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_LINES_FIELD_NUMBER: _ClassVar[int]
    READING_LINES_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    index: int
    how: str
    original_lines: LineRange
    reading_lines: LineRange
    diff: str
    text: str
    def __init__(self, index: _Optional[int] = ..., how: _Optional[str] = ..., original_lines: _Optional[_Union[LineRange, _Mapping]] = ..., reading_lines: _Optional[_Union[LineRange, _Mapping]] = ..., diff: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class Hint(_message.Message):
    __slots__ = ("reading", "region", "side", "lines", "original_lines", "marker")
    READING_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_LINES_FIELD_NUMBER: _ClassVar[int]
    MARKER_FIELD_NUMBER: _ClassVar[int]
    reading: int
    region: int
    side: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    original_lines: LineRange
    marker: bool
    def __init__(self, reading: _Optional[int] = ..., region: _Optional[int] = ..., side: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., original_lines: _Optional[_Union[LineRange, _Mapping]] = ..., marker: _Optional[bool] = ...) -> None: ...
