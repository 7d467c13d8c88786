"""A self-contained HTML page of a pairwise run: what each referee said, what it scored, and
where the panel disagreed with humans or with itself (``chateval report RUN --html``).

One file, no network: styles and the filter script are inline, a Content-Security-Policy
forbids every remote load, and every text from a model or a data file goes through Jinja2's
autoescaping (an environment of its own, apart from the prompt templates, which must not
escape). Each item's view is a section shown by CSS ``:target`` when its row is clicked.
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment

from chateval.errors import DataError
from chateval.formatting import ci_text
from chateval.report import RunSummary, load_run, load_verdicts
from chateval.store import write_text

if TYPE_CHECKING:
    from chateval.data.items import PairwiseItem

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

_TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<title>chateval: {{ run.name }}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#1b1b1b}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left}
th{background:#f3f3f3;cursor:pointer}tr.wrong td.panel{background:#fde2e2}
.item{display:none;border-top:2px solid #444;margin-top:1em;padding-top:.5em}.item:target{display:block}
.utt{border-left:3px solid #999;margin:.4em 0;padding:.2em .6em}.text{white-space:pre-wrap}
.meta{color:#666;font-size:12px}.answers{display:flex;gap:1em}.answers div{flex:1;white-space:pre-wrap;
background:#f8f8f8;padding:.5em}
</style></head><body>
<h1>{{ run.name }}</h1>
<p class="meta">{{ summary }}</p>
<h2>Agreement with human labels</h2>
<table id="metrics"><tr><th>verdicts</th><th>n</th><th>accuracy [95% CI]</th><th>kappa [95% CI]</th>
<th>ties</th></tr>
{% for row in metrics %}<tr><td>{{ row.name }}</td><td>{{ row.n }}</td><td>{{ row.accuracy }}</td>
<td>{{ row.kappa }}</td><td>{{ row.ties }}</td></tr>{% endfor %}
</table>
<h2>Items</h2>
<p id="filters">Show only:
<label><input type="checkbox" data-filter="wrong"> wrong</label>
<label><input type="checkbox" data-filter="inconsistent"> position-inconsistent</label>
<label><input type="checkbox" data-filter="failures"> parse failures</label>
<label><input type="checkbox" data-filter="split"> referees disagreeing</label>
<span id="shown">{{ items|length }}</span> of {{ items|length }} shown</p>
<table id="items"><thead><tr><th>item</th><th>panel</th><th>soft</th><th>human</th><th>correct</th>
<th>orders agree</th><th>referees agree</th><th>parse failures</th><th>truncated</th></tr></thead><tbody>
{% for item in items %}<tr class="{{ 'wrong' if item.wrong }}" data-wrong="{{ item.wrong|int }}"
 data-inconsistent="{{ item.inconsistent|int }}" data-failures="{{ item.failures }}"
 data-split="{{ item.split|int }}">
<td><a href="#item-{{ loop.index }}">{{ item.id }}</a></td><td class="panel">{{ item.label }}</td>
<td>{{ item.soft_label }}</td><td>{{ item.human }}</td><td>{{ item.correct }}</td>
<td>{{ 'no' if item.inconsistent else 'yes' }}</td><td>{{ 'no' if item.split else 'yes' }}</td>
<td>{{ item.failures }}</td><td>{{ item.truncated }}</td></tr>
{% endfor %}</tbody></table>
{% for item in items %}<section class="item" id="item-{{ loop.index }}">
<h2>{{ item.id }}: panel {{ item.label }}, human {{ item.human }}</h2>
<p class="meta">Panel decision: {{ item.decision }}</p>
{% if item.question is not none %}<p><b>Question.</b> {{ item.question }}</p>
<div class="answers"><div><b>Answer A</b>
{{ item.answer_a }}</div><div><b>Answer B</b>
{{ item.answer_b }}</div></div>
{% else %}<p class="meta">(the data file was not readable here: question and answers not shown)</p>{% endif %}
{% for order in item.orders %}<h3>{{ order.title }}</h3>
{% for u in order.messages %}<div class="utt"><div class="meta">round {{ u.round }} · {{ u.speaker }} ·
{{ u.kind }}{% if u.finish_reason %} · {{ u.finish_reason }}{% endif %}</div>
<div class="text">{{ u.text }}</div></div>{% endfor %}
<table><tr><th>referee</th><th>score A</th><th>score B</th><th>soft A</th><th>soft B</th><th>winner</th></tr>
{% for r in order.referees %}<tr><td>{{ r.agent }}</td><td>{{ r.score_a }}</td><td>{{ r.score_b }}</td>
<td>{{ r.soft_a }}</td><td>{{ r.soft_b }}</td><td>{{ r.winner }}</td></tr>{% endfor %}</table>
{% endfor %}<p><a href="#">back to the index</a></p></section>
{% endfor %}
<script>
const boxes=[...document.querySelectorAll('#filters input')];
const rows=[...document.querySelectorAll('#items tbody tr')];
function apply(){const on=boxes.filter(b=>b.checked).map(b=>b.dataset.filter);let n=0;
 for(const r of rows){const show=on.every(f=>r.dataset[f]!=='0');r.style.display=show?'':'none';if(show)n++;}
 document.getElementById('shown').textContent=n;}
boxes.forEach(b=>b.addEventListener('change',apply));
// report.html#filter=wrong,split opens with those filters on
const wanted=location.hash.match(/^#filter=([a-z,]+)$/);
if(wanted){for(const f of wanted[1].split(',')){
 const b=boxes.find(x=>x.dataset.filter===f);if(b)b.checked=true;}apply();}
document.querySelectorAll('#items th').forEach((th,col)=>th.addEventListener('click',()=>{
 const body=th.closest('table').tBodies[0];const asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
 [...body.rows].sort((a,b)=>{const x=a.cells[col].textContent,y=b.cells[col].textContent;
  const d=(parseFloat(x)-parseFloat(y))||x.localeCompare(y);return asc?d:-d;})
  .forEach(r=>body.appendChild(r));}));
</script>
</body></html>
"""


