"""Speed, as ratios measured side by side in one invocation (the machine is shared and noisy).

    pip install -r benchmark/requirements.txt      # adds stable-baselines3 for P1
    python benchmark/speed.py --quick              # all five figures in under four minutes
    python benchmark/speed.py                      # longer runs, steadier figures
    python benchmark/speed.py --only 6             # DAU's figures only

P1  decisions/s of `sar_ppo.py --no-repeat` at δ0 on InvertedPendulum-v5 vs SB3 PPO with the paper's
    hyperparameters, same decisions, same threads, whole training; the runs alternate, median ratio.
P2  δ-steps/s inside SAR's repetition loop during a rollout vs bare `env.unwrapped.step` with a
    constant action (the floor any faithful implementation pays) and vs raw `mujoco.mj_step`.
P3  wall time of a 1,000,000-decision SAR-PPO run on InvertedPendulum-v5 at δ_lowest, extrapolated
    from a measured run: its own time plus the remaining updates at the mean time of its last 5.
P4  the PPO update's time per minibatch step (read off P3's progress.csv: update time minus rollout
    time) vs a bare forward + backward + Adam step of the same two networks on the same minibatch.
P5  (--device cuda, where a GPU exists) the same minibatch step, and one decision's policy forward, on the
    GPU vs on the CPU: why the scripts run on the CPU.
P6  DAU (dau.py) with the recipe's N = 256 envs, K = 10, L = 50, batch 256, on InvertedPendulum-v5 at δ_lowest:
    a short run's cost per transition (its stepping part: acting, the envs, the memory) and per gradient step,
    read off its progress.csv; then, in this process and alternating, rounds of L gradient steps as dau.py takes
    them vs L bare steps of the same three networks on the same batch: a forward + backward + RMSprop of V, Ā
    and π once each, and the passes DAU's loss makes (V on s and s', Ā on (s, a) and (s, π(s)), Ā again for π)
    made bare in one forward, one backward and one RMSprop step.
"""
import argparse
import csv
import importlib.util
import math
import os
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import dau
import envs
import sar_ppo
from tools import ROOT, promises
from tools.promises import fail, within

SB3_SCRIPT = """
import sys, time, torch, gymnasium as gym
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize
torch.set_num_threads(int(sys.argv[2]))
env = VecNormalize(make_vec_env("InvertedPendulum-v5", n_envs=1, seed=1), gamma=0.99)
model = PPO("MlpPolicy", env, learning_rate=1e-4, n_steps=2048, batch_size=64, n_epochs=10, gamma=0.99,
            gae_lambda=0.95, clip_range=0.2, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5, seed=1,
            policy_kwargs=dict(net_arch=dict(pi=[256, 256], vf=[256, 256]), activation_fn=torch.nn.ReLU),
            device="cpu")
start = time.time()
model.learn(int(sys.argv[1]))
print(int(sys.argv[1]) / (time.time() - start))
"""


def run_ours(script, flags, log_dir, name):
    cmd = [sys.executable, os.path.join(ROOT, script), "--log-dir", log_dir, "--run-name", name, *flags]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(log_dir, name, "progress.csv")) as f:
        return list(csv.DictReader(f))


def p1(decisions, repeats, threads, log_dir):
    ratios, ours_rates, sb3_rates = [], [], []
    for i in range(repeats):
        rows = run_ours("sar_ppo.py", ["--no-repeat", "--dt", "original", "--total-steps", str(decisions),
                                       "--threads", str(threads)], log_dir, f"p1_{i}")
        ours = int(rows[-1]["decision_steps"]) / float(rows[-1]["wall_time_s"])
        out = subprocess.run([sys.executable, "-c", SB3_SCRIPT, str(decisions), str(threads)],
                             check=True, capture_output=True, text=True).stdout
        sb3 = float(out.strip().splitlines()[-1])
        ours_rates.append(ours), sb3_rates.append(sb3), ratios.append(ours / sb3)
    print(f"P1 plain PPO decisions/s, InvertedPendulum-v5 at δ0, {decisions} decisions, {threads} thread(s), "
          f"{repeats} alternating pair(s): ours {np.median(ours_rates):.0f}, SB3 {np.median(sb3_rates):.0f}, "
          f"ratio ours/SB3 {np.median(ratios):.2f}x")


