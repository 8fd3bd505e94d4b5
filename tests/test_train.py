"""The PPO recipe learns, and `python -m torchpool train` writes its outputs."""

import json
import subprocess
import sys

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


def test_the_atari_recipe_trains_a_cnn_on_frames(tmp_path):
    import torch

    from torchpool.train.ppo import CnnAgent

    settings = dict(RECIPES["Pong-v5"], total_frames=512, num_envs=4, num_steps=64, target_return=None)
    result = train(Args(env_id="Pong-v5", **settings, out_dir=str(tmp_path), progress=False))
    assert result["frames"] == 512
    assert set(result["time_split"]) >= {"envs", "policy"}
    weights = torch.load(tmp_path / "ppo_Pong-v5.pt")
    agent = CnnAgent((4, 84, 84), 6)
    agent.load_state_dict(weights)  # the saved weights are the Nature CNN's
    frames = torch.randint(0, 256, (3, 4, 84, 84), dtype=torch.uint8)
    action, extras = agent.act(frames)
    assert action.shape == (3,) and extras["state_value"].shape == (3, 1)


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
