"""fastapply: merge lazy edit snippets into whole files, fast and exactly."""

from fastapply.api import (
    ApplyError,
    ApplyRequest,
    ApplyResult,
    Applier,
    ErrorCode,
    Finding,
    Sampling,
    Stats,
    TextDelta,
)

__all__ = ["ApplyError", "ApplyRequest", "ApplyResult", "Applier", "ErrorCode", "Finding", "Sampling", "Stats",
           "TextDelta"]
__version__ = "0.1.0"
