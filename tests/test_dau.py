"""dau.py: DAU's parts (the OU noise, the optimisers, the centred advantage, the TD target and its weights) and a
run's promises (its gradient steps, kill and resume, bad flags)."""
import contextlib
import csv
import io
import math
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

import dau
import envs
from tests.helpers import TOYS, Forked, run_forked

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TIMINGS = {"wall_time_s", "decisions_per_s", "env_steps_per_s", "gradient_steps_per_s"}
SMALL = ["--num-envs", "4", "--train-every", "5", "--gradient-steps", "3", "--batch-size", "16"]


def train(log_dir, *flags, name="run", check=True):
    result = run_forked("dau.py", "--log-dir", log_dir, *flags, *(["--run-name", name] if name else []))
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


def train_in_process(log_dir, *flags, name="run"):
    """dau.main in this process (its imports are paid once), with its one torch thread; what it printed."""
    threads = torch.get_num_threads()
    try:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            dau.main(["--log-dir", str(log_dir), *flags, *(["--run-name", name] if name else [])])
    finally:
        torch.set_num_threads(threads)  # as this process had them
    return printed.getvalue()


def rows(folder, timings=True):
    with open(os.path.join(folder, "progress.csv"), newline="") as f:
        return [{k: v for k, v in row.items() if timings or k not in TIMINGS} for row in csv.DictReader(f)]


def checkpoint(folder):
    return torch.load(os.path.join(folder, "checkpoint.pt"), weights_only=True)


def batch_of(size, obs_dim=4, action_dim=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(size, obs_dim, generator=g), torch.rand(size, action_dim, generator=g) * 2 - 1,
            torch.rand(size, generator=g), torch.randn(size, obs_dim, generator=g),
            (torch.rand(size, generator=g) < 0.3).float(), torch.ones(size)]


# ---------------------------------------------------------------- the parts
def test_ou_noise_starts_and_stays_at_std_sigma_over_sqrt_2_theta_with_autocorrelation_exp_minus_theta_k_dt():
    torch.manual_seed(0)
    theta, sigma, dt = 7.5, 1.5, 0.002
    noise = dau.OrnsteinUhlenbeck((2048, 2), theta, sigma, dt)
    path = []
    for _ in range(1500):
        path.append(noise.noise.clone())
        noise.step()
    path = torch.stack(path).reshape(1500, -1).double()  # 4096 independent chains
    stationary = sigma / math.sqrt(2 * theta)
    assert path[0].std().item() == pytest.approx(stationary, rel=0.05)  # its law from the first action on
    assert path.std().item() == pytest.approx(stationary, rel=0.02)
    for k in (10, 67, 200):  # θ·k·δ = 0.15, 1, 3: exp(−θkδ) = 0.86, 0.37, 0.05
        correlation = (path[:-k] * path[k:]).mean().item() / path.var().item()
        assert correlation == pytest.approx(math.exp(-theta * k * dt), abs=0.03), k


@pytest.mark.parametrize("dt", [5e-4, 0.002, 0.04])
def test_each_networks_optimiser_is_rmsprop_with_lr_times_dt_and_alpha_one_minus_dt(dt):
    agent = dau.Agent(4, 2)
    critic, actor = dau.make_optimizers(agent, 0.1, dt)
    owner = {p: o for o in (critic, actor) for group in o.param_groups for p in group["params"]}
    for network, expected in [(agent.value, critic), (agent.advantage_raw, critic), (agent.actor, actor)]:
        for p in network.parameters():
            assert owner[p] is expected  # π steps on its own optimiser, after V and Ā
    assert len(owner) == len(list(agent.parameters()))
    for o in (critic, actor):
        assert isinstance(o, torch.optim.RMSprop)
        assert [(g["lr"], g["alpha"]) for g in o.param_groups] == [(pytest.approx(0.1 * dt), pytest.approx(1 - dt))]


