"""One self-contained static HTML page: inline CSS and JS, figures as data URIs.

No external asset and no network: the page works offline from ``file://``. Real
systems and reference systems are two tables (``#leaderboard`` and
``#leaderboard-reference``), real first. Every column sorts on a header click, within
its table (ascending first, then descending; missing values last; ties keep rank
order). ``#sort=R3`` or ``#sort=R3:desc`` in the URL sorts both tables on load. All
text from the logs is HTML-escaped.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from html import escape

from lm_eval_memrisk.leaderboard.groups import GROUP_TEXTS, GROUP_TITLES
from lm_eval_memrisk.leaderboard.records import TIERS, EpisodeOutcome, Group, Signature
from lm_eval_memrisk.leaderboard.summary import Leaderboard, Rate, Row
from lm_eval_memrisk.leaderboard.table import (
    INCOMPLETE_TEXT,
    INCOMPLETE_TITLE,
    LEGEND,
    flags_text,
    fmt_count,
    fmt_rate,
    group_counts,
    header,
    shown_groups,
    signature_text,
    subset_text,
)

#: The id of each group's table (the real systems' keeps the page's historical ``#leaderboard``).
TABLE_IDS: dict[Group, str] = {"real": "leaderboard", "reference": "leaderboard-reference"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em;color:#1d2433}
h1{font-size:1.5em;margin:0 0 .3em}h2{margin-top:1.6em}
.meta{color:#4b5565;max-width:80em}
.wrap{overflow-x:auto}
table.lb{border-collapse:collapse;font-size:13px}
table.lb th,table.lb td{border:1px solid #d6dae1;padding:4px 6px;text-align:right;vertical-align:top;white-space:nowrap}
table.lb th{background:#eef1f6;cursor:pointer;user-select:none;white-space:nowrap;position:sticky;top:0}
table.lb th:hover{background:#dde3ee}
table.lb th[aria-sort=ascending]::after{content:" \\25B2"}
table.lb th[aria-sort=descending]::after{content:" \\25BC"}
table.lb td.name{text-align:left;white-space:normal;min-width:15em}
table.lb td small{display:block;color:#5d6778;font-size:11px}
td.sa{background:#f8f9fb;color:#4b5565}
td.flag{background:#fde2e1;font-weight:600}
tr.flagged td.name{border-left:4px solid #c62828}
.note{font-style:italic;color:#4b5565;font-size:12px}
.sig{font:11px ui-monospace,Menlo,Consolas,monospace;color:#5d6778;overflow-wrap:anywhere}
.badge{background:#c62828;color:#fff;border-radius:3px;padding:0 4px;font-size:11px}
figure{display:inline-block;margin:0 1.5em 1em 0;vertical-align:top}
figure img{max-width:100%;border:1px solid #d6dae1}
table.checks{border-collapse:collapse;margin:.4em 0 1em;font-size:12px}
table.checks td,table.checks th{border:1px solid #e1e4ea;padding:3px 6px;text-align:left;vertical-align:top}
table.checks td.ev{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;max-width:60em}
details{margin:.2em 0}summary{cursor:pointer}
"""

JS = """
(function(){
  var tables=Array.prototype.slice.call(document.querySelectorAll('table.lb'));
  function val(row,col,num){
    var s=row.cells[col].getAttribute('data-sort');
    if(!num) return s;
    return (s===null||s==='')?null:parseFloat(s);
  }
  function sortTable(table,col,dir){
    var tbody=table.tBodies[0],ths=table.tHead.rows[0].cells;
    var num=ths[col].getAttribute('data-type')==='num';
    var rows=Array.prototype.slice.call(tbody.rows);
    rows.sort(function(a,b){
      var x=val(a,col,num),y=val(b,col,num),c=0;
      if(x===null&&y!==null) return 1;
      if(y===null&&x!==null) return -1;
      if(x!==null&&y!==null) c=num?(x-y):x.localeCompare(y);
      if(dir==='desc') c=-c;
      return c!==0?c:(parseInt(a.getAttribute('data-order'),10)-parseInt(b.getAttribute('data-order'),10));
    });
    rows.forEach(function(r){tbody.appendChild(r);});
    for(var i=0;i<ths.length;i++) ths[i].setAttribute('aria-sort',i===col?(dir==='desc'?'descending':'ascending'):'none');
  }
  function sortBy(col,dir){tables.forEach(function(t){sortTable(t,col,dir);});}
  function clicked(th){
    sortTable(th.closest('table'),th.cellIndex,th.getAttribute('aria-sort')==='ascending'?'desc':'asc');
  }
  tables.forEach(function(table){
    var ths=table.tHead.rows[0].cells;
    for(var i=0;i<ths.length;i++){
      ths[i].addEventListener('click',function(){clicked(this);});
      ths[i].addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();clicked(this);}});
    }
  });
  function fromHash(){
    var m=/^#sort=([^:]+)(?::(asc|desc))?$/.exec(decodeURIComponent(location.hash));
    if(!m) return;
    tables.forEach(function(table){
      var ths=table.tHead.rows[0].cells;
      for(var i=0;i<ths.length;i++) if(ths[i].getAttribute('data-key')===m[1]) sortTable(table,i,m[2]||'asc');
    });
  }
  fromHash();
  window.addEventListener('hashchange',fromHash);
  window.memriskSort=sortBy;
})();
"""

