"""SAR-PPO: PPO with Safe Action Repetition (Park, Kim & Kim, NeurIPS 2021), in one file.

The policy picks an action a and a safe-region radius d; a is repeated every δ seconds while the
state stays in the safe region Δ(s, s_i) ≤ d (eq. 6). Also the paper's baselines on the same code
path: plain PPO at δ (--no-repeat), PPO (scaled) (--no-repeat --scale-lr) and λ-SAR (--lambda-dt
0.5, eq. 8); with --a2c, each on A2C's update instead of PPO's (App. D runs SAR-A2C and A2C).

    python sar_ppo.py --env-id InvertedPendulum-v5 --dt lowest --seed 1
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
from flags import checked, fail, within

MAX_T = 0.05  # t_max (s), the longest repetition: FiGAR-C's (App. J.3), SAR's cap too (Sec. 5)
MAX_T_CAP = 1000  # (s) the largest finite t_max taken, by the flag and the wrapper alike
MAX_D = {"l1": 0.5, "l2": 1.0}  # d_max of Δ's l1 norm (App. J.3) and of its l2 norm (App. I)


class SafeActionRepetition(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Safe action repetition (Sec. 4.3): one `step` is one decision, [a, u_raw] with u =
    (u_raw + 1)/2 ∈ [0, 1]. `a` is repeated every δ until the episode ends, k·δ ≥ max_t, or the
    state leaves the safe region Δ(s, s_i) ≤ d = u·max_d (eq. 6; a tie ends it too). λ-SAR
    (lambda_dt = λ) keeps eq. 8's region λ·Δ + (1 − λ)·|t − t_i| ≤ d in the authors' code's
    form, each term over its cap: it stops at λ·Δ/max_d + (1 − λ)·k·δ/max_t ≥ u (λ = 1: SAR's
    Δ ≥ u·max_d). repeat=False: the plain learner, one δ-step.

    Δ(s, s_i) = ||ñ(s) − ñ(s_i)||_1 / n over the n dims `delta_dims` (all by default; Fig. 6:
    the velocities, so that only they end a repetition; l2: ||·||_2 / √n), ñ(s) = (s − mean)/
    (std + 1e-3) by a running mean and std (Sec. 5's moving average) of the δ-level states, as in
    the authors' wrapper, kept across episodes; `update_stats = False` freezes them. `step`
    returns R = Σ_k γ_δ^k r_k and info w = k, undiscounted_reward = Σ_k r_k, safe_radius = d
    (λ-SAR: u).
    """

    def __init__(self, env, max_d=None, max_t=MAX_T, lambda_dt=None, norm="l1", repeat=True,
                 dt=None, gamma_dt=None, delta_dims=None):
        # env.spec keeps the arguments: gym.make(env.spec) makes the wrapper again
        gym.utils.RecordConstructorArgs.__init__(
            self, max_d=max_d, max_t=max_t, lambda_dt=lambda_dt, norm=norm, repeat=repeat, dt=dt,
            gamma_dt=gamma_dt, delta_dims=delta_dims)
        gym.Wrapper.__init__(self, env)
        # δ and γ_δ: the env's own (envs.DtEnv), else the arguments; each argument checked
        self.dt, self.gamma_dt = dt_and_gamma_dt(env, dt, gamma_dt, max_t)
        check_safe_region(env, max_d, lambda_dt, norm, delta_dims)
        dim = env.observation_space.shape[0]
        dims = range(dim)
        if delta_dims is not None:
            dims = delta_dims
        if max_d is None:
            max_d = MAX_D[norm]
        self.max_d = max_d
        self.max_t = max_t
        self.lambda_dt = lambda_dt
        self.norm = norm
        self.repeat = repeat
        self.delta_mask = np.isin(np.arange(dim), dims)
        self.delta_divisor = len(dims)  # Δ's n (l2: √n)
        if norm == "l2":
            self.delta_divisor = math.sqrt(len(dims))
        self.max_repeats = math.inf  # k·δ ≥ max_t as k ≥ max_repeats, a test on integers
        if max_t < math.inf:  # - 1e-9: 0.05 / 0.002 is 25.000000000000004 in floats, ceil 26
            self.max_repeats = math.ceil(max_t / self.dt - 1e-9)
        if not repeat:
            self.max_repeats = 1
        if repeat:  # u_raw ∈ [-1, 1] after a
            low = np.append(env.action_space.low, np.float32(-1))
            high = np.append(env.action_space.high, np.float32(1))
            self.action_space = gym.spaces.Box(low, high)
        if repeat and self.max_repeats == 1:
            warnings.warn(f"max_t = {max_t} s is not above δ = {self.dt} s: "
                          "no action can be repeated", stacklevel=2)
        # ñ's mean and variance: Δ's own, so Δ is normalised even where the inputs are not (Ant)
        self.obs_stats = RunningMeanStd(shape=(dim,))
        self.update_stats = repeat  # the plain learner has no Δ
        self.obs = None  # s_i, where the repetition began

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        check_finite(obs)
        self.obs = np.array(obs)  # a copy: some envs update their observation array in place
        if self.update_stats:
            self.obs_stats.update_from_moments(self.obs, 0.0, 1)  # one sample: mean s, var 0
        return obs, info

    def step(self, action):
        action = np.asarray(action)
        check_action(action, self.action_space)
        a = action
        u = 0.0  # the plain learner has no u
        if self.repeat:
            a = action[:-1]
            u = (min(max(action[-1], -1.0), 1.0) + 1) / 2  # clipped here too: any caller's u_raw
        d = u * self.max_d
        # Δ(s, s_i) = Σ weight·|s − s_i|: ñ's mean cancels, each dim weighs 1/((std + 1e-3)·n)
        weight = self.delta_mask / ((np.sqrt(self.obs_stats.var) + 1e-3) * self.delta_divisor)
        s_i = self.obs
        seen = []  # the repetition's states
        R = 0.0
        discount = 1.0  # γ_δ^k
        undiscounted = 0.0
        k = 0
        while True:
            obs, r, terminated, truncated, info = self.env.step(a)
            check_finite(obs, r)
            R += discount * r
            discount *= self.gamma_dt
            undiscounted += r
            k += 1
            seen.append(np.array(obs))
            if terminated or truncated or k >= self.max_repeats:
                break
            if self.norm == "l1":
                distance = np.abs(obs - s_i) @ weight
            else:
                distance = math.sqrt(np.square((obs - s_i) * weight).sum())
            # out of the safe region Δ ≤ d (eq. 6); a tie too stops, as in the authors' code
            stop = distance >= d
            # eq. 8 in the authors' code's form (the docstring): Δ over d_max, k·δ over t_max
            if self.lambda_dt is not None:
                lam = self.lambda_dt
                stop = lam * distance / self.max_d + (1 - lam) * k * self.dt / self.max_t >= u
            if stop:
                break
        if self.update_stats:
            batch = np.asarray(seen)
            # ñ's statistics take in the k states: their mean and variance, in one update
            mean = batch.sum(0) / k
            self.obs_stats.update_from_moments(mean, np.square(batch - mean).sum(0) / k, k)
        self.obs = seen[-1]
        safe_radius = d
        if self.lambda_dt is not None:
            safe_radius = u  # λ-SAR's threshold: u, eq. 8 in the docstring's form
        info.update(w=k, safe_radius=safe_radius, undiscounted_reward=undiscounted)
        return obs, R, terminated, truncated, info

    def state(self):  # s_i, where Δ is measured from: a checkpoint keeps it (exact resume)
        return {"obs": self.obs}

    def restore(self, state):
        self.obs = state["obs"]