@pytest.mark.parametrize("size", [1, 7, 256])
def test_the_advantage_at_the_policys_own_action_is_zero_for_any_batch(size):
    torch.manual_seed(size)
    agent = dau.Agent(4, 2)
    obs, actions = torch.randn(size, 4) * 3, torch.rand(size, 2) * 2 - 1
    with torch.no_grad():
        policy = agent.act(obs)
        assert agent.advantage(obs, policy, policy).abs().max().item() <= 1e-6
        assert agent.advantage(obs, actions, policy).abs().min().item() > 0  # elsewhere it is not


def test_the_td_target_is_r_plus_gamma_dt_v_next_with_the_delta_scaled_reward_as_it_is():
    env = envs.make_env("InvertedPendulum-v5", "lowest")
    dt, gamma_dt = env.dt, env.gamma_dt
    agent = dau.Agent(4, 1, normalize=False)  # the statistics would move between the two computations
    with torch.no_grad():  # V ≡ 2.5
        agent.value[-1].weight.zero_()
        agent.value[-1].bias.fill_(2.5)
    batch = batch_of(64)
    obs, actions, rewards, next_obs, terminated, weights = batch
    with torch.no_grad():
        policy = agent.act(obs)
        q = 2.5 + dt * agent.advantage(obs, actions, policy)
        target = rewards + gamma_dt * (1 - terminated) * 2.5  # no δ on r: envs.py has scaled it already
        loss = dau.critic_loss(agent, batch, dt, gamma_dt, policy)
    assert loss.item() == pytest.approx((q - target).square().mean().item(), rel=1e-5)
    assert gamma_dt == pytest.approx(0.99 ** (0.002 / 0.04))


def test_a_run_learns_from_the_envs_delta_scaled_rewards_with_its_gamma_dt(tmp_path, monkeypatch):
    seen = []
    original = dau.critic_loss

    def recording(agent, batch, dt, gamma_dt, policy_actions):
        seen.append((dt, gamma_dt, batch[2].unique().tolist()))
        return original(agent, batch, dt, gamma_dt, policy_actions)
    monkeypatch.setattr(dau, "critic_loss", recording)
    train_in_process(tmp_path, "--env-id", "InvertedPendulum-v5", "--dt", "0.01", "--physical-time", "0.4", *SMALL)
    env = envs.make_env("InvertedPendulum-v5", 0.01)
    assert len(seen) == 2 * 3 and {(dt, gamma) for dt, gamma, _ in seen} == {(0.01, env.gamma_dt)}
    assert {r for _, _, rewards in seen for r in rewards} <= {0.0, 0.25}  # 1 per δ0-step alive, × δ/δ0 = 0.25, once


def test_a_transition_cut_by_the_time_limit_adds_nothing_to_the_loss():
    agent = dau.Agent(4, 1)
    batch = batch_of(32)
    with torch.no_grad():
        policy = agent.act(batch[0])
        loss = lambda b: dau.critic_loss(agent, b, 0.002, 0.99, policy).item()  # noqa: E731
        changed = [t.clone() for t in batch]
        changed[2][5] += 1000.0  # transition 5's reward
        assert loss(changed) != pytest.approx(loss(batch))
        batch[5][5] = changed[5][5] = 0.0  # weight 0: cut by the time limit
        assert loss(changed) == pytest.approx(loss(batch), rel=1e-6)


@pytest.mark.parametrize("env_id,dt,ends", [("Reacher-v5", "original", "truncated"),
                                             ("InvertedPendulum-v5", "original", "terminated")])
def test_the_memory_weighs_0_the_transitions_cut_by_the_time_limit_and_1_the_terminations(tmp_path, env_id, dt, ends):
    # Reacher's episodes end at the limit only (50 steps at δ0); InvertedPendulum's pole falls within it
    train_in_process(tmp_path, "--env-id", env_id, "--dt", dt, "--physical-time", str(120 * envs.dt0_of(env_id)),
                     "--num-envs", "2", "--train-every", "30", "--gradient-steps", "1", "--batch-size", "8")
    memory = checkpoint(tmp_path / "run")["memory"]
    cut = torch.nonzero(memory["weights"] == 0).flatten().tolist()
    if ends == "truncated":
        assert cut == [49 * 2, 49 * 2 + 1] and memory["terminated"].sum() == 0  # step 50 of each env
    else:
        assert cut == [] and memory["terminated"].sum() >= 2


