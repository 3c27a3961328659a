"""FiGAR-C-PPO: PPO with durative actions (Sec. 4.2 of Park, Kim & Kim, NeurIPS 2021), in one file.

The policy picks an action a and a duration t ∈ [0, max_t]; a is repeated for ⌈t/δ⌉ δ-steps
(at least one), blind to what the state does meanwhile. The paper's main baseline for SAR-PPO:
run `diff sar_ppo.py figar_ppo.py` to see everything in which the two methods differ; TaCoS-PPO's
four flags (--switch-cost, --min-steps, --duration-map, --time-feature; Treven et al., 2024, not
in the paper) are in that diff too. With --a2c, FiGAR-C-A2C: A2C's update instead of PPO's (App. D).

    python figar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --seed 1
"""
import argparse
import math
import time
import warnings

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from gymnasium.wrappers.utils import RunningMeanStd
from torch.distributions.normal import Normal

import bookkeeping
import envs
from bookkeeping import fail, within

MAX_T = 0.05  # t_max (s): the longest duration t = u·t_max (App. J.3)
MAX_T_CAP = 1000  # (s) the largest finite t_max taken, by the flag and the wrapper alike


class DurativeRepetition(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """FiGAR-C's durative actions (Sec. 4.2) around a gymnasium env with 1-D Box spaces; a `step` is
    one decision.

    The action is [a, u_raw], u = (u_raw + 1)/2 ∈ [0, 1]; `a` is repeated for ⌈t/δ⌉ δ-steps
    with t = u·max_t (at least min_steps), or until the episode ends, blind to the state
    meanwhile. With limit_t=False u is not clipped above, so t can exceed max_t (App. I).
    TaCoS's map (Treven et al., 2024), `tacos_map=True`: k = ⌊K_MIN + (K − K_MIN)·u⌋ δ-steps
    in whole numbers, K = ⌊max_t/δ⌋, K_MIN = min_steps. Under either map `a` reaches the env
    unclipped (main clips it). `step` returns R = Σ_k γ_δ^k r_k over its k δ-steps,
    info["w"] = k and info["undiscounted_reward"] = Σ_k r_k; the env's own info keys are its
    last δ-step's. One env, not a vector of them. At another δ the env must be the task at δ
    (γ_δ, r·δ/δ0, its time limit in seconds), as envs.make_env makes it.
    """

    def __init__(self, env, max_t=MAX_T, limit_t=True, dt=None, gamma_dt=None, min_steps=1,
                 tacos_map=False):
        gym.utils.RecordConstructorArgs.__init__(self, max_t=max_t, limit_t=limit_t, dt=dt,
                                                 gamma_dt=gamma_dt, min_steps=min_steps,
                                                 tacos_map=tacos_map)
        gym.Wrapper.__init__(self, env)
        self.dt, self.gamma_dt, _ = check_wrapped(env, dt, gamma_dt, max_t)
        if max_t == math.inf:
            raise ValueError("max_t: a duration t = u·max_t needs a finite max_t, got inf")
        self.max_t = max_t
        self.longest_hold = math.floor(max_t / self.dt + 1e-9)  # K, in whole δ-steps
        if not (isinstance(min_steps, int) and 1 <= min_steps <= max(1, self.longest_hold)):
            raise ValueError(f"min_steps: whole δ-steps from 1 to max_t/δ = {self.longest_hold}, "
                             f"got {min_steps!r}")
        if tacos_map and not limit_t:
            raise ValueError("tacos_map: TaCoS's holds end at max_t; it takes limit_t=True")
        self.min_steps = min_steps
        self.tacos_map = tacos_map
        one_step = limit_t and max_t <= self.dt * (1 + 1e-9)
        if tacos_map:  # whole δ-steps up to K
            one_step = self.longest_hold <= 1
        if one_step:
            warnings.warn(f"max_t = {max_t} s holds one δ-step of {self.dt} s at most: "
                          "no action can be repeated", stacklevel=2)
        low, high = env.action_space.low, env.action_space.high
        # --no-limit-t: u is not clipped above
        u_high = np.float32(1)
        if not limit_t:
            u_high = np.float32(np.inf)
        self.action_space = gym.spaces.Box(np.append(low, np.float32(-1)), np.append(high, u_high))

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        if not np.isfinite(obs).all():  # refused before anything learns from it
            raise ValueError(f"observation: not finite, got {obs}")
        return obs, info

    def step(self, action):
        action = np.asarray(action)
        if action.shape != self.action_space.shape or not np.isfinite(action).all():
            size = self.action_space.shape[0]
            raise ValueError(f"action: needs {size} finite numbers, shape ({size},), "
                             f"got {action!r}")
        # u ∈ [0, 1], unless limit_t is off
        u = (min(max(action[-1], -1.0), self.action_space.high[-1]) + 1) / 2
        a = action[:-1]
        if self.tacos_map:  # TaCoS: ⌊K_MIN + (K − K_MIN)·u⌋ δ-steps, floored once
            steps = math.floor(self.min_steps + (self.longest_hold - self.min_steps) * u)
        else:  # FiGAR-C: ⌈t/δ⌉ with t = u·t_max, at least K_MIN
            steps = max(self.min_steps, math.ceil(u * self.max_t / self.dt - 1e-9))
        R = 0.0  # Σ_k γ_δ^k r_k
        discount = 1.0
        undiscounted = 0.0
        k = 0
        while True:
            obs, r, terminated, truncated, info = self.env.step(a)
            if not np.isfinite(obs).all():  # refused before anything learns from it
                raise ValueError(f"observation: not finite, got {obs}")
            if not math.isfinite(r):
                raise ValueError(f"reward: not finite, got {r}")
            R += discount * r
            discount *= self.gamma_dt
            undiscounted += r
            k += 1
            if terminated or truncated or k >= steps:
                break
        info.update(w=k, undiscounted_reward=undiscounted)
        return obs, R, terminated, truncated, info


def check_wrapped(env, dt, gamma_dt, max_t):
    """(δ, γ_δ, observation size) for a repetition around `env`, checked: `dt` (seconds per step
    of `env`) and `gamma_dt` (discount per step) are the env's own if it has them (envs.DtEnv
    has both; an argument must agree), else the arguments; γ_δ = 0.99 if neither."""
    own = None  # the env's own δ, if it has one
    if env.has_wrapper_attr("dt"):
        own = env.get_wrapper_attr("dt")
    if dt is not None and own is not None and not math.isclose(dt, own, rel_tol=1e-9):
        raise ValueError(f"dt: the env steps {own!r} s, got {dt!r} "
                         "(leave dt out to take the env's)")
    if own is not None:
        dt = own
    own = None  # the env's own γ_δ, if it has one
    if env.has_wrapper_attr("gamma_dt"):
        own = env.get_wrapper_attr("gamma_dt")
    if gamma_dt is not None and own is not None and not math.isclose(gamma_dt, own, rel_tol=1e-9):
        raise ValueError(f"gamma_dt: the env discounts {own!r} a step, got {gamma_dt!r} "
                         "(leave gamma_dt out to take the env's)")
    if own is not None:
        gamma_dt = own
    if gamma_dt is None:
        gamma_dt = 0.99
    space, box = env.observation_space, gym.spaces.Box
    if not (isinstance(space, box) and len(space.shape) == 1 and isinstance(env.action_space, box)
            and len(env.action_space.shape) == 1):
        raise ValueError("env: needs 1-D Box observations and actions (flatten them first), "
                         f"got {space} and {env.action_space}")
    checks = [("dt", dt, dt is not None and 0 < dt < math.inf),
              ("gamma_dt", gamma_dt, 0 < gamma_dt <= 1),
              ("max_t", max_t, 0 < max_t <= MAX_T_CAP or max_t == math.inf)]
    for name, value, ok in checks:
        if not ok:
            hint = " (pass dt= for an env without one)" if dt is None else ""
            raise ValueError(f"{name}: out of range, got {value}{hint}")
    return dt, gamma_dt, space.shape[0]


# ---------------------------------------------------------------- the agent
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs, 2×256 ReLU (App. J.3). Gaussian policy: a state-independent
    log-std for the K task dims (`num_actions`, the task's own), a state-dependent one for the
    repetition dim (added when `repeat`). `authors_head`, to measure the authors' code: "sb2"
    (their TRPO) gives the last dim a head of gain 1 and bias 0, a task dim's too without a
    repetition dim; "sb3" (their A2C) leaves the repetition head at PyTorch's default init."""

    def __init__(self, obs_dim, num_actions, repeat, init_logstd=0.0, authors_head=None):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 1), std=1.0))
        self.actor_body = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU())
        self.actor_mean = layer_init(nn.Linear(256, num_actions + int(repeat)), std=0.01)
        logstd_dims = num_actions  # the dims of a state-independent log-std
        if authors_head == "sb2" and not repeat:
            logstd_dims = num_actions - 1
        self.actor_logstd = nn.Parameter(torch.full((logstd_dims,), init_logstd))
        self.repeat_logstd = None  # the last dim's state-dependent log-std: the repetition dim's
        if repeat and authors_head is None:
            self.repeat_logstd = layer_init(nn.Linear(256, 1), std=0.01, bias_const=init_logstd)
        elif authors_head == "sb2":
            self.repeat_logstd = layer_init(nn.Linear(256, 1), std=1.0)
        elif authors_head == "sb3" and repeat:
            self.repeat_logstd = nn.Linear(256, 1)

    def dist(self, x):
        hidden = self.actor_body(x)
        logstd = self.actor_logstd.expand(x.shape[0], -1)
        if self.repeat_logstd is not None:
            logstd = torch.cat([logstd, self.repeat_logstd(hidden)], dim=1)
        # validate_args=False: checking the arguments costs more than the Gaussian itself at these
        # sizes
        return Normal(self.actor_mean(hidden), logstd.clamp(-20, 2).exp(), validate_args=False)


