#!/usr/bin/env bash
# Fig. 4 on equal terms, SAR-PPO's side: sar_ppo.py trained to DAU's physical time T of each task (fig4_dau.sh's
# T, δ's and seeds), not to Fig. 3's decision budget, with deterministic evaluations often enough that the last
# 10% of T holds at least five: every update, or every 3 (InvertedDoublePendulum at 2 and 10 ms) or 5 updates
# (HalfCheetah, Swimmer and Ant at 2 ms), from the updates Fig. 3's runs took to reach T. Run names end
# __T<seconds>__s<seed>. The close tasks' δ_lowest cells first (Reacher, InvertedDoublePendulum, Swimmer,
# Walker2d, Ant), then the rest.
#   bash benchmark/fig4_sar_ppo_to_T.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/fig4_sar_ppo_to_T.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
[[ $SEEDS =~ ^\ *[0-9]+(\ +[0-9]+)*\ *$ ]] || { echo "$(basename "$0"): error: SEEDS: whole numbers separated by spaces, got '$SEEDS'" >&2; exit 2; }
commands() {
  # task, T (s), then δ:evaluate-every pairs
  for spec in "Reacher-v5 6000 lowest:1" "InvertedDoublePendulum-v5 15000 lowest:3" "Swimmer-v5 12000 lowest:5" \
              "Walker2d-v5 2400 lowest:1" "Ant-v5 15000 lowest:5" \
              "InvertedPendulum-v5 8000 lowest:1 middle:1 original:1" \
              "InvertedDoublePendulum-v5 15000 middle:3 original:1" "Hopper-v5 4000 lowest:1 original:1" \
              "HalfCheetah-v5 15000 lowest:5 original:1" "Walker2d-v5 2400 original:1" "Reacher-v5 6000 original:1" \
              "Swimmer-v5 12000 original:1" "Ant-v5 15000 original:1"; do
    set -- $spec
    env_id=$1 seconds=$2
    shift 2
    for pair in "$@"; do
      for seed in $SEEDS; do
        echo "python sar_ppo.py --env-id $env_id --dt ${pair%:*} --physical-time $seconds --eval-every ${pair#*:} --seed $seed --log-dir results/runs --resume"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
