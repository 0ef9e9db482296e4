"""What the HTTP front-end remembers between requests, by the digest of the text it was computed
from (pure but for its lock): a file's guessed language (`language.py`) and texts' token counts
(`usage.py`). A client sends the same file again (a retry after a refusal, another edit of the same
version) and, in an editing session, the file an answer returned as its next original.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict


class DigestCache:
    """A bounded, thread-safe map from a text's digest to what was computed from it (the least
    recently used goes first). Keyed by digest, so no text is kept alive."""

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[bytes, object] = OrderedDict()

    @staticmethod
    def key(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def get(self, key: bytes):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: bytes, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