def normalize(x, stats, on, update=False, clip=10.0):
    """Running mean/std normalization, clipped to ±10 (SB3's VecNormalize); `update`: x joins the
    statistics first."""
    if on and update:
        # one sample: mean x, var 0, count 1 (cheaper than update()'s np.var)
        stats.update_from_moments(x, 0.0, 1)
    if not on:
        return np.asarray(x, dtype=np.float32)
    return np.clip((x - stats.mean) / np.sqrt(stats.var + 1e-8), -clip, clip).astype(np.float32)


def compute_gae(rewards, values, next_values, discounts, dones, gae_lambda):
    """GAE where a transition's next state is w δ-steps away: its discount is γ_δ^w (eq. 5).
    `next_values` is V(s') (0 after a termination, V(final obs) after a time-limit truncation);
    `dones` cuts the λ-chain at either."""
    deltas = rewards + discounts * next_values - values
    advantages = np.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(len(rewards))):
        last = deltas[t] + discounts[t] * gae_lambda * (1.0 - dones[t]) * last
        advantages[t] = last
    return advantages


def ppo_update(agent, optimizer, batch, args, rng):
    """PPO's update (Schulman et al., 2017, eq. 9): `update_epochs` passes over the rollout in
    minibatches, each step on the clipped surrogate plus the value MSE. Returns the update's logged
    means. With --a2c it is A2C's step (Huang et al., 2022): one pass, one minibatch, raw
    advantages; the ratio is 1, so the gradient is −A·∇log π. `batch`: float32 arrays (obs,
    actions, log-probs, advantages, returns); `args`: the flags update_epochs, minibatch_size,
    clip_coef, ent_coef, vf_coef, max_grad_norm and a2c."""
    b_obs, b_actions, b_logprobs, b_advantages, b_returns = map(torch.as_tensor, batch)
    n = len(b_obs)
    names = ("policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy")
    logs = {name: [] for name in names}
    for epoch in range(args.update_epochs):
        order = rng.permutation(n)
        for begin in range(0, n, args.minibatch_size):
            mb = torch.as_tensor(order[begin:begin + args.minibatch_size])
            dist = agent.dist(b_obs[mb])
            newlogprob = dist.log_prob(b_actions[mb]).sum(1)
            entropy = dist.entropy().sum(1)
            newvalue = agent.critic(b_obs[mb]).squeeze(1)
            logratio = newlogprob - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                logs["approx_kl"].append(((ratio - 1) - logratio).mean())
                logs["clip_fraction"].append(((ratio - 1.0).abs() > args.clip_coef).float().mean())
            mb_advantages = b_advantages[mb]
            if not args.a2c:
                mean, std = mb_advantages.mean(), mb_advantages.std()
                mb_advantages = (mb_advantages - mean) / (std + 1e-8)
            clipped = ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = torch.max(-mb_advantages * ratio, -mb_advantages * clipped).mean()
            v_loss = ((newvalue - b_returns[mb]) ** 2).mean()
            loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
            logs["policy_loss"].append(pg_loss.detach())
            logs["value_loss"].append(v_loss.detach())
            logs["entropy"].append(entropy.mean().detach())
    means = {name: torch.stack(logged).mean().item() for name, logged in logs.items()}
    if args.a2c:  # approx_kl and clip_fraction are measured before a step: A2C's one step has none
        means.update(approx_kl="", clip_fraction="")
    return means


