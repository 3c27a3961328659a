"""ARP-PPO: PPO with an autoregressive policy (Korenkevych et al., 2019), the baseline of App. G of
Park, Kim & Kim (NeurIPS 2021), in one file.

Per action dim the policy's noise is an AR(p) process X_t = Σ_k φ_k X_{t−k} + σ_Z·ε_t, with
φ from (1 − αz)^p and σ_Z for a stationary variance of 1, and a_t = μ(s_t) + σ·X_t:
successive actions are correlated, the more so as α → 1. Everything else is sar_ppo.py's
plain PPO (--no-repeat: a decision is one δ-step, through the same wrapper), so `diff
sar_ppo.py arp_ppo.py` shows ARP and nothing else. With --scale-lr it is ARP-PPO (scaled):
lr·δ/δ0 (App. F.2).

    python arp_ppo.py --env-id InvertedPendulum-v5 --dt lowest --seed 1
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
from bookkeeping import checked, fail, within

MAX_T = 0.05  # t_max (s): a repetition ends at its first δ-step at or past it (Sec. 5; App. J.3)
MAX_T_CAP = 1000  # (s) the largest finite t_max taken, by the flag and the wrapper alike
MAX_D = {"l1": 0.5, "l2": 1.0}  # d_max for Δ's l1 and l2 norms (App. J.3; l2: App. I)


class SafeActionRepetition(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Safe action repetition (Sec. 4.3) around a gymnasium env with 1-D Box spaces; a `step` is
    one decision.

    The action is [a, u_raw], u = (u_raw + 1)/2 ∈ [0, 1]; `a` is repeated every δ and the
    repetition stops after the first δ-step where the episode ends, k·δ ≥ max_t, or the state
    has left eq. 6's safe region Δ(s, s_i) ≤ d = u·max_d (a tie Δ = d ends it too, as in the
    authors' code), or for λ-SAR λ·Δ/max_d + (1-λ)·k·δ/max_t ≥ u (eq. 8 as their
    code has it: Δ over max_d, time over max_t, u in d's place). max_d defaults to App. J.3's
    for the norm. `delta_dims` restricts Δ to some observation dims. With repeat=False (the
    plain learner) the action has no u and a decision is one δ-step; `a` reaches the env
    unclipped. `step` returns R = Σ_k γ_δ^k r_k over its k δ-steps, info["w"] = k,
    info["undiscounted_reward"] = Σ_k r_k and info["safe_radius"] = d (λ-SAR: u); the env's own
    info keys are its last δ-step's. Δ normalises states by running statistics learned across
    episodes (`reset(seed=...)` keeps them); `update_stats = False` freezes them. One env, not a
    vector of them. At another δ the env must be the task at δ (γ_δ, r·δ/δ0, its time limit
    in seconds), as envs.make_env makes it.
    """

    def __init__(self, env, max_d=None, max_t=MAX_T, lambda_dt=None, norm="l1", repeat=True,
                 dt=None, gamma_dt=None, delta_dims=None):
        gym.utils.RecordConstructorArgs.__init__(
            self, max_d=max_d, max_t=max_t, lambda_dt=lambda_dt, norm=norm, repeat=repeat, dt=dt,
            gamma_dt=gamma_dt, delta_dims=delta_dims)
        gym.Wrapper.__init__(self, env)
        self.dt, self.gamma_dt, dim = check_wrapped(env, dt, gamma_dt, max_t)
        if max_d is None:
            max_d = MAX_D.get(norm, MAX_D["l1"])  # App. J.3's; App. I's for l2
        dims = range(dim)  # Δ's dims: all, or those listed (Fig. 6)
        if delta_dims is not None:
            dims = delta_dims
        distinct_dims = len(set(dims)) == len(dims) > 0 and set(dims) <= set(range(dim))
        checks = [("max_d", max_d, 0 < max_d < math.inf),
                  ("norm", norm, norm in ("l1", "l2")),
                  ("lambda_dt", lambda_dt, lambda_dt is None or 0 <= lambda_dt <= 1),
                  ("delta_dims", delta_dims, distinct_dims)]
        for name, value, ok in checks:
            if not ok:
                raise ValueError(f"{name}: not a value the method takes (see the docstring), "
                                 f"got {value!r}")
        self.max_d = max_d
        self.max_t = max_t
        self.lambda_dt = lambda_dt
        self.norm = norm
        self.repeat = repeat
        self.delta_dims = delta_dims
        self.delta_mask = np.isin(np.arange(dim), dims)
        self.delta_divisor = len(dims)  # l1: Δ = ||·||_1 / n over n dims
        if norm == "l2":
            self.delta_divisor = math.sqrt(len(dims))  # l2: Δ = ||·||_2 / √n
        if not repeat:
            self.max_repeats = 1  # the plain learner takes one δ-step
        elif max_t == math.inf:
            self.max_repeats = math.inf
        else:  # k·δ ≥ max_t as an integer test on k: no float drift
            self.max_repeats = math.ceil(max_t / self.dt - 1e-9)
        if repeat:
            low = np.append(env.action_space.low, np.float32(-1))
            high = np.append(env.action_space.high, np.float32(1))
            self.action_space = gym.spaces.Box(low, high)
        if repeat and self.max_repeats == 1:
            warnings.warn(f"max_t = {max_t} s is not above δ = {self.dt} s: "
                          "no action can be repeated", stacklevel=2)
        # Running mean/var of raw δ-level observations for ñ(s); the plain learner has no Δ,
        # never updates them.
        self.obs_stats = RunningMeanStd(shape=(dim,))
        self.update_stats = repeat
        self.obs = None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        if not np.isfinite(obs).all():  # refused before anything learns from it
            raise ValueError(f"observation: not finite, got {obs}")
        self.obs = np.array(obs)  # a copy: some envs update their observation array in place
        if self.update_stats:
            # one sample: mean x, var 0, count 1
            self.obs_stats.update_from_moments(self.obs, 0.0, 1)
        return obs, info

    def step(self, action):
        if self.obs is None:
            raise RuntimeError("SafeActionRepetition: call reset() before step()")
        action = np.asarray(action)
        if action.shape != self.action_space.shape or not np.isfinite(action).all():
            size = self.action_space.shape[0]
            raise ValueError(f"action: needs {size} finite numbers, shape ({size},), "
                             f"got {action!r}")
        a = action
        u = 0.0  # the plain learner has no u
        if self.repeat:
            a = action[:-1]
            u = (min(max(action[-1], -1.0), 1.0) + 1) / 2  # u ∈ [0, 1]
        d = u * self.max_d
        # Δ = ||ñ(s) − ñ(s_i)|| / n (l2: / √n), ñ(s) = (s − mean)/(σ + 1e-3) with
        # the running mean and std (Sec. 5; 1e-3: the authors' code): the mean cancels,
        # so Δ weighs each dim of s − s_i by 1/((σ + 1e-3)·n), fixed for the repetition
        weight = self.delta_mask / ((np.sqrt(self.obs_stats.var) + 1e-3) * self.delta_divisor)
        s_i = self.obs
        seen = []  # the repetition's observations
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
            seen.append(np.array(obs))
            if terminated or truncated or k >= self.max_repeats:
                break
            if self.norm == "l1":
                distance = np.abs(obs - s_i) @ weight
            else:
                distance = math.sqrt(np.square((obs - s_i) * weight).sum())
            # out of eq. (6)'s region Δ ≤ d; a tie ends it too, as in the authors' code
            if self.lambda_dt is None and distance >= d:
                break
            # eq. (8) as the authors' code has it: Δ over d_max, k·δ over t_max, u in d's place
            if self.lambda_dt is not None:
                lam = self.lambda_dt
                if lam * distance / self.max_d + (1 - lam) * k * self.dt / self.max_t >= u:
                    break
        if self.update_stats:  # fold the repetition's observations in once, when it ends
            batch = np.asarray(seen)
            # np.mean and np.var written out: the same numbers at half the cost
            mean = batch.sum(0) / k
            self.obs_stats.update_from_moments(mean, np.square(batch - mean).sum(0) / k, k)
        self.obs = seen[-1]
        radius = d  # logged as safe_radius_mean: d for SAR; for λ-SAR u, its threshold in eq. (8)
        if self.lambda_dt is not None:
            radius = u
        info.update(w=k, safe_radius=radius, undiscounted_reward=undiscounted)
        return obs, R, terminated, truncated, info

    def state(self):  # s_i, the decision's state Δ is measured from: for a checkpoint (exact resume)
        return {"obs": self.obs}

    def restore(self, state):
        self.obs = state["obs"]


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


