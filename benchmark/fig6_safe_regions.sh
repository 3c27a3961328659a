#!/usr/bin/env bash
# Fig. 6, safe regions drawn: SAR-PPO on InvertedPendulum-v5 at δ_lowest = 2 ms with Δ over the two
# velocity dims only (--delta-dims 2,3), deterministic and under external forces, seed 1, 200,000
# decisions; then benchmark/safe_regions.py rolls each trained policy out and draws its safe regions.
#   bash benchmark/fig6_safe_regions.sh [workers]  |  --list
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for seed in $SEEDS; do
    common="--env-id InvertedPendulum-v5 --dt lowest --total-steps 200000 --seed $seed --delta-dims 2,3 --save-model --log-dir results/runs --resume"
    echo "python sar_ppo.py $common"
    echo "python sar_ppo.py $common --noise ext-force"
  done
}
if [ "$*" = "--list" ]; then commands; exit; fi
commands | bash benchmark/run.sh "$@" || exit  # a failed or interrupted run: no figure from part of the runs
commands | python tools/status.py --check > /dev/null || exit  # nor from a set with a run unfinished
for seed in $SEEDS; do
  for run in results/runs/InvertedPendulum-v5__sar-delta2-3__dt0.002__{,ext-force__}s$seed; do
    python benchmark/safe_regions.py "$run" --out results/figures
  done
done
