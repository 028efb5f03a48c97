"""``core.lazy.locked_cache``: a shared resource is built once, even when threads ask for it at the same moment."""

from __future__ import annotations

import functools
import threading
import time

import pytest

from core.lazy import MODEL_LOADING, locked_cache


def _together(n: int, fn) -> list:
    """Call ``fn(i)`` from ``n`` threads released at the same moment; returns results (or exceptions) in order."""
    start = threading.Barrier(n)
    out: list = [None] * n

    def one(i: int) -> None:
        start.wait()
        try:
            out[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - returned for the assertions
            out[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def _slow_builder(calls: list):
    def build(key: str) -> object:
        calls.append(key)
        time.sleep(0.05)  # long enough for every thread to miss the cache
        return object()

    return build


def test_first_concurrent_calls_build_once_and_share_the_value():
    calls: list = []
    cached = locked_cache(maxsize=4)(_slow_builder(calls))
    got = _together(8, lambda i: cached("x"))
    assert calls == ["x"] and len({id(v) for v in got}) == 1


def test_functools_lru_cache_builds_several_times_under_the_same_load():
    """Why the helper exists: the same race with ``lru_cache`` builds the resource more than once."""
    calls: list = []
    cached = functools.lru_cache(maxsize=4)(_slow_builder(calls))
    _together(8, lambda i: cached("x"))
    assert len(calls) > 1


def test_different_keys_build_in_parallel():
    calls: list = []
    cached = locked_cache(maxsize=8)(_slow_builder(calls))
    t0 = time.monotonic()
    got = _together(4, lambda i: cached(f"k{i}"))
    assert sorted(calls) == ["k0", "k1", "k2", "k3"] and len({id(v) for v in got}) == 4
    assert time.monotonic() - t0 < 0.05 * 4  # not one after another


def test_an_error_reaches_every_waiter_and_is_not_cached():
    attempts: list = []

    @locked_cache(maxsize=2)
    def flaky(key: str) -> str:
        attempts.append(key)
        time.sleep(0.05)
        if len(attempts) == 1:
            raise OSError("first build failed")
        return "ok"

    got = _together(4, lambda i: flaky("x"))
    assert all(isinstance(v, OSError) for v in got) and len(attempts) == 1
    assert flaky("x") == "ok" and flaky("x") == "ok" and len(attempts) == 2


def test_cache_clear_and_maxsize():
    calls: list = []

    @locked_cache(maxsize=2)
    def build(key: str) -> str:
        calls.append(key)
        return key.upper()

    assert [build("a"), build("b"), build("a")] == ["A", "B", "A"] and calls == ["a", "b"]
    build("c")  # the oldest ("a") goes
    assert build.cache_len() == 2
    build("a")
    assert calls == ["a", "b", "c", "a"]
    build.cache_clear()
    assert build.cache_len() == 0 and build.__wrapped__("z") == "Z"
    with pytest.raises(ValueError, match="maxsize"):
        locked_cache(maxsize=0)(str)


def test_a_value_built_across_a_cache_clear_is_not_kept():
    entered, release = threading.Event(), threading.Event()

    @locked_cache(maxsize=2)
    def build(key: str) -> object:
        entered.set()
        release.wait(5)
        return object()

    t = threading.Thread(target=build, args=("x",))
    t.start()
    assert entered.wait(5)
    build.cache_clear()  # settings changed while the old value was being built
    release.set()
    t.join(5)
    assert build.cache_len() == 0


def test_builders_sharing_the_model_lock_nest_without_deadlock():
    """A backend builds its tokenizer under the same lock; a thread building the tokenizer alone must wait,
    not deadlock."""
    order: list = []

    @locked_cache(maxsize=2, lock=MODEL_LOADING)
    def tokenizer(name: str) -> str:
        order.append(f"tok:{name}")
        time.sleep(0.05)
        return f"tok-{name}"

    @locked_cache(maxsize=2, lock=MODEL_LOADING)
    def backend(name: str) -> str:
        order.append(f"backend:{name}")
        time.sleep(0.05)
        return f"backend({tokenizer(name)})"

    got = _together(6, lambda i: backend("m") if i % 2 else tokenizer("m"))
    assert set(got) == {"tok-m", "backend(tok-m)"}
    assert sorted(order) == ["backend:m", "tok:m"]


def test_lazy_exports_load_on_first_use(tmp_path, monkeypatch):
    import sys

    from core.lazy import lazy_exports

    (tmp_path / "lazypkg_probe").mkdir()
    (tmp_path / "lazypkg_probe" / "__init__.py").write_text(
        "from core.lazy import lazy_exports\n"
        "__all__, __getattr__, __dir__ = lazy_exports(__name__, {'VALUE': 'lazypkg_probe.heavy'})\n"
    )
    (tmp_path / "lazypkg_probe" / "heavy.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in ("lazypkg_probe", "lazypkg_probe.heavy"):
        monkeypatch.delitem(sys.modules, m, raising=False)

    import lazypkg_probe

    assert lazypkg_probe.__all__ == ["VALUE"]
    assert "lazypkg_probe.heavy" not in sys.modules  # importing the package does not import the module
    assert "VALUE" in dir(lazypkg_probe)
    assert lazypkg_probe.VALUE == 42
    assert "lazypkg_probe.heavy" in sys.modules
    with pytest.raises(AttributeError, match="'lazypkg_probe' has no attribute 'missing'"):
        lazypkg_probe.missing  # noqa: B018
    all_, getattr_, _ = lazy_exports("pkg", {"b": "x", "a": "y"})
    assert all_ == ["a", "b"]
    with pytest.raises(AttributeError):
        getattr_("c")
