"""How big is the report.html of ``chateval report RUN``, and how fast does headless Chromium render it?

    .venv/bin/python scripts/html_report_check.py RUN_FOLDER... [-o OUT] [--json RESULT.json]
    .venv/bin/python scripts/html_report_check.py --scripted CONFIG.yaml [...]

Writes the report, then measures:
- bytes: report.html (and the item pages, if the run was split);
- render_ms: in headless Chromium, from a harness page's start until the report, loaded in an
  iframe from disk, has fired its load event and been laid out (the harness reads the page's
  height, which forces layout), median of ``--repeat`` loads;
- screenshot_s: wall seconds of ``chromium --screenshot`` of the report minus those of a
  blank page (median of ``--repeat``): the whole cost of opening it, process start aside.

``--scripted CONFIG``: first run CONFIG on a scripted backend whose every utterance is as long
as its turn allows (one word per token), an upper bound for a real run's page. Needs Debian's
chromium (scripts/setup.sh installs it).
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

HARNESS = """<!doctype html><html><head><meta charset="utf-8"><title>pending</title></head><body>
<script>const t0=performance.now();</script>
<iframe id="f" src="REPORT" style="width:1200px;height:900px"
 onload="const h=this.contentDocument.body.scrollHeight;
 document.title='rendered '+(performance.now()-t0).toFixed(1)+' ms, height '+h"></iframe>
</body></html>
"""


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("headless Chromium is not installed (scripts/setup.sh installs Debian's chromium)")
    return found


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)


def render_ms(report: Path) -> float:
    """One load of the report through the harness page, in milliseconds."""
    harness = report.parent / "render_timing.html"
    harness.write_text(HARNESS.replace("REPORT", report.name), encoding="utf-8")
    try:
        # file:// pages may read each other only with this flag: the harness reads the height.
        dom = chromium("--allow-file-access-from-files", "--dump-dom", harness.as_uri()).stdout
    finally:
        harness.unlink()
    match = re.search(r"<title>rendered ([\d.]+) ms, height (\d+)</title>", dom)
    if match is None or int(match.group(2)) == 0:
        raise SystemExit(f"the harness did not see the report render: {dom[:300]}")
    return float(match.group(1))


def screenshot_s(url: str, picture: Path) -> float:
    started = time.perf_counter()
    chromium("--window-size=1200,900", f"--screenshot={picture}", url)
    return time.perf_counter() - started


def scripted_run(config_path: Path, outdir: Path) -> Path:
    """Run ``config_path`` on a scripted backend that talks as long as each turn allows."""
    from chateval.backends.scripted import ScriptedBackend
    from chateval.config.files import load_config
    from chateval.core.backend import GenerationRequest
    from chateval.run.runner import run

    config = load_config(config_path)
    words = ["the", "answer", "weighs", "accuracy", "detail", "and", "tone", "against", "the", "question"]

    def long_winded(request: GenerationRequest) -> str:
        n = sum(map(ord, request.messages[-1].content))
        if request.regex:  # scores that vary with the prompt, then a full-length evidence line
            scores = [
                f"{label}: {(n >> k) % 10 + 1}" for k, label in enumerate(("Assistant 1", "Assistant 2"))
            ]
            if "Assistant 1" not in request.regex:
                names = [d.name.capitalize() for d in config.dimensions]
                scores = [
                    f"{name}: {d.low + (n >> k) % (d.high - d.low + 1)}"
                    for k, (name, d) in enumerate(zip(names, config.dimensions, strict=True))
                ]
            return "\n".join(scores) + "\nEvidence: " + " ".join(words[: config.verdict.evidence_max_tokens])
        return " ".join(words[i % len(words)] for i in range(request.max_tokens))

    run(config, outdir, backends={m: ScriptedBackend(m, long_winded) for m in config.model_names()})
    return outdir


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="*", type=Path, help="finished run folders")
    parser.add_argument("--scripted", type=Path, help="first run this config on a scripted backend")
    parser.add_argument("-o", "--outdir", type=Path, help="where the report goes (default: a temp folder)")
    parser.add_argument("--split-above", type=float, default=None, help="MB, as chateval report's option")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    from chateval.reporting.html import DEFAULT_SPLIT_ABOVE_MB, write_html_report

    outdir = args.outdir or Path(tempfile.mkdtemp(prefix="html_report_check_"))
    runs = list(args.runs)
    if args.scripted:
        runs.append(scripted_run(args.scripted, outdir / "scripted_run"))
    if not runs:
        parser.error("give run folders or --scripted CONFIG")
    started = time.perf_counter()
    split_above = DEFAULT_SPLIT_ABOVE_MB if args.split_above is None else args.split_above
    report = write_html_report(runs, outdir / "report", split_above)
    write_seconds = time.perf_counter() - started
    item_pages = sorted((report.parent / "items").glob("item-*.html"))
    blank = report.parent / "blank.html"
    blank.write_text("<!doctype html><title>blank</title>", encoding="utf-8")
    picture = report.parent / "report.png"
    renders = [render_ms(report) for _ in range(args.repeat)]
    opened = [screenshot_s(report.as_uri(), picture) for _ in range(args.repeat)]
    empty = [screenshot_s(blank.as_uri(), report.parent / "blank.png") for _ in range(args.repeat)]
    blank.unlink()
    (report.parent / "blank.png").unlink()
    result = {
        "runs": [str(r) for r in runs],
        "scripted_config": str(args.scripted) if args.scripted else None,
        "report": str(report),
        "bytes": report.stat().st_size,
        "split": bool(item_pages),
        "item_pages": len(item_pages),
        "largest_item_page_bytes": max((p.stat().st_size for p in item_pages), default=0),
        "write_seconds": round(write_seconds, 2),
        "render_ms": [round(r, 1) for r in renders],
        "render_ms_median": round(statistics.median(renders), 1),
        "screenshot_s_minus_blank_median": round(statistics.median(opened) - statistics.median(empty), 3),
        "chromium": chromium("--version").stdout.strip(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