# ---------------------------------------------------------------- a run
@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    """A finished run of 2 s on InvertedPendulum at δ_lowest: T/δ = 1000 transitions, 50 rows of N·K = 20."""
    root = tmp_path_factory.mktemp("dau")
    printed = train_in_process(root, "--physical-time", "2", *SMALL, name=None)
    return root / "InvertedPendulum-v5__dau-norm__dt0.002__T2__s1", printed


def test_a_short_run_takes_t_over_dt_times_l_over_k_n_gradient_steps_and_logs_its_rows(short_run):
    folder, printed = short_run
    logged = rows(folder)
    t, dt, n, k, steps = 2.0, 0.002, 4, 5, 3  # T, δ, N envs, every K vector steps L gradient steps
    assert int(logged[-1]["gradient_steps"]) == round(t / dt * steps / (k * n)) == 150
    assert [int(r["decision_steps"]) for r in logged] == [n * k * (i + 1) for i in range(50)]
    assert float(logged[-1]["physical_time_s"]) == pytest.approx(t)
    assert all(r["action_duration_mean_s"] == "0.002" and r["safe_radius_mean"] == r["approx_kl"] == "" for r in logged)
    assert "left 0.0 min" in printed.splitlines()[-1] and "gradient steps/s" in printed
    assert "DAU, 50 rows of 5 steps of 4 envs and 3 gradient steps" in printed.splitlines()[0]
    state = checkpoint(folder)
    for name in ("critic_optimizer", "actor_optimizer"):
        assert [(g["lr"], g["alpha"]) for g in state[name]["param_groups"]] == [(pytest.approx(1e-1 * dt),
                                                                                   pytest.approx(1 - dt))]
    assert state["config"]["method"] == "DAU" and state["config"]["total_steps"] == 1000


def test_a_run_of_one_row_says_1_row(tmp_path):
    printed = train_in_process(tmp_path, "--physical-time", "0.04", *SMALL)  # 20 transitions: one row of N·K
    assert "DAU, 1 row of 5 steps of 4 envs" in printed.splitlines()[0]


def test_status_calls_the_short_run_finished_and_plot_draws_it(short_run, tmp_path, monkeypatch, capsys):
    import plot
    from tools import status
    folder, _ = short_run
    command = f"python dau.py --physical-time 2 {' '.join(SMALL)} --log-dir {folder.parent} --resume\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(command))
    status.main([])
    assert capsys.readouterr().out.splitlines()[0] == "finished: 1"
    assert plot.main([str(folder.parent), "--out", str(tmp_path)]) == 0
    assert "| DAU |" in capsys.readouterr().out  # a method of the tables, not a variant left out
    assert (tmp_path / "InvertedPendulum-v5_deterministic_return_vs_decision_steps.png").exists()


def kill_after_rows(cmd, progress, count):
    """Start `cmd` (a script and its flags), SIGKILL it once progress.csv has `count` rows; the rows it had then."""
    proc = Forked(*cmd)
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline:
        if progress.exists() and len(progress.read_text().splitlines()) > count:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return len(progress.read_text().splitlines()) - 1


def test_a_run_killed_twice_and_resumed_gives_the_uninterrupted_runs_rows(tmp_path):
    # InvertedPendulum at δ0: its pole falls every few seconds, so resets draw from the envs' own RNGs too
    flags = ["--dt", "original", "--physical-time", "24", *SMALL, "--checkpoint-every", "6"]  # 30 rows
    train(tmp_path, *flags, name="whole")
    cmd = ["dau.py", "--log-dir", tmp_path, "--run-name", "cut", *flags]
    progress = tmp_path / "cut" / "progress.csv"
    first = kill_after_rows(cmd, progress, 3)  # before its first checkpoint: it starts over
    second = kill_after_rows([*cmd, "--resume"], progress, 14)  # past two: rows 13 on are made again
    assert 3 <= first < 30 and 14 <= second < 30 and checkpoint(tmp_path / "cut")["counters"]["row"] in (12, 18, 24)
    train(tmp_path, *flags, "--resume", name="cut")
    whole = rows(tmp_path / "whole", timings=False)
    assert len(whole) == 30 and rows(tmp_path / "cut", timings=False) == whole
    assert int(whole[-1]["episodes"]) > 4  # episodes did end


