"""The seams other work plugs into: one error vocabulary, the model-backend registry, the engine's
`concurrent` flag, the drafter's own draft length, and `RemoteApplier` with the `Applier` surface."""

from __future__ import annotations

import doctest
import threading
import time
from dataclasses import replace

import pytest

from fastapply.api import Applier, ApplyError, ApplyRequest, ErrorCode, Stats, TextDelta
from fastapply.types import ApplyError as LeafApplyError


# -- one error vocabulary -----------------------------------------------------------------------------

def test_every_front_end_map_covers_every_error_code():
    from fastapply.cli_common import EXIT_CODES
    from fastapply.codemod.runner import ERROR_REASONS, REASONS
    from fastapply.grpc_convert import CODE_OF_STATUS, STATUS
    from fastapply.httpapi.errors import HTTP_STATUS
    from lsp.server import ERROR_CODES

    codes = set(ErrorCode)
    maps = {"grpc STATUS": STATUS, "lsp ERROR_CODES": ERROR_CODES, "codemod ERROR_REASONS": ERROR_REASONS,
            "cli EXIT_CODES": EXIT_CODES, "http HTTP_STATUS": HTTP_STATUS}
    for name, m in maps.items():
        assert set(m) == codes, f"{name} misses {codes - set(m)}"
    # the client reads every status the server sends back into a code
    assert all(CODE_OF_STATUS[STATUS[c]] in codes for c in codes)
    assert all(c.value in REASONS for c in codes)
    assert all(c.reason and "\n" not in c.reason for c in codes)


def test_error_codes_are_the_stable_strings():
    e = ApplyError("refused", "no", ["a reason"])
    assert e.code == "refused" and e.code is ErrorCode.REFUSED and e.reasons == ["a reason"]
    assert ApplyError is LeafApplyError  # api re-exports the leaf types
    assert {c.value for c in ErrorCode} == {
        "invalid_argument", "usage", "too_long", "refused", "queue_full", "unauthenticated", "unavailable",
        "cancelled", "deadline_exceeded", "internal"}
    with pytest.raises(ValueError):
        ApplyError("no_such_code", "x")


# -- model backends -------------------------------------------------------------------------------------

def test_unknown_model_backend_is_a_clear_error():
    applier = Applier(backend="nosuch")
    with pytest.raises(ApplyError) as ei:
        applier.apply(ApplyRequest("x = 1\n", "x = 2\n", engine="plain"))
    assert ei.value.code == "invalid_argument" and "nosuch" in ei.value.message and "hf" in ei.value.message
    # the structural engine never loads a model, whatever the backend
    assert applier.apply(ApplyRequest("x = 1\n", "x = 2\n", engine="structural")).merged == "x = 2\n"


def test_registered_backend_is_loaded_by_dotted_path(monkeypatch):
    from fastapply import backends

    monkeypatch.setitem(backends.MODEL_BACKENDS, "fake", "tests.test_seams:FakeEngine")
    applier = Applier(model_name="m", backend="fake", backend_options={"greeting": "hi"})
    result = applier.apply(ApplyRequest("x = 1\n", "x = 2\n", engine="plain"))
    assert result.merged == "x = 2\n" and applier.model.options == {"greeting": "hi"}
    assert backends.engine_class("hf").__name__ == "ModelEngine" and backends.engine_class("hf").concurrent is False


class FakeEngine:
    """A model engine that answers with the snippet; `concurrent` as the test sets it."""

    concurrent = False

    def __init__(self, options=None, delay: float = 0.0):
        self.options, self.delay = options or {}, delay
        self.running = 0
        self.most_at_once = 0

    @classmethod
    def load(cls, name, device=None, dtype=None, **options):
        return cls(options)

    def generate(self, req, draft_texts, should_stop, stats: Stats):
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        time.sleep(self.delay)
        self.running -= 1
        yield TextDelta(req.update)
        yield req.update, []