# ------------------------------------------------------- the autoregressive policy (App. G)
ARP_TABLE = {  # App. G's (p, α) per task: ARP-PPO's, then ARP-PPO (scaled)'s
    "Ant-v5": ((3, 0.5), (3, 0.5)), "HalfCheetah-v5": ((3, 0.3), (1, 0.8)),
    "InvertedDoublePendulum-v5": ((1, 0.5), (1, 0.95)),
    "InvertedPendulum-v5": ((1, 0.3), (1, 0.95)),
    "Swimmer-v5": ((1, 0.95), (3, 0.8)), "Reacher-v5": ((1, 0.3), (3, 0.8)),
    "Hopper-v5": ((3, 0.5), (1, 0.95)), "Walker2d-v5": ((1, 0.5), (1, 0.8))}


def ar_coefficients(p, alpha):
    """φ_1..φ_p, the coefficients of (1 − αz)^p = 1 − Σ_k φ_k z^k, and the σ_Z that makes
    X_t = Σ_k φ_k X_{t−k} + σ_Z·ε_t stationary with variance 1: σ_Z² = 1/Σ_j ψ_j² over
    the weights ψ_j = C(j+p−1, p−1)·α^j of X's MA(∞) form, in closed form by Euler's
    transformation of 2F1(p, p; 1; α²): (1 − α²)^(2p−1) / Σ_{j<p} C(p−1, j)²·α^(2j),
    stable for any α < 1."""
    phi = np.array([-math.comb(p, k) * (-alpha) ** k for k in range(1, p + 1)])
    x = alpha ** 2
    variance = ((1 - alpha) * (1 + alpha)) ** (2 * p - 1) / sum(math.comb(p - 1, j) ** 2 * x ** j
                                                                 for j in range(p))
    # App. G's runs were made with Yule–Walker's σ_Z² = 1 − Σ_k φ_k ρ_k, the same to 1e-9
    # for their (p, α); kept where it agrees, as the runs' last bits depend on it (elsewhere
    # 1 − φ·ρ cancels)
    system = np.eye(p)  # ρ_k − Σ_{j ≠ k} φ_j ρ_|k−j| = φ_k for k = 1..p
    for k in range(1, p + 1):
        for j in range(1, p + 1):
            if j != k:
                system[k - 1, abs(k - j) - 1] -= phi[j - 1]
    yule_walker = 1.0 - phi @ np.linalg.solve(system, phi)
    if abs(yule_walker - variance) <= 1e-9 * variance:
        variance = yule_walker
    return phi, math.sqrt(variance)


