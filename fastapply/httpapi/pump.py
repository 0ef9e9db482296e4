"""Blocking event generators (the Applier's) consumed from the event loop, with cancellation.

The Applier's `apply_stream` blocks (a model turn, decoding). Each request's generator runs in a
worker thread of the front-end's pool and hands its events to the loop; leaving the async iteration
early (the client went away) sets `stop`, which the generator polls as its `should_stop`. The worker
closes the generator itself: a generator cannot be closed from another thread while it runs.

A pool, not a thread per request: starting a thread makes the caller wait until it runs, and under
load (16 clients on 2 cores) that wait stalled the event loop, every request's I/O with it, for 7%
of the server's time.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Executor
from typing import TypeVar

T = TypeVar("T")

_END = object()


async def events_in_thread(make: Callable[[Callable[[], bool]], Iterator[T]], stop: threading.Event,
                           pool: Executor) -> AsyncIterator[T]:
    """Yield the events of `make(should_stop)`, run in a worker of `pool`; re-raise what it raises."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def post(item) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is gone
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        events = None
        try:
            events = make(stop.is_set)
            for ev in events:
                post((ev,))
                if stop.is_set():
                    break
            post(_END)
        except BaseException as e:  # handed to the loop, which raises it in the request
            post(e)
        finally:
            if events is not None:
                events.close()  # gives back the model turn and the decode's cache now

    pool.submit(work)
    try:
        while True:
            item = await queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item[0]
    finally:
        stop.set()


@contextlib.asynccontextmanager
async def stop_on_disconnect(receive: Callable, stop: threading.Event):
    """While inside, a client that closes its connection sets `stop` (the request body is read by then)."""

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        stop.set()

    task = asyncio.create_task(watch())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