#: (file name, caption) of the figures embedded in the page, in order.
FIGURES: tuple[tuple[str, str], ...] = (
    ("heatmap.png", "Pass rate per (system, risk), default scoring."),
    ("tiers.png", "Pass rate by difficulty tier (main track), with Wilson 95% intervals."),
    ("ranking.png", "Ranking preservation per selector method (Spearman rho vs the full set)."),
)


def slug(index: int, name: str) -> str:
    """A unique, URL-safe anchor for the system at ``index``."""
    return f"s{index}-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def render(board: Leaderboard, figures: Mapping[str, bytes] | None = None) -> str:
    """The whole page; ``figures`` maps a name in FIGURES to its PNG bytes."""
    slugs = {row.system.name: slug(i, row.system.name) for i, row in enumerate(board.rows)}
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>MemRiskBench leaderboard</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>MemRiskBench leaderboard</h1>",
        (
            f'<p class="meta">Dataset <code>{escape(board.dataset_hash)}</code> · '
            f"{escape(group_counts(board))}. {escape(LEGEND)} "
            "Cells: pass rate, Wilson 95% interval, passes/episodes. Click a column header to sort.</p>"
        ),
        f'<p class="meta subset">{escape(subset_text(board))}</p>' if subset_text(board) else "",
        *(_group_section(board, group, rows, slugs) for group, rows in shown_groups(board)),
        _incomplete(board),
        _figures(figures or {}),
        "<h2>Failures</h2>",
        *(_failures(row, slugs[row.system.name]) for row in board.rows),
        f"<script>{JS}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _group_section(board: Leaderboard, group: Group, rows: tuple[Row, ...], slugs: Mapping[str, str]) -> str:
    """One group's heading, what it holds, and its sortable table."""
    return (f'<h2 id="group-{group}">{escape(GROUP_TITLES[group])}</h2>\n'
            f'<p class="meta">{escape(GROUP_TEXTS[group])}</p>\n'
            f'<div class="wrap">{_table(board, group, rows, slugs)}</div>')


def _table(board: Leaderboard, group: Group, rows: tuple[Row, ...], slugs: Mapping[str, str]) -> str:
    cols = header(board)
    ths = "".join(
        f'<th tabindex="0" scope="col" data-key="{escape(c)}" data-type="{"text" if c == "System" else "num"}"'
        f' aria-sort="none">{escape(c)}</th>'
        for c in cols
    )
    body = "\n".join(_row(board, row, i, slugs[row.system.name]) for i, row in enumerate(rows))
    return (f'<table class="lb" id="{TABLE_IDS[group]}" data-group="{group}"><thead><tr>{ths}</tr></thead>'
            f"<tbody>\n{body}\n</tbody></table>")


def _row(board: Leaderboard, row: Row, order: int, anchor: str) -> str:
    system = row.system
    name = (
        f'<td class="name" data-sort="{escape(system.name)}"><strong>{escape(system.name)}</strong>'
        + (' <span class="badge">high risk</span>' if row.flagged else "")
        + (f'<div class="note">({escape(system.note)})</div>' if system.note else "")
        + _signature_div(system.signature)
        + "</td>"
    )
    cells = [f'<td data-sort="{row.rank}">{row.rank}</td>', name]
    for r in board.risks:
        flag = r in row.flag_risks
        cells += [_rate_td(row.risks[r].default, flag), _rate_td(row.risks[r].safety, False, "sa")]
    cells += [
        _rate_td(row.overall.default, row.flag_overall),
        _rate_td(row.overall.safety, False, "sa"),
    ]
    score = "" if row.mean_score is None else f"{row.mean_score:.4f}"
    cells.append(f'<td data-sort="{score}">{score[:5] if score else "—"}</td>')
    cells += [_rate_td(row.tiers[t], False) for t in TIERS]
    for r in board.main_risks:
        av = row.acted_violations.get(r)
        key = "" if av is None or av.value is None else f"{av.value:.4f}"
        cells.append(f'<td data-sort="{key}">{escape(fmt_count(av))}</td>')
    fc = row.false_claims.get("overall")
    fc_key = "" if fc is None or fc.value is None else f"{fc.value:.4f}"
    cells.append(f'<td data-sort="{fc_key}">{escape(fmt_count(fc))}</td>')
    flags = flags_text(row)
    n_flags = int(row.flag_overall) + len(row.flag_risks)
    cells.append(f'<td data-sort="{n_flags}">{escape(flags) or "—"}</td>')
    n = len(row.failures)
    link = f'<a href="#fail-{anchor}">{n} failed</a>' if n else "0"
    cells.append(f'<td data-sort="{n}">{link}</td>')
    cls = ' class="flagged"' if row.flagged else ""
    return (
        f'<tr id="{anchor}" data-order="{order}" data-system="{escape(system.name)}"{cls}>'
        + "".join(cells)
        + "</tr>"
    )


