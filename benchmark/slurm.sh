#!/usr/bin/env bash
# SLURM job array: task i runs command i of a command list, on one CPU.
#
#   sbatch --array=1-N [options] benchmark/slurm.sh LIST
#
# LIST is a figure script (benchmark/*.sh; each task reads its --list) or a file of commands, one per line
# (`bash benchmark/fig3_ppo_five_tasks.sh --list > commands.txt`), which fixes the list at submission.
# N is its number of commands (`wc -l < commands.txt`). Submit from the project's folder: the tasks run
# in sbatch's working directory, where the commands' `python sar_ppo.py ...` and --log-dir are relative.
#
# On a cluster (options on the command line override the #SBATCH lines below):
#   cd <project> && source venv/bin/activate   # sbatch passes the environment on: `python` is the venv's
#   bash benchmark/full_grid.sh --list > commands.txt
#   sbatch --array=1-$(wc -l < commands.txt)%100 --partition=<cpu partition> --time=24:00:00 --mem=2G \
#          benchmark/slurm.sh commands.txt
# Partition: any CPU partition (no GPU is used). Memory: a run holds ~0.4 GB. Time: 1M decisions took
# 10-150 min per run on a shared 2-core machine, longest at the lowest δ. `%100` caps the running tasks.
# Every command carries --resume and by default a checkpoint follows every update, so a task cut off by
# --time, scancel or a node failure continues where it stopped when the same array is submitted again;
# a finished run only says so. `python tools/status.py < commands.txt` tells which runs are left.
#SBATCH --job-name=sar
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=24:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
refuse() { echo "slurm.sh: $1" >&2; exit 2; }
usage="usage: sbatch --array=1-N benchmark/slurm.sh LIST (a figure script, or a file of commands one per line)"
[ $# -eq 1 ] || refuse "$usage"
list=$1
[ "$list" != --list ] || refuse "--list is the figure script's flag: pass the script itself, sbatch --array=1-N benchmark/slurm.sh benchmark/<figure>.sh"
[[ $list != -* ]] || refuse "unknown option $list; $usage"
[ -f "$list" ] && [ -r "$list" ] || refuse "no command list at $list (in $PWD); $usage"
[ -f sar_ppo.py ] || refuse "submit from the project's folder: $PWD has no sar_ppo.py (or pass sbatch --chdir)"
task=${SLURM_ARRAY_TASK_ID:-}
[ -n "$task" ] || refuse "SLURM_ARRAY_TASK_ID is not set: submit this script with sbatch --array=1-N"
[[ $task =~ ^[0-9]+$ ]] || refuse "task id '$task' is not a whole number"
if [[ $list == *.sh ]]; then
  grep -q -e '--list' "$list" || refuse "$list is not a figure script: it has no --list"
  why=$(mktemp)
  commands=$(bash "$list" --list < /dev/null 2> "$why") || { reason=$(tail -n 1 "$why"); rm -f "$why"; refuse "bash $list --list failed: ${reason:-no reason given}"; }
  rm -f "$why"
else
  commands=$(cat "$list")
fi
commands=$(tr -d '\r' <<< "$commands" | grep -v '^[[:space:]]*$' || true)  # a CRLF list too; blank lines are no commands
n=$(grep -c . <<< "$commands" || true)
[ "$n" -gt 0 ] || refuse "$list lists no commands"
[ ${#task} -le 9 ] && [ $((10#$task)) -ge 1 ] && [ $((10#$task)) -le "$n" ] ||
  refuse "task $task is out of range: $list has $n commands, 1 to $n (sbatch --array=1-$n)"
command -v python > /dev/null || refuse "no python on PATH: activate the project's virtual environment before sbatch"
line=$(sed -n "$((10#$task))p" <<< "$commands")
echo "$line"
export OMP_NUM_THREADS=1
eval "exec $line"
