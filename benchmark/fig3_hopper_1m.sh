#!/usr/bin/env bash
# Hopper-v5 at the paper's budget: 1,000,000 decisions at δ_lowest = 0.5 ms and δ0 = 8 ms, seeds 1–3;
# SAR-PPO first, then PPO and FiGAR-C-PPO, both δ's of a seed together. In a folder of its own,
# results/runs_1m: the 500k-decision runs of results/runs have the same names and, in a clone, no
# checkpoints to extend. Each run saves model.pt (for benchmark/same_policy_across_dt.py); commit its
# checkpoint.pt too (git add -f) so that it can be extended later. plot.py results counts a seed found in
# both folders once, keeping the longer run.
#   bash benchmark/fig3_hopper_1m.sh [workers]  |  --list  |  SEEDS="1 2 3" (default)  |  METHODS="sar ppo figar" (default)
#   SEEDS="4 5 6 7 8" METHODS=sar bash benchmark/fig3_hopper_1m.sh 2     SAR-PPO to the paper's eight seeds
cd "$(dirname "$0")/.."
SEEDS=${SEEDS-1 2 3}  # given empty, it is bad input, not the default
. benchmark/seeds.sh  # whole numbers, each once
METHODS=${METHODS-sar ppo figar}  # given empty, it is bad input, not the default
scripts=()
for method in $METHODS; do
  case $method in
    sar) scripts+=("sar_ppo.py");; ppo) scripts+=("sar_ppo.py --no-repeat");; figar) scripts+=("figar_ppo.py");;
    *) echo "fig3_hopper_1m.sh: error: METHODS: sar, ppo or figar, got '$method'" >&2; exit 2;;
  esac
done
[ ${#scripts[@]} -gt 0 ] || { echo "fig3_hopper_1m.sh: error: METHODS: one or more of sar, ppo, figar, got '$METHODS'" >&2; exit 2; }
commands() {
  for script in "${scripts[@]}"; do
    for seed in $SEEDS; do
      for dt in lowest original; do
        set -- $script
        echo "python $1 --env-id Hopper-v5 --dt $dt --total-steps 1000000 --seed $seed --save-model --log-dir results/runs_1m --resume ${2:-}"
      done
    done
  done
}
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