def test_ctrl_c_between_checkpoints_names_the_rows_that_are_made_again(tmp_path):
    flags = ["--dt", "original", "--physical-time", "24", *SMALL, "--checkpoint-every", "100"]  # 30 rows
    proc = Forked("dau.py", "--log-dir", tmp_path, "--run-name", "cut", *flags, files=[
        open(os.devnull), open(os.devnull, "w"), err := open(tmp_path / "err.txt", "w")])
    progress = tmp_path / "cut" / "progress.csv"
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline and not (
            progress.exists() and len(progress.read_text().splitlines()) > 8):
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    err.close()
    logged = len(progress.read_text().splitlines()) - 1
    message = (tmp_path / "err.txt").read_text()
    made = checkpoint(tmp_path / "cut")["counters"]["row"]
    assert message.count("\n") == 1 and "interrupted; continue the run with the same command plus --resume" in message
    assert 8 <= logged < 30 and made == 0  # the checkpoint made before the first row
    assert f"(from its checkpoint: rows 1 to {logged} made again)" in message


# The toy tasks of tests/helpers.py (TOYS), registered in the child process: a non-finite observation or reward.
@pytest.mark.parametrize("env_id,named", [("NanObservation-v0", "observation: not finite"),
                                          ("NanReward-v0", "reward: not finite")])
def test_a_non_finite_observation_or_reward_ends_the_run_in_one_line_naming_it(tmp_path, env_id, named):
    result = run_forked("dau.py", "--env-id", env_id, "--dt", "0.01", "--physical-time", "1", *SMALL, "--log-dir",
                        tmp_path, prelude=TOYS)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert f"the environment failed in row 1 ({named})" in result.stderr


def test_a_progress_line_has_no_nan_and_a_resume_that_changes_the_budget_says_so(tmp_path):
    # InvertedPendulum at δ_lowest: its first episodes outlast the first rows of 4 envs × 5 steps
    flags = [*SMALL, "--eval-every", "5", "--eval-episodes", "1"]
    first = train(tmp_path, "--physical-time", "1", *flags).stdout
    lines = [line for line in first.splitlines() if line.startswith("row ")]
    assert "nan" not in first and "no episode ended" in lines[0] and "| evaluation " in lines[-1]
    longer = train(tmp_path, "--physical-time", "2", *flags, "--resume").stdout  # a lock is the process's: another
    assert "was made with --physical-time 1 s; it now ends at 2 s" in longer and "row 50/50" in longer
    assert len(rows(tmp_path / "run")) == 50


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("flags,named", [
    (["--physical-time", "-1"], "--physical-time"), (["--physical-time", "0"], "--physical-time"),
    (["--physical-time", "nan"], "--physical-time"), (["--dt", "0"], "--dt"), (["--dt", "0.05"], "--dt"),
    (["--dt", "fast"], "--dt"), (["--env-id", "NoSuchTask-v0"], "--env-id"), (["--num-envs", "0"], "--num-envs"),
    (["--train-every", "0"], "--train-every"), (["--gradient-steps", "0"], "--gradient-steps"),
    (["--gradient-steps", "2.5"], "--gradient-steps"), (["--batch-size", "0"], "--batch-size"),
    (["--seed", "-1"], "--seed"), (["--seed", "one"], "--seed"), (["--learning-rate", "0"], "--learning-rate"),
    (["--buffer-size", "100"], "--buffer-size"),  # less than one vector step of 256 envs
    (["--dt", "original", "--ou-theta", "30"], "--ou-theta")])  # θ·δ = 1.2
