"""DAU: Deep Advantage Updating (Tallec, Blier & Ollivier, ICML 2019), the baseline of Fig. 4.

Q-learning whose parts keep their meaning as δ → 0: Q(s, a) = V(s) + δ·A(s, a) with A(s, a) =
Ā(s, a) − Ā(s, π(s)), one squared TD loss against r + γ_δ·V(s') (no target network), a
deterministic policy π that climbs Ā(s, π(s)), Ornstein–Uhlenbeck exploration in physical time,
and RMSprop steps of lr·δ with α = 1 − δ. N envs step together; every K vector steps the learner
takes L gradient steps on batches drawn from a replay memory.

A port of the official `cdau` (github.com/ctallec/continuous-rl, code/: critics/off_policy/
advantage.py, actors/off_policy/approximate.py, agents/off_policy/offline_agent.py,
noises/coherent.py, memory/buffer.py), its README's recipe as defaults. Where it departs:
- tasks: gymnasium's MuJoCo v5 tasks stepped every δ by envs.make_env (the official MuJoCo entries
  call env constructors stock gym lacks); the budget is physical time, summed over the N envs;
- reward and discount: the project's r·δ/δ0 (δ-scaled by envs.py: not multiplied by δ again) and
  γ_δ = 0.99^(δ/δ0), as for SAR, not the official r·δ and 0.8^δ;
- a transition cut by the time limit has weight 0 in the loss, as the official code intends (it
  computes the weight, then leaves it out of the critic's loss);
- input normalisation as the recipe's --normalize_state, but frozen in evaluation (the official
  code feeds it the evaluation's states too); --no-input-norm turns it off, as in the runs made
  before it existed (method "DAU (no normalisation)", run names __dau__);
- the first learning comes after K vector steps, then every K (the official: after 19, 29, …).

    python dau.py --env-id InvertedPendulum-v5 --dt lowest --physical-time 200
"""
import glob
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn

import bookkeeping
import envs
from bookkeeping import fail, within