# ---------------------------------------------------------------- training
def make_decision_env(args):
    """The environment of one decision: the δ-env, then the repetition, then the perturbation
    outside it (one draw per decision, Sec. 5.2). Returns (env, the repetition wrapper)."""
    env = envs.make_env(args.env_id, args.dt, args.gamma)
    if args.hold_penalty:
        # App. H: counts holding time at δ-level, inside the repetition
        env = envs.HoldPenalty(env)
    if args.time_feature:
        # TaCoS: the elapsed time, counted in δ-steps under the repetition
        env = envs.TimeFeature(env)
    env = DurativeRepetition(env, args.max_t, limit_t=not args.no_limit_t, min_steps=args.min_steps,
                             tacos_map=args.duration_map == "tacos")
    repetition = env
    if args.noise:
        env = envs.Perturb(env, args.noise, args.noise_prob, args.noise_std)
    return env, repetition


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the policy's samples and the network init
    rng = np.random.default_rng(args.seed)  # minibatch order; the env has its own, seeded by reset

    env, repetition = make_decision_env(args)
    dt = repetition.dt
    dt0 = repetition.get_wrapper_attr("dt0")
    gamma_dt = repetition.gamma_dt
    obs_dim = env.observation_space.shape[0]
    action_low, action_high = env.action_space.low, env.action_space.high
    learning_rate = args.learning_rate
    if args.scale_lr:  # PPO (scaled), App. F.2
        learning_rate = args.learning_rate * (dt / dt0)

    authors_head = "sb3" if args.sb3_u_init else None
    agent = Agent(obs_dim, env.unwrapped.action_space.shape[0], repeat=True,
                  init_logstd=args.init_logstd, authors_head=authors_head)
    if args.a2c:  # RMSprop (Table 4)
        optimizer = torch.optim.RMSprop(agent.parameters(), lr=learning_rate, alpha=0.99,
                                        eps=args.adam_eps)
    else:  # fused: one kernel for all parameters instead of ~10 small ops per tensor
        optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=args.adam_eps,
                                     fused=True)
    obs_rms = RunningMeanStd(shape=(obs_dim,))  # network inputs
    ret_rms = RunningMeanStd(shape=())  # discounted return, for reward scaling
    learner = {"agent": agent, "optimizer": optimizer, "obs_rms": obs_rms, "ret_rms": ret_rms}
    config = {**vars(args), "dt": dt, "dt0": dt0, "gamma_dt": gamma_dt,
              "learning_rate_used": learning_rate}
    script = SCRIPT
    if tacos(args):  # TaCoS-PPO logs its cost and decisions too
        script = TACOS_SCRIPT
    # Rollout storage (decision level)
    n = args.num_steps
    obs_buf = np.zeros((n, obs_dim), np.float32)
    final_obs_buf = np.zeros((n, obs_dim), np.float32)  # a truncated episode's last obs
    actions_buf = np.zeros((n, env.action_space.shape[0]), np.float32)
    logprobs_buf = np.zeros(n, np.float32)
    rewards_buf = np.zeros(n, np.float32)
    terminated_buf = np.zeros(n, np.float32)
    truncated_buf = np.zeros(n, np.float32)
    discounts_buf = np.zeros(n, np.float32)  # γ_δ^w
    durations_buf = np.zeros(n, np.int64)  # w, in δ-steps
    eval_decision_env = None
    if args.eval_every or args.eval_every_s:
        eval_decision_env = make_decision_env(args)

    # lock the run folder; start the run, or resume it: weights, RNGs and the episode in progress
    # (a new episode feeds the input statistics); a finished run exits here
    new_episode = lambda raw_obs: normalize(raw_obs, obs_rms, args.norm_obs, update=True)  # noqa: E731
    run, (raw_obs, obs, episode_return, scaling_return, episode_cost, episode_decisions) = (
        bookkeeping.open_or_resume(args, argv, script, learner, config, rng, env, new_episode))
    counters = run["counters"]  # a resumed run's
    start = time.time() - counters["wall_time_s"]
    # the budget: --total-steps decisions, or --physical-time seconds (as progress.csv rounds them)
    while (counters["decision_steps"] < args.total_steps if args.physical_time is None
           else round(counters["env_steps"] * dt, 6) < args.physical_time - 1e-9):
        update_start = time.time()
        finished_returns = []
        finished_costs = []  # TaCoS's switch costs paid, and decisions, per finished episode
        finished_decisions = []
        # ---------------- rollout: n decision steps
        for step in range(n):
            obs_buf[step] = obs
            with torch.inference_mode():  # no_grad without autograd's bookkeeping: cheaper
                dist = agent.dist(torch.as_tensor(obs)[None])
                action = dist.sample()
                logprobs_buf[step] = dist.log_prob(action).sum()  # of the unclipped sample
            action = action[0].numpy()
            actions_buf[step] = action
            try:
                clipped = np.clip(action, action_low, action_high)
                raw_obs, R, terminated, truncated, info = env.step(clipped)
                if terminated or truncated:
                    next_raw_obs, _ = env.reset()
            except ValueError as e:  # the wrappers' checks: a non-finite observation or reward
                bookkeeping.env_failed(e, f"update {counters['update'] + 1}")
            w = info["w"]  # δ-steps this decision lasted
            discounts_buf[step] = gamma_dt ** w
            durations_buf[step] = w
            if args.switch_cost:  # TaCoS: a cost per decision, before any reward normalisation
                R -= args.switch_cost
                episode_cost += args.switch_cost
            episode_decisions += 1
            if args.norm_reward:  # R / std of the discounted return, clipped to ±10
                scaling_return = scaling_return * gamma_dt ** w + R
                ret_rms.update_from_moments(scaling_return, 0.0, 1)
                R = np.clip(R / np.sqrt(ret_rms.var + 1e-8), -10.0, 10.0)
            rewards_buf[step] = R
            terminated_buf[step] = terminated
            truncated_buf[step] = truncated
            episode_return += info["undiscounted_reward"]
            if terminated or truncated:
                if truncated and not terminated:
                    final_obs_buf[step] = normalize(raw_obs, obs_rms, args.norm_obs)
                finished_returns.append(episode_return)
                finished_costs.append(episode_cost)
                finished_decisions.append(episode_decisions)
                episode_cost, episode_decisions = 0.0, 0
                episode_return, scaling_return = 0.0, 0.0
                raw_obs = next_raw_obs
            obs = normalize(raw_obs, obs_rms, args.norm_obs, update=True)
        steps = int(durations_buf.sum())  # the update's δ-steps
        counters["decision_steps"] += n
        counters["env_steps"] += steps
        counters["episodes"] += len(finished_returns)
        rollout_time = time.time() - update_start

        # ---------------- GAE over decision steps (eq. 5)
        with torch.no_grad():
            values = agent.critic(torch.as_tensor(obs_buf)).squeeze(1).numpy()
            last_value = agent.critic(torch.as_tensor(obs)[None]).item()
            final_values = agent.critic(torch.as_tensor(final_obs_buf)).squeeze(1).numpy()
        next_values = np.append(values[1:], last_value)
        # a time limit is no termination, but where the state holds the time (TaCoS) V is 0 at it
        at_limit = final_values
        if args.time_feature:
            at_limit = np.zeros(n, np.float32)
        next_values = np.where(truncated_buf > 0, at_limit, next_values)
        next_values = np.where(terminated_buf > 0, 0.0, next_values)
        dones = np.maximum(terminated_buf, truncated_buf)
        advantages = compute_gae(rewards_buf, values, next_values, discounts_buf, dones,
                                 args.gae_lambda)
        returns = advantages + values

        # ---------------- PPO update
        batch = (obs_buf, actions_buf, logprobs_buf, advantages, returns)
        logs = ppo_update(agent, optimizer, batch, args, rng)
        counters["update"] += 1

        # ---------------- logs
        update_time = time.time() - update_start
        eval_return = None  # None: a blank in progress.csv
        eval_decisions = None
        if bookkeeping.evaluation_due(args, counters, steps, dt):
            eval_return, eval_decisions = evaluate(args, eval_decision_env, agent, obs_rms)
        counters["wall_time_s"] = time.time() - start
        return_mean = None  # no training episode ended
        if finished_returns:
            return_mean = float(np.mean(finished_returns))
        row = {"decision_steps": counters["decision_steps"], "env_steps": counters["env_steps"],
               "physical_time_s": round(counters["env_steps"] * dt, 6),
               "wall_time_s": round(counters["wall_time_s"], 3), "episodes": counters["episodes"],
               "return_mean": return_mean, "eval_return_mean": eval_return,
               "action_duration_mean_s": float(durations_buf.mean() * dt),
               "safe_radius_mean": None,  # no safe region
               **logs,
               "decisions_per_s": round(n / update_time, 1),  # of the whole update
               "env_steps_per_s": round(steps / rollout_time, 1)}  # of the rollout alone
        # the return without the cost is return_mean; the cost and the decisions beside it
        if tacos(args):  # blank if no episode ended
            row.update(cost_mean=None, decisions_per_episode=None)
            row["eval_decisions_per_episode"] = eval_decisions
        if tacos(args) and finished_costs:
            row["cost_mean"] = float(np.mean(finished_costs))
            row["decisions_per_episode"] = float(np.mean(finished_decisions))
        said = [f"return {return_mean:.1f}" if finished_returns else "no episode ended",
                f"duration {1e3 * row['action_duration_mean_s']:.1f}ms"]
        if tacos(args) and finished_costs:  # TaCoS: the return is the task's, its switch cost apart
            said[0] += " before the switch cost"
            said.insert(1, f"switch cost {row['cost_mean']:.1f}")
        said += [f"{row['decisions_per_s']:.0f} decisions/s",
                 f"{row['env_steps_per_s']:.0f} δ-steps/s in the rollout"]
        episode = (raw_obs, obs, episode_return, scaling_return, episode_cost, episode_decisions)
        bookkeeping.log_and_checkpoint(run, args, row, said, env, episode)
    bookkeeping.end(run, args, env)  # model.pt with --save-model