# ---------------------------------------------------------------- the agent
def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """Separate actor and critic MLPs, 2×256 ReLU (App. J.3). Gaussian policy: one linear head of
    means; log σ a parameter for the env's K action dims and, for the repetition's u_raw (the
    last dim, if `repeat`), a linear head of the state. `sb3_u_init`: that head at PyTorch's
    default init, as in the authors' A2C."""

    def __init__(self, obs_dim, num_actions, repeat, init_logstd=0.0, sb3_u_init=False):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 1), std=1.0))
        self.actor_body = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 256)), nn.ReLU(),
            layer_init(nn.Linear(256, 256)), nn.ReLU())
        self.actor_mean = layer_init(nn.Linear(256, num_actions + int(repeat)), std=0.01)
        self.actor_logstd = nn.Parameter(torch.full((num_actions,), init_logstd))
        self.repeat_logstd = None  # u's log σ (the plain learner has no u)
        if repeat and not sb3_u_init:
            self.repeat_logstd = layer_init(nn.Linear(256, 1), std=0.01, bias_const=init_logstd)
        if repeat and sb3_u_init:
            self.repeat_logstd = nn.Linear(256, 1)

    def dist(self, x):
        hidden = self.actor_body(x)
        logstd = self.actor_logstd.expand(x.shape[0], -1)
        if self.repeat_logstd is not None:
            logstd = torch.cat([logstd, self.repeat_logstd(hidden)], dim=1)
        std = logstd.clamp(-20, 2).exp()  # log σ within [-20, 2], as in the authors' code
        # validate_args=False: the check costs more than the Gaussian at these sizes
        return Normal(self.actor_mean(hidden), std, validate_args=False)


