"""SAC (torchpool/train/sac.py): the replay it fills from torchpool.stream, the ring, training, the command line."""

import json
import subprocess
import sys

import pytest
import torch
from tensordict import TensorDict

import torchpool
from torchpool.train.sac import RECIPES, Actor, Args, Replay, train


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchpool", *args], capture_output=True, text=True,
                          timeout=timeout)


# ---- the replay, filled from the stream ---------------------------------------------------

def test_the_replay_keeps_every_pendulum_transition_once_with_the_true_final_observation():
    num_envs, steps, seed = 3, 250, 5  # Pendulum truncates at 200 steps: each env crosses one episode end
    with torchpool.make("Pendulum-v1", num_envs=1) as probe:
        action_spec = probe.action_spec
    torch.manual_seed(0)
    actor = Actor(3, action_spec, hidden=16)  # explore_uniformly: uniform random actions, as before learning_starts
    replay = Replay(10_000, (3,), (1,))
    stream = torchpool.stream("Pendulum-v1", actor.act, num_envs=num_envs, frames_per_batch=num_envs * 50,
                              total_frames=num_envs * steps, seed=seed)
    for batch in stream:
        replay.add(batch)
    assert len(replay) == num_envs * steps, f"{len(replay)} transitions stored for {num_envs * steps} frames"

    # Rows are time-major: row t * num_envs + env is env's step t.
    stored = {key: getattr(replay, key)[:num_envs * steps].reshape(steps, num_envs, *getattr(replay, key).shape[1:])
              for key in Replay.KEYS}
    assert not stored["terminated"].any(), "Pendulum never terminates: only truncations end its episodes"

    # The same actions, step by step, in a pool of our own: what each transition must hold.
    truncated_at = []
    with torchpool.make("Pendulum-v1", num_envs=num_envs, seed=seed) as pool:
        observation = pool.reset()["observation"].clone()
        for t in range(steps):
            td = pool.step(stored["action"][t])
            torch.testing.assert_close(stored["observation"][t], observation, rtol=0, atol=0,
                                       msg=lambda m, t=t: f"step {t}: the observation differs: {m}")
            torch.testing.assert_close(stored["next_observation"][t], td["final_observation"], rtol=0, atol=0,
                                       msg=lambda m, t=t: f"step {t}: the next observation differs: {m}")
            torch.testing.assert_close(stored["reward"][t], td["reward"], rtol=0, atol=0,
                                       msg=lambda m, t=t: f"step {t}: the reward differs: {m}")
            assert torch.equal(stored["terminated"][t].bool(), td["terminated"]), f"step {t}: terminated differs"
            truncated_at += [(t, env) for env in td["truncated"].nonzero().flatten().tolist()]
            observation = td["observation"].clone()
    assert truncated_at == [(199, env) for env in range(num_envs)], truncated_at

    for t, env in truncated_at:
        assert not torch.equal(stored["next_observation"][t, env], stored["observation"][t + 1, env]), \
            f"env {env} step {t}: the stored next observation is the reset observation, not the final one"
    # Within an episode the next observation of step t is the observation of step t + 1.
    within = torch.ones(steps - 1, num_envs, dtype=torch.bool)
    for t, env in truncated_at:
        within[t, env] = False
    chained = (stored["next_observation"][:-1] == stored["observation"][1:]).all(-1)
    assert chained[within].all(), f"broken chains at (step, env) {(~chained & within).nonzero().tolist()}"


# ---- the ring -------------------------------------------------------------------------

def numbered_batch(first: int, num_envs: int, steps: int) -> TensorDict:
    """A stream-shaped batch [num_envs, steps] whose every field at (env, t) is first + t * num_envs + env."""
    value = (first + torch.arange(steps) * num_envs + torch.arange(num_envs).unsqueeze(1)).float()
    return TensorDict({"observation": value.unsqueeze(-1), "action": value.unsqueeze(-1),
                       "next": {"observation": value.unsqueeze(-1), "reward": value.unsqueeze(-1),
                                "terminated": (value % 2 == 1).unsqueeze(-1)}}, batch_size=[num_envs, steps])


def sampled_numbers(replay: Replay, n: int = 2000) -> set[int]:
    data = replay.sample(n)
    numbers = data["observation"].squeeze(-1)
    for key in ("action", "next_observation"):
        assert torch.equal(data[key].squeeze(-1), numbers), f"sampled {key} is not from the observation's row"
    assert torch.equal(data["reward"], numbers) and torch.equal(data["terminated"], numbers % 2)
    return set(numbers.long().tolist())