def evaluate(args, decision_env, agent, obs_rms):
    """Mean return (without any switch cost) of deterministic (mean-action) episodes, with every
    running statistic frozen, and their mean decisions."""
    env, repetition = decision_env
    low, high = env.action_space.low, env.action_space.high
    returns = np.zeros(args.eval_episodes)
    decisions = 0
    for episode in range(args.eval_episodes):
        raw_obs, _ = env.reset(seed=args.seed + 10_000 + episode)
        done = False
        while not done:
            inputs = normalize(raw_obs, obs_rms, args.norm_obs)
            with torch.no_grad():
                mean = agent.dist(torch.as_tensor(inputs)[None]).mean[0].numpy()
            raw_obs, _, terminated, truncated, info = env.step(np.clip(mean, low, high))
            returns[episode] += info["undiscounted_reward"]
            decisions += 1
            done = terminated or truncated
    return float(np.mean(returns)), decisions / args.eval_episodes


# ================================================================ the flags
TOTAL_STEPS = 1_000_000  # decisions, the default budget
# Table 2; init_logstd: the authors' sb3/repeat/main.py
PPO_DEFAULTS = {"num_steps": 2048, "update_epochs": 10, "minibatch_size": 64, "gae_lambda": 0.95,
                "init_logstd": 0.0}
