"""The parts behind benchmark/speed.py's figures, each timed in-process (README "Performance").

    python benchmark/profile_parts.py

1. Cost per δ-step on InvertedPendulum-v5 at δ = 2 ms: bare `env.unwrapped.step`, through `DtEnv`,
   and inside SAR's repetition with long (u = 1) and short (u = 0.05) repetitions.
2. The rollout's policy call for one observation: forward + sample + log-prob, and the forward alone.
3. One PPO minibatch step as sar_ppo.py does it and without each extra it carries, interleaved with
   the bare forward + backward + Adam step; medians over rounds.
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the project's folder
import envs
import sar_ppo
from tools import promises

torch.set_num_threads(1)


def per_call_us(f, n):
    f(1)
    start = time.perf_counter()
    count = f(n)
    return (time.perf_counter() - start) / count * 1e6


def stepping(env, action):
    def run(n):
        for _ in range(n):
            out = env.step(action)
            if out[2] or out[3]:
                env.reset()
        return n
    return run


def repeating(env, u):
    action = np.array([0.0, 2 * u - 1], np.float32)

    def run(n):
        steps = 0
        while steps < n:
            _, _, terminated, truncated, info = env.step(action)
            steps += info["w"]
            if terminated or truncated:
                env.reset()
        return steps
    return run


def part1(rounds=3):
    raw = envs.make_env("InvertedPendulum-v5", 2e-3).unwrapped
    dtenv = envs.make_env("InvertedPendulum-v5", 2e-3)
    sar = sar_ppo.SafeActionRepetition(envs.make_env("InvertedPendulum-v5", 2e-3), 0.5, 0.05)
    for env in (raw, dtenv, sar):
        env.reset(seed=0)
    results = {k: [] for k in ("bare", "DtEnv", "SAR long", "SAR short")}
    for _ in range(rounds):
        results["bare"].append(per_call_us(stepping(raw, np.zeros(1)), 20000))
        results["DtEnv"].append(per_call_us(stepping(dtenv, np.zeros(1)), 20000))
        results["SAR long"].append(per_call_us(repeating(sar, 1.0), 20000))
        results["SAR short"].append(per_call_us(repeating(sar, 0.05), 20000))
    print("1. µs per δ-step, InvertedPendulum-v5 δ=2e-3 (median of %d): " % rounds
          + ", ".join(f"{k} {np.median(v):.1f}" for k, v in results.items()))


def part2():
    agent = sar_ppo.Agent(4, 1, repeat=1)
    obs = np.zeros(4, np.float32)

    def policy(n):
        for _ in range(n):
            with torch.inference_mode():
                dist = agent.dist(torch.as_tensor(obs)[None])
                action = dist.sample()
                dist.log_prob(action).sum()
            action[0].numpy()
        return n

    def forward(n):
        x = torch.as_tensor(obs)[None]
        for _ in range(n):
            with torch.inference_mode():
                agent.actor_mean(agent.actor_body(x))
        return n
    print(f"2. policy call for one observation: forward+sample+log-prob {per_call_us(policy, 3000):.0f} µs, "
          f"actor forward alone {per_call_us(forward, 3000):.0f} µs")


def part3(rounds=15, steps=60):
    n, mb_size = 2048, 64
    agent = sar_ppo.Agent(4, 1, repeat=1)
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-4, eps=1e-5, fused=True)
    b_obs, b_actions = torch.randn(n, 4), torch.randn(n, 2)
    b_logprobs, b_advantages, b_returns = torch.randn(n), torch.randn(n), torch.randn(n)
    order = np.random.default_rng(0).permutation(n)

    def ppo_step(clip=True, stats=True, distributions=True):
        mb = torch.as_tensor(order[:mb_size])
        mb_obs = b_obs[mb]
        if distributions:
            dist = agent.dist(mb_obs)
            newlogprob = dist.log_prob(b_actions[mb]).sum(1)
            dist.entropy().sum(1)
        else:  # the Gaussian log-density written out
            hidden = agent.actor_body(mb_obs)
            mean = agent.actor_mean(hidden)
            logstd = torch.cat([agent.actor_logstd.expand(mb_size, -1), agent.repeat_logstd(hidden)], 1).clamp(-20, 2)
            newlogprob = (-0.5 * ((b_actions[mb] - mean) / logstd.exp()) ** 2 - logstd).sum(1) - math.log(2 * math.pi)
        newvalue = agent.critic(mb_obs).squeeze(1)
        logratio = newlogprob - b_logprobs[mb]
        ratio = logratio.exp()
        if stats:
            with torch.no_grad():
                ((ratio - 1) - logratio).mean(), ((ratio - 1.0).abs() > 0.2).float().mean()
        adv = b_advantages[mb]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(0.8, 1.2)).mean()
        loss = pg_loss + 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        optimizer.step()

    x, y = torch.randn(mb_size, 4), torch.randn(mb_size)

    def bare():
        loss = (agent.critic(x).squeeze(1) - y).square().mean() + agent.actor_mean(agent.actor_body(x)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    variants = {"as in sar_ppo.py": ppo_step, "no grad-norm clipping": lambda: ppo_step(clip=False),
                "no KL/clip-fraction stats": lambda: ppo_step(stats=False),
                "log-prob written out": lambda: ppo_step(distributions=False), "bare fwd+bwd+Adam": bare}
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for name, f in variants.items():
            f()
            start = time.perf_counter()
            for _ in range(steps):
                f()
            times[name].append((time.perf_counter() - start) / steps * 1e3)
    print(f"3. ms per minibatch step (median of {rounds} interleaved rounds): "
          + ", ".join(f"{k} {np.median(v):.2f}" for k, v in times.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.error = promises.fail  # it takes no arguments: any is one line, exit 2
    parser.parse_args(argv)
    part1()
    part2()
    part3()


if __name__ == "__main__":
    promises.run(main)