def normalize(x, stats, norm_obs, update=False, clip=10.0):
    """x as float32; if `norm_obs`, normalised by the running mean and std `stats` and clipped to
    ±10 (SB3's VecNormalize), after x joins the statistics if `update`. By hand, not gymnasium's
    NormalizeObservation: the statistics are the learner's, checkpointed, frozen in evaluation."""
    if not norm_obs:
        return np.asarray(x, dtype=np.float32)
    if update:
        stats.update_from_moments(x, 0.0, 1)  # one sample: mean x, var 0 (update's np.var: slower)
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
    minibatches, each a step on the clipped surrogate plus vf_coef·MSE(V, return). As the authors'
    code, unlike CleanRL: no ½ in the value loss, no value clipping, a constant learning rate.
    With --a2c it is A2C (Huang et al., 2022): one pass, one minibatch, raw advantages; the ratio
    is 1, so the gradient is −A·∇log π. `batch`: float32 arrays (obs, actions, log-probs,
    advantages, returns). Returns the update's logged means, over every minibatch (CleanRL's: the
    last)."""
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
    outside it (one draw per decision, Sec. 5.2: a force holds for the whole repetition and may push
    the state out of the safe region). Returns (env, the repetition wrapper)."""
    # the δ-env: γ_δ = γ^(δ/δ0), the time limit in seconds (App. J.2), and eq. 2's rewards r·δ
    # in units of δ0: r·δ/δ0
    env = envs.make_env(args.env_id, args.dt, args.gamma)
    if args.hold_penalty:
        # App. H: counts holding time at δ-level, inside the repetition
        env = envs.HoldPenalty(env)
    env = SafeActionRepetition(env, args.max_d, args.max_t, args.lambda_dt, args.norm,
                               repeat=not args.no_repeat, delta_dims=args.delta_dims)
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

    # the env's K action dims (the repetition's action space adds u_raw ∈ [-1, 1])
    agent = Agent(obs_dim, env.unwrapped.action_space.shape[0], repeat=repetition.repeat,
                  init_logstd=args.init_logstd, sb3_u_init=args.sb3_u_init)
    if args.a2c:  # RMSprop (Table 4), whose ε is --adam-eps too
        optimizer = torch.optim.RMSprop(agent.parameters(), lr=learning_rate, alpha=0.99,
                                        eps=args.adam_eps)
    else:  # fused: one kernel for all parameters instead of ~10 small ops per tensor
        optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=args.adam_eps,
                                     fused=True)
    obs_rms = RunningMeanStd(shape=(obs_dim,))  # network inputs, by decision (Δ's are δ-level)
    ret_rms = RunningMeanStd(shape=())  # discounted return, for reward scaling
    # what a checkpoint saves, loaded back in place on --resume
    learner = {"agent": agent, "optimizer": optimizer, "obs_rms": obs_rms, "ret_rms": ret_rms,
               "repetition_stats": repetition.obs_stats}
    config = {**vars(args), "dt": dt, "dt0": dt0, "gamma_dt": gamma_dt,
              "learning_rate_used": learning_rate}
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
    radius_buf = np.zeros(n, np.float32)  # d, or λ-SAR's u
    durations_buf = np.zeros(n, np.int64)  # w, in δ-steps
    # (env, repetition) of its own, so that training's episode and s_i stay as they were
    eval_decision_env = make_decision_env(args)

    # lock the run folder; start the run, or load its checkpoint (a finished run exits here);
    # SCRIPT (at the file's end): this file's name, flags and progress.csv columns
    run = bookkeeping.open_or_resume(args, argv, SCRIPT, learner, config, rng)
    counters = run["counters"]  # a resumed run's
    # a seed per (re)start: a resumed run's fresh episode is not its first one again
    raw_obs, _ = env.reset(seed=args.seed + 1_000 * counters["update"])
    # a resumed MuJoCo run then goes on in its saved episode (its physics state); other tasks: None
    episode = bookkeeping.resumed_episode(run, env)
    if episode is None:  # a new episode: its first observation feeds the input statistics
        obs = normalize(raw_obs, obs_rms, args.norm_obs, update=True)
        episode = (raw_obs, obs, 0.0, 0.0)
    raw_obs, obs, episode_return, scaling_return = episode
    # the budget: --total-steps decisions, or --physical-time seconds (as progress.csv rounds them)
    while (counters["decision_steps"] < args.total_steps if args.physical_time is None
           else round(counters["env_steps"] * dt, 6) < args.physical_time - 1e-9):
        update_start = time.time()
        finished_returns = []
        # ---------------- rollout: n decision steps
        for step in range(n):
            obs_buf[step] = obs
            with torch.inference_mode():  # no_grad without autograd's bookkeeping: cheaper
                dist = agent.dist(torch.as_tensor(obs)[None])
                action = dist.sample()
                logprobs_buf[step] = dist.log_prob(action).sum()  # of the unclipped sample
            action = action[0].numpy()
            actions_buf[step] = action
            clipped = np.clip(action, action_low, action_high)
            raw_obs, R, terminated, truncated, info = env.step(clipped)
            w = info["w"]  # δ-steps this decision lasted
            discounts_buf[step] = gamma_dt ** w
            durations_buf[step] = w
            radius_buf[step] = info["safe_radius"]
            # R / std of the discounted return, clipped to ±10, reset at each episode's end (SB3's
            # VecNormalize): by hand, as a decision discounts by γ_δ^w (gymnasium's: one γ a step)
            if args.norm_reward:
                scaling_return = scaling_return * gamma_dt ** w + R
                ret_rms.update_from_moments(scaling_return, 0.0, 1)
                R = np.clip(R / np.sqrt(ret_rms.var + 1e-8), -10.0, 10.0)
            rewards_buf[step] = R
            terminated_buf[step] = terminated
            truncated_buf[step] = truncated
            episode_return += info["undiscounted_reward"]  # in δ0's units: DtEnv's r·δ/δ0
            if terminated or truncated:
                if truncated and not terminated:
                    final_obs_buf[step] = normalize(raw_obs, obs_rms, args.norm_obs)
                finished_returns.append(episode_return)
                episode_return, scaling_return = 0.0, 0.0
                raw_obs, _ = env.reset()
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
        # a time limit is no termination: V(final obs), where CleanRL's PPO takes 0
        next_values = np.where(truncated_buf > 0, final_values, next_values)
        next_values = np.where(terminated_buf > 0, 0.0, next_values)
        dones = np.maximum(terminated_buf, truncated_buf)
        advantages = compute_gae(rewards_buf, values, next_values, discounts_buf, dones,
                                 args.gae_lambda)
        returns = advantages + values

        # ---------------- PPO update
        batch = (obs_buf, actions_buf, logprobs_buf, advantages, returns)
        logs = ppo_update(agent, optimizer, batch, args, rng)
        counters["update"] += 1

        # ---------------- logs: the update's row (bookkeeping adds the counters and the clock)
        update_time = time.time() - update_start
        eval_return = None  # None: a blank in progress.csv
        # every --eval-every updates, or --eval-every-s seconds of physical time
        if bookkeeping.evaluation_due(args, counters, steps, dt):
            eval_return = evaluate(args, eval_decision_env, agent, obs_rms, repetition.obs_stats)
        row = {"return_mean": None, "eval_return_mean": eval_return,
               "action_duration_mean_s": float(durations_buf.mean() * dt),
               "safe_radius_mean": None, **logs,  # None: the plain learner has no d
               "decisions_per_s": round(n / update_time, 1),  # of the whole update
               "env_steps_per_s": round(steps / rollout_time, 1)}  # of the rollout alone
        # the progress line's words
        said = ["no episode ended", f"duration {1e3 * row['action_duration_mean_s']:.1f}ms"]
        if finished_returns:
            row["return_mean"] = float(np.mean(finished_returns))
            said[0] = f"return {row['return_mean']:.1f}"
        if repetition.repeat:
            row["safe_radius_mean"] = float(radius_buf.mean())
            said.append(f"radius {row['safe_radius_mean']:.3f}")  # d, or λ-SAR's u
        episode = (raw_obs, obs, episode_return, scaling_return)
        bookkeeping.log_and_checkpoint(run, args, row, said, env, episode)
    bookkeeping.end(run, args, env)  # model.pt with --save-model


