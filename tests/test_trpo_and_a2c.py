"""The other two learners: TRPO's natural step within the KL bound, its line search and conjugate gradient
(Table 3); A2C as PPO's special case (Table 4); and the flags each refuses."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.nn import utils as nn_utils

import figar_ppo
import figar_trpo
import sar_ppo
import sar_trpo
from tests.helpers import MORE_BAD_FLAGS, ROOT, assert_exits_2_naming, read_csv


def trpo_batch(seed=0, n=256, obs_dim=4, actions=2, init_logstd=0.0):
    """An agent (with the repetition dim) and a rollout it could have made, with advantages that favour some actions."""
    torch.manual_seed(seed)
    agent = sar_ppo.Agent(obs_dim, actions, repeat=True, init_logstd=init_logstd)
    obs = torch.randn(n, obs_dim)
    with torch.no_grad():
        dist = agent.dist(obs)
        acts = dist.sample()
        logprobs = dist.log_prob(acts).sum(1)
    advantages = (acts[:, 0] + acts[:, 1] - 0.3 * obs[:, 1]).numpy()
    returns = np.random.default_rng(seed).normal(size=n).astype(np.float32)
    return agent, (obs.numpy(), acts.numpy(), logprobs.numpy(), advantages, returns)


TRPO_ARGS = dict(max_kl=0.01, cg_iters=10, cg_damping=0.1, line_search_steps=10, ent_coef=0.0, vf_epochs=5,
                 vf_minibatch_size=128)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trpo_step_keeps_the_mean_kl_within_max_kl_and_raises_the_surrogate(seed, one_thread):
    agent, batch = trpo_batch(seed)
    obs, acts, logprobs, advantages, _ = map(torch.as_tensor, batch)
    std_adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    with torch.no_grad():
        old = agent.dist(obs)
    critic = [p.detach().clone() for p in agent.critic.parameters()]
    optimizer = torch.optim.Adam(agent.critic.parameters(), lr=1e-4, eps=1e-8)
    logs = sar_trpo.trpo_update(agent, optimizer, batch, argparse.Namespace(**TRPO_ARGS), np.random.default_rng(0))
    with torch.no_grad():
        new = agent.dist(obs)
        kl = torch.distributions.kl_divergence(old, new).sum(1).mean().item()
        surrogate = ((new.log_prob(acts).sum(1) - logprobs).exp() * std_adv).mean().item()
    # the full natural step is sized for KL = max_kl by the quadratic model; the line search allows 1.5·max_kl
    assert 0.005 < kl <= 0.01 * 1.1 and logs["step_fraction"] == 1.0 and logs["approx_kl"] == pytest.approx(kl)
    assert surrogate > 0.01 and logs["policy_loss"] == pytest.approx(-surrogate, abs=1e-6)  # E[A] = 0 before the step
    assert any(not torch.equal(a, b) for a, b in zip(critic, agent.critic.parameters()))  # the value fit ran


def test_trpo_line_search_keeps_the_old_policy_when_no_step_improves_the_surrogate(one_thread):
    agent, batch = trpo_batch(3)
    batch = (*batch[:3], np.zeros_like(batch[3]), batch[4])  # no advantage anywhere: no step can improve
    before = [p.detach().clone() for p in agent.parameters()]
    optimizer = torch.optim.Adam(agent.critic.parameters(), lr=1e-4)
    args = argparse.Namespace(**TRPO_ARGS)
    logs = sar_trpo.trpo_update(agent, optimizer, batch, args, np.random.default_rng(0))
    actor = [(a, b) for (name, b), a in zip(agent.named_parameters(), before) if not name.startswith("critic.")]
    assert logs["step_fraction"] == 0.0 and all(torch.equal(a, b) for a, b in actor)
    assert (logs["policy_loss"], logs["approx_kl"]) == (0.0, 0.0)  # finite: a row, not a divergence


def test_conjugate_gradient_matches_linalg_solve_on_a_positive_definite_system():
    torch.manual_seed(0)
    m = torch.randn(6, 6, dtype=torch.float64)
    a, b = m @ m.T + 0.5 * torch.eye(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    x = sar_trpo.conjugate_gradient(lambda v: a @ v, b, iters=6)  # exact in n iterations, up to rounding
    assert torch.allclose(x, torch.linalg.solve(a, b), atol=1e-8)


TRPO_BAD_FLAGS = [(f, n) for f, n in MORE_BAD_FLAGS if n not in ("--learning-rate", "--clip-coef", "--vf-coef",
                  "--max-grad-norm", "--minibatch-size", "--update-epochs")] + [
    (["--max-kl", "0"], "--max-kl"), (["--max-kl", "nan"], "--max-kl"), (["--cg-iters", "0"], "--cg-iters"),
    (["--cg-damping", "-1"], "--cg-damping"), (["--line-search-steps", "0"], "--line-search-steps"),
    (["--vf-learning-rate", "inf"], "--vf-learning-rate"), (["--vf-epochs", "0"], "--vf-epochs"),
    (["--vf-minibatch-size", "2048"], "--vf-minibatch-size"), (["--scale-lr"], "--scale-lr"),
    (["--a2c"], "--a2c")]


@pytest.mark.parametrize("flags,named", TRPO_BAD_FLAGS)
@pytest.mark.parametrize("module", [sar_trpo, figar_trpo])
def test_every_trpo_flag_is_checked_before_any_work(module, flags, named, tmp_path, capsys):
    if module is figar_trpo and named == "--delta-dims":
        named = "unrecognized arguments"
    assert_exits_2_naming(module.parse_args, ["--log-dir", str(tmp_path / "logs"), *flags], named, capsys)
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("flags", [["--max-t", "0.002"], ["--max-d", "0.3"], ["--norm", "l2"]], ids=" ".join)
@pytest.mark.parametrize("module", [sar_ppo, sar_trpo])
def test_the_plain_learner_refuses_sars_flags_that_would_do_nothing(module, flags, capsys):
    assert_exits_2_naming(module.parse_args, ["--no-repeat", *flags], "have no meaning with --no-repeat", capsys)
    assert module.parse_args(["--no-repeat", "--max-t", "0.05", "--max-d", "0.5"]).method.split()[0] in ("PPO", "TRPO")


def test_a2c_update_equals_a_reference_a2c_gradient_step(one_thread):
    agent, batch = trpo_batch(4, init_logstd=-1.5)
    reference = sar_ppo.Agent(4, 2, repeat=True)
    reference.load_state_dict(agent.state_dict())
    args = argparse.Namespace(a2c=True, update_epochs=1, minibatch_size=256, clip_coef=0.2, ent_coef=0.0, vf_coef=0.5,
                              max_grad_norm=0.5)
    rmsprop = lambda params: torch.optim.RMSprop(params, lr=1e-4, alpha=0.99, eps=1e-5)  # noqa: E731
    sar_ppo.ppo_update(agent, rmsprop(agent.parameters()), batch, args, np.random.default_rng(0))
    obs, acts, _, advantages, returns = map(torch.as_tensor, batch)
    loss = -(advantages * reference.dist(obs).log_prob(acts).sum(1)).mean() \
        + 0.5 * ((reference.critic(obs).squeeze(1) - returns) ** 2).mean()  # A2C: −A·log π + 0.5·value MSE
    optimizer = rmsprop(reference.parameters())
    loss.backward()
    nn_utils.clip_grad_norm_(reference.parameters(), 0.5)
    optimizer.step()
    for (name, a), b in zip(agent.named_parameters(), reference.parameters()):
        assert torch.allclose(a, b, atol=1e-6), name
    assert agent.actor_logstd.detach().numpy() == pytest.approx(-1.5, abs=1e-3)  # A2C's initial log-std, moved once


@pytest.mark.parametrize("script,flags,method,slug", [
    ("sar_ppo.py", [], "SAR-A2C", "sar-a2c"), ("figar_ppo.py", [], "FiGAR-C-A2C", "figar-a2c"),
    ("sar_ppo.py", ["--no-repeat"], "A2C", "a2c")])
def test_a2c_flag_trains_with_table_4s_settings_under_the_a2c_names(tmp_path, script, flags, method, slug):
    result = subprocess.run([sys.executable, os.path.join(ROOT, script), "--a2c", "--log-dir", str(tmp_path),
                             "--total-steps", "512", *flags], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    run = tmp_path / f"InvertedPendulum-v5__{slug}__dt0.002__s1"
    config = json.loads((run / "config.json").read_text())
    assert config["method"] == method and (config["num_steps"], config["update_epochs"], config["minibatch_size"],
                                           config["gae_lambda"], config["init_logstd"]) == (256, 1, 256, 1.0, -1.5)
    assert [int(r["decision_steps"]) for r in read_csv(run / "progress.csv")] == [256, 512]


@pytest.mark.parametrize("flag", ["--update-epochs", "--minibatch-size", "--clip-coef"])
@pytest.mark.parametrize("module", [sar_ppo, figar_ppo])
def test_a2c_refuses_flags_that_would_make_it_another_learner_or_do_nothing(module, flag, capsys):
    assert_exits_2_naming(module.parse_args, ["--a2c", flag, "4"], flag, capsys)
