"""The PPO recipe learns, and `python -m torchpool train` writes its outputs."""

import json
import subprocess
import sys

import pytest
import torch

import torchpool
from torchpool.train.ppo import RECIPES, Args, train


def test_ppo_on_cartpole_improves_the_return(tmp_path):
    settings = dict(RECIPES["CartPole-v1"], total_frames=60_000, target_return=None)
    result = train(Args(**settings, out_dir=str(tmp_path), progress=False, seed=3))
    returns = [mean for _, _, mean in result["curve"]]
    assert returns[0] < 40, "a random policy balances for ~20 steps"
    assert result["final_mean_return"] > 2 * returns[0] and result["final_mean_return"] > 80, returns[-5:]
    assert (tmp_path / "ppo_CartPole-v1.pt").exists() and (tmp_path / "ppo_CartPole-v1.json").exists()


def test_ppo_runs_on_a_continuous_task(tmp_path):
    settings = dict(RECIPES["Pendulum-v1"], total_frames=8192, target_return=None)
    result = train(Args(**settings, out_dir=str(tmp_path), progress=False))
    assert result["frames"] == 8192 and result["curve"]


def test_the_train_command_prints_and_saves(tmp_path):
    done = subprocess.run([sys.executable, "-m", "torchpool", "train", "CartPole-v1", "--total-frames", "8192",
                           "--no-early-stop", "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "CartPole-v1: mean return" in done.stdout
    saved = json.loads((tmp_path / "ppo_CartPole-v1.json").read_text())
    assert saved["frames"] == 8192


def test_the_atari_recipe_trains_the_compact_cnn_on_42x42_frames(tmp_path):
    import torch

    from torchpool.train.ppo import CnnAgent

    settings = dict(RECIPES["Pong-v5"], total_frames=512, num_envs=4, num_steps=64, target_return=None, eval_games=2)
    result = train(Args(env_id="Pong-v5", **settings, out_dir=str(tmp_path), progress=False))
    assert result["frames"] == 512
    assert set(result["time_split"]) >= {"envs", "policy"}
    rates = result["learning_rates"]
    assert len(rates) == 2 and rates[0] == settings["learning_rate"], "one rate per batch, from the recipe's"
    evaluation = result["evaluation"]
    assert evaluation["games"] == 2 and len(evaluation["returns"]) == 2
    assert all(-21 <= score <= 21 and score == int(score) for score in evaluation["returns"]), \
        "a fresh game's return is Pong's unclipped score difference"
    weights = torch.load(tmp_path / "ppo_Pong-v5.pt")
    agent = CnnAgent((4, 42, 42), 6, "compact", channels_last=True)
    agent.load_state_dict(weights)  # the saved weights are the compact CNN's, for 42x42 frames
    frames = torch.randint(0, 256, (3, 4, 42, 42), dtype=torch.uint8)
    action, extras = agent.act(frames)
    assert action.shape == (3,) and action.dtype == torch.int64
    assert extras["sample_log_prob"].shape == (3,) and extras["sample_log_prob"].dtype == torch.float32
    assert extras["state_value"].shape == (3, 1) and extras["state_value"].dtype == torch.float32
    distribution, value = agent.evaluate(frames)
    torch.testing.assert_close(value, extras["state_value"])
    torch.testing.assert_close(distribution.log_prob(action), extras["sample_log_prob"])


@pytest.mark.parametrize("network, shape", [("nature", (4, 84, 84)), ("compact", (4, 42, 42))])
@pytest.mark.parametrize("channels_last", [False, True])
def test_cnn_agents_agree_across_memory_formats(network, shape, channels_last):
    import torch

    from torchpool.train.ppo import CnnAgent

    torch.manual_seed(0)
    reference = CnnAgent(shape, 6, network)
    agent = CnnAgent(shape, 6, network, channels_last=channels_last)
    agent.load_state_dict(reference.state_dict())
    frames = torch.randint(0, 256, (5, *shape), dtype=torch.uint8)
    torch.testing.assert_close(agent.value(frames), reference.value(frames), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(agent.distribution(frames).logits, reference.distribution(frames).logits,
                               rtol=1e-4, atol=1e-5)


def test_a_bf16_cnn_agrees_with_float32_to_bf16_precision_and_hands_out_float32():
    import torch

    from torchpool.train.ppo import CnnAgent

    torch.manual_seed(0)
    reference = CnnAgent((4, 42, 42), 6, "compact", channels_last=True)
    agent = CnnAgent((4, 42, 42), 6, "compact", channels_last=True, bf16=True)
    agent.load_state_dict(reference.state_dict())
    frames = torch.randint(0, 256, (5, 4, 42, 42), dtype=torch.uint8)
    distribution, value = agent.evaluate(frames)
    assert value.dtype == torch.float32 and distribution.logits.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in agent.parameters()), "autocast leaves the weights float32"
    torch.testing.assert_close(value, reference.value(frames), rtol=0.05, atol=0.05)
    value.sum().backward()
    assert all(p.grad is None or p.grad.dtype == torch.float32 for p in agent.parameters())


def test_the_bf16_variant_is_the_cpu_recipe_in_bfloat16():
    from torchpool.train.ppo import recipe

    assert recipe("Pong-v5", "bf16") == {**recipe("Pong-v5"), "bf16": True}


def test_the_cleanrl_variant_is_the_nature_cnn_on_84x84_frames():
    from torchpool.train.ppo import recipe

    cleanrl = recipe("Pong-v5", "cleanrl")
    assert cleanrl["network"] == "nature" and (cleanrl["num_envs"], cleanrl["num_steps"]) == (8, 128)
    assert cleanrl["update_epochs"] == 4 and "img_height" not in cleanrl["make_kwargs"]
    assert recipe("Pong-v5")["make_kwargs"]["img_height"] == 42
    with pytest.raises(ValueError, match="unknown recipe 'fast'; known: \\['bf16', 'cleanrl', 'gpu'\\]"):
        recipe("Pong-v5", "fast")
    with pytest.raises(ValueError, match="recipe 'cleanrl' has no settings for 'CartPole-v1'"):
        recipe("CartPole-v1", "cleanrl")


@pytest.mark.slow
def test_the_train_command_takes_a_recipe_variant(tmp_path):
    # Hopper: its fresh episodes with an untrained policy end within a second (Pong's take ten); the variants'
    # own settings for every id run in test_every_recipe_runs_end_to_end_in_smoke_mode, an unknown variant's
    # usage error in test_cli.py.
    done = subprocess.run([sys.executable, "-m", "torchpool", "train", "Hopper-v5", "--recipe", "cleanrl",
                           "--total-frames", "2048", "--no-early-stop", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    saved = json.loads((tmp_path / "ppo_Hopper-v5.json").read_text())
    cleanrl = {"num_envs": 1, "num_steps": 2048, "num_minibatches": 32, "update_epochs": 10, "norm_obs": True}
    assert {key: saved["args"][key] for key in cleanrl} == cleanrl and saved["frames"] == 2048
    assert "10 fresh episodes with the trained policy" in done.stdout


def test_ppo_with_prefetch_runs_and_stops_on_time(tmp_path):
    # So many frames that only max_seconds can end the run, on any machine.
    settings = dict(RECIPES["CartPole-v1"], total_frames=10**12, target_return=None, prefetch=True, max_seconds=2.0)
    result = train(Args(**settings, out_dir=str(tmp_path), progress=False))
    assert 0 < result["frames"] < 10**12, "max_seconds ends the run"
    assert "consumer_waited" in result["time_split"]


def test_tensorboard_logs_the_curve_and_the_time_split(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    settings = dict(RECIPES["CartPole-v1"], total_frames=8192, target_return=None)
    train(Args(**settings, out_dir=str(tmp_path), progress=False, tensorboard=True))
    (run,) = (tmp_path / "tensorboard").iterdir()
    events = EventAccumulator(str(run))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"charts/mean_return", "charts/frames_per_s", "losses/policy", "time/envs_seconds"} <= tags
    assert len(events.Scalars("charts/frames_per_s")) == 8192 // (8 * 128)


def test_next_values_reuse_the_batch_values_except_at_episode_ends():
    import torch

    import torchpool
    from torchpool.train.ppo import Agent, next_values

    torch.manual_seed(0)
    with torchpool.make("CartPole-v1", num_envs=1) as probe:
        agent = Agent(4, probe.action_spec, hidden=16)
    stream = torchpool.stream("CartPole-v1", agent.act, num_envs=4, frames_per_batch=4 * 64, total_frames=4 * 64 * 3)
    for batch in stream:
        assert batch["next", "done"][:, :-1].any(), "the batch crosses episode ends inside it"
        with torch.no_grad():
            full = agent.value(batch["next", "observation"]).squeeze(-1)
            torch.testing.assert_close(next_values(agent, batch), full)


def test_the_adaptive_learning_rate_follows_rl_games_rule():
    from torchpool.train.ppo import adapt_lr

    assert adapt_lr(1e-3, kl=0.05, target=0.01) == 1e-3 / 1.5   # KL over 2x the target: slower
    assert adapt_lr(1e-3, kl=0.001, target=0.01) == 1e-3 * 1.5  # under half of it: faster
    assert adapt_lr(1e-3, kl=0.01, target=0.01) == 1e-3         # in between: unchanged
    assert adapt_lr(9e-3, kl=0.0, target=0.01) == 1e-2 and adapt_lr(1e-6, kl=1.0, target=0.01) == 1e-6
    assert adapt_lr(9e-4, kl=0.0, target=0.01, highest=1e-3) == 1e-3


def test_decoupled_ppo_clips_around_the_proximal_policy_and_weighs_by_the_lag():
    import torch

    from torchpool.train.ppo import clipped_surrogate

    advantage = torch.tensor([1.0])
    # pi / pi_behaviour = 1.3 but pi / pi_prox = 1.05: plain PPO (clipping pi / pi_behaviour at 1.2) gives no
    # gradient; the decoupled loss is inside its trust region and pushes on with weight pi_prox / pi_behaviour.
    log_prob = torch.tensor([0.0], requires_grad=True)
    weight = torch.tensor([1.3 / 1.05])
    ratio_prox = (log_prob - torch.log(torch.tensor([1 / 1.05]))).exp()
    clipped_surrogate(ratio_prox, advantage, 0.2, weight).backward()
    torch.testing.assert_close(log_prob.grad, -torch.tensor([1.3]), msg="d/dlogpi of -(pi/pi_b) A is -(pi/pi_b) A")
    log_prob.grad = None
    ratio_behaviour = (log_prob - torch.log(torch.tensor([1 / 1.3]))).exp()
    clipped_surrogate(ratio_behaviour, advantage, 0.2).backward()
    assert log_prob.grad.item() == 0.0, "plain PPO clips a ratio of 1.3"
    # Without lag (weight 1) the two agree.
    ratio = torch.tensor([0.7, 1.0, 1.4])
    signs = torch.tensor([1.0, -1.0, 1.0])
    torch.testing.assert_close(clipped_surrogate(ratio, signs, 0.2, torch.ones(3)),
                               clipped_surrogate(ratio, signs, 0.2))


def test_value_normalisation_maps_the_critic_through_the_returns_statistics():
    import torch

    import torchpool
    from torchpool.train.ppo import Agent

    torch.manual_seed(0)
    with torchpool.make("Pendulum-v1", num_envs=1) as probe:
        agent = Agent(3, probe.action_spec, hidden=(32, 16), activation="elu", norm_value=True)
    assert [type(module).__name__ for module in agent.critic] == ["Linear", "ELU", "Linear", "ELU", "Linear"]
    observation = torch.randn(5, 3)
    raw = agent.critic(observation)
    agent.returns.update(torch.tensor([[100.0], [300.0]]))  # mean 200, std 100 (count 1e-4 aside)
    torch.testing.assert_close(agent.value(observation), raw * 100.0 + 200.0, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(agent.value_scale(), torch.tensor([100.0]), rtol=1e-4, atol=1e-3)


def _every_recipe():
    from torchpool.train.ppo import VARIANTS

    cases = [pytest.param("ppo", env_id, None, id=f"ppo-{env_id}") for env_id in RECIPES]
    cases += [pytest.param("ppo", env_id, variant, id=f"ppo-{variant}-{env_id}")
              for variant, envs in VARIANTS.items() for env_id in envs]
    from torchpool.train import sac

    cases += [pytest.param("sac", env_id, None, id=f"sac-{env_id}") for env_id in sac.RECIPES]
    return cases


@pytest.mark.parametrize("algo, env_id, variant", _every_recipe())
def test_every_recipe_runs_end_to_end_in_smoke_mode(algo, env_id, variant, tmp_path):
    """Each recipe's own settings (network, batch shape, prefetch, normalisations) for one batch or a few updates."""
    from torchpool.train import ppo, sac

    if "LunarLander" in env_id:
        pytest.importorskip("Box2D", reason="Box2D is in the box2d extra, not the test extra")
    if algo == "ppo":
        settings = ppo.recipe(env_id, variant)
        settings.update(total_frames=settings.get("num_envs", 8) * settings.get("num_steps", 128) * 2, eval_games=0)
        result = ppo.train(ppo.Args(env_id=env_id, **settings, out_dir=str(tmp_path), progress=False))
    else:
        settings = sac.recipe(env_id)
        per_batch = settings.get("num_envs", 1) * settings.get("steps_per_batch", 1)
        settings.update(total_frames=(settings["learning_starts"] // per_batch + 3) * per_batch, eval_games=0)
        result = sac.train(sac.Args(env_id=env_id, **settings, out_dir=str(tmp_path), progress=False))
        assert result["updates"] > 0, "the recipe ran no gradient step"
    assert result["frames"] == settings["total_frames"]
    assert (tmp_path / f"{algo}_{env_id.replace(':', '_')}.pt").exists()


def test_clipped_actions_reach_the_env_and_the_raw_sample_keeps_its_log_prob():
    import torch

    import torchpool
    from torchpool.train.ppo import Agent

    torch.manual_seed(0)
    with torchpool.make("Ant-v4", num_envs=1) as probe:
        agent = Agent(27, probe.action_spec, hidden=16)
    agent.clip_actions = True
    observation = torch.randn(64, 27)
    with torch.no_grad():
        agent.log_std.fill_(1.0)  # std e: most samples fall outside [-1, 1]
        action, extras = agent.act(observation)
        raw = extras["raw_action"]
        assert (raw.abs() > 1).any(), "the test needs samples out of bounds"
        torch.testing.assert_close(action, raw.clamp(-1, 1), rtol=0, atol=0)
        torch.testing.assert_close(extras["sample_log_prob"], agent.log_prob(agent.distribution(observation), raw))


def test_options_for_mlp_agents_are_refused_by_name_elsewhere(tmp_path):
    with pytest.raises(ValueError, match="norm_value is for MLP agents"):
        train(Args(env_id="Pong-v5", **RECIPES["Pong-v5"], norm_value=True, out_dir=str(tmp_path), progress=False))
    with pytest.raises(ValueError, match="clip_actions is for continuous actions"):
        train(Args(env_id="CartPole-v1", clip_actions=True, out_dir=str(tmp_path), progress=False))
    with pytest.raises(ValueError, match="bounds_loss_coef is for continuous actions"):
        train(Args(env_id="CartPole-v1", bounds_loss_coef=1e-3, out_dir=str(tmp_path), progress=False))


def test_a_prefetching_run_repeats_exactly(tmp_path):
    # The collector thread samples from torch's global generator while the update shuffles: with one shared
    # generator the interleaving (and so the run) would depend on timing (NOTE [One generator per thread]).
    settings = dict(RECIPES["Ant-v4"], num_envs=8, num_steps=16, total_frames=8 * 16 * 12, target_return=None,
                    eval_games=0, hidden=(32, 32))
    runs = [train(Args(env_id="Ant-v4", **settings, seed=4, out_dir=str(tmp_path / str(i)), progress=False))
            for i in range(2)]
    assert [mean for _, _, mean in runs[0]["curve"]] == [mean for _, _, mean in runs[1]["curve"]]
    assert runs[0]["learning_rates"] == runs[1]["learning_rates"]
    weights = [torch.load(tmp_path / str(i) / "ppo_Ant-v4.pt") for i in range(2)]
    for name, tensor in weights[0].items():
        torch.testing.assert_close(tensor, weights[1][name], rtol=0, atol=0, msg=name)


def test_the_bounds_loss_charges_only_means_beyond_1_1_times_the_bounds():
    from torch.distributions import Normal

    from torchpool.train.ppo import Agent

    spec = type("Box", (), {"shape": (2,), "low": torch.tensor([-1.0, 0.0]), "high": torch.tensor([1.0, 4.0])})()
    agent = Agent(3, spec, hidden=4)
    inside = Normal(torch.tensor([[1.05, 4.15], [-1.1, -0.2]]), torch.ones(2, 2))
    assert agent.bounds_loss(inside).item() == 0.0  # |1.05| <= 1.1; 4.15 - 2 <= 2.2; -0.2 - 2 = -2.2
    outside = Normal(torch.tensor([[1.6, 2.0], [0.0, -1.2]]), torch.ones(2, 2))
    # row 1: 0.5 beyond on dim 0; row 2: |-1.2 - 2| - 2.2 = 1.0 beyond on dim 1
    torch.testing.assert_close(agent.bounds_loss(outside), torch.tensor((0.25 + 1.0) / 2))


def test_fresh_episodes_play_the_mean_action_of_a_continuous_policy(tmp_path):
    """Continuous agents are evaluated as rl_games' and SB3's deterministic players do: the Gaussian's mean,
    clipped where training clipped; discrete agents sample (as in training)."""
    from torchpool.train.ppo import Agent

    spec = torchpool.make("Pendulum-v1", num_envs=1).action_spec
    agent = Agent(3, spec, (16,), True, "tanh")
    agent.clip_actions = True
    with torch.no_grad():
        agent.actor[-1].bias.fill_(5.0)  # a mean beyond the bound of 2
        agent.log_std.fill_(1.0)
    observation = torch.randn(6, 3)
    played = agent.play(observation)
    assert torch.equal(played, agent.distribution(observation).mean.clamp(-2.0, 2.0))
    assert torch.equal(played, torch.full((6, 1), 2.0)), "the mean is clipped into the action bounds"
    torch.manual_seed(0)
    samples = [agent.act(observation)[1]["raw_action"] for _ in range(2)]  # before clipping into the bounds
    assert not torch.equal(*samples), "training's actions are samples"

    result = train(Args(env_id="Pendulum-v1", **dict(RECIPES["Pendulum-v1"], total_frames=4096, target_return=None,
                                                     eval_games=2), out_dir=str(tmp_path), progress=False))
    assert result["evaluation"]["policy"] == "deterministic (the mean action)"
    assert len(result["evaluation"]["returns"]) == 2
    sampled = result["evaluation"]["sampled"]  # the same seeds with training's sampled actions
    assert len(sampled["returns"]) == 2 and sampled["returns"] != result["evaluation"]["returns"]
    agent.clip_actions = False  # the raw sample: a clipped one may land on the bound the mean was clipped to
    assert not torch.equal(agent.play(observation, deterministic=False), agent.play(observation))


def test_the_gpu_recipe_scales_envs_to_the_cores_and_keeps_the_batch():
    from torchpool.train.ppo import gpu_recipe, recipe

    ant = recipe("Ant-v4")
    sixteen = gpu_recipe("Ant-v4", cores=16)
    assert (sixteen["num_envs"], sixteen["num_steps"]) == (4 * ant["num_envs"], ant["num_steps"] // 4)
    assert sixteen["num_envs"] * sixteen["num_steps"] == ant["num_envs"] * ant["num_steps"]
    assert {k: v for k, v in sixteen.items() if k not in ("num_envs", "num_steps")} == \
        {k: v for k, v in ant.items() if k not in ("num_envs", "num_steps")}
    assert gpu_recipe("Ant-v4", cores=2) == ant, "a 2-core box keeps the tuned recipe"
    pong = gpu_recipe("Pong-v5", cores=16)
    assert pong["network"] == "nature" and pong["num_envs"] * pong["num_steps"] == 8 * 128
    assert pong["num_steps"] >= 16
    with pytest.raises(ValueError, match="recipe 'gpu' has no settings for 'CartPole-v1'"):
        recipe("CartPole-v1", "gpu")
