"""torchpool.rl_games: rl_games' vec-env interface over a Pool, and a short PPO run through rl_games' Runner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import torchpool
import torchpool.rl_games
from torchpool.rl_games import RlGamesVecEnv

pytest.importorskip("rl_games", reason="rl_games is in the test extra; install .[test]")

from rl_games.common import env_configurations, vecenv  # noqa: E402
from rl_games.common.algo_observer import DefaultAlgoObserver  # noqa: E402
from rl_games.torch_runner import Runner  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "rl_games"


def test_register_makes_the_torchpool_env_name_and_vecenv_type():
    torchpool.rl_games.register()
    assert env_configurations.configurations["torchpool"]["vecenv_type"] == "TORCHPOOL"
    env = vecenv.create_vec_env("torchpool", 4, env_id="CartPole-v1", device="cpu", seed=3)
    try:
        assert isinstance(env, RlGamesVecEnv) and env.pool.num_envs == 4 and env.get_number_of_agents() == 1
        info = env.get_env_info()
        assert info["observation_space"].shape == (4,) and info["action_space"].n == 2
    finally:
        env.close()
    # Players build their env with env_creator(**env_config): one env, batched.
    player_env = env_configurations.configurations["torchpool"]["env_creator"](env_id="Pendulum-v1", device="cpu")
    assert player_env.reset().shape == (1, 3)
    player_env.close()


def test_step_outputs_time_outs_and_scores():
    env = RlGamesVecEnv("torchpool", 3, env_id="CartPole-v1", device="cpu", seed=0, max_episode_steps=5)
    try:
        obs = env.reset()
        assert isinstance(obs, torch.Tensor) and obs.shape == (3, 4) and obs.dtype == torch.float32
        steps = np.zeros(3)
        time_outs_seen = 0
        for t in range(23):
            # 0, 1, 0, 1...: the pole stays up, so every episode hits the 5-step limit.
            obs, rewards, dones, infos = env.step(torch.full((3,), t % 2, dtype=torch.int64))
            assert rewards.shape == (3,) and rewards.dtype == torch.float32 and dones.dtype == torch.bool
            assert infos["time_outs"].dtype == torch.bool and "lives" not in infos
            steps += 1
            # scores: the unclipped return so far (CartPole pays 1 per step), the total where done.
            assert np.array_equal(infos["scores"], steps), f"step {t}: scores {infos['scores']}, steps {steps}"
            assert torch.equal(infos["time_outs"], dones), f"step {t}: time_outs {infos['time_outs']} dones {dones}"
            time_outs_seen += int(dones.sum())
            steps[dones.numpy()] = 0
        assert time_outs_seen == 3 * 4, f"{time_outs_seen} time-outs, want 4 episodes of 5 steps in 3 envs"
    finally:
        env.close()


def test_same_seed_same_observations():
    a = RlGamesVecEnv("torchpool", 2, env_id="Acrobot-v1", device="cpu", seed=11)
    b = RlGamesVecEnv("torchpool", 2, env_id="Acrobot-v1", device="cpu", seed=0)
    b.seed(11)  # IVecEnv.seed: applies at the next reset
    assert torch.equal(a.reset(), b.reset())
    a.close()
    b.close()


def test_bad_arguments():
    with pytest.raises(ValueError, match="same-step"):
        RlGamesVecEnv("torchpool", 2, env_id="CartPole-v1", device="cpu", autoreset="next_step")
    with pytest.raises(ValueError, match="unknown env id"):
        RlGamesVecEnv("torchpool", 2, env_id="CartPol-v1", device="cpu")


def test_lives_reported_only_for_games_that_count_them():
    # rl_games' DefaultAlgoObserver logs a finished game's score wherever
    # done and lives == 0. Pong has no lives (ALE reports 0 throughout), so
    # lives must be absent there, or every step would log a running score.
    pong = RlGamesVecEnv("torchpool", 2, env_id="Pong-v5", device="cpu")
    try:
        pong.reset()
        _, _, _, infos = pong.step(torch.zeros(2, dtype=torch.int64))
        assert "lives" not in infos
        assert pong.get_env_info()["observation_space"].dtype == np.uint8
    finally:
        pong.close()

    breakout = RlGamesVecEnv("torchpool", 1, env_id="Breakout-v5", device="cpu", episodic_life=True, seed=0)
    try:
        breakout.reset()
        rng = np.random.default_rng(0)
        ends = []
        for _ in range(5000):
            _, _, done, infos = breakout.step(torch.from_numpy(rng.integers(4, size=1)))
            if bool(done[0]):
                ends.append((int(infos["lives"][0]), float(infos["scores"][0])))
                if ends[-1][0] == 0:
                    break
        # One done per life; the score runs on across lives and is the game's total at the end.
        assert [lives for lives, _ in ends] == [4, 3, 2, 1, 0]
        scores = [score for _, score in ends]
        assert scores == sorted(scores)
    finally:
        breakout.close()


def test_envpool_yaml_env_config_runs_natively():
    # rl_games' ppo_pong_envpool_resnet.yaml env_config, as written.
    env = RlGamesVecEnv("torchpool", 2, device="cpu", env_name="Pong-v5", has_lives=False, use_dict_obs_space=True)
    try:
        space = env.get_env_info()["observation_space"]
        assert set(space.spaces) == {"observation", "reward", "last_action"}, space
        assert space["observation"].shape == (4, 84, 84) and type(env.action_space.n) is int
        obs = env.reset()
        assert obs["observation"].shape == (2, 4, 84, 84) and torch.equal(obs["reward"], torch.zeros(2))
        actions = torch.tensor([3, 5])
        obs, rewards, _, infos = env.step(actions)
        assert torch.equal(obs["last_action"], actions), f"last_action {obs['last_action']}, took {actions}"
        assert torch.equal(obs["reward"], rewards.clamp(-1, 1)) and "lives" not in infos
    finally:
        env.close()
    with pytest.raises(ValueError, match="not both"):
        RlGamesVecEnv("torchpool", 2, env_id="Pong-v5", env_name="Pong-v5", device="cpu")


def test_has_lives_decides_whether_infos_carry_lives():
    for has_lives, expected in ((None, True), (True, True), (False, False)):
        env = RlGamesVecEnv("torchpool", 2, env_id="Breakout-v5", device="cpu", has_lives=has_lives)
        try:
            env.reset()
            _, _, _, infos = env.step(torch.zeros(2, dtype=torch.int64))
            assert ("lives" in infos) == expected, f"has_lives={has_lives}: infos keys {sorted(infos)}"
        finally:
            env.close()


@pytest.mark.parametrize("name", ["ppo_pong.yaml", "ppo_ant.yaml"])
def test_pending_example_configs_build_their_env(name: str):
    config = yaml.safe_load((EXAMPLES / name).read_text())["params"]["config"]
    assert config["env_name"] == "torchpool"
    env_config = dict(config["env_config"], device="cpu")
    if env_config["env_id"] not in torchpool.list_envs():
        pytest.skip(f"{name} needs {env_config['env_id']}, which torchpool does not have yet")
    env = RlGamesVecEnv("torchpool", 2, **env_config)
    assert env.reset().shape[0] == 2
    env.close()


class _ScoreRecorder(DefaultAlgoObserver):
    """rl_games' default observer, also keeping every finished game's score."""

    def __init__(self):
        super().__init__()
        self.scores: list[float] = []

    def process_infos(self, infos, done_indices):
        super().process_infos(infos, done_indices)
        self.scores.extend(float(infos["scores"][i]) for i in done_indices.flatten().tolist())


def test_ppo_on_cartpole_improves_the_return(tmp_path):
    torchpool.rl_games.register()
    config = yaml.safe_load((EXAMPLES / "ppo_cartpole.yaml").read_text())
    assert config["params"]["config"]["torch_compile"] is False
    config["params"]["config"].update(train_dir=str(tmp_path), max_epochs=40)
    observer = _ScoreRecorder()
    runner = Runner(algo_observer=observer)
    runner.load(config)
    runner.run({"train": True})
    scores = observer.scores
    first, last = np.mean(scores[:50]), np.mean(scores[-50:])
    assert len(scores) > 100, f"only {len(scores)} games finished"
    assert last > 100 and last > 3 * first, (
        f"the return did not rise: first 50 games average {first:.1f}, last 50 {last:.1f} ({len(scores)} games)")


def test_only_the_atari_family_gets_atari_scores():
    # A Python env whose info has Atari's extras' names (game_over never set, raw_reward 100 a step): its
    # scores are its own rewards, 1 a step, and its episodes end with it.
    from atari_named_info_env import LENGTH, AtariNamedInfoEnv

    env = RlGamesVecEnv("torchpool", 2, env_id=AtariNamedInfoEnv, device="cpu", num_workers=1)
    try:
        env.reset()
        for t in range(LENGTH):
            _, _, dones, infos = env.step(torch.zeros(2, dtype=torch.int64))
            assert np.array_equal(infos["scores"], np.full(2, t + 1.0)), (
                f"step {t}: scores {infos['scores']}: a non-Atari env was scored by its info's raw_reward")
        assert dones.all() and "lives" not in infos
    finally:
        env.close()
