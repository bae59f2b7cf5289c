"""The Mesa tests' setup: they run only where a Mesa tree is found (AGXFUZZ_MESA_SRC, else
../shared/mesa-23.3.6 beside the repository) and mako is installed; elsewhere they are
deselected with one line saying how to point them at a tree. The bridge is built once per
session, into the user's cache (keyed by a hash of every input, so a changed input is a new
build, never a stale one), and every test uses that binary."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _unavailable() -> str | None:
    from fuzz.mesa.build import MesaBuildError, check_tree, default_mesa_src

    src = default_mesa_src()
    if src is None:
        return "no Mesa tree found"
    try:
        check_tree(src)
    except MesaBuildError as error:
        return str(error).removeprefix("agxfuzz: ")
    try:
        import mako  # noqa: F401
    except ImportError:
        return "mako is not installed (pip install 'agxfuzz[mesa]')"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _unavailable()
    if reason is None:
        return
    mesa = [item for item in items if HERE in Path(str(item.path)).resolve().parents]
    if not mesa:
        return
    items[:] = [item for item in items if item not in mesa]
    config.hook.pytest_deselected(items=mesa)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"mesa: {reason}: {len(mesa)} Mesa tests deselected; set "
                            "AGXFUZZ_MESA_SRC=DIR (a Mesa tree) to run them")


@pytest.fixture(scope="session")
def bridge():
    """The bridge, built (or found in the user's cache) once per session."""
    from fuzz.mesa.build import build_bridge

    return build_bridge()


@pytest.fixture(scope="session")
def session_cache() -> Path:
    """The cache directory the session's bridge lives under (the user's, read before the
    per-test cache home takes over)."""
    from fuzz.mesa.build import cache_root

    return cache_root()


@pytest.fixture(autouse=True)
def _use_session_bridge(bridge, monkeypatch):
    """Mesa passes in any test use the session's binary instead of building into the
    per-test cache home."""
    monkeypatch.setenv("AGXFUZZ_MESA_BRIDGE", str(bridge.path))
    monkeypatch.setenv("AGXFUZZ_MESA_SRC", str(bridge.mesa_src))


@pytest.fixture
def client(bridge):
    from fuzz.mesa.client import BridgeClient

    with BridgeClient(bridge.path, timeout=20.0) as c:
        yield c


def translatable_exec(seed: int):
    """A generated translatable program at the exec level, or None when it is not
    structurable (lower-cf declines it)."""
    from agxir.machine.lower_cf import structurable
    from fuzz.generate import ChoiceSource
    from fuzz.mesa.translatable import translatable_program
    from fuzz.passes_under_test import registered

    fn = translatable_program(ChoiceSource.from_seed(seed))
    if structurable(fn) is not None:
        return None
    registered("lower-cf").run(fn)
    return fn