class AutoregressiveNoise(nn.Module):
    """The AR(p) noise of an autoregressive policy: given the last p steps, a_t ~
    N(μ(s_t) + σ·Σ_k φ_k x̃_{t−k}, (σ·σ_Z)²) with x̃ = (a − μ(s))/σ. `history`
    holds the episode's x̃_{t−1}, …, x̃_{t−p} (zero before its start); it is a
    buffer, so that a checkpoint holds it with the rest of the learner."""

    def __init__(self, num_actions, p, alpha):
        super().__init__()
        phi, self.sigma_z = ar_coefficients(p, alpha)
        # (p, 1): lag k's, every dim
        self.register_buffer("phi", torch.tensor(phi, dtype=torch.float32)[:, None])
        self.register_buffer("history", torch.zeros(p, num_actions))

    def conditional(self, policy, lags):
        """a_t's Gaussian given x̃ of its last p steps, `lags` (batch, p, K); `policy` is
        N(μ(s_t), σ²)."""
        mean = policy.loc + policy.scale * (self.phi * lags).sum(1)
        return Normal(mean, policy.scale * self.sigma_z, validate_args=False)

    def remember(self, x):  # x̃_t = (a_t − μ(s_t))/σ becomes the last step's
        self.history.copy_(torch.cat([x[None], self.history[:-1]]))


def lags_in_rollout(dones, boundary):
    """Where decision t's lags t−k (k = 1..p) are: their rollout index, or −1 and their x̃ in
    `stored`, which is `boundary` (the history when the rollout began) while the episode began
    before the rollout, else 0 (before the episode's start)."""
    n, (p, num_actions) = len(dones), boundary.shape
    index, stored = np.full((n, p), -1), np.zeros((n, p, num_actions), np.float32)
    begin = None  # the rollout index where the current episode began; None: before this rollout
    for t in range(n):
        for k in range(1, p + 1):
            if t - k >= (0 if begin is None else begin):
                index[t, k - 1] = t - k
            elif begin is None:
                stored[t, k - 1] = boundary[k - t - 1]
        if dones[t]:
            begin = t + 1
    return index, stored


