"""arp_ppo.py: the autoregressive policy's noise, its densities, and a run's promises (ARP reduces to PPO at α = 0)."""
import csv
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
from torch.distributions import MultivariateNormal, Normal

import arp_ppo
from tests.helpers import ROOT, Forked, train

TIMINGS = {"wall_time_s", "decisions_per_s", "env_steps_per_s"}


def rows(log_dir, name="run", timings=True):
    with open(os.path.join(log_dir, name, "progress.csv"), newline="") as f:
        return [{k: v for k, v in row.items() if timings or k not in TIMINGS} for row in csv.DictReader(f)]


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.95])
def test_ar1_has_phi_alpha_and_sigma_z_for_a_stationary_variance_of_1(alpha):
    phi, sigma_z = arp_ppo.ar_coefficients(1, alpha)
    assert phi == pytest.approx([alpha]) and sigma_z == pytest.approx(np.sqrt(1 - alpha ** 2))


@pytest.mark.parametrize("alpha", [0.3, 0.8])
def test_ar3_has_the_coefficients_of_one_minus_alpha_z_cubed(alpha):
    phi, _ = arp_ppo.ar_coefficients(3, alpha)
    assert phi == pytest.approx([3 * alpha, -3 * alpha ** 2, alpha ** 3])


@pytest.mark.parametrize("p,alpha", [(1, 0.5), (1, 0.95), (3, 0.5), (3, 0.8)])
def test_a_long_simulated_ar_process_has_variance_1(p, alpha):
    phi, sigma_z = arp_ppo.ar_coefficients(p, alpha)
    rng = np.random.default_rng(0)
    chains, steps = 200, 3_000  # 200 independent chains; the first 1,000 steps of each forget the zero start
    x = np.zeros((chains, steps + p))
    noise = rng.standard_normal((chains, steps))
    for t in range(steps):
        x[:, t + p] = x[:, t:t + p][:, ::-1] @ phi + sigma_z * noise[:, t]
    assert x[:, 1_000 + p:].var() == pytest.approx(1.0, abs=0.02)


def test_conditional_densities_of_an_episode_sum_to_the_joint_gaussian_of_the_ar_covariance():
    p, alpha, steps, dims = 3, 0.8, 7, 2
    arp = arp_ppo.AutoregressiveNoise(dims, p, alpha)
    generator = torch.Generator().manual_seed(0)
    mu, sigma = torch.randn(steps, dims, generator=generator), torch.rand(dims, generator=generator) + 0.5
    actions = mu + 2 * torch.randn(steps, dims, generator=generator)
    x = (actions - mu) / sigma
    total = 0.0
    for t in range(steps):  # the lags before the episode's start are zero
        lags = torch.stack([x[t - k] if t - k >= 0 else torch.zeros(dims) for k in range(1, p + 1)])
        total += arp.conditional(Normal(mu[t][None], sigma[None]), lags[None]).log_prob(actions[t][None]).sum().item()
    # X = L⁻¹·σ_Z·ε with L lower triangular: 1 on the diagonal, -φ_k on the k-th subdiagonal; a = μ + σ·X per dim
    phi, sigma_z = arp_ppo.ar_coefficients(p, alpha)
    L = np.eye(steps) - sum(np.diag(np.full(steps - k, phi[k - 1]), -k) for k in range(1, p + 1))
    cov_x = sigma_z ** 2 * np.linalg.inv(L) @ np.linalg.inv(L).T
    joint = sum(MultivariateNormal(mu[:, d].double(), torch.as_tensor(sigma[d].item() ** 2 * cov_x)).log_prob(
        actions[:, d].double()).item() for d in range(dims))
    assert total == pytest.approx(joint, rel=1e-5)