def _incomplete(board: Leaderboard) -> str:
    """The ``Incomplete (not ranked)`` section (empty when every system is complete)."""
    if not board.incomplete:
        return ""
    rows = "".join(
        f'<tr data-system="{escape(r.system.name)}"><td class="name">{escape(r.system.name)}</td>'
        f"<td>{escape(r.system.status)}</td><td>{escape(fmt_rate(r.overall.default))}</td>"
        f"<td>{escape(r.system.group)}</td></tr>"
        for r in board.incomplete
    )
    return (f'<h2 id="incomplete">{escape(INCOMPLETE_TITLE)}</h2><p class="meta">{escape(INCOMPLETE_TEXT)}</p>'
            '<table class="incomplete"><thead><tr><th scope="col">System</th><th scope="col">Status</th>'
            f'<th scope="col">Overall (episodes read)</th><th scope="col">Group</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _short(h: str, keep: int = 12) -> str:
    """``sha256:0123456789ab…`` — enough of a hash to tell runs apart at a glance."""
    algo, sep, digest = h.rpartition(":")
    return f"{algo}{sep}{digest[:keep]}…" if len(digest) > keep else h


def _signature_div(sig: Signature) -> str:
    """Short, readable signature; the full one is in the title and data-signature."""
    model = escape(sig.model) + (f" ({escape(_short(sig.model_hash))})" if sig.model_hash else "")
    full = escape(signature_text(sig))
    return (
        f'<div class="sig" title="{full}" data-signature="{full}">model {model}<br>'
        f"data {escape(_short(sig.dataset_hash))} · scorer {escape(sig.scorer_version)}<br>"
        f"variant {escape(sig.variant)} · policy {escape(sig.memory_policy)} · mode {escape(sig.mode)}</div>"
    )


def _rate_td(r: Rate, flagged: bool, kind: str = "") -> str:
    names = " ".join(n for n in (kind, "flag" if flagged else "") if n)
    cls = f' class="{names}"' if names else ""
    if r.n == 0 or r.lo is None or r.hi is None:
        return f'<td data-sort=""{cls}>—</td>'
    value = r.k / r.n
    return (
        f'<td data-sort="{value:.6f}"{cls}>{value:.2f}'
        f"<small>{r.lo:.2f}–{r.hi:.2f}</small><small>{r.k}/{r.n}</small></td>"
    )


def _figures(figures: Mapping[str, bytes]) -> str:
    items = []
    for name, caption in FIGURES:
        if name in figures:
            data = base64.b64encode(figures[name]).decode("ascii")
            items.append(
                f'<figure><img alt="{escape(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>"
            )
    return "<h2>Figures</h2>\n" + "\n".join(items) if items else ""


def _failures(row: Row, anchor: str) -> str:
    name = escape(row.system.name)
    head = f'<section id="fail-{anchor}"><h3>{name}: {len(row.failures)} failed episodes</h3>'
    if not row.failures:
        return head + "<p>None.</p></section>"
    items = "\n".join(_episode(e, anchor) for e in row.failures)
    return f'{head}<p><a href="#{anchor}">back to the table</a></p>\n{items}</section>'


def _episode(e: EpisodeOutcome, anchor: str) -> str:
    checks = "".join(
        f"<tr><td>{escape(c.decision_id)}</td><td>{escape(c.check_id)}</td><td>{escape(c.kind)}</td>"
        f'<td>{escape(c.channel)}</td><td class="ev">{escape(c.evidence)}</td></tr>'
        for c in e.failed_checks
    )
    table = (
        '<table class="checks"><tr><th>decision</th><th>check</th><th>kind</th><th>channel</th>'
        f"<th>evidence</th></tr>{checks}</table>"
        if checks
        else "<p>No failed check was logged.</p>"
    )
    viol = f"<p>Violations: {escape('; '.join(e.violations))}</p>" if e.violations else ""
    return (
        f'<details id="fail-{anchor}-{escape(e.episode_id)}"><summary>{escape(e.episode_id)} '
        f"({escape(e.risk)}, {escape(e.tier)}) · score {e.score:.2f} · "
        f"{len(e.failed_checks)} failed checks</summary>{table}{viol}</details>"
    )