def evaluate(args, decision_env, agent, obs_rms, repetition_stats):
    """Mean return of deterministic (mean-action) episodes in the run's own setting (its noise,
    its hold penalty), with every running statistic frozen."""
    env, repetition = decision_env
    low, high = env.action_space.low, env.action_space.high
    repetition.obs_stats = repetition_stats
    repetition.update_stats = False
    returns = np.zeros(args.eval_episodes)
    for episode in range(args.eval_episodes):
        raw_obs, _ = env.reset(seed=args.seed + 10_000 + episode)
        done = False
        while not done:
            inputs = normalize(raw_obs, obs_rms, args.norm_obs)
            with torch.no_grad():
                mean = agent.dist(torch.as_tensor(inputs)[None]).mean[0].numpy()
            raw_obs, _, terminated, truncated, info = env.step(np.clip(mean, low, high))
            returns[episode] += info["undiscounted_reward"]
            done = terminated or truncated
    return float(np.mean(returns))


# ================================================================ the wrapper's checks
def check_safe_region(env, max_d, lambda_dt, norm, delta_dims):  # the wrapper's own arguments
    dim = env.observation_space.shape[0]
    dims = range(dim)
    if delta_dims is not None:
        dims = delta_dims
    if norm not in MAX_D:
        raise ValueError(f"norm: 'l1' or 'l2', got {norm!r}")
    if max_d is not None and not 0 < max_d < math.inf:
        raise ValueError(f"max_d: a radius above 0, got {max_d!r}")
    if lambda_dt is not None and not 0 <= lambda_dt <= 1:
        raise ValueError(f"lambda_dt: λ in [0, 1], got {lambda_dt!r}")
    if len(dims) == 0 or len(set(dims)) < len(dims) or not set(dims) <= set(range(dim)):
        raise ValueError(f"delta_dims: distinct dims from 0 to {dim - 1}, got {delta_dims!r}")


