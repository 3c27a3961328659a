#!/usr/bin/env bash
# Fig. 4 on equal terms, SAR-PPO's side: sar_ppo.py trained to DAU's physical time T of each task (fig4_dau.sh's
# T, δ's and seeds), not to Fig. 3's decision budget, with deterministic evaluations often enough that the last
# 10% of T holds at least five: every ⌊T/60⌋ seconds of physical time (--eval-every-s), as DAU evaluates every so
# many transitions. The first three cells (δ:N) evaluated every N updates instead, from the updates Fig. 3's runs
# took to reach T: a seed that repeats less takes more updates (Swimmer's seed 2 evaluated 32 times in its last
# 10% of T and spent over half its wall time evaluating). Run names end __T<seconds>__s<seed>. The close tasks' δ_lowest cells first (Reacher,
# InvertedDoublePendulum, Swimmer, Walker2d, Ant), then the rest.
#   bash benchmark/fig4_sar_ppo_to_T.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig4_sar_ppo_to_T.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  # task, T (s), then its δ's (δ:N: every N updates)
  for spec in "Reacher-v5 6000 lowest:1" "InvertedDoublePendulum-v5 15000 lowest:3" "Swimmer-v5 12000 lowest:5" \
              "Walker2d-v5 2400 lowest" "Ant-v5 15000 lowest" "InvertedPendulum-v5 8000 lowest middle original" \
              "InvertedDoublePendulum-v5 15000 middle original" "Hopper-v5 4000 lowest original" \
              "HalfCheetah-v5 15000 lowest original" "Walker2d-v5 2400 original" "Reacher-v5 6000 original" \
              "Swimmer-v5 12000 original" "Ant-v5 15000 original"; do
    set -- $spec
    env_id=$1 seconds=$2
    shift 2
    for dt in "$@"; do
      every="--eval-every-s $((seconds / 60))"
      [ "${dt#*:}" = "$dt" ] || every="--eval-every ${dt#*:}"
      for seed in $SEEDS; do
        echo "python sar_ppo.py --env-id $env_id --dt ${dt%:*} --physical-time $seconds $every --seed $seed --log-dir results/runs --resume"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
