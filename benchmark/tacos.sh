#!/usr/bin/env bash
# Beyond the paper: SAR-PPO against TaCoS-PPO (Treven et al., 2024; figar_ppo.py's TaCoS flags), each method with
# this project's PPO, at Fig. 3's and Fig. 5's budgets, deterministic and under the external force:
# - HalfCheetah-v5 at 2 ms, TaCoS's own setting (δ0 50 ms divided by 25; t_max = δ0 = 0.05 s): TaCoS-PPO with
#   its c = 2 and with c = 0, 300,000 decisions;
# - Hopper-v5 at 0.5 ms, t_max 0.05 s (SAR's and FiGAR-C's cap): c = 40/s · δ0 = 0.32 (the rule that gives
#   HalfCheetah's 2 = 40/s · 50 ms: 40 a second of deciding at δ0's pace) and c = 0; 500,000 decisions deterministic,
#   300,000 under the force (Fig. 5's).
# SAR-PPO and FiGAR-C-PPO are the committed runs of Fig. 3 and Fig. 5 (the same commands: finished, they exit).
#   bash benchmark/tacos.sh [workers]     run locally (default 2 workers), resumable
#   bash benchmark/tacos.sh --list        print the commands (for benchmark/slurm.sh)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  tacos="--duration-map tacos --time-feature"
  for spec in "HalfCheetah-v5 0.002 2 300000 300000" "Hopper-v5 0.0005 0.32 500000 300000"; do
    set -- $spec
    env_id=$1 dt=$2 cost=$3
    for setting in deterministic ext-force; do
      steps=$4 noise=""
      if [ $setting = ext-force ]; then steps=$5 noise=" --noise ext-force"; fi
      for seed in $SEEDS; do
        for c in $cost 0; do
          echo "python figar_ppo.py --env-id $env_id --dt $dt --total-steps $steps$noise --switch-cost $c $tacos --seed $seed --log-dir results/runs --resume"
        done
        echo "python sar_ppo.py --env-id $env_id --dt $dt --total-steps $steps$noise --seed $seed --log-dir results/runs --resume"
        echo "python figar_ppo.py --env-id $env_id --dt $dt --total-steps $steps$noise --seed $seed --log-dir results/runs --resume"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