def dt_and_gamma_dt(env, dt, gamma_dt, max_t):
    """δ (seconds per step of `env`) and γ_δ (discount per step) of a repetition around `env`: the
    env's own where it has them (envs.DtEnv has both; a value given must agree), else the values
    given; γ_δ = 0.99 if neither. Checked, with max_t and the env's spaces (1-D Boxes)."""
    given = {"dt": dt, "gamma_dt": gamma_dt}
    for name, value in given.items():
        if not env.has_wrapper_attr(name):
            continue
        own = env.get_wrapper_attr(name)
        if value is not None and not math.isclose(value, own, rel_tol=1e-9):
            raise ValueError(f"{name}: the env's is {own!r}, got {value!r} (leave it out)")
        given[name] = own
    dt, gamma_dt = given["dt"], given["gamma_dt"]
    if gamma_dt is None:
        gamma_dt = 0.99
    spaces = env.observation_space, env.action_space
    if not all(isinstance(space, gym.spaces.Box) and len(space.shape) == 1 for space in spaces):
        raise ValueError(f"env: needs 1-D Box observations and actions, got {spaces}")
    if dt is None or not 0 < dt < math.inf:
        raise ValueError(f"dt: seconds per step of the env (pass dt= if it has none), got {dt}")
    if not 0 < gamma_dt <= 1:
        raise ValueError(f"gamma_dt: a discount in (0, 1], got {gamma_dt}")
    if not (0 < max_t <= MAX_T_CAP or max_t == math.inf):
        raise ValueError(f"max_t: seconds in (0, {MAX_T_CAP}] or inf, got {max_t}")
    return dt, gamma_dt


