"""How often the TaCoS code's hold loses a δ-step: its two floors, measured on uniform pseudo-times.

    python benchmark/tacos_short_holds.py       # three lines, about a second; writes nothing

`wtc/wrappers/ih_switching_cost.py` (`lenarttreven/when_to_control` at c27be6d) maps the policy's
pseudo-time x ∈ [−1, 1] to a hold τ in [t_min, t_max] and floors it to whole δ-steps, k·δ with
k = τ // δ (`compute_time`, line 89); `step` then takes (k·δ) // δ δ-steps (line 109, far from the
horizon). In floating point that second floor gives k − 1 whenever k·δ rounds below k times δ. This
script draws x uniformly (numpy's generator seeded with --seed), runs both floors as that code does,
and prints the share of holds that come out a δ-step short, at HalfCheetah's setting (δ = 2 ms,
t_min = δ, t_max = 50 ms):
  float64, δ = 0.002;
  float32 (JAX's default), δ = 0.002;
  float32 at the δ its HalfCheetah run computes: Brax's 0.01 s timestep divided by 25, times 5 frames.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
from tools import promises
from tools.promises import fail, within

T_MAX = 0.05  # HalfCheetah's δ0, TaCoS's t_max there


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--samples", type=within(int, 1, 10 ** 8), default=1_000_000,
                   help="pseudo-times drawn (default 1,000,000)")
    p.add_argument("--seed", type=within(int, 0, 2 ** 31 - 1), default=1, help="seeds the draw (default 1)")
    return p.parse_args(argv)


def short_share(x, dtype, dt):
    """The share of pseudo-times x whose hold the two floors make a δ-step shorter than ⌊τ/δ⌋."""
    x, dt, lo, hi = x.astype(dtype), dtype(dt), dtype(dt), dtype(T_MAX)
    tau = (hi - lo) / dtype(2) * x + (hi + lo) / dtype(2)  # compute_time, line 88
    k = tau // dt  # line 89: the hold in whole δ-steps ...
    steps = (k * dt) // dt  # line 109: ... floored again
    return float(np.mean(steps < k))


def main(argv=None):
    args = parse_args(argv)
    x = np.random.default_rng(args.seed).uniform(-1.0, 1.0, args.samples)
    brax_dt = np.float32(np.float32(0.01) / np.float32(25)) * np.float32(5)
    for label, dtype, dt in [("float64, δ = 0.002", np.float64, 0.002),
                             ("float32, δ = 0.002", np.float32, 0.002),
                             (f"float32, δ = {float(brax_dt):.10f} (Brax's)", np.float32, brax_dt)]:
        print(f"{label}: {short_share(x, dtype, dt):.1%} of {args.samples:,} holds a δ-step short")


if __name__ == "__main__":
    promises.run(main)
