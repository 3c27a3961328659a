"""The authors' log-std heads, as flags that measure them: --sb2-logstd (their TRPO) and --sb3-u-init (their A2C)."""
import pytest
import torch

import sar_ppo
import sar_trpo


def test_sb2_gives_plain_trpos_last_task_dim_a_state_dependent_log_std_of_gain_1_and_bias_0():
    torch.manual_seed(0)
    agent = sar_trpo.Agent(4, 3, repeat=False, sb2_logstd=True)
    scale = agent.dist(torch.randn(64, 4)).scale
    assert agent.actor_logstd.shape == (2,) and torch.all(scale[:, :2] == 1.0)  # log-std 0, one per dim
    assert scale[:, 2].std() > 0.05  # a head of gain 1: the last dim's σ varies with the state
    assert torch.all(agent.repeat_logstd.bias == 0)
    one = sar_trpo.Agent(4, 1, repeat=False, sb2_logstd=True)  # InvertedPendulum: its only dim
    assert one.actor_logstd.numel() == 0 and one.dist(torch.randn(5, 4)).scale.shape == (5, 1)


def test_sb3_leaves_the_repetition_head_at_pytorchs_default_and_the_task_dims_at_init_logstd():
    torch.manual_seed(0)
    agent = sar_ppo.Agent(4, 3, repeat=True, init_logstd=-1.5, sb3_u_init=True)
    scale = agent.dist(torch.randn(256, 4)).scale
    assert torch.allclose(scale[:, :3], torch.tensor(1.5).neg().exp())
    assert 0.4 < scale[:, 3].mean() < 2.5  # σ ≈ 1 at the start: log σ a small linear function of the state
    ours = sar_ppo.Agent(4, 3, repeat=True, init_logstd=-1.5).dist(torch.randn(256, 4)).scale
    assert torch.allclose(ours, torch.tensor(1.5).neg().exp(), atol=0.02)  # here every dim starts at −1.5


@pytest.mark.parametrize("module,flags,method,run_name", [
    (sar_trpo, ["--no-repeat", "--sb2-logstd"], "TRPO (SB2 log-std)", "trpo-sb2-logstd"),
    (sar_trpo, ["--sb2-logstd"], "SAR-TRPO (SB2 log-std)", "sar-trpo-sb2-logstd"),
    (sar_ppo, ["--a2c", "--sb3-u-init"], "SAR-A2C (SB3 u init)", "sar-a2c-sb3-u-init")])
def test_the_authors_heads_are_variants_with_names_of_their_own(module, flags, method, run_name):
    args = module.parse_args(flags)
    assert (args.method, args.run_name) == (method, f"InvertedPendulum-v5__{run_name}__dt0.002__s1")


@pytest.mark.parametrize("flags", [["--sb3-u-init"], ["--a2c", "--no-repeat", "--sb3-u-init"]])
def test_sb3_u_init_needs_sar_a2c(flags, capsys):
    with pytest.raises(SystemExit) as exit_info:
        sar_ppo.parse_args(flags)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "--sb3-u-init" in err