def test_the_ring_overwrites_the_oldest_and_samples_only_what_it_holds():
    torch.manual_seed(0)
    replay = Replay(10, (1,), (1,))
    with pytest.raises(ValueError, match="empty"):
        replay.sample(1)
    replay.add(numbered_batch(0, num_envs=2, steps=3))  # transitions 0..5
    assert len(replay) == 6 and torch.equal(replay.observation[:6, 0], torch.arange(6.0)), "time-major rows"
    assert sampled_numbers(replay) == set(range(6)), "samples come only from the 6 filled rows, and cover them"

    replay.add(numbered_batch(6, num_envs=2, steps=3))  # 6..11: wraps, overwriting 0 and 1
    assert len(replay) == 10 and replay.cursor == 2
    assert replay.observation[:, 0].tolist() == [10, 11, 2, 3, 4, 5, 6, 7, 8, 9]
    assert sampled_numbers(replay) == set(range(2, 12))

    replay.add(numbered_batch(12, num_envs=2, steps=8))  # 16 transitions into 10 rows: the last 10 stay
    assert len(replay) == 10 and sampled_numbers(replay) == set(range(18, 28))


# ---- training -------------------------------------------------------------------------

def test_sac_runs_on_pendulum_and_saves_its_outputs(tmp_path):
    settings = dict(RECIPES["Pendulum-v1"], total_frames=4000, target_return=None, eval_games=2)
    result = train(Args(**settings, out_dir=str(tmp_path), progress=False))
    frames_per_batch = settings["num_envs"] * settings["steps_per_batch"]
    assert result["frames"] == -(-4000 // frames_per_batch) * frames_per_batch, "the stream rounds up to batches"
    expected_updates = int(settings["utd"] * (result["frames"] - settings["learning_starts"]))
    assert result["updates"] == expected_updates, f"{result['updates']} gradient steps, expected {expected_updates}"
    assert result["curve"] and result["evaluation"]["games"] == 2
    assert set(result["time_split"]) >= {"envs", "policy", "consumer"}
    for suffix in ("pt", "json", "png"):
        assert (tmp_path / f"sac_Pendulum-v1.{suffix}").exists(), f"no sac_Pendulum-v1.{suffix}"
    saved = json.loads((tmp_path / "sac_Pendulum-v1.json").read_text())
    assert saved["args"]["utd"] == settings["utd"] and saved["frames"] == result["frames"]
    weights = torch.load(tmp_path / "sac_Pendulum-v1.pt")
    assert set(weights) == {"actor", "qf1", "qf2", "qf1_target", "qf2_target"}


def test_sac_refuses_discrete_actions():
    with pytest.raises(ValueError, match="SAC needs continuous actions, but CartPole-v1's are discrete"):
        train(Args(env_id="CartPole-v1", progress=False))


def test_sac_on_pendulum_learns_to_swing_up(tmp_path):
    # The recipe (it stops at a mean of -200, ~30k frames); a random policy scores about -1200 an episode.
    settings = dict(RECIPES["Pendulum-v1"], total_frames=40_000, eval_games=10)
    result = train(Args(**settings, out_dir=str(tmp_path), progress=False))
    first = result["curve"][0][2]
    assert first < -900, f"the first episodes are random actions, yet averaged {first:.0f}"
    assert result["final_mean_return"] > -350, [round(mean) for _, _, mean in result["curve"]]
    assert result["evaluation"]["mean_return"] > -350, result["evaluation"]


# ---- the command line -------------------------------------------------------------------

def test_the_train_command_runs_sac(tmp_path):
    # 4,000 frames: the recipe's 20 envs end their first 200-step episodes there.
    done = cli("train", "Pendulum-v1", "--algo", "sac", "--total-frames", "4000", "--no-early-stop",
               "--out-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Pendulum-v1: mean return" in done.stdout and "time split" in done.stdout, done.stdout
    assert f"saved {tmp_path}/sac_Pendulum-v1.png (learning curve)" in done.stdout, done.stdout
    saved = json.loads((tmp_path / "sac_Pendulum-v1.json").read_text())
    assert saved["args"]["target_return"] is None and saved["frames"] == 4000
    assert (tmp_path / "sac_Pendulum-v1.pt").exists() and not (tmp_path / "ppo_Pendulum-v1.pt").exists()


@pytest.mark.parametrize("args, fragment", [
    (["CartPole-v1", "--algo", "sac"], "SAC needs continuous actions, but CartPole-v1's are discrete"),
    (["Pendulum-v1", "--algo", "sac", "--recipe", "cleanrl"], "the recipe variants are PPO's"),
])
def test_train_sac_mistakes_are_one_line_usage_errors(args, fragment):
    done = cli("train", *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, f"exit code {done.returncode}, stderr:\n{done.stderr}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], done.stderr