def lagged_noise(agent, obs, actions, index, stored):
    """x̃_{t−k} = (a_{t−k} − μ(s_{t−k}))/σ, (batch, p, K), recomputed with the current θ
    where t−k is in the rollout; elsewhere the stored x̃ (the previous rollout's keeps the
    ratio 1 before the first step; 0 before the episode)."""
    lags, inside = stored.clone(), index >= 0
    if inside.any():
        dist = agent.dist(obs[index[inside]])
        lags[inside] = (actions[index[inside]] - dist.loc) / dist.scale
    return lags


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


def ppo_update(agent, arp, optimizer, batch, args, rng):
    """PPO's update (Schulman et al., 2017, eq. 9): `update_epochs` passes over the rollout in
    minibatches, each step on the clipped surrogate plus the value MSE. Returns the update's
    logged means. π(a_t|s_t) is ARP's: the Gaussian of a_t given its last p steps."""
    tensors = map(torch.as_tensor, batch)
    b_obs, b_actions, b_logprobs, b_advantages, b_returns, b_lag_index, b_stored_lags = tensors
    n = len(b_obs)
    names = ("policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy")
    logs = {name: [] for name in names}
    for epoch in range(args.update_epochs):
        order = rng.permutation(n)
        for begin in range(0, n, args.minibatch_size):
            mb = torch.as_tensor(order[begin:begin + args.minibatch_size])
            lags = lagged_noise(agent, b_obs, b_actions, b_lag_index[mb], b_stored_lags[mb])
            dist = arp.conditional(agent.dist(b_obs[mb]), lags)
            newlogprob = dist.log_prob(b_actions[mb]).sum(1)
            entropy = dist.entropy().sum(1)
            newvalue = agent.critic(b_obs[mb]).squeeze(1)
            logratio = newlogprob - b_logprobs[mb]
            # the official ar_ppo/ar_pposgd_simple.py clips the log-ratio at ln 100 before exp
            ratio = logratio.clamp(max=math.log(100)).exp()
            with torch.no_grad():
                logs["approx_kl"].append(((ratio - 1) - logratio).mean())
                logs["clip_fraction"].append(((ratio - 1.0).abs() > args.clip_coef).float().mean())
            mb_advantages = b_advantages[mb]
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
    return {name: torch.stack(logged).mean().item() for name, logged in logs.items()}


