#!/usr/bin/env bash
# Redraws every committed figure, results/figures/*.png and results/theory/*.png, from the committed runs
# (results/runs, results/runs_1m) and CSVs (results/theory/*.csv, results/random_returns.csv): nothing is
# trained or measured; about two minutes, most of it the safe-region rollouts. It draws into a new folder
# and replaces the committed figures only once every one of them has been redrawn, each by a rename: a failure
# or an interrupt leaves every figure whole, the old one or the new. On a clean clone `git status` stays clean. A committed figure that no command
# below draws any more stops it (git rm that figure if it is meant to go).
# Each paper_figures.py call (plot.py's loading and drawing, and the paper's kinds) selects its runs by name;
# without --variants it reads the paper's methods only.
#   bash benchmark/figures.sh           (PYTHON=... to choose the interpreter; default: python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
# bad input: one line, exit 2, before any work
[ $# -eq 0 ] || { echo "figures.sh: error: takes no arguments (PYTHON=... chooses the interpreter), got '$1'" >&2; exit 2; }
command -v "$PY" > /dev/null || { echo "figures.sh: error: PYTHON: no interpreter '$PY'" >&2; exit 2; }
# A redraw folder whose figures.sh was killed (SIGKILL runs no trap) is removed here: its name holds the pid
# of the figures.sh that made it, and that process is gone (a name without a pid is of an older figures.sh).
for old in results/.redraw.*; do
  [ -d "$old" ] || continue
  pid=${old#results/.redraw.}; pid=${pid%%.*}
  if ! [[ $pid =~ ^[0-9]+$ ]] || ! { kill -0 "$pid" 2> /dev/null || ps -p "$pid" > /dev/null 2>&1; }; then rm -rf "$old"; fi
done
NEW=$(mktemp -d "$PWD/results/.redraw.$$.XXXXXX")  # beside results/: the final moves are renames
trap 'rm -rf "$NEW"' EXIT  # bash runs it on an error, Ctrl-C and SIGTERM too
OUT=$NEW/figures THEORY=$NEW/theory
mkdir -p "$OUT" "$THEORY"
plot() { "$PY" benchmark/paper_figures.py "$@" --out "$OUT" >/dev/null; }

# Fig. 3 on the eight tasks, deterministic: the grid (two figures of four tasks) and the normalised final returns
plot results/runs --only __{sar,figar,ppo}__dt{0.0005,0.001,0.002,0.008,0.01,0.02,0.04,0.05}__s --kinds grid normalised
# Fig. 3's TRPO row (fig3_trpo.sh): the grid, the normalised final returns and each task's curves and bars
TRPO=(__{sar-trpo,figar-trpo,trpo}__dt{0.0005,0.001,0.002,0.008,0.01,0.02,0.04,0.05}__s)
plot results/runs --only "${TRPO[@]}" --kinds grid normalised curves durations bars --prefix trpo_
# The A2C appendix (appD_a2c.sh): the grid, the normalised final returns and each task's bars, four tasks
A2C=(__{sar-a2c,figar-a2c,a2c}__dt{0.0005,0.002,0.008,0.04,0.05}__s)
plot results/runs --only "${A2C[@]}" --kinds grid normalised bars --prefix a2c_
# δ-invariance, one figure per task: InvertedPendulum, InvertedDoublePendulum, Hopper (500k), against decisions and physical time
ONE_TASK=({InvertedPendulum,InvertedDoublePendulum,Hopper}-v5__{sar,figar,ppo}__dt{0.0005,0.002,0.008,0.01,0.04,0.05}__s)
plot results/runs --only "${ONE_TASK[@]}" --kinds curves durations bars
plot results/runs --only "${ONE_TASK[@]}" --kinds curves --x physical_time_s
# App. F.2 (appF_ppo_scaled.sh) and App. G (appG_arp.sh): SAR-PPO against PPO and PPO (scaled), and against ARP-PPO and
# ARP-PPO (scaled), each task at δ_lowest, against physical time and training (wall-clock) time
LOWEST=({InvertedPendulum,InvertedDoublePendulum,HalfCheetah,Swimmer,Ant}-v5__METHODS__dt0.002__s {Hopper,Walker2d}-v5__METHODS__dt0.0005__s Reacher-v5__METHODS__dt0.001__s)
for x in physical_time_s wall_time_s; do
  plot results/runs --only "${LOWEST[@]//METHODS/sar}" "${LOWEST[@]//METHODS/ppo}" "${LOWEST[@]//METHODS/ppo-scaled}" --kinds lowest --x $x --prefix appF_
  plot results/runs --only "${LOWEST[@]//METHODS/sar}" "${LOWEST[@]//METHODS/arp-ppo}" "${LOWEST[@]//METHODS/arp-ppo-scaled}" --kinds lowest --x $x --prefix appG_
done
# Fig. 4 (fig4_dau.sh): SAR-PPO against DAU at DAU's physical time, each task and δ DAU ran (none drawn without DAU runs)
plot results/runs --only __{sar,dau}__dt{0.0005,0.001,0.002,0.008,0.01,0.02,0.04,0.05}__s --kinds fig4
# Fig. 4 on equal terms (fig4_equal_terms.sh): SAR-PPO trained to T against DAU with normalisation, both readings
plot results/runs --only __dau-norm__dt __T --kinds fig4
# Beyond the paper (tacos.sh): SAR-PPO against TaCoS-PPO, the return against decisions per episode (none drawn
# before its runs)
plot results/runs --variants --only {HalfCheetah-v5__,Hopper-v5__}{sar,figar,tacos-c2,tacos-c0.32,tacos-c0}__dt{0.002,0.0005}__{,ext-force__}s --kinds tacos
# Fig. 5: SAR-PPO vs FiGAR-C-PPO under the three stochastic settings at δ_lowest: InvertedPendulum
# (fig5_stochastic_inverted_pendulum.sh)
plot results/runs --only InvertedPendulum-v5__{sar,figar}__dt0.002__{action,ext-force,ext-force-perceptible}__s --kinds fig5
# ... and the seven other tasks (fig5_stochastic_seven_tasks.sh; δ_lowest: Hopper, Walker2d 0.5 ms, Reacher 1 ms,
# the others 2 ms)
plot results/runs --only {InvertedDoublePendulum,Hopper,Walker2d,HalfCheetah,Reacher,Swimmer,Ant}-v5__{sar,figar}__dt{0.0005,0.001,0.002}__{action,ext-force,ext-force-perceptible}__s --kinds fig5
# ... and InvertedPendulum's mean action durations under each of them
plot results/runs --only InvertedPendulum-v5__{sar,figar}__dt0.002__{action,ext-force,ext-force-perceptible}__s --kinds durations
# Fig. 5 with TRPO (appD_stochastic_trpo.sh; δ_lowest: Hopper 0.5 ms, the pendulums 2 ms)
plot results/runs --only {InvertedPendulum,InvertedDoublePendulum,Hopper}-v5__{sar-trpo,figar-trpo}__dt{0.0005,0.002}__{action,ext-force,ext-force-perceptible}__s --kinds fig5 --prefix trpo_
# InvertedPendulum at 100k decisions (the first 100,352 of the 200k runs), deterministic and under external forces
plot results/runs --max-steps 100352 --only InvertedPendulum-v5__{sar,figar,ppo}__dt0.002__s InvertedPendulum-v5__{sar,figar}__dt0.002__ext-force__s \
  --kinds curves durations bars --prefix 100k_
# Hopper at 1M decisions, all three methods (SAR-PPO 8 seeds, the others 3)
plot results/runs_1m --only Hopper-v5__ --kinds grid --prefix 1m_
plot results/runs_1m --only Hopper-v5__ --kinds grid --prefix 1m_ --x physical_time_s
# Fig. 3 at 1M (fig3_1m.sh) on the eight tasks: the grid and the normalised final returns of the 1M runs, each run
# as it finishes, with the pendulums' Fig. 3 runs (200k and 300k decisions) beside them
plot results/runs_1m results/runs/InvertedPendulum-v5__{sar,figar,ppo}__dt{0.002,0.04}__s? \
  results/runs/InvertedDoublePendulum-v5__{sar,figar,ppo}__dt{0.002,0.05}__s? --kinds grid normalised --prefix 1m_
# App. H: λ-SAR-PPO under partial observability (strong perceptible force + hold penalty)
plot results/runs --only __hold-penalty --kinds curves durations bars
# App. I: ablations, each variant beside the default SAR-PPO and FiGAR-C-PPO at δ_lowest
plot results/runs --variants --only __sar-maxd __sar-no-limit __figar-no-limit __sar-l2 Pendulum-v5__{sar,figar}__dt0.002__s \
  --kinds grid bars durations --prefix ablations_
# App. E: rising stochasticity
"$PY" benchmark/plot_rising_stochasticity.py results/runs --out "$OUT" >/dev/null
# Fig. 6: safe regions (rollouts of the committed model.pt)
for run in results/runs/InvertedPendulum-v5__sar-delta2-3__dt0.002__s1 results/runs/InvertedPendulum-v5__sar-delta2-3__dt0.002__ext-force__s1; do
  "$PY" benchmark/safe_regions.py "$run" --out "$OUT" >/dev/null
done
# The theory figures, from their committed CSVs (no measurement)
"$PY" benchmark/pg_variance.py --plot-only --figure "$THEORY/pg_variance.png"
"$PY" benchmark/pg_variance.py --plot-only --out results/theory/pg_variance_8_policies.csv \
  --figure "$THEORY/pg_variance_8_policies.png"   # the paper's 8 policies, 5 tasks
"$PY" - "$THEORY" <<'EOF'
import csv, sys
from benchmark import alert_then_off, exploration
for module, name in ((alert_then_off, "alert_then_off"), (exploration, "exploration")):
    with open(f"results/theory/{name}.csv", newline="") as f:
        module.plot_figure(list(csv.DictReader(f)), f"{sys.argv[1]}/{name}.png")
EOF
# Every committed figure redrawn? Only then replace them, each by a rename over the old file (none is removed
# first), so that an interrupt at any moment leaves every committed figure in place, the old one or the new.
missing=$(cd results && for f in figures/*.png theory/*.png; do [ -e "$NEW/$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "figures.sh: error: not redrawn, so no figure was replaced: $(echo $missing)" >&2
  exit 1
fi
for f in "$OUT"/*.png; do mv -f "$f" results/figures/; done
for f in "$THEORY"/*.png; do mv -f "$f" results/theory/; done
ls results/figures/*.png results/theory/*.png | wc -l | xargs echo "figures drawn:" >&2