def test_recomputed_log_probabilities_match_the_rollouts_across_episodes_and_the_rollout_boundary():
    torch.manual_seed(0)
    agent, arp = arp_ppo.Agent(3, 2, repeat=False), arp_ppo.AutoregressiveNoise(2, 3, 0.8)
    arp.history.normal_()  # the episode began in the previous rollout
    boundary, steps = arp.history.clone(), 40
    obs, dones = torch.randn(steps, 3), np.zeros(steps)
    dones[[12, 25]] = 1
    actions, logprobs = [], []
    with torch.no_grad():  # the rollout's sampling, as in main()
        for t in range(steps):
            policy = agent.dist(obs[t][None])
            dist = arp.conditional(policy, arp.history[None])
            action = dist.sample()
            logprobs.append(dist.log_prob(action).sum())
            arp.remember((action[0] - policy.loc[0]) / policy.scale[0])
            actions.append(action[0])
            if dones[t]:
                arp.history.zero_()
    actions, logprobs = torch.stack(actions), torch.stack(logprobs)
    index, stored = map(torch.as_tensor, arp_ppo.lags_in_rollout(dones, boundary.numpy()))
    with torch.no_grad():
        lags = arp_ppo.lagged_noise(agent, obs, actions, index, stored)
        recomputed = arp.conditional(agent.dist(obs), lags).log_prob(actions).sum(1)
        without_boundary = arp.conditional(agent.dist(obs), arp_ppo.lagged_noise(
            agent, obs, actions, index, torch.zeros_like(stored))).log_prob(actions).sum(1)
    assert torch.allclose(recomputed, logprobs, atol=1e-5)  # the ratio is 1 before PPO's first step
    assert not torch.allclose(without_boundary[:3], logprobs[:3], atol=1e-3)  # the stored lags are what makes it so
    assert index[13].tolist() == [-1, -1, -1] and index[14].tolist() == [13, -1, -1] and index[3].tolist() == [2, 1, 0]


def test_with_alpha_0_arp_ppo_gives_the_rows_of_plain_ppo(tmp_path):
    fast = ["--env-id", "InvertedPendulum-v5", "--total-steps", "2048", "--num-steps", "1024", "--update-epochs", "2",
            "--minibatch-size", "256", "--seed", "3"]
    train("arp_ppo.py", tmp_path, *fast, "--arp-p", "3", "--arp-alpha", "0", name="arp")
    train("sar_ppo.py", tmp_path, *fast, "--no-repeat", name="ppo")
    arp, ppo = rows(tmp_path, "arp", timings=False), rows(tmp_path, "ppo", timings=False)
    assert len(arp) == 2 and arp == ppo


def test_arp_run_writes_its_method_and_differs_from_white_noise(tmp_path):
    fast = ["--total-steps", "1024", "--num-steps", "512", "--update-epochs", "1", "--minibatch-size", "256"]
    train("arp_ppo.py", tmp_path, *fast, name="arp")  # InvertedPendulum: App. G's p = 1, α = 0.3
    train("arp_ppo.py", tmp_path, *fast, "--arp-alpha", "0", name="white")
    config = open(os.path.join(tmp_path, "arp", "config.json")).read()
    assert '"method": "ARP-PPO"' in config and '"arp_p": 1' in config and '"arp_alpha": 0.3' in config
    assert rows(tmp_path, "arp", timings=False) != rows(tmp_path, "white", timings=False)
    assert all(r["safe_radius_mean"] == "" and r["env_steps"] == r["decision_steps"] for r in rows(tmp_path, "arp"))


@pytest.mark.parametrize("flags,method,run_name", [
    (["--env-id", "Hopper-v5"], "ARP-PPO", "Hopper-v5__arp-ppo__dt0.0005__s1"),
    (["--env-id", "Hopper-v5", "--scale-lr"], "ARP-PPO (scaled)", "Hopper-v5__arp-ppo-scaled__dt0.0005__s1"),
    (["--env-id", "Hopper-v5", "--arp-p", "1"], "ARP-PPO (p=1, α=0.5)", "Hopper-v5__arp-ppo-p1-alpha0.5__dt0.0005__s1"),
    (["--env-id", "Pendulum-v1", "--arp-p", "1", "--arp-alpha", "0.5"], "ARP-PPO (p=1, α=0.5)",
     "Pendulum-v1__arp-ppo-p1-alpha0.5__dt0.05__s1")])
def test_arp_defaults_are_app_g_table_and_other_values_name_the_run(flags, method, run_name):
    args = arp_ppo.parse_args(flags)
    assert (args.method, args.run_name) == (method, run_name)
    p, alpha = arp_ppo.ARP_TABLE["Hopper-v5"][1 if "--scale-lr" in flags else 0]
    if flags == ["--env-id", "Hopper-v5"] or "--scale-lr" in flags:
        assert (args.arp_p, args.arp_alpha) == (p, alpha)


