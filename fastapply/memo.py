"""A small least-recently-used memo per thread, for pure functions of large texts.

One merge parses the same original many times over (the checks, every reading's splice, the
definitions the rules compare), and a refused merge of a 5,000-line file spent seconds doing so
(evals/RESULTS.md, "No merge that takes seconds"). Parsers are not thread-safe and a server merges
on several threads, so each thread keeps its own few results; the results are shared read-only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps


def per_thread_lru(size: int) -> Callable:
    """Decorate a function of hashable arguments: its last `size` results on this thread are kept."""
    def decorate(fn: Callable) -> Callable:
        local = threading.local()

        @wraps(fn)
        def memo(*args):
            cache = getattr(local, "cache", None)
            if cache is None:
                cache = local.cache = OrderedDict()
            if args in cache:
                cache.move_to_end(args)
                return cache[args]
            value = cache[args] = fn(*args)
            if len(cache) > size:
                cache.popitem(last=False)
            return value
        memo.cache_clear = lambda: getattr(local, "cache", {}).clear()  # type: ignore[attr-defined]
        return memo
    return decorate


def last_object(fn: Callable) -> Callable:
    """Decorate a function of one unhashable object that no caller mutates (a merge's original lines):
    its result for the last object it was given on this thread, by identity, is kept."""
    local = threading.local()

    @wraps(fn)
    def memo(obj):
        hit = getattr(local, "hit", None)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = fn(obj)
        local.hit = (obj, value)
        return value
    return memo
