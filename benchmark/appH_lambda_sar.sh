#!/usr/bin/env bash
# App. H, λ-SAR under partial observability: the perceptible strong force plus its hold penalty
# at δ_lowest; λ-SAR-PPO (λ = 0.5), SAR-PPO, FiGAR-C-PPO; InvertedPendulum-v5 (200,000 decisions) and
# InvertedDoublePendulum-v5 (300,000); then its figures, results/figures/*_ext-force-perceptible+hold-penalty_*.
#   bash benchmark/appH_lambda_sar.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000"; do
    set -- $spec
    for seed in $SEEDS; do
      common="--env-id $1 --dt lowest --total-steps $2 --seed $seed --noise ext-force-perceptible --hold-penalty --log-dir results/runs --resume"
      echo "python sar_ppo.py $common --lambda-dt 0.5"
      echo "python sar_ppo.py $common"
      echo "python figar_ppo.py $common"
    done
  done
}
if [ "$*" = "--list" ]; then commands; exit; fi
commands | bash benchmark/run.sh "$@" || exit  # a failed or interrupted run: no figure from part of the runs
commands | python tools/status.py --check > /dev/null || exit  # nor from a set with a run unfinished
python plot.py results/runs --only __hold-penalty --kinds curves durations bars --out results/figures
