#!/usr/bin/env bash
# SLURM job array: task i runs command OFFSET+i of a command list, on one CPU.
#
#   sbatch --array=1-N [options] benchmark/slurm.sh LIST [OFFSET]
#
# LIST is a figure script (benchmark/*.sh; each task reads its --list) or a file of commands, one per line
# (`bash benchmark/fig3_ppo_five_tasks.sh --list > commands.txt`), which fixes the list at submission.
# N is its number of commands (`wc -l < commands.txt`), or a part of them: OFFSET (default 0) is the line
# before an array's first, so that a list longer than the cluster's MaxArraySize (SLURM's default: 1001,
# array indices up to 1000) is submitted as several arrays of at most 1000 tasks each. Submit from the
# project's folder: the tasks run in sbatch's working directory, where the commands' `python sar_ppo.py ...`
# and --log-dir are relative.
#
# On a cluster (options on the command line override the #SBATCH lines below):
#   cd <project> && source .venv/bin/activate   # sbatch passes the environment on: `python` is the venv's
#   bash benchmark/full_grid.sh --list > commands.txt   # 2,688 commands
#   n=$(wc -l < commands.txt) size=1000
#   for ((offset = 0; offset < n; offset += size)); do  # arrays of lines 1-1000, 1001-2000, 2001-2688
#     sbatch --array=1-$((n - offset < size ? n - offset : size))%100 --partition=<cpu partition> \
#            --time=4:00:00 --mem=1G benchmark/slurm.sh commands.txt $offset
#   done
# Partition: any CPU partition (no GPU is used). Memory: a PPO, TRPO or A2C run holds ~0.4 GB; a DAU run
# (dau.py) needs --mem=4G, its checkpoint holding its replay memory (peak 2.85 GB measured on Ant). Time: the
# longest measured run took 157 min (Hopper SAR-PPO at 0.5 ms, 1M decisions, on a shared 2-core machine).
# `%100` caps each array's running tasks. Every command carries --resume and by default a checkpoint follows
# every update, so a task cut off by --time, scancel or a node failure continues where it stopped when the
# same arrays are submitted again; a finished run only says so. `python tools/status.py < commands.txt`
# tells which runs are left.
#SBATCH --job-name=sar
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=4:00:00
#SBATCH --output=slurm-%A_%a.out
set -euo pipefail
refuse() { echo "slurm.sh: $1" >&2; exit 2; }
usage="usage: sbatch --array=1-N benchmark/slurm.sh LIST [OFFSET] (LIST: a figure script, or a file of commands one per line; task i runs line OFFSET+i)"
[ $# -eq 1 ] || [ $# -eq 2 ] || refuse "$usage"
list=$1
offset=${2-0}  # given empty, it is bad input, not the default
[ "$list" != --list ] || refuse "--list is the figure script's flag: pass the script itself, sbatch --array=1-N benchmark/slurm.sh benchmark/<figure>.sh"
[[ $list != -* ]] || refuse "unknown option $list; $usage"
[[ $offset != --* ]] || refuse "unknown option $offset; $usage"
[[ $offset =~ ^[0-9]+$ ]] || refuse "offset '$offset' is not a whole number from 0 (the line before the array's first)"
given=$offset
if [[ $offset =~ ^0*([0-9]{1,9})$ ]]; then
  offset=$((10#${BASH_REMATCH[1]}))
else
  offset=1000000000  # ten digits or more: past the end of any list, said below with the list's size
fi
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
[ "$offset" -lt "$n" ] || refuse "offset $given is too large: $list has $n commands (offsets 0 to $((n - 1)))"
if [ "$offset" -eq 0 ]; then
  [ ${#task} -le 9 ] && [ $((10#$task)) -ge 1 ] && [ $((10#$task)) -le "$n" ] ||
    refuse "task $task is out of range: $list has $n commands, 1 to $n (sbatch --array=1-$n)"
else
  [ ${#task} -le 9 ] && [ $((10#$task)) -ge 1 ] && [ $((offset + 10#$task)) -le "$n" ] ||
    refuse "task $task with offset $offset is out of range: $list has $n commands, so offset $offset takes tasks 1 to $((n - offset)) (sbatch --array=1-$((n - offset)))"
fi
command -v python > /dev/null || refuse "no python on PATH: activate the project's virtual environment before sbatch"
line=$(sed -n "$((offset + 10#$task))p" <<< "$commands")
[[ $line =~ ^[[:space:]]*python[[:space:]] ]] || refuse "line $((offset + 10#$task)) of $list is not a command (python ...): $line"
echo "$line"
export OMP_NUM_THREADS=1
eval "exec $line"
