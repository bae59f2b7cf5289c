"""fuzz.html_report.render: the page's own parts (the IR colouring, long reproducers cut, the
index) on records and replays made by hand."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fuzz.html_report.records import Record
from fuzz.html_report.render import SHOWN_LINES, Entry, highlight_agx, render_page
from fuzz.html_report.replay import NOT_REPLAYED, Replay


def test_ir_colouring_marks_comments_labels_values_immediates_and_mnemonics():
    text = "; a finding\nfunc @f(u0:32) {\nb0:\n  %x:32 = iadd u0, #1 shift=0\n  stop\n}\n"
    coloured = highlight_agx(text)
    assert re.sub(r"<[^>]+>", "", coloured) == html.escape(text, quote=True)
    spans = re.findall(r'<span class="(\w)">([^<]*)</span>', coloured)
    assert ("c", "; a finding") in spans and ("l", "b0:") in spans
    assert ("v", "%x:32") in spans and ("i", "#1") in spans and ("a", "shift=") in spans
    assert ("m", "iadd") in spans and ("m", "stop") in spans and ("k", "@f") in spans


def test_markup_in_a_record_is_escaped_not_rendered():
    record = Record(Path("r.json"), {"pass": "<b>p</b>", "oracle": "crash",
                                     "message": "<script>alert(1)</script>",
                                     "command": "agxfuzz check 'a&b'"},
                    reproducer_text="; <img src=x>\n")
    page = render_page("t", "s", [Entry(record, Replay(NOT_REPLAYED, "gone <x>"))], [])
    assert "<script>" not in page and "<img" not in page and "<b>p</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "gone &lt;x&gt;" in page


def test_a_long_reproducer_is_cut_with_a_note(tmp_path):
    lines = [f"  %v{i}:32 = mov_imm value=0x1\n" for i in range(SHOWN_LINES + 25)]
    record = Record(tmp_path / "r.json", {"pass": "p", "oracle": "crash", "message": "m"},
                    reproducer=tmp_path / "r.agx", reproducer_text="".join(lines))
    page = render_page("t", "s", [Entry(record, Replay(NOT_REPLAYED, "n"))], [])
    assert f"%v{SHOWN_LINES - 1}:32" in page and f"%v{SHOWN_LINES}:32" not in page
    assert "and 25 more lines in" in page


def test_the_index_links_each_finding_to_its_section():
    records = [Record(Path(f"{n}.json"), {"pass": f"p{n}", "oracle": "verifier", "message": "m"})
               for n in (1, 2, 3)]
    page = render_page("t", "s", [Entry(r, Replay(NOT_REPLAYED, "n")) for r in records], [])
    for number in (1, 2, 3):
        assert f'href="#finding-{number}"' in page and f'id="finding-{number}"' in page
