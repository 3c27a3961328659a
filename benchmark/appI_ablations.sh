#!/usr/bin/env bash
# App. I, ablations at δ_lowest on InvertedPendulum-v5 (200,000 decisions) and InvertedDoublePendulum-v5
# (300,000): SAR-PPO with d_max ∈ {0.2, 0.5, 1.0} (0.5 is the default: fig3_ppo_three_tasks.sh's runs),
# SAR-PPO and FiGAR-C-PPO without the limit on t, SAR-PPO with the l2 distance (d_max = 1.0); then the
# figures, results/figures/ablations_*, with the default SAR-PPO and FiGAR-C-PPO runs beside them.
#   bash benchmark/appI_ablations.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for spec in "InvertedPendulum-v5 200000" "InvertedDoublePendulum-v5 300000"; do
    set -- $spec
    for seed in $SEEDS; do
      common="--env-id $1 --dt lowest --total-steps $2 --seed $seed --log-dir results/runs --resume"
      echo "python sar_ppo.py $common --max-d 0.2"
      echo "python sar_ppo.py $common"
      echo "python sar_ppo.py $common --max-d 1.0"
      echo "python sar_ppo.py $common --max-t inf"
      echo "python figar_ppo.py $common --no-limit-t"
      echo "python sar_ppo.py $common --norm l2"
    done
  done
}
if [ "$*" = "--list" ]; then commands; exit; fi
commands | bash benchmark/run.sh "$@" || exit  # a failed or interrupted run: no figure from part of the runs
commands | python tools/status.py --check > /dev/null || exit  # nor from a set with a run unfinished
python plot.py results/runs --variants --only __sar-maxd __sar-no-limit __figar-no-limit __sar-l2 Pendulum-v5__sar__dt0.002__s Pendulum-v5__figar__dt0.002__s --kinds grid bars durations --out results/figures --prefix ablations_
