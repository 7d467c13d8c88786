#!/usr/bin/env bash
# The paper layout (the default since the third release) against the default it replaced (the
# conversation layout of commit ac551e6, where every utterance was an assistant message), on
# FairEval questions 1-16 in both orders, 3 referees, 2 rounds, one-by-one and simultaneous.
# Each bench also measures today's `conversation` layout (--extra conversation).
#   bash scripts/bench_layouts.sh        # ~40 min on a 2-core CPU; JSON in docs/performance/
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=ac551e6
out=docs/performance
common=(--set data.limit=16 --sequential-items 2)
for strategy in one_by_one simultaneous; do
  .venv/bin/chateval bench configs/bench/faireval_3x2.yaml "${common[@]}" --set strategy=$strategy \
    --extra conversation -o $out/cpu_faireval_3x2_16q_paper_$strategy.json
done
# The replaced default, run from its own commit's code in a scratch worktree.
tree=$(mktemp -d)/chateval-$OLD
git worktree add -q --detach "$tree" $OLD
trap 'git worktree remove --force "$tree"' EXIT
ln -s "$PWD/models/smollm2-135m" "$tree/models/smollm2-135m"
for strategy in one_by_one simultaneous; do
  (cd "$tree" && PYTHONPATH="$tree/src" "$OLDPWD/.venv/bin/chateval" bench configs/bench/faireval_3x2.yaml \
    "${common[@]}" --set strategy=$strategy --set "data.path=$OLDPWD/../shared/datasets/faireval" \
    -o "$OLDPWD/$out/cpu_faireval_3x2_16q_conversation_${OLD}_$strategy.json")
done