def _environment() -> Environment:
    """The report's own Jinja2 environment: autoescaping on for every template it renders."""
    return Environment(autoescape=True, keep_trailing_newline=True)


def _metric_rows(metrics: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for name, block in ((metrics or {}).get("aggregations") or {}).items():
        panel = block.get("panel") or {}
        rows.append(
            {
                "name": name,
                "n": panel.get("n", ""),
                "accuracy": ci_text(panel.get("accuracy")),
                "kappa": ci_text(panel.get("kappa")),
                "ties": f"{block.get('tie_share', 0):.0%}" if block.get("tie_share") is not None else "",
            }
        )
    return rows


def _soft(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else ""


def _item_view(
    record: dict[str, Any], transcripts: dict[str, list[dict[str, Any]]], data: "PairwiseItem | None"
) -> dict[str, Any]:
    orders = record.get("orders") or []
    labels = {order.get("label") for order in orders}
    referee_labels = set((record.get("referee_labels") or {}).values())
    human = record.get("human_label")
    views = []
    for order in orders:
        key = f"{record['item_id']}#swapped" if order.get("swapped") else str(record["item_id"])
        views.append(
            {
                "title": "answers swapped (B shown first)" if order.get("swapped") else "answers in order",
                "messages": transcripts.get(key, []),
                "referees": [
                    {
                        "agent": r.get("agent"),
                        "score_a": r.get("score_a"),
                        "score_b": r.get("score_b"),
                        "soft_a": _soft(r.get("soft_score_a")),
                        "soft_b": _soft(r.get("soft_score_b")),
                        "winner": r.get("winner"),
                    }
                    for r in order.get("referees") or []
                ],
            }
        )
    label = record.get("label")
    return {
        "id": record["item_id"],
        "label": label,
        "soft_label": record.get("soft_label") or "",
        "human": human or "",
        "correct": "" if human is None else ("yes" if label == human else "no"),
        "wrong": human is not None and label != human,
        "inconsistent": len(labels) > 1,
        "split": len(referee_labels) > 1,
        "failures": int(record.get("parse_failures") or 0),
        "truncated": "yes" if record.get("truncated") else "",
        "decision": _decision(record, len(orders)),
        "orders": views,
        "question": data.question if data else None,
        "answer_a": data.answer_a if data else "",
        "answer_b": data.answer_b if data else "",
    }


def _data_items(run: RunSummary) -> dict[str, "PairwiseItem"]:
    """The run's items as its data file holds them now (empty when it cannot be read here)."""
    from pydantic import ValidationError

    from chateval.config import RunConfig
    from chateval.data.items import PairwiseItem
    from chateval.debate.building import load_run_items
    from chateval.errors import ChatEvalError

    try:
        items = load_run_items(RunConfig.model_validate(run.config))
    except (ChatEvalError, ValidationError, OSError):
        return {}
    return {item.id: item for item in items if isinstance(item, PairwiseItem)}


def _decision(record: dict[str, Any], orders: int) -> str:
    """How the panel's label was reached (chateval.aggregate)."""
    if orders > 1:
        return (
            f"both answer orders: each answer's scores summed over orders and referees, "
            f"A {record.get('score_a')} against B {record.get('score_b')}; the larger sum wins, "
            "equal sums tie"
        )
    return f"strict majority of the referees' labels {json.dumps(record.get('referee_labels'))}, else tie"


def _transcripts(run: RunSummary) -> dict[str, list[dict[str, Any]]]:
    path = run.folder / "transcripts.jsonl"
    try:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: unreadable transcripts ({exc})") from None
    return {str(r["key"]): list(r.get("messages") or []) for r in records}


def render_run(run: RunSummary) -> str:
    """The HTML page of one finished pairwise run."""
    if run.config.get("task") != "pairwise":
        raise DataError(
            f"{run.folder}: --html covers pairwise runs so far (this run is {run.config.get('task')!r})"
        )
    transcripts = _transcripts(run)
    data = _data_items(run)
    items = [_item_view(r, transcripts, data.get(str(r["item_id"]))) for r in load_verdicts(run)]
    info = run.info
    summary = (
        f"{info.get('items')} items, {info.get('debates')} debates; strategy {info.get('strategy')}, "
        f"{info.get('agents')} referees, {info.get('rounds')} rounds; {info.get('requests')} requests, "
        f"{info.get('verdict_parse_failures')} parse failures"
    )
    template = _environment().from_string(_TEMPLATE)
    return template.render(run=run, summary=summary, metrics=_metric_rows(run.metrics), items=items, csp=_CSP)


def write_html_report(folders: Sequence[Path], outdir: Path) -> Path:
    """``report.html`` of the first run in ``folders`` (one run per page so far), in ``outdir``."""
    if len(folders) != 1:
        raise DataError("--html renders one run at a time so far; give one run folder")
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "report.html"
    write_text(path, render_run(load_run(folders[0])))
    return path