# ---------------------------------------------------------------- training
def make_decision_env(args):
    """The environment of one decision: the δ-env, then the repetition, then the perturbation
    outside it (one draw per decision, Sec. 5.2). Returns (env, the repetition wrapper)."""
    env = envs.make_env(args.env_id, args.dt, args.gamma)
    if args.hold_penalty:
        # App. H: counts holding time at δ-level, inside the repetition
        env = envs.HoldPenalty(env)
    env = SafeActionRepetition(env, repeat=False)  # no repetition: a decision is one δ-step
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

    agent = Agent(obs_dim, env.unwrapped.action_space.shape[0], repeat=repetition.repeat,
                  init_logstd=args.init_logstd)
    arp = AutoregressiveNoise(env.action_space.shape[0], args.arp_p, args.arp_alpha)
    # fused: one kernel for all parameters instead of ~10 small ops per tensor
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=args.adam_eps,
                                 fused=True)
    obs_rms = RunningMeanStd(shape=(obs_dim,))  # network inputs
    ret_rms = RunningMeanStd(shape=())  # discounted return, for reward scaling
    learner = {"agent": agent, "optimizer": optimizer, "obs_rms": obs_rms, "ret_rms": ret_rms,
               "repetition_stats": repetition.obs_stats, "arp": arp}
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
    eval_decision_env = None
    if args.eval_every or args.eval_every_s:
        eval_decision_env = make_decision_env(args)

    # lock the run folder; start the run, or resume it: weights, RNGs and the episode in progress
    # (a new episode feeds the input statistics; arp.history: a checkpoint's); a finished run exits here
    def new_episode(raw_obs):  # no lags yet
        arp.history.zero_()
        return normalize(raw_obs, obs_rms, args.norm_obs, update=True)

    run, (raw_obs, obs, episode_return, scaling_return) = bookkeeping.open_or_resume(
        args, argv, SCRIPT, learner, config, rng, env, new_episode)
    counters = run["counters"]  # a resumed run's
    start = time.time() - counters["wall_time_s"]
    # the budget: --total-steps decisions, or --physical-time seconds (as progress.csv rounds them)
    while (counters["decision_steps"] < args.total_steps if args.physical_time is None
           else round(counters["env_steps"] * dt, 6) < args.physical_time - 1e-9):
        update_start = time.time()
        finished_returns = []
        # the lags of the rollout's first decisions, if the episode goes on
        boundary = arp.history.clone()
        # ---------------- rollout: n decision steps
        for step in range(n):
            obs_buf[step] = obs
            with torch.inference_mode():  # no_grad without autograd's bookkeeping: cheaper
                policy = agent.dist(torch.as_tensor(obs)[None])
                # a_t given the episode's last p steps
                dist = arp.conditional(policy, arp.history[None])
                action = dist.sample()
                logprobs_buf[step] = dist.log_prob(action).sum()  # of the unclipped sample
                arp.remember((action[0] - policy.loc[0]) / policy.scale[0])
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
            radius_buf[step] = info["safe_radius"]
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
                episode_return, scaling_return = 0.0, 0.0
                raw_obs = next_raw_obs
                arp.history.zero_()
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
        # a time limit is no termination
        next_values = np.where(truncated_buf > 0, final_values, next_values)
        next_values = np.where(terminated_buf > 0, 0.0, next_values)
        dones = np.maximum(terminated_buf, truncated_buf)
        advantages = compute_gae(rewards_buf, values, next_values, discounts_buf, dones,
                                 args.gae_lambda)
        returns = advantages + values

        # ---------------- PPO update
        lags = lags_in_rollout(dones, boundary.numpy())
        batch = (obs_buf, actions_buf, logprobs_buf, advantages, returns, *lags)
        logs = ppo_update(agent, arp, optimizer, batch, args, rng)
        counters["update"] += 1

        # ---------------- logs
        update_time = time.time() - update_start
        eval_return = None  # None: a blank in progress.csv
        if bookkeeping.evaluation_due(args, counters, steps, dt):
            eval_return = evaluate(args, eval_decision_env, agent, obs_rms, repetition.obs_stats)
        counters["wall_time_s"] = time.time() - start
        return_mean = None  # no training episode ended
        if finished_returns:
            return_mean = float(np.mean(finished_returns))
        safe_radius_mean = None  # the plain learner has none
        if repetition.repeat:
            safe_radius_mean = float(radius_buf.mean())
        row = {"decision_steps": counters["decision_steps"], "env_steps": counters["env_steps"],
               "physical_time_s": round(counters["env_steps"] * dt, 6),
               "wall_time_s": round(counters["wall_time_s"], 3), "episodes": counters["episodes"],
               "return_mean": return_mean, "eval_return_mean": eval_return,
               "action_duration_mean_s": float(durations_buf.mean() * dt),
               "safe_radius_mean": safe_radius_mean,
               **logs,
               "decisions_per_s": round(n / update_time, 1),  # of the whole update
               "env_steps_per_s": round(steps / rollout_time, 1)}  # of the rollout alone
        said = [f"return {return_mean:.1f}" if finished_returns else "no episode ended",
                f"duration {1e3 * row['action_duration_mean_s']:.1f}ms"]
        if repetition.repeat:
            said.append(f"radius {safe_radius_mean:.3f}")  # SAR's d
        said += [f"{row['decisions_per_s']:.0f} decisions/s",
                 f"{row['env_steps_per_s']:.0f} δ-steps/s in the rollout"]
        episode = (raw_obs, obs, episode_return, scaling_return)
        bookkeeping.log_and_checkpoint(run, args, row, said, env, episode)
    bookkeeping.end(run, args, env)  # model.pt with --save-model


def evaluate(args, decision_env, agent, obs_rms, repetition_stats):
    """Mean return of deterministic (mean-action) episodes, with every running statistic frozen."""
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