@pytest.mark.parametrize("concurrent", [False, True])
def test_model_lock_only_for_engines_that_are_not_concurrent(concurrent):
    engine = FakeEngine(delay=0.3)
    engine.concurrent = concurrent
    applier = Applier(model_engine=engine)
    req = ApplyRequest("x = 1\n", "x = 2\n", engine="plain")
    threads = [threading.Thread(target=applier.apply, args=(req,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert engine.most_at_once == (3 if concurrent else 1)


# -- drafters own their draft length ---------------------------------------------------------------------

def test_source_drafter_docstring_example():
    from fastapply import draft

    assert doctest.testmod(draft, raise_on_error=True).attempted >= 7


def test_the_drafter_decides_the_draft_length():
    from fastapply.backends.replay import ReplayBackend
    from fastapply.decode import DecodeConfig, decode

    class FixedDrafter:
        """Always proposes 3 tokens of the target: the loop must not ask for more or fewer."""

        def __init__(self, target):
            self.target, self.pos, self.seen = target, 0, []

        def propose(self, max_k):
            return self.target[self.pos:self.pos + min(3, max_k)]

        def update(self, new_tokens):
            self.pos += len(new_tokens)

        def observe(self, drafted, accepted):
            self.seen.append((drafted, accepted))

    target = list(range(5, 45))
    d = FixedDrafter(target)
    stats = Stats()
    out = [t for c in decode(ReplayBackend(target, 0), [1], d, DecodeConfig(max_new_tokens=100), frozenset({0}),
                             stats=stats) for t in c]
    assert out == target + [0]
    assert d.seen and all(drafted <= 3 and accepted == drafted for drafted, accepted in d.seen)
    assert stats.drafted_tokens == sum(x for x, _ in d.seen)


# -- RemoteApplier: the Applier surface over gRPC ----------------------------------------------------------

SIMPLE = ApplyRequest("def f():\n    return 1\n", "def f():\n    return 2\n", language="python")


class SlowModel(Applier):
    """Model requests take `delay` seconds (holding the model lock); structural ones are real."""

    def __init__(self, delay: float):
        super().__init__()
        self.delay, self.stopped = delay, 0

    @property
    def model_loaded(self):
        return True

    @property
    def model(self):
        return None

    def apply_stream(self, req, should_stop=None):
        result = [ev for ev in Applier.apply_stream(self, replace(req, engine="structural"))][-1]
        with self.model_lock:
            end = time.monotonic() + self.delay
            while time.monotonic() < end:
                if should_stop is not None and should_stop():
                    self.stopped += 1
                    raise ApplyError("cancelled", "the apply was cancelled")
                time.sleep(0.01)
        yield TextDelta(result.merged)
        yield replace(result, engine=req.engine)


@pytest.fixture()
def slow_server():
    from fastapply.server import FastApplyServer

    srv = FastApplyServer(SlowModel(0.6), host="127.0.0.1", port=0, preload=False, max_queue=0).start()
    yield srv
    srv.stop(grace=0).wait(10)


def test_remote_applier_has_the_applier_surface(slow_server):
    from fastapply.remote import RemoteApplier

    local = Applier()
    with RemoteApplier(slow_server.address) as remote:
        assert remote.model_loaded
        req = replace(SIMPLE, engine="structural")
        assert remote.apply(req).merged == local.apply(req).merged == "def f():\n    return 2\n"
        events = list(remote.apply_stream(req))
        assert "".join(ev.text for ev in events[:-1]) == events[-1].merged == local.apply(req).merged
        with pytest.raises(ApplyError) as ei:
            remote.apply(replace(req, original="def f(:\n    ((((\n  x = [\n"))
        assert ei.value.code == "refused" and ei.value.reasons


def test_remote_applier_backs_off_while_the_queue_is_full(slow_server):
    from fastapply.remote import RemoteApplier

    model_req = replace(SIMPLE, engine="plain")
    with RemoteApplier(slow_server.address) as first, RemoteApplier(slow_server.address) as second, \
            RemoteApplier(slow_server.address, queue_full_retries=0) as impatient:
        busy = threading.Thread(target=first.apply, args=(model_req,))
        busy.start()
        time.sleep(0.2)  # the first request holds the model; max_queue=0: nobody may wait
        with pytest.raises(ApplyError) as ei:
            impatient.apply(model_req)
        assert ei.value.code == "queue_full"
        assert second.apply(model_req).merged == "def f():\n    return 2\n"  # retried until the model was free
        busy.join(10)


def test_remote_applier_stop_cancels_the_call_on_the_server(slow_server):
    from fastapply.remote import RemoteApplier

    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    with RemoteApplier(slow_server.address) as remote, pytest.raises(ApplyError) as ei:
        remote.apply(replace(SIMPLE, engine="plain"), stop.is_set)
    assert ei.value.code == "cancelled" and time.monotonic() - t0 < 0.5
    deadline = time.monotonic() + 3
    while not slow_server.applier.stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert slow_server.applier.stopped == 1  # the server's work stopped too


# -- one language table ------------------------------------------------------------------------------------

def test_language_table_is_consistent_with_its_grammars():
    from fastapply.languages import KNOWN_LANGUAGES, LANGUAGES, detect_language, get_language

    names = [info.name for info in LANGUAGES]
    aliases = [a for info in LANGUAGES for a in info.aliases]
    extensions = [e for info in LANGUAGES for e in info.extensions]
    for values in (names, aliases, extensions):
        assert len(values) == len(set(values))
    assert KNOWN_LANGUAGES == set(names) | {"text", "plaintext"}
    for info in LANGUAGES:
        assert all(detect_language(None, "f" + ext) == info.name for ext in info.extensions)
        assert all(detect_language(alias) == info.name for alias in info.aliases)
        if info.grammar is None:
            assert get_language(info.name) is None and not info.def_kinds
            continue
        grammar = get_language(info.name)
        node_types = {grammar.node_kind_for_id(i) for i in range(grammar.node_kind_count)}
        named = [*info.def_kinds, *info.containers, *info.wrappers, *info.attached, *info.func_values,
                 *info.body_defs, *info.body_types]
        assert not [t for t in named if t not in node_types], info.name  # a typo would silently match nothing