@pytest.mark.parametrize("flags,named", [
    (["--arp-p", "0"], "--arp-p"), (["--arp-p", "2.5"], "--arp-p"), (["--arp-p", "11"], "--arp-p"),
    (["--arp-alpha", "1"], "--arp-alpha"), (["--arp-alpha", "-0.1"], "--arp-alpha"),
    (["--arp-alpha", "nan"], "--arp-alpha"), (["--env-id", "Pendulum-v1"], "--arp-p/--arp-alpha"),
    (["--env-id", "Pendulum-v1", "--arp-p", "1"], "--arp-p/--arp-alpha"), (["--no-repeat"], "--no-repeat"),
    (["--max-d", "0.5"], "--max-d")])
def test_bad_arp_flag_exits_2_with_one_line_naming_it_and_writes_nothing(tmp_path, flags, named):
    result = train("arp_ppo.py", tmp_path / "logs", *flags, check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr
    assert not (tmp_path / "logs").exists()


def test_killed_arp_run_resumes_with_the_uninterrupted_runs_rows(tmp_path):
    flags = ["--arp-p", "3", "--arp-alpha", "0.8", "--total-steps", str(10 * 256), "--num-steps", "256",
             "--update-epochs", "1", "--minibatch-size", "128", "--checkpoint-every", "2"]
    train("arp_ppo.py", tmp_path, *flags, name="whole")
    proc = Forked("arp_ppo.py", "--log-dir", tmp_path, "--run-name", "run", *flags)
    progress, checkpoint = tmp_path / "run" / "progress.csv", tmp_path / "run" / "checkpoint.pt"
    deadline = time.time() + 120
    while time.time() < deadline and not (checkpoint.exists() and len(progress.read_text().splitlines()) >= 4):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(rows(tmp_path)) < 10  # killed mid-run
    train("arp_ppo.py", tmp_path, *flags, "--resume")
    assert rows(tmp_path, timings=False) == rows(tmp_path, "whole", timings=False)


def test_evaluate_reads_an_arp_run_and_its_model(tmp_path):
    fast = ["--total-steps", "512", "--num-steps", "256", "--update-epochs", "1", "--minibatch-size", "128"]
    train("arp_ppo.py", tmp_path, *fast, "--save-model")
    for model in ("model.pt", "checkpoint.pt"):
        result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "evaluate.py"), str(tmp_path / "run"),
                                 "--episodes", "1"], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "ARP-PPO on InvertedPendulum-v5" in result.stdout, result.stderr
        (tmp_path / "run" / model).unlink()  # then the checkpoint alone


@pytest.mark.parametrize("p,alpha", [(5, 0.99), (8, 0.9), (2, 0.999999999), (3, 0.5), (1, 0.95)])
def test_sigma_z_gives_unit_variance_where_yule_walker_cancels(p, alpha):
    # 1/σ_Z² = Σ_j ψ_j², ψ_j = C(j+p−1, p−1)·α^j (X's MA(∞) weights), summed directly where it converges fast enough
    _, sigma_z = arp_ppo.ar_coefficients(p, alpha)
    assert 0 < sigma_z < 1
    if alpha <= 0.99:
        j = np.arange(200_000)
        log_psi = np.array([math.lgamma(k + p) - math.lgamma(k + 1) - math.lgamma(p) for k in j]) + j * np.log(alpha)
        assert sigma_z ** 2 * np.exp(2 * log_psi).sum() == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("p,alpha,made", [(3, 0.5, 0.33920026264998415), (1, 0.8, 0.5999999999999999),
                                          (1, 0.95, 0.31224989991991997), (3, 0.8, 0.039028591510075046)])
def test_app_g_pairs_keep_the_sigma_z_their_runs_were_made_with(p, alpha, made):
    # App. G's committed runs scale the policy's float32 σ by σ_Z, so their rows need its float32;
    # its float64 may differ in the last bits where the BLAS rounds Yule–Walker's solve otherwise
    sigma_z = arp_ppo.ar_coefficients(p, alpha)[1]
    assert np.float32(sigma_z) == np.float32(made)
    assert sigma_z == pytest.approx(made, rel=1e-12, abs=0)


def test_an_alpha_near_one_keeps_its_digits_in_the_method_and_run_names():
    args = arp_ppo.parse_args(["--arp-p", "2", "--arp-alpha", "0.999999999"])
    assert "α=0.999999999" in args.method and "alpha0.999999999" in args.run_name