# Table 4 (minibatch_size None: the rollout is one); gae_lambda, init_logstd: the authors' code
A2C_DEFAULTS = {"num_steps": 256, "update_epochs": 1, "minibatch_size": None, "gae_lambda": 1.0,
                "init_logstd": -1.5}
CLIP_COEF = 0.2  # PPO's ratio clip ε (Table 2)


def parse_args(argv=None):
    """The flags, each checked on its own; then the rules between flags and the defaults that hang on other flags;
    then the names of the method and the run."""
    args = make_parser().parse_args(argv)
    check_args(args)
    name_run(args)
    bookkeeping.take_run_flags(args, argv, SCRIPT)  # --resume: each flag not given is the run's own
    return args


def make_parser():
    p = bookkeeping.parser(__doc__)
    envs.add_flags(p)  # --env-id, --dt; --noise, --noise-prob, --noise-std, --hold-penalty (Sec. 5.2, App. H)
    p.add_argument("--seed", type=bookkeeping.SEED, default=1, help="seeds torch, numpy and the env")
    bookkeeping.add_budget_flags(p, TOTAL_STEPS)  # --total-steps, or --physical-time
    # The method (Sec. 4.2)
    p.add_argument("--max-t", type=within(float, 0, MAX_T_CAP, open_low=True), default=MAX_T,
                   help="t_max (s): t = u·t_max")
    p.add_argument("--no-limit-t", action="store_true", help="ablation (App. I): u unclipped above, t may pass t_max")
    # TaCoS-PPO (Treven et al., 2024): FiGAR-C with a cost per decision; beyond the paper. Any of these: TaCoS-PPO
    p.add_argument("--switch-cost", type=within(float, 0, 10 ** 6), default=0.0,
                   help="c, subtracted from each decision's reward before normalisation (TaCoS: HalfCheetah 2)")
    p.add_argument("--min-steps", type=within(int, 1, 10 ** 6), default=1, help="K_MIN, the shortest hold (δ-steps)")
    p.add_argument("--duration-map", choices=["figar", "tacos"], default="figar",
                   help="a hold of ⌈u·t_max/δ⌉ δ-steps (FiGAR-C), or ⌊K_MIN + (K − K_MIN)·u⌋ (TaCoS)")
    p.add_argument("--time-feature", action="store_true",
                   help="the episode's elapsed time over its limit appended to the observation (TaCoS)")
    p.add_argument("--scale-lr", action="store_true", help="lr·δ/δ0, as PPO (scaled) in App. F.2")
    # PPO (App. J.3, Table 2)
    p.add_argument("--learning-rate", type=within(float, 0, 1, open_low=True), default=1e-4, help="Adam's step size")
    p.add_argument("--adam-eps", type=within(float, 1e-12, 1), default=1e-5, help="Adam's epsilon")
    p.add_argument("--a2c", action="store_true", help="A2C as PPO's special case (Table 4): one step on the whole "
                   "rollout, RMSprop (step size and epsilon: --learning-rate, --adam-eps), raw advantages, GAE λ "
                   f"{A2C_DEFAULTS['gae_lambda']:g}, {A2C_DEFAULTS['num_steps']} decisions per update, initial log-std "
                   f"{A2C_DEFAULTS['init_logstd']}")
    p.add_argument("--num-steps", type=within(int, 2, 2 ** 20),
                   help=f"decision steps per update ({PPO_DEFAULTS['num_steps']})")
    p.add_argument("--update-epochs", type=within(int, 1, 1000),
                   help=f"passes over a rollout per update ({PPO_DEFAULTS['update_epochs']})")
    p.add_argument("--minibatch-size", type=within(int, 2, 2 ** 20),
                   help=f"decisions per gradient step ({PPO_DEFAULTS['minibatch_size']})")
    p.add_argument("--gamma", type=within(float, 0, 1, open_low=True), default=0.99, help="discount per δ0 (App. J.2)")
    p.add_argument("--gae-lambda", type=within(float, 0, 1),
                   help=f"GAE λ, per decision step ({PPO_DEFAULTS['gae_lambda']})")
    p.add_argument("--init-logstd", type=within(float, -20, 2), help=f"the policy's initial log-std "
                   f"({PPO_DEFAULTS['init_logstd']:g})")
    p.add_argument("--sb3-u-init", action="store_true", help="with --a2c, the authors' init of the repetition "
                   "head (PyTorch's default: σ ≈ 1 at the start, not --init-logstd's), to measure it")
    p.add_argument("--clip-coef", type=within(float, 0, 10, open_low=True), default=CLIP_COEF,
                   help="PPO's ratio clip ε")
    p.add_argument("--vf-coef", type=within(float, 0, 1000, open_low=True), default=0.5, help="value loss weight")
    p.add_argument("--ent-coef", type=within(float, 0, 1000), default=0.0, help="entropy bonus weight")
    p.add_argument("--max-grad-norm", type=within(float, 0, 1e6, open_low=True), default=0.5, help="gradient clipping")
    p.add_argument("--norm-obs", action=argparse.BooleanOptionalAction, help="normalise inputs (default: not on Ant)")
    p.add_argument("--norm-reward", action=argparse.BooleanOptionalAction, help="scale rewards (default: not on Ant)")
    bookkeeping.add_run_flags(p)  # --eval-every, --eval-episodes, --log-dir, --run-name, --checkpoint-every, ...
    return p