def check_action(action, space):
    if action.shape != space.shape or not np.isfinite(action).all():
        raise ValueError(f"action: needs {space.shape[0]} finite numbers, got {action!r}")


def check_finite(obs, r=0.0):  # refused before anything learns from it
    if not np.isfinite(obs).all():
        raise FloatingPointError(f"observation: not finite, got {obs}")
    if not math.isfinite(r):
        raise FloatingPointError(f"reward: not finite, got {r}")


# ================================================================ the flags
TOTAL_STEPS = 1_000_000  # decisions, the default budget
CLIP_COEF = 0.2  # PPO's ratio clip ε (Table 2)
# A2C's preset (Table 4; GAE λ and the initial log σ: the authors' code), for the flags not given;
# minibatch_size None: the whole rollout. PPO's (Table 2) are the flags' defaults.
A2C = {"num_steps": 256, "update_epochs": 1, "minibatch_size": None, "gae_lambda": 1.0,
       "init_logstd": -1.5}
PRESETS = f"""defaults that hang on other flags (where the flag is not given):
  --a2c             RMSprop for Adam, --num-steps 256, --gae-lambda 1.0, --init-logstd -1.5,
                    one step on the whole rollout (Table 4)
  --norm l2         --max-d {MAX_D['l2']} (App. I)
  --env-id Ant-v5   --no-norm-obs --no-norm-reward (the paper's choice)"""


def parse_args(argv=None):
    """The flags, each checked on its own; then the presets and the rules between flags; then the
    names of the method and the run."""
    parser = make_parser()
    args = parser.parse_args(argv)
    check_args(args, bookkeeping.given_flags(parser, argv))
    name_run(args)
    bookkeeping.take_run_flags(args, argv, SCRIPT)  # --resume: each flag not given is the run's own
    return args


def make_parser():
    p = bookkeeping.parser(__doc__)
    p.epilog = PRESETS
    envs.add_flags(p)  # --env-id, --dt; the stochastic settings (--noise, ...)
    p.add_argument("--seed", type=bookkeeping.SEED, default=1,
                   help="seeds torch, numpy and the env")
    bookkeeping.add_budget_flags(p, TOTAL_STEPS)  # --total-steps, or --physical-time
    # The method (Sec. 4.3-4.4)
    p.add_argument("--max-d", type=within(float, 0, 1000, open_low=True), default=MAX_D["l1"],
                   help=f"d_max: d = u·d_max (l2: {MAX_D['l2']})")
    max_t = checked(float, lambda v: 0 < v <= MAX_T_CAP or v == math.inf,
                    f"must lie in (0, {MAX_T_CAP}] or be inf")
    p.add_argument("--max-t", type=max_t, default=MAX_T,
                   help="t_max (s): a repetition ends at its first δ-step at or past it")
    p.add_argument("--lambda-dt", type=within(float, 0, 1), help="λ of λ-SAR (eq. 8); none: SAR")
    p.add_argument("--norm", choices=["l1", "l2"], default="l1",
                   help="Δ's norm: l1/dim, or l2/√dim (App. I)")
    dims = checked(lambda text: [int(i) for i in text.split(",")],
                   lambda v: min(v) >= 0 and len(set(v)) == len(v),
                   "must be distinct dims such as 2,3")
    p.add_argument("--delta-dims", type=dims, help="Δ over these dims (Fig. 6); none: all")
    p.add_argument("--no-repeat", action="store_true", help="plain PPO: one δ-step per decision")
    p.add_argument("--scale-lr", action="store_true", help="lr·δ/δ0, PPO (scaled) of App. F.2")
    # PPO (App. J.3, Table 2), and A2C as its special case (Table 4)
    p.add_argument("--learning-rate", type=within(float, 0, 1, open_low=True), default=1e-4,
                   help="the optimiser's step size (Adam; RMSprop with --a2c)")
    p.add_argument("--adam-eps", type=within(float, 1e-12, 1), default=1e-5,
                   help="the optimiser's epsilon")
    p.add_argument("--a2c", action="store_true",
                   help="A2C: its preset (below), and raw advantages")
    p.add_argument("--num-steps", type=within(int, 2, 2 ** 20), default=2048,
                   help="decision steps per update")
    p.add_argument("--update-epochs", type=within(int, 1, 1000), default=10,
                   help="passes over a rollout per update")
    p.add_argument("--minibatch-size", type=within(int, 2, 2 ** 20), default=64,
                   help="decisions per gradient step")
    p.add_argument("--gamma", type=within(float, 0, 1, open_low=True), default=0.99,
                   help="discount per δ0 (App. J.2)")
    p.add_argument("--gae-lambda", type=within(float, 0, 1), default=0.95,
                   help="GAE λ, per decision step")
    p.add_argument("--init-logstd", type=within(float, -20, 2), default=0.0,
                   help="the policy's initial log σ")
    p.add_argument("--sb3-u-init", action="store_true",
                   help="with --a2c, the authors' init of u's log σ head (PyTorch's default)")
    p.add_argument("--clip-coef", type=within(float, 0, 10, open_low=True), default=CLIP_COEF,
                   help="PPO's ratio clip ε")
    p.add_argument("--vf-coef", type=within(float, 0, 1000, open_low=True), default=0.5,
                   help="value loss weight")
    p.add_argument("--ent-coef", type=within(float, 0, 1000), default=0.0,
                   help="entropy bonus weight")
    p.add_argument("--max-grad-norm", type=within(float, 0, 1e6, open_low=True), default=0.5,
                   help="gradient clipping")
    p.add_argument("--norm-obs", action=argparse.BooleanOptionalAction, default=True,
                   help="normalise inputs (Ant: off)")
    p.add_argument("--norm-reward", action=argparse.BooleanOptionalAction, default=True,
                   help="scale rewards (Ant: off)")
    bookkeeping.add_run_flags(p)  # --eval-every, --log-dir, --run-name, --resume, ...
    return p


