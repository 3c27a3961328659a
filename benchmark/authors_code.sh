#!/usr/bin/env bash
# The two differences from the authors' code that could move a verdict, measured (the report's "What differs"):
# plain TRPO with their Stable Baselines 2 log-std (the last action dim's state-dependent, --sb2-logstd) on
# InvertedPendulum-v5 (200,000 decisions) and Hopper-v5 (500,000) at δ0 and δ_lowest; SAR-A2C with their SB3
# init of the repetition head (--sb3-u-init) on InvertedDoublePendulum-v5 (300,000) and Hopper-v5 (500,000) at
# δ_lowest, where SAR-A2C is δ-invariant, and on Hopper also at δ0 (8 ms: below t_max, so it repeats there and
# the init plays a part; on InvertedDoublePendulum δ0 = t_max and nothing repeats). Compare with Fig. 3's TRPO row
# and the A2C appendix's runs.
#   bash benchmark/authors_code.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/authors_code.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "Hopper-v5 500000"; do
    set -- $spec
    for dt in lowest original; do
      for seed in $SEEDS; do
        echo "python sar_trpo.py --env-id $1 --dt $dt --total-steps $2 --seed $seed --log-dir results/runs --resume --no-repeat --sb2-logstd"
      done
    done
  done
  for spec in "InvertedDoublePendulum-v5 300000 lowest" "Hopper-v5 500000 lowest original"; do
    set -- $spec
    for dt in "${@:3}"; do
      for seed in $SEEDS; do
        echo "python sar_ppo.py --a2c --env-id $1 --dt $dt --total-steps $2 --seed $seed --log-dir results/runs --resume --sb3-u-init"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
