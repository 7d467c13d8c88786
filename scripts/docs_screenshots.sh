#!/usr/bin/env bash
# The docs' screenshots (docs/screenshots/*.png), taken by headless Chromium (Debian's chromium,
# which scripts/setup.sh installs):
#   report_multiturn_item.png  a systems report's item view of a multi-turn item: the earlier
#                              turns as the referees saw them, the judged turn named
#   report_per_category.png    the same report's per-category tables
#   site_start.png             the docs site's start page (SITE/index.html)
#
# The run folder the report screenshots come from (the embedded model with vLLM on CPU, 36
# debates; 19 minutes on this project's 2-core machine, shared), then the screenshots:
#   nice .venv/bin/chateval run configs/systems_multiturn.yaml -o runs/systems_multiturn
#   .venv/bin/chateval report runs/systems_multiturn
#   bash scripts/docs_screenshots.sh --run runs/systems_multiturn
# and, once the site is built (mkdocs build --strict, into site/):
#   bash scripts/docs_screenshots.sh --site site
#
# Usage: bash scripts/docs_screenshots.sh [--run RUN] [--site SITE] [--item ITEM_ID] [--out DIR]
#   --run RUN      a run folder with report/report.html (what `chateval report RUN` writes), or a
#                  folder holding report.html itself
#   --site SITE    a built site: any folder with an index.html
#   --item ITEM_ID the item to show (default: the first whose view shows earlier turns)
#   --out DIR      where the PNGs go (default: docs/screenshots)
#
# A page opened at an anchor (report.html#item-3) screenshots blank in headless Chromium 150, so
# the report is opened inside a frame of a harness page (written to a temporary folder), which
# scrolls the frame to the part wanted and sizes the window to it: the report itself is shown
# as a reader's browser shows it, nothing of it changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

run="" site="" item="" out="$root/docs/screenshots"
while (($#)); do
  case "$1" in
    --run) run="$2"; shift 2 ;;
    --site) site="$2"; shift 2 ;;
    --item) item="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$run" && -z "$site" ]]; then
  echo "nothing to take: give --run RUN, --site SITE or both (see --help)" >&2
  exit 2
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "headless Chromium is not installed (scripts/setup.sh installs Debian's chromium)" >&2
  exit 1
fi
WIDTH=1280
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# --no-sandbox: Chromium refuses to start as root with its sandbox (containers, CI);
# --allow-file-access-from-files: the harness reads the report's page (another file:// origin).
chrome() {
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --allow-file-access-from-files "$@" 2>"$scratch/chromium.log"
}

file_uri() { python3 -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).resolve().as_uri())' "$1"; }
js_string() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }

# harness PAGE_URI PART ITEM: a page framing PAGE_URI that scrolls it to PART ("item": an item's
# view, opened by its anchor as a click on its row opens it; "categories": the per-category
# section) and titles itself "ready HEIGHT WHAT" (the pixels the part needs) or "missing WHY".
harness() {
  local page="$1" part="$2" wanted="$3"
  cat >"$scratch/harness.html" <<EOF
<!doctype html><html><head><meta charset="utf-8"><title>waiting</title>
<style>html,body{margin:0;overflow:hidden}iframe{border:0;width:100vw;height:100vh;display:block}</style>
</head><body><iframe src="$page"></iframe><script>
const frame = document.querySelector('iframe'), part = '$part', wanted = $(js_string "$wanted");
const MAX_HEIGHT = 1400, MARGIN = 12;
frame.addEventListener('load', () => {
  const doc = frame.contentDocument, win = frame.contentWindow;
  let top, bottom, what;
  if (part === 'item') {
    const name = (s) => s.querySelector('h2').textContent.split(' \u00b7 ')[0].trim();
    const sections = [...doc.querySelectorAll('section.item')];
    const section = sections.find((s) => wanted ? name(s) === wanted : s.querySelector('details.earlier'));
    if (!section) { document.title = 'missing ' + (wanted ? 'no item ' + wanted : 'no item shows earlier turns') + ' in the page'; return; }
    win.location.hash = section.id;
    // The question, the answers, the decision and the first round of every debate beside it.
    const roundOneEnd = (d) => {
      const roundTwo = d.querySelector('h4 ~ h4');
      return (roundTwo ? roundTwo.previousElementSibling : d).getBoundingClientRect().bottom + MARGIN;
    };
    top = section.getBoundingClientRect().top;
    bottom = Math.max(...[...section.querySelectorAll('.debate')].map(roundOneEnd), top);
    what = name(section) + ' (#' + section.id + ')';
  } else {
    const heads = [...doc.querySelectorAll('h2')];
    const at = heads.findIndex((h) => /^per[ -]category/i.test(h.textContent.trim()));
    if (at < 0) { document.title = 'missing no per-category section in the page (a run with categories has one)'; return; }
    top = heads[at].getBoundingClientRect().top;
    bottom = at + 1 < heads.length ? heads[at + 1].getBoundingClientRect().top : doc.body.scrollHeight;
    what = heads[at].textContent.trim();
  }
  win.scrollTo(0, top + win.scrollY - MARGIN);
  document.title = 'ready ' + Math.min(MAX_HEIGHT, Math.ceil(bottom - top + MARGIN)) + ' ' + what;
});
</script></body></html>
EOF
}

# shoot_part PAGE_URI PART ITEM PNG: the harness's title first (what it found, how tall), then
# the screenshot at that height.
shoot_part() {
  local page="$1" part="$2" wanted="$3" png="$4" title height
  harness "$page" "$part" "$wanted"
  title=$(chrome --window-size="$WIDTH,900" --dump-dom "$(file_uri "$scratch/harness.html")" | sed -n 's:.*<title>\(.*\)</title>.*:\1:p')
  if [[ "$title" != ready\ * ]]; then
    [[ -n "$title" ]] || title="the harness did not load the page; Chromium said: $(tail -3 "$scratch/chromium.log")"
    echo "$png: $title" >&2
    exit 1
  fi
  height=$(cut -d' ' -f2 <<<"$title")
  chrome --window-size="$WIDTH,$height" --screenshot="$png" "$(file_uri "$scratch/harness.html")"
  echo "$png: ${title#ready "$height" } (${WIDTH}x$height, $(($(stat -c %s "$png") / 1024)) KB)"
}

if [[ -n "$run" ]]; then
  report="$run/report/report.html"
  [[ -f "$report" ]] || report="$run/report.html"
  if [[ ! -f "$report" ]]; then
    echo "no report.html in $run or $run/report: run \`chateval report $run\` first" >&2
    exit 1
  fi
  if ! grep -q '<section class="item' "$report"; then
    echo "$report holds no item views (a split report's are under items/): rerun \`chateval report\` with a larger --split-above" >&2
    exit 1
  fi
  page=$(file_uri "$report")
  shoot_part "$page" item "$item" "$out/report_multiturn_item.png"
  shoot_part "$page" categories "" "$out/report_per_category.png"
fi

if [[ -n "$site" ]]; then
  if [[ ! -f "$site/index.html" ]]; then
    echo "no index.html in $site: build the site first (mkdocs build --strict)" >&2
    exit 1
  fi
  chrome --window-size="$WIDTH,800" --screenshot="$out/site_start.png" "$(file_uri "$site/index.html")"
  echo "$out/site_start.png: $site/index.html (${WIDTH}x800, $(($(stat -c %s "$out/site_start.png") / 1024)) KB)"
fi
