"""Building the bridge: a second build is a cache hit, an edited input is a new build, and a
tree that is missing, not Mesa, or does not compile is one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

from fuzz.cli import main
from fuzz.mesa.build import BINARY, build_bridge, input_hash


def _tree_copy(src: Path, where: Path) -> Path:
    """A tree whose src/asahi/compiler is a copy (editable) and the rest symlinks."""
    copy = where / "mesa"
    (copy / "src" / "asahi").mkdir(parents=True)
    for name in ("VERSION", "include"):
        (copy / name).symlink_to(src / name)
    for entry in (src / "src").iterdir():
        if entry.name != "asahi":
            (copy / "src" / entry.name).symlink_to(entry)
    shutil.copytree(src / "src" / "asahi" / "compiler", copy / "src" / "asahi" / "compiler")
    return copy


def test_a_second_build_is_a_cache_hit(bridge, session_cache, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(session_cache.parent.parent))
    again = build_bridge(bridge.mesa_src)
    assert again.cached
    assert again.path == bridge.path


def test_an_edited_input_is_a_new_build(bridge, tmp_path, monkeypatch):
    tree = _tree_copy(bridge.mesa_src, tmp_path)
    assert input_hash(tree) == input_hash(bridge.mesa_src)
    dce = tree / "src" / "asahi" / "compiler" / "agx_dce.c"
    dce.write_text(dce.read_text() + "\n/* edited */\n")
    assert input_hash(tree) != input_hash(bridge.mesa_src)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = build_bridge(tree)
    assert not built.cached
    assert built.path.name == BINARY and built.path.is_file()
    assert build_bridge(tree).cached


def test_a_tree_that_does_not_compile_is_one_line(bridge, tmp_path, monkeypatch, capsys):
    tree = _tree_copy(bridge.mesa_src, tmp_path)
    optimizer = tree / "src" / "asahi" / "compiler" / "agx_optimizer.c"
    lines = optimizer.read_text().splitlines()
    optimizer.write_text("\n".join([*lines, "this is not C;"]) + "\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["mesa", "build", "--mesa-src", str(tree)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"{optimizer}:{len(lines) + 1}:"), err[0]
    assert "error" in err[0]


def test_a_missing_or_foreign_tree_is_one_line(tmp_path, capsys):
    assert main(["mesa", "build", "--mesa-src", str(tmp_path / "nowhere")]) == 2
    (tmp_path / "src").mkdir()
    assert main(["mesa", "build", "--mesa-src", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"agxfuzz: no Mesa tree at {tmp_path / 'nowhere'} (set AGXFUZZ_MESA_SRC, or name one: "
        "mesa build --mesa-src DIR, run --mesa DIR)",
        f"agxfuzz: {tmp_path} is not a Mesa tree with the AGX backend (no "
        "src/asahi/compiler/agx_optimizer.c; 36 of 36 files missing)",
    ]