# ================================================================ the flags
TOTAL_STEPS = 1_000_000  # decisions, the default budget
# Table 2; init_logstd: the authors' sb3/repeat/main.py
PPO_DEFAULTS = {"num_steps": 2048, "update_epochs": 10, "minibatch_size": 64, "gae_lambda": 0.95,
                "init_logstd": 0.0}
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
    # The method (App. G)
    p.add_argument("--arp-p", type=within(int, 1, 10), help="the AR process's order p (default: App. G's for the task)")
    p.add_argument("--arp-alpha", type=checked(float, lambda v: 0 <= v < 1, "must lie in [0, 1)"),
                   help="α: the noise's smoothness, 0 for white noise (default: App. G's for the task)")
    p.add_argument("--scale-lr", action="store_true", help="lr·δ/δ0 and App. G's (p, α) of ARP-PPO (scaled)")
    # PPO (App. J.3, Table 2)
    p.add_argument("--learning-rate", type=within(float, 0, 1, open_low=True), default=1e-4, help="Adam's step size")
    p.add_argument("--adam-eps", type=within(float, 1e-12, 1), default=1e-5, help="Adam's epsilon")
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
    for name, default in PPO_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.minibatch_size = args.minibatch_size or args.num_steps
    for flag, ok, rule in [  # what no single flag sees
            ("--arp-p/--arp-alpha", args.env_id in ARP_TABLE or None not in (args.arp_p, args.arp_alpha),
             f"App. G gives them for {', '.join(ARP_TABLE)} only; pass both for {args.env_id}"),
            ("--num-steps/--minibatch-size", args.minibatch_size <= args.num_steps,
             f"--minibatch-size {args.minibatch_size} must not exceed --num-steps {args.num_steps}"),
            ("--num-steps/--minibatch-size", args.num_steps % args.minibatch_size != 1,
             f"{args.num_steps} decisions in minibatches of {args.minibatch_size} leave a last one of one decision, "
             "whose advantages have no std")]:
        if not ok:
            fail(f"{flag}: {rule}")
    bookkeeping.check_budget(args, TOTAL_STEPS)
    task = args.env_id.split("-")[0]
    args.norm_obs, args.norm_reward = (task != "Ant" if on is None else on for on in (args.norm_obs, args.norm_reward))
    paper_p, paper_alpha = ARP_TABLE.get(args.env_id, ((None, None), (None, None)))[args.scale_lr]
    args.arp_p = paper_p if args.arp_p is None else args.arp_p
    args.arp_alpha = paper_alpha if args.arp_alpha is None else args.arp_alpha


def name_run(args):
    """The method's name, its base then each method flag off its default (the paper's variants, App. I), and the
    run's: <env>__<slug>__dt<δ>[__<setting>]__s<seed>."""
    args.method, slug = ("ARP-PPO (scaled)", "arp-ppo-scaled") if args.scale_lr else ("ARP-PPO", "arp-ppo")
    paper = ARP_TABLE.get(args.env_id, ((None, None), (None, None)))[args.scale_lr]
    variants = [(name, part) for off_default, name, part in [  # (name, run-name part)
        ((args.arp_p, args.arp_alpha) != paper, f"p={args.arp_p}, α={args.arp_alpha:.12g}",
         f"p{args.arp_p}-alpha{args.arp_alpha:.12g}")] if off_default]
    args.method += f" ({', '.join(name for name, _ in variants)})" if variants else ""
    slug = "-".join([slug] + [part for _, part in variants])
    setting = envs.setting(args)  # the stochastic setting's part of the run name, if any
    if args.physical_time is not None:  # a budget of physical time: its own runs
        setting += f"__T{args.physical_time:g}"
    args.run_name = args.run_name or f"{args.env_id}__{slug}__dt{args.dt:g}{setting}__s{args.seed}"


# ================================================================ what bookkeeping.py needs of this script
FLAGS_ADDED_LATER = {"init_logstd": 0.0}  # and the value runs before them had
COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes", "return_mean",  # progress.csv
           "eval_return_mean", "action_duration_mean_s", "safe_radius_mean", "policy_loss", "value_loss",
           "approx_kl", "clip_fraction", "entropy", "decisions_per_s", "env_steps_per_s"]
SCRIPT = bookkeeping.Script(__file__, make_parser, FLAGS_ADDED_LATER, "smaller steps (--learning-rate, --vf-coef)",
                            COLUMNS)

if __name__ == "__main__":
    bookkeeping.guard(main)
