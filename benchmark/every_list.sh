#!/usr/bin/env bash
# Every run list of benchmark/, the committed results' and those under way, in one (full_grid.sh aside: the
# paper's 8-seed grid goes to runs/full_grid): each line once, in the lists' order. Finished runs exit at once, so
#   bash benchmark/every_list.sh [workers]     runs whatever is left, resumable (default 2 workers)
#   bash benchmark/every_list.sh --list | python tools/grid_hours.py --cores 2 --speed 1    # the whole on 2 cores
cd "$(dirname "$0")/.."
LISTS="early_ip_sar_vs_ppo early_ip_figar_and_noise early_speed_check fig3_ppo_three_tasks fig3_ppo_five_tasks
       fig3_trpo fig3_hopper_1m fig3_1m appD_a2c appD_stochastic_trpo fig4_dau fig4_dau_norm fig4_sar_ppo_to_T
       fig5_stochastic_inverted_pendulum fig5_stochastic_seven_tasks fig6_safe_regions appE_rising_stochasticity
       appF_ppo_scaled appG_arp appH_lambda_sar appI_ablations authors_code tacos"
lines=$(for list in $LISTS; do bash "benchmark/$list.sh" --list || exit 2; done) || exit 2  # a bad SEEDS: no run
commands() { echo "$lines" | awk '!seen[$0]++'; }
if [ "$*" = "--list" ]; then commands; else commands | bash benchmark/run.sh "$@"; fi