def check_args(args, given):
    """The presets for the flags not `given`, then the rules between flags."""
    envs.check_flags(args)  # --dt in seconds; the stochastic settings where the paper has them
    presets = {}
    if args.a2c:
        presets.update(A2C)
    if args.norm == "l2":
        presets["max_d"] = MAX_D["l2"]
    if args.env_id.split("-")[0] == "Ant":
        presets.update(norm_obs=False, norm_reward=False)
    for name, value in presets.items():
        if name not in given:
            setattr(args, name, value)
    if args.minibatch_size is None:
        args.minibatch_size = args.num_steps
    repeats = args.max_t > args.dt * (1 + 1e-9)  # t_max above δ: an action can be repeated
    papers = args.max_t == args.dt == MAX_T and envs.is_paper_task(args.env_id)  # at δ0 = 50 ms
    sar_default = args.max_d == MAX_D["l1"] and args.max_t == MAX_T and args.norm == "l1"
    obs_dim = math.inf
    if args.delta_dims:
        obs_dim = envs.make_env(args.env_id).observation_space.shape[0]
    one_step = "A2C takes one step on the whole rollout; leave it out"
    batches = f"{args.num_steps} decisions in minibatches of {args.minibatch_size}"
    for flag, holds, rule in [
            ("--max-t", args.no_repeat or repeats or papers,
             f"{args.max_t:g} s is not above δ = {args.dt:g} s, so no action could be repeated; "
             f"pass --max-t {4 * args.dt:g} (up to 4 δ-steps a decision)"),
            ("--update-epochs", not (args.a2c and "update_epochs" in given), one_step),
            ("--minibatch-size", not (args.a2c and "minibatch_size" in given), one_step),
            ("--clip-coef", not args.a2c or args.clip_coef == CLIP_COEF,
             "A2C's ratio is 1, nothing to clip; leave it out"),
            ("--num-steps/--minibatch-size", args.minibatch_size <= args.num_steps,
             f"--minibatch-size {args.minibatch_size} must not exceed "
             f"--num-steps {args.num_steps}"),
            ("--num-steps/--minibatch-size", args.num_steps % args.minibatch_size != 1,
             f"{batches} leave a last one of one decision, whose advantages have no std"),
            ("--sb3-u-init", not args.sb3_u_init or args.a2c and not args.no_repeat,
             "is SAR-A2C's and FiGAR-C-A2C's: it needs --a2c and a repetition"),
            ("--lambda-dt", args.lambda_dt is None or args.max_t < math.inf,
             "needs a finite --max-t: eq. 8's time term k·δ/t_max would be 0, leaving plain SAR"),
            ("--lambda-dt", not (args.no_repeat and args.lambda_dt is not None),
             "has no meaning with --no-repeat"),
            ("--max-d/--max-t/--norm", not args.no_repeat or sar_default,
             "have no meaning with --no-repeat"),
            ("--delta-dims", not (args.no_repeat and args.delta_dims),
             "has no meaning with --no-repeat"),
            ("--delta-dims", max(args.delta_dims or [0]) < obs_dim,
             f"{args.env_id} has dims 0 to {obs_dim - 1}")]:
        if not holds:
            fail(f"{flag}: {rule}")
    bookkeeping.check_budget(args, TOTAL_STEPS)
    if not args.no_repeat and not repeats:  # the paper's runs at δ0 = 50 ms: t_max = δ0
        print(f"note: t_max = δ = {args.dt:g} s: no action can be repeated, one δ-step a "
              "decision, as in the paper")
        warnings.filterwarnings("ignore", "max_t")  # the wrapper's warning of the same


