#!/usr/bin/env bash
# Fig. 4 as first committed: DAU without input normalisation (dau.py --no-input-norm) on the eight tasks at
# δ_lowest and δ0, plus δ_middle on the two pendulums (as Fig. 3's PPO row), for the physical time the PPO row's SAR-PPO runs had at δ0: T = its decision budget × δ0, summed
# over DAU's 256 envs (InvertedPendulum 200,000 × 40 ms = 8,000 s, Hopper 500,000 × 8 ms = 4,000 s, the other
# six 300,000 × δ0). A deterministic evaluation every 100 rows at δ_lowest, 20 at δ_middle, 5 at δ0 (15 to 39 a
# run; a row is 2,560 transitions): with 256 envs few training episodes end, the failed ones first. The
# pendulums, Hopper and HalfCheetah first.
#   bash benchmark/fig4_dau.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig4_dau.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 8000 lowest middle original" \
              "InvertedDoublePendulum-v5 15000 lowest middle original" \
              "Hopper-v5 4000 lowest original" "HalfCheetah-v5 15000 lowest original" \
              "Walker2d-v5 2400 lowest original" "Reacher-v5 6000 lowest original" \
              "Swimmer-v5 12000 lowest original" "Ant-v5 15000 lowest original"; do
    set -- $spec
    env_id=$1 seconds=$2
    shift 2
    for dt in "$@"; do
      case $dt in lowest) every=100;; middle) every=20;; original) every=5;; esac
      for seed in $SEEDS; do
        echo "python dau.py --env-id $env_id --dt $dt --physical-time $seconds --eval-every $every --seed $seed --no-input-norm --log-dir results/runs --resume"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
