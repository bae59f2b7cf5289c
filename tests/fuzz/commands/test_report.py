"""`agxfuzz report` (and `run --html`, `zoo --html`): the page for a directory of real
findings holds each reproducer, replay command, CFG picture and differing lane; bad and
empty directories; a missing graphviz; and the page rendered by a real headless Chromium,
its screenshot checked for the highlight colour."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fuzz.cli import main
from fuzz.html_report.cfg_dot import ADDED, REMOVED
from tests.fuzz.html_report.findings_dir import make_findings

CHROMIUM = Path("/usr/bin/chromium")
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="graphviz's dot is not installed (.ci/run installs it)")
pytestmark = needs_dot


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    directory = tmp_path_factory.mktemp("findings")
    return directory, make_findings(directory)


@pytest.fixture(scope="module")
def page(findings, tmp_path_factory):
    directory, _ = findings
    out = tmp_path_factory.mktemp("page") / "report.html"
    assert main(["report", str(directory), "-o", str(out)]) == 0
    return out


def text_of(page_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page_html))


def test_the_page_holds_each_reproducer_command_picture_and_lane(findings, page):
    _, written = findings
    content = page.read_text()
    text = text_of(content)
    for finding, files in written:
        assert files.reproducer.read_text() in text  # the reproducer, header and all
        assert html.escape(files.command, quote=True) in content
        assert f"{finding.pass_name}" in text
    assert content.count("<svg") == 4  # before and after, for each finding
    # cmpsel-any-condition: thread 0's slot 0 should be 0x3c00 and is 0x0
    assert re.search(r"<tr><td>0</td><td>output slot 0</td><td>0x3c00</td>"
                     r'<td class="got">0x0</td></tr>', content)
    # dce-removes-stores: the buffer word the store should have written
    assert re.search(r"<tr><td>-</td><td>buffer u4 bytes 0..3</td><td>00000000</td>"
                     r'<td class="got">da000000</td></tr>', content)
    assert "icmp-inv0" in text  # the rule of the wrong pass that fired
    assert text.count("still fails the same pass, oracle and message as recorded") == 2


def test_the_page_is_self_contained(page):
    content = page.read_text()
    assert "<script" not in content and "<link" not in content and "<img" not in content
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", content)
    assert "@import" not in content and "url(" not in content


def test_the_command_says_what_it_wrote(findings, tmp_path, capsys):
    directory, _ = findings
    out = tmp_path / "deep" / "r.html"
    assert main(["report", str(directory), "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"report: {out}: 2 findings, 4 CFG pictures, ")
    assert out.exists() and [p.name for p in out.parent.iterdir()] == ["r.html"]  # no temp left


def test_a_missing_directory_is_a_one_line_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err == f"agxfuzz: {tmp_path / 'nope'}: no such directory\n"
    assert not (tmp_path / "r.html").exists()
    file = tmp_path / "file.json"
    file.write_text("{}")
    assert main(["report", str(file)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_an_empty_directory_gets_a_page_saying_so(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "empty"), "-o", str(out)]) == 0
    assert "No findings" in out.read_text() and "<svg" not in out.read_text()
    assert "0 findings" in capsys.readouterr().out


def test_a_missing_dot_is_a_one_line_error_naming_it(findings, tmp_path, monkeypatch, capsys):
    directory, _ = findings
    monkeypatch.setenv("PATH", str(tmp_path))
    out = tmp_path / "r.html"
    assert main(["report", str(directory), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "`dot` is not on PATH" in err
    assert not out.exists()
    assert main(["run", "--examples", "1", "--html", str(out), "--out", str(tmp_path)]) == 2
    assert "agxfuzz run --html: graphviz's `dot`" in capsys.readouterr().err


def test_an_unreplayable_finding_keeps_its_message_and_reproducer(findings, tmp_path):
    import json

    _, written = findings
    files = written[0][1]
    data = json.loads(files.record.read_text())
    data["flags"] = ["--pass", str(tmp_path / "deleted_pass.py") + ":wrong"]
    data["pipeline"] = ["deleted_pass:wrong"]
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / files.record.name).write_text(json.dumps(data))
    shutil.copy(files.reproducer, tmp_path / "d" / files.reproducer.name)
    out = tmp_path / "r.html"
    assert main(["report", str(tmp_path / "d"), "-o", str(out)]) == 0
    text = text_of(out.read_text())
    assert "not replayed" in text and "no such file" in text
    assert data["message"] in text and files.reproducer.read_text() in text


def test_run_html_writes_the_campaign_s_report(tmp_path, capsys):
    out = tmp_path / "run.html"
    status = main(["run", "--pass", "fuzz.zoo.variants:dce_removes_stores", "--examples", "30",
                   "--jobs", "1", "--seed", "1", "--no-reduce", "--out", str(tmp_path / "f"),
                   "--html", str(out)])
    assert status == 1
    printed = capsys.readouterr().out
    assert f"report: {out}: " in printed
    content = out.read_text()
    assert "agxfuzz run, seed 1" in content and "dce_removes_stores" in content
    assert content.count("<svg") >= 2


@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed "
                    "(.ci/run installs Debian's chromium)")
def test_the_page_renders_in_headless_chromium(page, tmp_path):
    """A real browser draws the page: the screenshot is not blank, and both highlight
    colours of the CFG pictures are on it."""
    import matplotlib.image

    shot = tmp_path / "page.png"
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
               "--window-size=1200,2000", page.resolve().as_uri()]
    subprocess.run(command, capture_output=True, timeout=120, check=True)
    assert shot.exists() and shot.stat().st_size > 10_000
    pixels = (matplotlib.image.imread(shot)[:, :, :3] * 255).round().astype(int)
    assert pixels.shape[:2] == (2000, 1200)
    colours = {tuple(p) for p in pixels.reshape(-1, 3)[::7]}
    assert len(colours) > 100  # text, pictures and tables, not a blank page
    for fill in (ADDED, REMOVED):
        rgb = [int(fill[i:i + 2], 16) for i in (1, 3, 5)]
        assert (pixels == rgb).all(axis=2).sum() > 200, f"{fill} is not on the screenshot"


def test_zoo_html_reports_each_catch(tmp_path, capsys):
    out = tmp_path / "zoo.html"
    status = main(["zoo", "--only", "dce-removes-stores,dce-removes-exports", "--seed", "1",
                   "--time-per-bug", "20", "--jobs", "1", "--out", str(tmp_path / "zoo"),
                   "--html", str(out)])
    assert status == 0
    assert f"report: {out}: 2 findings, 4 CFG pictures" in capsys.readouterr().out
    text = text_of(out.read_text())
    assert "agxfuzz zoo, seed 1" in text
    assert text.count("the same pass, oracle and message as recorded") == 2