# ---------------------------------------------------------------- the networks
def mlp(inputs, outputs, hidden=256):
    """2 × 256, each hidden layer Linear → LayerNorm → ReLU, the last bias 0 (models.py MLP)."""
    last = nn.Linear(hidden, outputs)
    nn.init.zeros_(last.bias)
    return nn.Sequential(nn.Linear(inputs, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.ReLU(), last)


class InputNormalizer(nn.Module):
    """s ↦ (s − mean)/std, std ≥ 0.1, over the states its network was given (models.py CustomBN):
    a batch is normalised with the statistics before it, then joins them unless update=False.
    Frozen in eval mode; with on=False it passes states through."""

    def __init__(self, dim, on):
        super().__init__()
        self.on = on
        self.register_buffer("count", torch.zeros(1))
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("squared_mean", torch.ones(dim))

    def forward(self, obs, update=True):
        if not self.on:
            return obs
        std = (self.squared_mean - self.mean ** 2).clamp(min=1e-2).sqrt()
        normalized = (obs - self.mean) / std
        if update and self.training:
            n, total = len(obs), self.count + len(obs)
            self.mean.copy_((self.mean * self.count + n * obs.mean(0)) / total)
            squares = self.squared_mean * self.count + n * obs.square().mean(0)
            self.squared_mean.copy_(squares / total)
            self.count.copy_(total)
        return normalized


class Agent(nn.Module):
    """V(s), Ā(s, a) and the policy π(s) = tanh(MLP(s)) in [-1, 1], each network normalising its
    state input with statistics of its own (NormalizedMLP)."""

    def __init__(self, obs_dim, action_dim, normalize=True):
        super().__init__()
        self.value = mlp(obs_dim, 1)
        self.advantage_raw = mlp(obs_dim + action_dim, 1)  # Ā
        self.actor = mlp(obs_dim, action_dim)
        self.value_inputs = InputNormalizer(obs_dim, normalize)
        self.advantage_inputs = InputNormalizer(obs_dim, normalize)
        self.actor_inputs = InputNormalizer(obs_dim, normalize)

    def act(self, obs):
        return torch.tanh(self.actor(self.actor_inputs(obs)))

    def state_value(self, obs, update=True):
        return self.value(self.value_inputs(obs, update)).squeeze(1)

    def advantage_raw_of(self, obs, actions):  # Ā(s, a)
        return self.advantage_raw(torch.cat([self.advantage_inputs(obs), actions], 1)).squeeze(1)

    def advantage(self, obs, actions, policy_actions):
        """A(s, a) = Ā(s, a) − Ā(s, π(s)): zero at a = π(s) for any Ā, so V is the value of π.
        One pass of Ā over both halves."""
        both = self.advantage_raw_of(torch.cat([obs, obs]), torch.cat([actions, policy_actions]))
        return both[:len(obs)] - both[len(obs):]


# ---------------------------------------------------------------- exploration and memory
class OrnsteinUhlenbeck:
    """Per env and action dim X ← X(1 − θδ) + σ√δ·ε (coherent.py): coherent over physical time
    whatever δ; drawn first from its stationary law N(0, σ²/2θ), never reset at episode ends."""

    def __init__(self, shape, theta, sigma, dt):
        self.decay, self.scale = 1 - theta * dt, sigma * math.sqrt(dt)
        self.noise = sigma / math.sqrt(2 * theta) * torch.randn(shape)

    def step(self):
        self.noise.mul_(self.decay).add_(torch.randn(self.noise.shape), alpha=self.scale)

    def state_dict(self):
        return {"noise": self.noise.clone()}

    def load_state_dict(self, state):
        self.noise = state["noise"].clone()


class ReplayMemory:
    """The last `capacity` transitions, added N at a time, sampled uniformly (buffer.py).
    `weights`: 0 for a transition cut by the time limit, else 1."""
    FIELDS = ("obs", "actions", "rewards", "next_obs", "terminated", "weights")

    def __init__(self, capacity, num_envs, obs_dim, action_dim):
        self.capacity = capacity // num_envs * num_envs  # whole vector steps
        widths = {"obs": [obs_dim], "actions": [action_dim], "next_obs": [obs_dim]}  # else 1
        self.data = {k: torch.zeros(self.capacity, *widths.get(k, [])) for k in self.FIELDS}
        self.size = self.cursor = 0

    def add(self, *transitions):
        rows = slice(self.cursor, self.cursor + len(transitions[0]))
        for name, values in zip(self.FIELDS, transitions):
            self.data[name][rows] = torch.as_tensor(values, dtype=torch.float32)
        self.cursor = rows.stop % self.capacity
        self.size = max(self.size, rows.stop)

    def sample(self, batches, batch_size):  # with replacement, one indexing per field
        index = torch.randint(self.size, (batches, batch_size))
        return [self.data[name][index] for name in self.FIELDS]

    def state_dict(self):  # the filled rows only (a slice alone would save the whole tensor)
        filled = {name: rows[:self.size] for name, rows in self.data.items()}
        if self.size < self.capacity:
            filled = {name: rows.clone() for name, rows in filled.items()}
        return {"cursor": self.cursor, **filled}

    def load_state_dict(self, state):
        self.cursor, self.size = state["cursor"], len(state["rewards"])
        for name, rows in self.data.items():
            rows[:self.size] = state[name]


# ---------------------------------------------------------------- the update
def make_optimizers(agent, learning_rate, dt):
    """RMSprop(lr·δ, α = 1 − δ) for V and Ā together, and for π (optimizer.py): a step moves the
    networks by O(δ), as a transition is O(δ) of experience; the mean square of the gradients
    spans about 1/δ steps, one second."""
    def rmsprop(params):
        return torch.optim.RMSprop(params, lr=learning_rate * dt, alpha=1 - dt, foreach=True)
    critic = [*agent.value.parameters(), *agent.advantage_raw.parameters()]
    return rmsprop(critic), rmsprop(agent.actor.parameters())


def critic_loss(agent, batch, dt, gamma_dt, policy_actions):
    """mean w·(Q(s, a) − y)², Q = V(s) + δ·A(s, a), y = r + γ_δ(1 − terminated)V(s') with the
    current V (no target network: the official τ = 0), r δ-scaled already (advantage.py)."""
    obs, actions, rewards, next_obs, terminated, weights = batch
    # V(s') normalised with V(s)'s statistics before this batch (the official target copy's)
    with torch.no_grad():
        next_value = agent.state_value(next_obs, update=False)
        target = rewards + gamma_dt * (1 - terminated) * next_value
    q = agent.state_value(obs) + dt * agent.advantage(obs, actions, policy_actions)
    return (weights * (q - target).square()).mean()


def dau_update(agent, critic_optimizer, actor_optimizer, batch, dt, gamma_dt):
    """A gradient step of V and Ā on the TD loss, then one of π on −Ā(s, π(s)) with the new Ā
    (offline_agent.py). Returns the two losses as tensors."""
    obs = batch[0]
    policy_actions = agent.act(obs)
    loss = critic_loss(agent, batch, dt, gamma_dt, policy_actions.detach())
    critic_optimizer.zero_grad()
    loss.backward()
    critic_optimizer.step()
    actor_loss = -agent.advantage_raw_of(obs, policy_actions).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward(inputs=list(agent.actor.parameters()))  # Ā's own gradients: not needed
    actor_optimizer.step()
    return loss.detach(), actor_loss.detach()


# ---------------------------------------------------------------- training
def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the networks' init, the noise and the memory's draws
    train_envs = [envs.make_env(args.env_id, args.dt, args.gamma) for _ in range(args.num_envs)]
    env = train_envs[0]
    check_task(args, env)  # bounded actions, a memory that fits: before anything is written
    dt, gamma_dt = env.dt, env.gamma_dt
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    low, high = env.action_space.low, env.action_space.high
    scale, bias = (high - low) / 2, (high + low) / 2  # π's [-1, 1] to the env's bounds

    agent = Agent(obs_dim, action_dim, normalize=not args.no_input_norm)
    critic_optimizer, actor_optimizer = make_optimizers(agent, args.learning_rate, dt)
    exploration = OrnsteinUhlenbeck((args.num_envs, action_dim), args.ou_theta, args.ou_sigma, dt)
    memory = ReplayMemory(args.buffer_size, args.num_envs, obs_dim, action_dim)
    learner = {"agent": agent, "critic_optimizer": critic_optimizer,
               "actor_optimizer": actor_optimizer, "exploration": exploration, "memory": memory}
    config = {**vars(args), "dt": dt, "dt0": env.dt0, "gamma_dt": gamma_dt,
              "learning_rate_used": args.learning_rate * dt, "rmsprop_alpha": 1 - dt}
    # start the run, or load its checkpoint into `learner` (a finished run exits here)
    run = bookkeeping.open_run(args, argv, SCRIPT, learner, config)
    counters = run["counters"]
    eval_env = envs.make_env(args.env_id, args.dt, args.gamma) if args.eval_every else None
    n = args.num_envs * args.train_every  # transitions a row
    num_rows = args.total_steps // n
    print_plan(run, args, num_rows, dt)
    # a seed per env and (re)start; on resume a MuJoCo task's envs go on as the checkpoint left them
    obs = np.stack([e.reset(seed=args.seed * args.num_envs + i + 1_000_000 * counters["row"])[0]
                    for i, e in enumerate(train_envs)])
    if "envs" in (run["state"] or {}):
        obs = restore_envs_from(run["state"]["envs"], train_envs)
    start = time.time() - counters["wall_time_s"]
    while counters["row"] < num_rows:
        row_start, returns = time.time(), []  # returns: of the episodes that end in this row
        for _ in range(args.train_every):  # K vector steps, each of N envs
            with torch.inference_mode():
                policy_actions = agent.act(torch.as_tensor(obs, dtype=torch.float32))
                actions = (policy_actions + exploration.noise).clamp(-1, 1)
                exploration.step()
            steps = [e.step(a) for e, a in zip(train_envs, actions.numpy() * scale + bias)]
            next_obs, rewards, terminated, truncated = map(np.array, list(zip(*steps))[:4])
            after = next_obs.copy()  # what the next actions see: a reset where an episode ended
            for i in np.flatnonzero(terminated | truncated):
                returns.append(steps[i][4]["episode"]["r"])
                after[i] = train_envs[i].reset()[0]
            seen = ("observation", next_obs), ("reward", rewards), ("observation", after)
            for name, values in seen:
                if not np.isfinite(values).all():  # it would reach the memory, then every network
                    raise FloatingPointError(f"{name}: not finite")  # guard: one line
            cut = truncated & ~terminated  # by the time limit: weight 0, as offline_agent.py has it
            memory.add(obs, actions, rewards, next_obs, terminated, 1.0 - cut)
            obs = after
        learn_start = time.time()
        env_time = learn_start - row_start
        losses = torch.zeros(2)
        for batch in zip(*memory.sample(args.gradient_steps, args.batch_size)):  # L, drawn at once
            both = dau_update(agent, critic_optimizer, actor_optimizer, batch, dt, gamma_dt)
            losses += torch.stack(both)
        value_loss, policy_loss = (losses / args.gradient_steps).tolist()  # value: Q's TD loss
        row_time, learn_time = time.time() - row_start, time.time() - learn_start

        counters["row"] += 1
        counters["transitions"] += n
        counters["episodes"] += len(returns)
        counters["gradient_steps"] += args.gradient_steps
        eval_return = ""
        if args.eval_every and counters["row"] % args.eval_every == 0:
            eval_return = evaluate(args, eval_env, agent, scale, bias)
        counters["wall_time_s"] = time.time() - start
        transitions = counters["transitions"]
        row = {**dict.fromkeys(COLUMNS, ""),  # "": the PPO scripts' columns
               "decision_steps": transitions, "env_steps": transitions,
               "physical_time_s": round(transitions * dt, 6),
               "wall_time_s": round(counters["wall_time_s"], 3), "episodes": counters["episodes"],
               "return_mean": float(np.mean(returns)) if returns else "",  # "": no episode ended
               "eval_return_mean": eval_return, "action_duration_mean_s": dt,
               "policy_loss": policy_loss, "value_loss": value_loss,
               "decisions_per_s": round(n / row_time, 1), "env_steps_per_s": round(n / env_time, 1),
               "gradient_steps": counters["gradient_steps"],
               "gradient_steps_per_s": round(args.gradient_steps / learn_time, 1)}
        # the row; every --checkpoint-every rows a checkpoint, with where the envs are
        bookkeeping.log_row(run, args, row, lambda: envs_now(train_envs, obs))
        print_row(run, row, num_rows)  # every 10 s, and each evaluation


def evaluate(args, env, agent, scale, bias):
    """Mean δ-scaled return of episodes with the deterministic policy π(s), no noise."""
    returns = []
    agent.eval()  # the input statistics frozen
    with torch.inference_mode():
        for episode in range(args.eval_episodes):
            obs, _ = env.reset(seed=args.seed + 10_000 + episode)
            terminated = truncated = False
            while not (terminated or truncated):
                action = agent.act(torch.as_tensor(obs, dtype=torch.float32)[None])[0].numpy()
                obs, _, terminated, truncated, info = env.step(action * scale + bias)
            returns.append(info["episode"]["r"])
    agent.train()
    return float(np.mean(returns))


# ================================================================ the flags
def make_parser():
    p = bookkeeping.parser(__doc__)
    envs.add_flags(p, stochastic=False)  # --env-id, --dt
    positive = within(float, 0, 10 ** 6, open_low=True)
    for flag, kind, default, text in [  # from --num-envs on, the official README's recipe
            ("--seed", bookkeeping.SEED, 1, "seeds torch and the envs"),
            ("--physical-time", within(float, 0, 10 ** 9, open_low=True), None,
             "seconds of experience summed over the envs; default 10^6·δ0 (Fig. 4)"),
            ("--num-envs", within(int, 1, 4096), 256, "N, envs stepped together"),
            ("--train-every", within(int, 1, 10 ** 6), 10, "K, vector steps between learning"),
            ("--gradient-steps", within(int, 1, 10 ** 6), 50, "L, gradient steps each time"),
            ("--batch-size", within(int, 1, 2 ** 20), 256, "transitions per gradient step"),
            ("--buffer-size", within(int, 1, 10 ** 9), 1_000_000, "replay memory, transitions"),
            ("--learning-rate", positive, 0.1, "RMSprop's step size per second: lr·δ per step"),
            ("--gamma", within(float, 0, 1, open_low=True), 0.99, "discount per δ0"),
            ("--ou-theta", positive, 7.5, "OU stiffness θ (1/s)"),
            ("--ou-sigma", within(float, 0, 10 ** 6), 1.5, "OU scale σ (actions in [-1, 1])")]:
        p.add_argument(flag, type=kind, default=default, help=text)
    p.add_argument("--no-input-norm", action="store_true",
                   help="turns off the input normalisation (the recipe's --normalize_state)")
    # a row: K vector steps, then L gradient steps; a checkpoint holds the replay memory
    bookkeeping.add_run_flags(p, every="rows", checkpoint_every=500, save_model=False,
                              run_name="<env>__dau-norm__dt<δ>__T<seconds>__s<seed>")
    return p


def parse_args(argv=None):
    """The flags, each checked on its own, then the rules between them and the budget in
    transitions; the run's name; on --resume the run's own value of each flag not given."""
    args = make_parser().parse_args(argv)
    check_args(args)
    name_run(args)
    if bookkeeping.take_run_flags(args, argv, SCRIPT):  # --resume: each flag not given, the run's
        check_args(args)  # the run's own flags, checked and in transitions again
    return args


def check_args(args):
    """What no single flag sees; then --physical-time in transitions, whole rows of N·K."""
    envs.check_flags(args)  # --dt in seconds
    theta_dt = args.ou_theta * args.dt
    for flag, ok, rule in [
            ("--dt", args.dt < 1, f"{args.dt:g} s leaves RMSprop no α = 1 − δ in (0, 1)"),
            ("--physical-time", args.physical_time or envs.dt0_of(args.env_id) is not None,
             f"{args.env_id} has no δ0 of its own for the default 10^6·δ0; give the seconds"),
            ("--ou-theta", theta_dt <= 1, f"θ·δ = {theta_dt:g} must be at most 1, or the noise "
             "X ← X(1 − θδ) + σ√δ·ε grows without bound"),
            ("--buffer-size", args.buffer_size >= args.num_envs,
             "must hold one vector step, --num-envs transitions")]:
        if not ok:
            fail(f"{flag}: {rule}")
    if args.physical_time is None:
        args.physical_time = 1e6 * envs.dt0_of(args.env_id)
    per_row = args.num_envs * args.train_every
    rows = max(1, math.ceil(args.physical_time / args.dt / per_row - 1e-9))  # at least one
    args.total_steps = rows * per_row


def check_task(args, env):
    """What the flags ask of the task: bounded actions; the replay memory, its copy in a checkpoint
    being written and the L batches drawn at once (float32s) within this machine's memory."""
    if not np.isfinite([env.action_space.low, env.action_space.high]).all():
        fail(f"--env-id: {args.env_id}'s actions are unbounded; π(s) = tanh(·) needs bounds")
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    needed = 4 * (2 * obs_dim + action_dim + 3) * (
        3 * args.buffer_size + args.gradient_steps * args.batch_size)
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if needed > ram:
        fail(f"--buffer-size/--batch-size: a replay memory of {args.buffer_size:,} transitions "
             f"and batches of {args.batch_size:,} need about {needed / 2 ** 30:.1f} GB, more "
             f"than this machine's {ram / 2 ** 30:.1f} GB")


# ================================================================ the run's name, --resume
def name_run(args):
    """The method's name, and the run's: <env>__dau-norm__dt<δ>__T<seconds>__s<seed>, without
    normalisation __dau__. The 108 committed runs of Fig. 4 (benchmark/fig4_dau.sh,
    fig4_dau_norm.sh) were named before names carried the budget: a run of that old name made
    with this budget is the run these flags name."""
    args.method = "DAU (no normalisation)" if args.no_input_norm else "DAU"
    if args.run_name:
        return
    slug = "dau" if args.no_input_norm else "dau-norm"

    def named(budget):
        return f"{args.env_id}__{slug}__dt{args.dt:g}{budget}__s{args.seed}"

    def made_with(name):  # the flags of the run <log-dir>/<name> (its config.json), or {}
        return bookkeeping.read_config(os.path.join(args.log_dir, name)) or {}

    args.run_name, old = named(f"__T{args.physical_time:g}"), named("")
    new_exists = os.path.exists(os.path.join(args.log_dir, args.run_name))
    if not new_exists and made_with(old).get("physical_time") == args.physical_time:
        args.run_name = old
    if not args.resume or made_with(args.run_name):
        return
    # --resume and no run of this budget: a run of another budget is not passed over in silence
    others = glob.glob(os.path.join(glob.escape(args.log_dir), named("__T*")))
    for other in sorted(os.path.basename(f) for f in others) + [old]:
        seconds = made_with(other).get("physical_time")
        if seconds is not None:
            fail(f"--resume: no run in {os.path.join(args.log_dir, args.run_name)} to continue; "
                 f"{other} is this run with --physical-time {seconds:g}: to extend it, rename "
                 f"its folder to {args.run_name} first; to start a new run, leave out --resume")


# ================================================================ what it says; its envs
def print_plan(run, args, num_rows, dt):
    """The first line: the folder, the method and its rows (--physical-time in whole rows)."""
    rows, seconds = f"{num_rows} row{'s' * (num_rows != 1)}", args.total_steps * dt
    rounded = "" if math.isclose(seconds, args.physical_time) else \
        f" (--physical-time {args.physical_time:g} s rounded up to {seconds:g} s)"
    print(f"{run['dir']}: {args.method}, {rows} of {args.train_every} steps of {args.num_envs} "
          f"envs and {args.gradient_steps} gradient steps{rounded}", flush=True)
    # the last line's time and row; this session's first row; the last training return shown
    row = run["counters"]["row"]
    run.update(shown=(time.time(), row), first_row=row + 1, last_return="no episode ended yet")


def print_row(run, row, num_rows):
    """A row's line every 10 s, at this session's first and last row and at each evaluation, with
    the last training return (the envs' episodes end together: most rows end none)."""
    done, (shown_at, shown_row) = run["counters"]["row"], run["shown"]
    if row["return_mean"] != "":
        run["last_return"] = f"return {row['return_mean']:.1f} (row {done})"
    evaluation = row["eval_return_mean"]
    evaluated = "" if evaluation == "" else f" | evaluation {evaluation:.1f}"
    if evaluated or time.time() - shown_at >= 10 or done in (run["first_row"], num_rows):
        pace = (time.time() - shown_at) / max(1, done - shown_row)  # seconds a row, since the last
        print(f"row {done}/{num_rows} | transitions {row['decision_steps']:,} | "
              f"physical {row['physical_time_s']:.0f}s | {run['last_return']}{evaluated} | "
              f"value loss {row['value_loss']:.3g} | {row['decisions_per_s']:.0f} transitions/s | "
              f"{row['gradient_steps_per_s']:.0f} gradient steps/s | "
              f"left {(num_rows - done) * pace / 60:.1f} min", flush=True)
        run["shown"] = (time.time(), done)


def envs_now(train_envs, obs):
    """For a checkpoint: each env where its next step starts, and the obs the next actions see;
    none for a task that is not MuJoCo (it starts afresh on resume)."""
    if not all(bookkeeping.is_mujoco(env) for env in train_envs):
        return {}
    saved = [bookkeeping.env_state(env) for env in train_envs]
    return {"envs": {"envs": saved, "obs": torch.as_tensor(obs)}}


def restore_envs_from(saved, train_envs):
    """Each env as the checkpoint left it; the observations the next actions see."""
    for env, one in zip(train_envs, saved["envs"], strict=True):
        bookkeeping.restore_env(env, one)
    return saved["obs"].numpy()


# ================================================================ what bookkeeping.py needs of it
FLAGS_ADDED_LATER = {"no_input_norm": True}  # the runs made before it had no normalisation
COLUMNS = ["decision_steps", "env_steps", "physical_time_s", "wall_time_s", "episodes",
           "return_mean", "eval_return_mean", "action_duration_mean_s", "safe_radius_mean",
           "policy_loss", "value_loss", "approx_kl", "clip_fraction", "entropy",  # the PPO scripts'
           "decisions_per_s", "env_steps_per_s", "gradient_steps", "gradient_steps_per_s"]
COUNTERS = ("row", "transitions", "gradient_steps", "episodes", "wall_time_s")  # a new run's: 0
SCRIPT = bookkeeping.Script(
    __file__, make_parser, FLAGS_ADDED_LATER, "a smaller --learning-rate", COLUMNS,
    resumable=bookkeeping.RESUMABLE - {"threads"},  # not --threads: it changes the numbers
    unit="transitions", counters=COUNTERS)

if __name__ == "__main__":
    bookkeeping.guard(main)