def check_args(args):
    """What no single flag sees, in one table; then the defaults that hang on other flags."""
    envs.check_flags(args)  # --dt in seconds; the stochastic settings where the paper defines them
    for flag, given in [("--update-epochs", args.update_epochs), ("--minibatch-size", args.minibatch_size)]:
        if args.a2c and given is not None:
            fail(f"{flag}: A2C takes one step on the whole rollout; leave {flag} out with --a2c")
    for name, default in (A2C_DEFAULTS if args.a2c else PPO_DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.minibatch_size = args.minibatch_size or args.num_steps
    for flag, ok, rule in [  # what no single flag sees
            ("--max-t", args.no_limit_t or args.max_t > args.dt * (1 + 1e-9) or args.max_t == args.dt == MAX_T
             and envs.is_paper_task(args.env_id), f"{args.max_t:g} s is not above δ = {args.dt:g} s, so no action "
             f"could be repeated; pass --max-t {4 * args.dt:g} (up to 4 δ-steps a decision)"),
            ("--clip-coef", not args.a2c or args.clip_coef == CLIP_COEF,
             "A2C's ratio is 1, nothing to clip; leave it out"),
            ("--num-steps/--minibatch-size", args.minibatch_size <= args.num_steps,
             f"--minibatch-size {args.minibatch_size} must not exceed --num-steps {args.num_steps}"),
            ("--num-steps/--minibatch-size", args.num_steps % args.minibatch_size != 1,
             f"{args.num_steps} decisions in minibatches of {args.minibatch_size} leave a last one of one decision, "
             "whose advantages have no std"),
            ("--sb3-u-init", not args.sb3_u_init or args.a2c,
             "is SAR-A2C's and FiGAR-C-A2C's: it needs --a2c"),
            ("--min-steps", args.min_steps <= max(1, math.floor(args.max_t / args.dt + 1e-9)),
             f"{args.min_steps} δ-steps exceed --max-t {args.max_t:g} s at δ = {args.dt:g} s"),
            ("--duration-map", args.duration_map == "figar" or not args.no_limit_t,
             "TaCoS's holds end at t_max; leave out --no-limit-t"),
            ("--duration-map", args.duration_map == "figar" or args.max_t >= 2 * args.dt * (1 - 1e-9),
             f"TaCoS's holds are whole δ-steps up to ⌊t_max/δ⌋, one at --max-t {args.max_t:g} s and δ = "
             f"{args.dt:g} s: no action could be repeated; pass --max-t {4 * args.dt:g} (up to 4 δ-steps)")]:
        if not ok:
            fail(f"{flag}: {rule}")
    bookkeeping.check_budget(args, TOTAL_STEPS)
    if not args.no_limit_t and args.max_t <= args.dt * (1 + 1e-9):  # the paper's runs at δ0 = 50 ms: t_max = δ0
        print(f"note: t_max = δ = {args.dt:g} s: no action can be repeated, one δ-step a decision, as in the paper")
        warnings.filterwarnings("ignore", "max_t")  # the wrapper's warning of the same
    task = args.env_id.split("-")[0]
    args.norm_obs, args.norm_reward = (task != "Ant" if on is None else on for on in (args.norm_obs, args.norm_reward))


def name_run(args):
    """The method's name, its base then each method flag off its default (the paper's variants, App. I), and the
    run's: <env>__<slug>__dt<δ>[__<setting>]__s<seed>."""
    args.method, slug = "FiGAR-C-PPO", "figar"
    if tacos(args):  # TaCoS-PPO: its switch cost always in its name, then what differs from TaCoS's own
        args.method, slug = "TaCoS-PPO", "tacos"
    if args.a2c:  # the same method on A2C
        args.method = args.method.replace("PPO", "A2C")
        slug = slug.replace("ppo", "a2c") if "ppo" in slug else slug + "-a2c"
    variants = [(name, part) for off_default, name, part in [  # (name, run-name part)
        (tacos(args), f"c={args.switch_cost:g}", f"c{args.switch_cost:g}"),
        (args.min_steps != 1, f"K_MIN={args.min_steps}", f"kmin{args.min_steps}"),
        (tacos(args) and args.duration_map == "figar", "FiGAR-C's map", "figar-map"),
        (tacos(args) and not args.time_feature, "no time feature", "no-time"),
        (args.no_limit_t, "no limit on t", "no-limit-t"),
        (args.max_t != MAX_T, f"t_max={args.max_t:g}", f"maxt{args.max_t:g}"),
        (args.scale_lr, "scaled lr", "scaled-lr"),
        (args.sb3_u_init, "SB3 u init", "sb3-u-init")] if off_default]
    args.method += f" ({', '.join(name for name, _ in variants)})" if variants else ""
    slug = "-".join([slug] + [part for _, part in variants])
    setting = envs.setting(args)  # the stochastic setting's part of the run name, if any
    if args.physical_time is not None:  # a budget of physical time: its own runs
        setting += f"__T{args.physical_time:g}"
    args.run_name = args.run_name or f"{args.env_id}__{slug}__dt{args.dt:g}{setting}__s{args.seed}"


def tacos(args):  # any of TaCoS's four changes
    return args.switch_cost != 0 or args.min_steps != 1 or args.duration_map != "figar" or args.time_feature


# ================================================================ what bookkeeping.py needs of this script
FLAGS_ADDED_LATER = {"a2c": False, "init_logstd": 0.0, "sb3_u_init": False,  # and the value runs before them had
                     "switch_cost": 0.0, "min_steps": 1, "duration_map": "figar", "time_feature": False}
COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes", "return_mean",  # progress.csv
           "eval_return_mean", "action_duration_mean_s", "safe_radius_mean", "policy_loss", "value_loss",
           "approx_kl", "clip_fraction", "entropy", "decisions_per_s", "env_steps_per_s"]
SCRIPT = bookkeeping.Script(__file__, make_parser, FLAGS_ADDED_LATER, "smaller steps (--learning-rate, --vf-coef)",
                            COLUMNS, tallies=4)  # its episode's cost and decisions too
TACOS_SCRIPT = SCRIPT._replace(columns=SCRIPT.columns + ["cost_mean", "decisions_per_episode",  # its cost too
                                                         "eval_decisions_per_episode"])

if __name__ == "__main__":
    bookkeeping.guard(main)