def p2(env_id, dt, decisions, rounds=10):
    """Only the repetition's step (the loop) is timed, with a fresh policy picking actions and radii;
    blocks of it alternate with blocks of as many bare steps and raw mj_steps, so load hits all three."""
    env = sar_ppo.SafeActionRepetition(envs.make_env(env_id, dt), max_d=0.5, max_t=0.05)
    agent = sar_ppo.Agent(env.observation_space.shape[0], env.env.action_space.shape[0], repeat=1)
    low, high = env.action_space.low, env.action_space.high
    raw = envs.make_env(env_id, dt).unwrapped
    constant = np.zeros(raw.action_space.shape)
    physics = envs.make_env(env_id, dt).unwrapped
    obs, _ = env.reset(seed=1)
    raw.reset(seed=1)
    physics.reset(seed=1)
    times, steps = np.zeros(3), 0
    for _ in range(rounds):
        block = 0
        for _ in range(decisions // rounds):
            with torch.no_grad():
                action = agent.dist(torch.as_tensor(obs, dtype=torch.float32)[None]).sample()[0].numpy()
            action = np.clip(action, low, high)
            start = time.perf_counter()
            obs, _, terminated, truncated, info = env.step(action)
            times[0] += time.perf_counter() - start
            block += info["w"]
            if terminated or truncated:
                obs, _ = env.reset()
        steps += block
        left = block
        while left:  # bare env.unwrapped.step, timed between resets
            start = time.perf_counter()
            for _ in range(left):
                left -= 1
                if raw.step(constant)[2]:
                    break
            times[1] += time.perf_counter() - start
            if left:
                raw.reset()
        start = time.perf_counter()
        for _ in range(block):
            mujoco.mj_step(physics.model, physics.data)
        times[2] += time.perf_counter() - start
    sar, bare, physical = steps / times
    print(f"P2 {env_id} δ={dt:g}: SAR loop {sar:.0f} δ-steps/s ({steps / decisions:.1f} per decision), "
          f"bare env.unwrapped.step {bare:.0f}/s, mj_step {physical:.0f}/s, "
          f"ratio SAR/bare {sar / bare:.2f}x, SAR/mj_step {sar / physical:.2f}x")


def p3_p4(decisions, threads, log_dir, minibatch_steps):
    rows = run_ours("sar_ppo.py", ["--dt", "lowest", "--total-steps", str(decisions), "--threads", str(threads)],
                    log_dir, "p3")
    n, epochs, minibatch = 2048, 10, 64
    wall = float(rows[-1]["wall_time_s"])
    update_times = [n / float(r["decisions_per_s"]) for r in rows]
    remaining = math.ceil(1_000_000 / n) - len(rows)
    total = wall + remaining * np.mean(update_times[-5:])
    print(f"P3 SAR-PPO InvertedPendulum-v5 δ=0.002: measured {rows[-1]['decision_steps']} decisions in "
          f"{wall:.0f} s; 1,000,000 decisions extrapolated {total / 60:.1f} min "
          f"(ratio to the 10-min target {total / 600:.2f}x)")

    # P4: the update's share of each row = update time - rollout time (GAE and logging included);
    # env_steps is cumulative, so a row's own δ-steps are the difference; the first row is warm-up.
    env_steps_per_row = np.diff([0] + [int(r["env_steps"]) for r in rows])[1:]
    ppo_times = [n / float(r["decisions_per_s"]) - s / float(r["env_steps_per_s"])
                 for r, s in zip(rows[1:], env_steps_per_row)]
    per_minibatch = np.median(ppo_times) / (epochs * n / minibatch)

    torch.set_num_threads(threads)
    agent = sar_ppo.Agent(4, 1, repeat=1)
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-4, eps=1e-5, fused=True)  # as in sar_ppo.py
    x, y = torch.randn(minibatch, 4), torch.randn(minibatch)
    for i in range(minibatch_steps + 20):
        if i == 20:
            start = time.perf_counter()
        loss = (agent.critic(x).squeeze(1) - y).square().mean() + agent.actor_mean(agent.actor_body(x)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    floor = (time.perf_counter() - start) / minibatch_steps
    print(f"P4 PPO update per minibatch step {per_minibatch * 1e3:.2f} ms, bare forward+backward+Adam "
          f"{floor * 1e3:.2f} ms, ratio {per_minibatch / floor:.2f}x")


def p5(device, steps=300):
    """P5: seconds per PPO minibatch step (64 × 11 inputs, as InvertedDoublePendulum) and per one-decision policy
    forward, on `device` and on the CPU, alternately."""
    def timed(dev):
        agent = sar_ppo.Agent(11, 1, repeat=True).to(dev)
        optimizer = torch.optim.Adam(agent.parameters(), lr=1e-4, eps=1e-5)
        x, y, one = torch.randn(64, 11, device=dev), torch.randn(64, device=dev), torch.randn(1, 11, device=dev)
        for i in range(steps + 20):
            if i == 20:
                sync(dev)
                start = time.perf_counter()
            loss = (agent.critic(x).squeeze(1) - y).square().mean() - agent.dist(x).log_prob(x[:, :2]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        sync(dev)
        step, start = (time.perf_counter() - start) / steps, time.perf_counter()
        with torch.inference_mode():
            for _ in range(steps):
                agent.dist(one).sample()[0].cpu().numpy()  # the rollout's round trip: to the device and back
        return step, (time.perf_counter() - start) / steps
    sync = lambda dev: torch.cuda.synchronize() if dev.startswith("cuda") else None  # noqa: E731
    (gpu_step, gpu_forward), (cpu_step, cpu_forward) = timed(device), timed("cpu")
    print(f"P5 PPO minibatch step {gpu_step * 1e3:.2f} ms on {device} vs {cpu_step * 1e3:.2f} ms on the CPU "
          f"({gpu_step / cpu_step:.2f}x); one decision's policy forward {gpu_forward * 1e6:.0f} µs vs "
          f"{cpu_forward * 1e6:.0f} µs ({gpu_forward / cpu_forward:.2f}x)")


def p6(rows, rounds, threads, log_dir):
    n, k, steps, size = 256, 10, 50, 256  # the official recipe's N, K, L and batch
    dt = envs.resolve_dt("InvertedPendulum-v5", "lowest")
    logged = run_ours("dau.py", ["--dt", "lowest", "--physical-time", f"{rows * n * k * dt:g}", "--threads",
                                 str(threads)], log_dir, "p6")[1:]  # the first row is warm-up
    transitions = int(logged[-1]["decision_steps"]) / float(logged[-1]["wall_time_s"])
    per_transition = np.median([1 / float(r["env_steps_per_s"]) for r in logged])
    per_step = np.median([1 / float(r["gradient_steps_per_s"]) for r in logged])

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    agent = dau.Agent(4, 1)
    critic_optimizer, actor_optimizer = dau.make_optimizers(agent, 0.1, dt)
    bare_optimizer = torch.optim.RMSprop(agent.parameters(), lr=0.1 * dt, alpha=1 - dt, foreach=True)
    memory = dau.ReplayMemory(100 * n, n, 4, 1)
    for _ in range(100):
        memory.add(np.random.randn(n, 4), np.random.uniform(-1, 1, (n, 1)), np.random.rand(n), np.random.randn(n, 4),
                   np.random.rand(n) < 0.01, np.random.rand(n) > 0.001)
    obs, actions, _, next_obs, _, _ = (b[0] for b in memory.sample(1, size))

    def dau_steps():
        batches = memory.sample(steps, size)
        for j in range(steps):
            dau.dau_update(agent, critic_optimizer, actor_optimizer, [b[j] for b in batches], dt, 0.99)

    def bare_steps():
        for _ in range(steps):
            advantage = agent.advantage_raw(torch.cat([obs, actions], 1))
            loss = agent.value(obs).square().mean() + advantage.square().mean() + agent.actor(obs).square().mean()
            bare_optimizer.zero_grad()
            loss.backward()
            bare_optimizer.step()

    def same_passes():
        for _ in range(steps):
            policy = agent.act(obs)
            with torch.no_grad():
                next_value = agent.value(next_obs)
            both = agent.advantage_raw(torch.cat([torch.cat([obs, actions], 1), torch.cat([obs, policy.detach()], 1)]))
            loss = (agent.value(obs) + both[:size] - both[size:] - next_value).square().mean() \
                - agent.advantage_raw(torch.cat([obs, policy], 1)).mean()
            bare_optimizer.zero_grad()
            loss.backward()
            bare_optimizer.step()
    times = np.zeros((3, rounds))
    for r in range(rounds + 1):  # round 0 warms up
        for i, block in enumerate((dau_steps, bare_steps, same_passes)):
            start = time.perf_counter()
            block()
            if r:
                times[i, r - 1] = (time.perf_counter() - start) / steps
    step, bare, same = np.median(times, axis=1)
    print(f"P6 DAU, InvertedPendulum-v5 δ={dt:g}, N={n}, K={k}, L={steps}, batch {size}, {threads} thread(s): a run "
          f"of {len(logged) + 1} rows, {transitions:.0f} transitions/s overall, {per_transition * 1e6:.0f} µs per "
          f"transition stepping (acting, {n} envs, memory), {per_step * 1e3:.2f} ms per gradient step; in this "
          f"process, {rounds} alternating rounds: DAU's step {step * 1e3:.2f} ms, "
          f"bare forward+backward+RMSprop of V, Ā, π "
          f"{bare * 1e3:.2f} ms (ratio {step / bare:.2f}x), DAU's passes made bare {same * 1e3:.2f} ms "
          f"(ratio {step / same:.2f}x)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.error = fail
    p.add_argument("--quick", action="store_true", help="all five figures in under four minutes")
    p.add_argument("--threads", type=within(int, 1, 256), default=1)
    p.add_argument("--only", default="12346", help="which figures, e.g. 24")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: measure P5 only, GPU vs CPU")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device: no CUDA GPU here (torch.cuda.is_available() is False); the scripts run on the CPU")
    if not args.only or set(args.only) - set("12346"):
        fail(f"--only: figures among 1, 2, 3, 4, 6 (e.g. 24), got {args.only!r}")
    if "1" in args.only and importlib.util.find_spec("stable_baselines3") is None:
        fail("--only: P1 needs stable-baselines3: pip install -r benchmark/requirements.txt (or --only 2346)")
    torch.set_num_threads(args.threads)
    cpu = open("/proc/cpuinfo").read().split("model name")[1].split(":")[1].splitlines()[0].strip()
    print(f"machine: {os.cpu_count()} cores, {cpu}; torch {torch.__version__}, {args.threads} thread(s)")
    if args.device == "cuda":
        p5("cuda")
        return
    with tempfile.TemporaryDirectory() as log_dir:
        if "1" in args.only:
            p1(10_240 if args.quick else 51_200, 1 if args.quick else 3, args.threads, log_dir)
        if "2" in args.only:
            for env_id, dt in (("Hopper-v5", 5e-4), ("InvertedPendulum-v5", 2e-3)):
                p2(env_id, dt, 1_000 if args.quick else 5_000)
        if "3" in args.only or "4" in args.only:
            p3_p4(51_200 if args.quick else 102_400, args.threads, log_dir, 300 if args.quick else 2_000)
        if "6" in args.only:
            p6(6 if args.quick else 20, 5 if args.quick else 15, args.threads, log_dir)


if __name__ == "__main__":
    promises.run(main)
