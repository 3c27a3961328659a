#!/usr/bin/env bash
# App. E, rising stochasticity: InvertedPendulum-v5 at δ_lowest = 2 ms under external forces drawn with
# probability p_ext ∈ {0.025, 0.05, 0.1, 0.2} per decision; SAR-PPO vs FiGAR-C-PPO, 200,000 decisions;
# then the figure, results/figures/ip_rising_stochasticity.png.
# p_ext = 0.05 is the paper's default: those runs are fig5_stochastic_inverted_pendulum.sh's ext-force runs
# (no -p in the name).
#   bash benchmark/appE_rising_stochasticity.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
commands() {
  for p in 0.025 0.05 0.1 0.2; do
    prob=$([ "$p" = 0.05 ] && echo "" || echo "--noise-prob $p")
    for seed in $SEEDS; do
      common="--env-id InvertedPendulum-v5 --dt lowest --total-steps 200000 --seed $seed --noise ext-force $prob --log-dir results/runs --resume"
      echo "python sar_ppo.py $common"
      echo "python figar_ppo.py $common"
    done
  done
}
if [ "$*" = "--list" ]; then commands; exit; fi
commands | bash benchmark/run.sh "$@" || exit  # a failed or interrupted run: no figure from part of the runs
commands | python tools/status.py --check > /dev/null || exit  # nor from a set with a run unfinished
python benchmark/plot_rising_stochasticity.py results/runs --out results/figures