def name_run(args):
    """The method's name, its base then each method flag off its default (the paper's variants,
    App. I), and the run's: <env>__<slug>__dt<δ>[__<setting>]__s<seed>."""
    learner = "PPO"
    if args.a2c:
        learner = "A2C"
    args.method, slug = f"SAR-{learner}", "sar"
    if args.lambda_dt is not None:
        args.method, slug = f"λ-SAR-{learner}", "lambda-sar"
    if args.a2c:
        slug += "-a2c"
    if args.no_repeat:
        args.method, slug = learner, learner.lower()
    if args.no_repeat and args.scale_lr:
        args.method, slug = f"{learner} (scaled)", f"{learner.lower()}-scaled"
    dims = ",".join(map(str, args.delta_dims or []))
    variants = [  # (off its default, in the method's name, in the run's name)
        (args.norm == "l2", "l2", "l2"),
        (args.delta_dims, f"Δ on dims {dims}", "delta" + dims.replace(",", "-")),
        (args.max_d != MAX_D[args.norm], f"d_max={args.max_d:g}", f"maxd{args.max_d:g}"),
        (args.max_t == math.inf, "no limit on t", "no-limit-t"),
        (args.max_t not in (MAX_T, math.inf), f"t_max={args.max_t:g}", f"maxt{args.max_t:g}"),
        (args.lambda_dt not in (None, 0.5), f"λ={args.lambda_dt}", f"lambda{args.lambda_dt}"),
        (args.scale_lr, "scaled lr", "scaled-lr"),
        (args.sb3_u_init, "SB3 u init", "sb3-u-init")]
    variants = [(name, part) for off, name, part in variants if off and not args.no_repeat]
    if variants:
        args.method += f" ({', '.join(name for name, _ in variants)})"
    slug = "-".join([slug] + [part for _, part in variants])
    setting = envs.setting(args)  # the stochastic setting's part of the run name, if any
    if args.physical_time is not None:  # a budget of physical time: runs of its own
        setting += f"__T{args.physical_time:g}"
    if args.run_name is None:
        args.run_name = f"{args.env_id}__{slug}__dt{args.dt:g}{setting}__s{args.seed}"


# ================================================================ what bookkeeping.py needs
# the flags added after the first committed runs, with the value those runs had
FLAGS_ADDED_LATER = {"a2c": False, "init_logstd": 0.0, "sb3_u_init": False}
COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes",  # its CSV
           "return_mean", "eval_return_mean", "action_duration_mean_s", "safe_radius_mean",
           "policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy", "decisions_per_s",
           "env_steps_per_s"]
SCRIPT = bookkeeping.Script(__file__, make_parser, FLAGS_ADDED_LATER,
                            "smaller steps (--learning-rate, --vf-coef)", COLUMNS)

if __name__ == "__main__":
    bookkeeping.guard(main)
