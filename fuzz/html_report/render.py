"""The report as one self-contained HTML page: inline CSS, inline SVG, no script, nothing
fetched from anywhere.

An index of the findings at the top, then a section per finding: its message, the replay
command, what replaying it showed (still failing, failing differently, fixed), the rules of
the pass that fired, the lanes that differ on its input set, the CFG before and after the
failing pass side by side with the changed rows highlighted, and the reproducer with light
syntax colouring. The pictures arrive as SVG text (`fuzz.html_report.cfg_dot.svg`); this module
only lays them out.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from fuzz.html_report.cfg_dot import ADDED, REMOVED
from fuzz.html_report.records import Record, Skipped
from fuzz.html_report.replay import DIFFERENT, NOT_REPLAYED, PASSES, SAME, Replay

SHOWN_LANES = 64  # rows of the lane table; the rest are counted
SHOWN_LINES = 400  # lines of a reproducer; an unreduced one can have thousands

STATUS_TEXT = {SAME: "still fails", DIFFERENT: "fails differently", PASSES: "no longer fails",
               NOT_REPLAYED: "not replayed"}

CSS = """
body { font: 15px/1.45 "DejaVu Sans", system-ui, sans-serif; color: #1d2330; margin: 0;
  background: #f4f5f8; }
main { max-width: 1500px; margin: 0 auto; padding: 12px 24px 40px; }
h1 { font-size: 26px; margin: 10px 0 2px; }
h2 { font-size: 20px; margin: 0 0 6px; }
h3 { font-size: 15px; margin: 18px 0 6px; color: #3a4660; text-transform: uppercase;
  letter-spacing: .04em; }
h3 code { text-transform: none; letter-spacing: 0; font-size: 14px; }
code, pre, .mono { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }
.meta { color: #5a6478; margin: 0 0 12px; }
table { border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid #e1e4ea;
  vertical-align: top; }
th { background: #e9ecf2; font-weight: 600; }
table.index { width: 100%; margin-bottom: 8px; }
table.index td.msg { font-family: "DejaVu Sans Mono", monospace; font-size: 12.5px; }
a { color: #1f56b8; text-decoration: none; }
section.finding { background: #fff; border: 1px solid #d5d9e2; border-radius: 8px;
  padding: 16px 20px; margin: 22px 0; box-shadow: 0 1px 2px rgba(0,0,0,.05); }
.num { display: inline-block; min-width: 28px; padding: 0 6px; margin-right: 6px;
  background: #1d2330; color: #fff; border-radius: 4px; text-align: center; }
.oracle { font-weight: normal; color: #7a2d00; background: #fde7d6; padding: 1px 8px;
  border-radius: 4px; font-size: 15px; }
.message { font-family: "DejaVu Sans Mono", monospace; font-size: 14px; background: #fff4f2;
  border-left: 4px solid #c0392b; padding: 6px 10px; margin: 8px 0; white-space: pre-wrap;
  overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px;
  margin: 10px 0; }
dl.facts dt { color: #5a6478; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.command { background: #1d2330; color: #e8ecf5; padding: 6px 10px; border-radius: 4px;
  display: block; white-space: pre-wrap; overflow-wrap: anywhere; }
.status { display: inline-block; padding: 0 8px; border-radius: 4px; font-weight: 600; }
.status.same { background: #f9d2cf; color: #8b1a10; }
.status.different { background: #fde3b5; color: #7a4a00; }
.status.passes { background: #d3f0d8; color: #17602a; }
.status.not-replayed { background: #e3e5ea; color: #3f4657; }
.note { color: #5a6478; }
.problem { color: #8b1a10; }
table.lanes td { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }
table.lanes td.got { background: #fff0c2; }
.cfgs { display: flex; gap: 18px; align-items: flex-start; flex-wrap: wrap; }
.cfgs figure { flex: 1 1 320px; max-width: 100%; margin: 0; border: 1px solid #e1e4ea;
  border-radius: 6px; padding: 6px; background: #fff; overflow: auto; }
.cfgs figcaption { font-weight: 600; margin-bottom: 4px; }
.cfgs svg { max-width: 100%; height: auto; display: block; margin: 0 auto; }
.swatch { display: inline-block; width: 12px; height: 12px; border: 1px solid #999;
  vertical-align: -1px; margin: 0 4px 0 10px; }
pre.agx { background: #fbfbfd; border: 1px solid #e1e4ea; border-radius: 6px;
  padding: 8px 12px; overflow: auto; max-height: 480px; margin: 0; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.agx .c { color: #7b8496; font-style: italic; }
.agx .l { color: #1f56b8; font-weight: 600; }
.agx .v { color: #8a3ab9; }
.agx .i { color: #b35c00; }
.agx .m { color: #0b6e4f; font-weight: 600; }
.agx .a { color: #5a6478; }
.agx .k { color: #1d2330; font-weight: 600; }
.legend { color: #5a6478; font-size: 13px; }
"""


@dataclass
class Entry:
    """One finding as the page shows it: its record, its replay and the SVG of each picture
    (or why there is none)."""

    record: Record
    replay: Replay
    svgs: dict[str, str] = field(default_factory=dict)  # "before"/"after" -> <svg>
    svg_notes: dict[str, str] = field(default_factory=dict)


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


_TOKENS = re.compile(
    r"(?P<c>;.*)"
    r"|(?P<k>\bfunc(?:\.\w+)?\b|@[\w.]+)"
    r"|(?P<l>^[\w.]+:)"
    r"|(?P<v>%[\w.]+(?::\d+)?)"
    r"|(?P<i>#-?[\w.]+)"
    r"|(?P<a>\b[a-z_][\w]*=)"
    r"|(?P<m>(?<== )[a-z_][\w.]*|(?<=^  )[a-z_][\w.]*)",
    re.MULTILINE,
)


def highlight_agx(text: str) -> str:
    """The IR text as HTML, comments, labels, values, immediates and mnemonics in spans."""
    out, at = [], 0
    for match in _TOKENS.finditer(text):
        out.append(esc(text[at:match.start()]))
        out.append(f'<span class="{match.lastgroup}">{esc(match.group())}</span>')
        at = match.end()
    out.append(esc(text[at:]))
    return "".join(out)


def render_page(title: str, subtitle: str, entries: list[Entry], skipped: list[Skipped],
                warnings: list[str] | None = None) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">{esc(subtitle)}</p>',
    ]
    for warning in warnings or []:
        parts.append(f'<p class="problem">{esc(warning)}</p>')
    if entries:
        parts.append(_index(entries))
    else:
        parts.append('<p class="note">No findings: every oracle agreed with every pass.</p>')
    if skipped:
        items = "".join(f"<li><code>{esc(s.path)}</code>: {esc(s.reason)}</li>" for s in skipped)
        parts.append(f'<details><summary class="note">{len(skipped)} JSON file(s) that are '
                     f"not finding records were skipped</summary><ul>{items}</ul></details>")
    for number, entry in enumerate(entries, 1):
        parts.append(_section(number, entry))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _index(entries: list[Entry]) -> str:
    rows = []
    for number, entry in enumerate(entries, 1):
        record, status = entry.record, entry.replay.status
        rows.append(
            f'<tr><td><a href="#finding-{number}">{number}</a></td>'
            f"<td><code>{esc(record.pass_name)}</code></td><td>{esc(record.oracle)}</td>"
            f'<td class="msg">{esc(_shorten(record.message, 140))}</td>'
            f'<td><span class="status {status}">{STATUS_TEXT[status]}</span></td></tr>'
        )
    return ('<table class="index"><tr><th>#</th><th>pass</th><th>oracle</th><th>message</th>'
            f"<th>replay</th></tr>{''.join(rows)}</table>")


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _section(number: int, entry: Entry) -> str:
    record, result = entry.record, entry.replay
    parts = [
        f'<section class="finding" id="finding-{number}">',
        f'<h2><span class="num">{number}</span><code>{esc(record.pass_name)}</code> '
        f'<span class="oracle">{esc(record.oracle)}</span></h2>',
        f'<div class="message">{esc(record.message)}</div>',
        '<dl class="facts">',
        f'<dt>replay</dt><dd><code class="command">{esc(record.command or "(not recorded)")}'
        "</code></dd>",
        f"<dt>pipeline</dt><dd><code>{esc(' → '.join(record.pipeline) or '(none)')}</code></dd>",
        f'<dt>replayed</dt><dd><span class="status {result.status}">'
        f'{STATUS_TEXT[result.status]}</span> <span class="note">{esc(result.note)}</span></dd>',
        f"<dt>rule fired</dt><dd>{_rules(result)}</dd>",
    ]
    if result.input_summary:
        parts.append(f'<dt>input set</dt><dd class="mono">{esc(result.input_summary)}</dd>')
    parts.append(f"<dt>record</dt><dd><code>{esc(record.path)}</code></dd>")
    for problem in record.problems:
        parts.append(f'<dt>problem</dt><dd class="problem">{esc(problem)}</dd>')
    parts.append("</dl>")
    if result.status != NOT_REPLAYED:
        parts.append(_lanes(result))
        parts.append(_pictures(entry))
    parts.append("<h3>Reproducer</h3>")
    if record.reproducer_text is not None:
        lines = record.reproducer_text.splitlines(keepends=True)
        parts.append(f'<pre class="agx">{highlight_agx("".join(lines[:SHOWN_LINES]))}</pre>')
        if len(lines) > SHOWN_LINES:  # an unreduced finding: the file has it all
            parts.append(f'<p class="note">and {len(lines) - SHOWN_LINES} more lines in '
                         f"<code>{esc(record.reproducer)}</code></p>")
    else:
        parts.append('<p class="problem">The reproducer cannot be read: '
                     f"{esc('; '.join(record.problems))}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _rules(result: Replay) -> str:
    if not result.rules:
        return f'<span class="note">{esc(result.rule_note or "-")}</span>'
    shown = []
    for rule, count, why in result.rules:
        times = f" ×{count}" if count != 1 else ""
        reason = f' <span class="note">({esc(why)})</span>' if why else ""
        shown.append(f"<code>{esc(rule)}</code>{times}{reason}")
    return ", ".join(shown)


def _lanes(result: Replay) -> str:
    if not result.lanes and not result.lanes_note:  # no pass ran: nothing was compared
        return ""
    parts = ["<h3>Lanes that differ</h3>"]
    if result.lanes:
        rows = "".join(
            f"<tr><td>{'-' if lane.thread is None else lane.thread}</td><td>{esc(lane.where)}"
            f'</td><td>{esc(lane.expected)}</td><td class="got">{esc(lane.got)}</td></tr>'
            for lane in result.lanes[:SHOWN_LANES]
        )
        parts.append('<table class="lanes"><tr><th>thread</th><th>where</th><th>expected</th>'
                     f"<th>got</th></tr>{rows}</table>")
        more = result.lanes_total - min(len(result.lanes), SHOWN_LANES)
        if more > 0:
            parts.append(f'<p class="note">and {more} more</p>')
    if result.lanes_note:
        parts.append(f'<p class="note">{esc(result.lanes_note)}</p>')
    return "\n".join(parts)


def _pictures(entry: Entry) -> str:
    result = entry.replay
    if result.before is None:
        return ""
    step = result.step
    heading = f"CFG before and after <code>{esc(step)}</code>" if step else "CFG"
    legend = ""
    if result.after is not None:
        legend = (f'<p class="legend">Highlighted rows: <span class="swatch" style="background:'
                  f'{REMOVED}"></span>changed or removed by the pass <span class="swatch" '
                  f'style="background:{ADDED}"></span>changed or added by the pass</p>')
    figures = [_figure(entry, "before", result.before)]
    if result.after is not None:
        figures.append(_figure(entry, "after", result.after))
    elif result.after_error:
        figures.append('<figure><figcaption>after</figcaption><p class="problem">'
                       f"{esc(result.after_error)}</p></figure>")
    return f"<h3>{heading}</h3>{legend}<div class=\"cfgs\">{''.join(figures)}</div>"


def _figure(entry: Entry, side: str, picture) -> str:
    caption = f"<figcaption>{esc(picture.label)}</figcaption>"
    if side in entry.svgs:
        # At its natural width where the page has room: a wide graph gets a row of its own
        # rather than being shrunk to half the page and unreadable.
        width = _natural_width(entry.svgs[side])
        basis = f' style="flex-basis: {width + 16}px"' if width else ""
        return f"<figure{basis}>{caption}{entry.svgs[side]}</figure>"
    note = picture.note or entry.svg_notes.get(side) or "no picture"
    return f'<figure>{caption}<p class="note">{esc(note)}</p></figure>'


def _natural_width(svg_text: str) -> int | None:
    """The width dot gave an SVG, in CSS pixels (dot writes points)."""
    match = re.match(r'<svg width="([\d.]+)pt"', svg_text)
    return round(float(match.group(1)) * 4 / 3) if match else None