def test_a_bad_flag_says_one_line_naming_it_exits_2_and_writes_nothing(flags, named, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the default --log-dir runs/ is here

    def started(*_):
        raise AssertionError(f"{flags} started a run")
    monkeypatch.setattr(dau.bookkeeping, "open_run", started)
    with pytest.raises(SystemExit) as exit_info:
        dau.main(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and named in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_bad_flag_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    result = train(tmp_path, "--num-envs", "0", check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "--num-envs" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_shows_every_range_and_never_a_default_of_none(capsys):
    with pytest.raises(SystemExit) as exit_info:
        dau.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert exit_info.value.code == 0 and "None" not in text and "SUPPRESS" not in text
    assert "--num-envs NUM_ENVS N, envs stepped together (must lie in [1, 4096]; default: 256)" in text


def test_input_normalisation_uses_the_statistics_before_a_batch_then_adds_it_and_freezes_in_evaluation():
    norm = dau.InputNormalizer(3, on=True)
    first, second = torch.randn(50, 3) * 4 + 7, torch.randn(30, 3) * 2 - 1
    assert torch.equal(norm(first), first)  # mean 0, std 1 before any state
    both = torch.cat([first, second])
    std = (first.square().mean(0) - first.mean(0) ** 2).clamp(min=1e-2).sqrt()
    assert torch.allclose(norm(second), (second - first.mean(0)) / std, atol=1e-5)
    assert torch.allclose(norm.mean, both.mean(0), atol=1e-5) and norm.count.item() == 80
    assert torch.allclose(norm.squared_mean, both.square().mean(0), atol=1e-4)
    norm.eval()
    before = norm.mean.clone()
    norm(torch.full((5, 3), 100.0))
    assert torch.equal(norm.mean, before) and norm.count.item() == 80
    assert torch.equal(dau.InputNormalizer(3, on=False)(second), second)


def test_without_normalisation_the_agent_computes_what_it_did_before_the_flag(tmp_path):
    torch.manual_seed(0)
    plain = dau.Agent(4, 2, normalize=False)
    torch.manual_seed(0)
    normalised = dau.Agent(4, 2)
    obs = torch.randn(8, 4) * 5 + 3
    assert torch.equal(plain.act(obs), torch.tanh(plain.actor(obs)))
    assert not torch.equal(normalised.act(obs + 0), normalised.act(obs + 0))  # the first call moved the statistics
    assert [n for n, _ in plain.named_parameters()] == [n for n, _ in normalised.named_parameters()]


def test_a_task_without_its_own_dt0_needs_physical_time_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        dau.parse_args(["--env-id", "MountainCarContinuous-v0", "--dt", "0.01"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "--physical-time" in err


def test_a_replay_memory_larger_than_the_machine_is_refused_before_anything_is_written(tmp_path):
    result = train(tmp_path / "logs", "--buffer-size", "1000000000", check=False)
    assert result.returncode == 2 and "--buffer-size" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "logs").exists()


def test_the_smallest_physical_time_is_one_row_not_none():
    args = dau.parse_args(["--physical-time", "1e-9", *SMALL])
    assert args.total_steps == 4 * 5  # one row: K vector steps of N envs


def test_evaluate_py_reads_a_dau_run_with_its_input_statistics(short_run, capsys):
    from tools import evaluate
    folder, _ = short_run
    evaluate.main([str(folder), "--episodes", "1"])
    assert "DAU on InvertedPendulum-v5 at δ = 0.002 s (deterministic): mean return" in capsys.readouterr().out


def test_a_resume_with_other_threads_is_refused_since_they_change_the_numbers(tmp_path):
    train(tmp_path, "--physical-time", "1", *SMALL)
    # a fresh interpreter: two torch threads in a child forked from this process can deadlock
    result = subprocess.run([sys.executable, os.path.join(ROOT, "dau.py"), "--log-dir", str(tmp_path), "--run-name",
                             "run", "--physical-time", "2", *SMALL, "--threads", "2", "--resume"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "--threads: " in result.stderr and "made with --threads 1, not 2" in result.stderr
