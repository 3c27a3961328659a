#!/usr/bin/env bash
# SLURM job-array template: task i runs line i of a figure script's command list, one CPU each.
# From the repository root, with the project's virtual environment active:
#   sbatch --array=1-$(bash benchmark/fig_dt_invariance.sh --list | wc -l) benchmark/slurm.sh benchmark/fig_dt_invariance.sh
# Every command carries --resume: resubmitting the same array continues runs that were cut off.
#SBATCH --job-name=sar
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=24:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
script=${1:?usage: sbatch --array=1-N benchmark/slurm.sh benchmark/<figure>.sh}
line=$(bash "$script" --list | sed -n "${SLURM_ARRAY_TASK_ID}p")
[ -n "$line" ] || { echo "no command $SLURM_ARRAY_TASK_ID in $script"; exit 1; }
echo "$line"
OMP_NUM_THREADS=1 exec $line
