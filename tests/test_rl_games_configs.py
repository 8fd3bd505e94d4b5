"""rl_games' own EnvPool YAMLs run on torchpool, unchanged but for the env name.

Every ``rl_games/configs/**/*envpool*.yaml`` installed with rl_games builds,
resets and steps the env its ``env_config`` describes, two ways:

* ``envpool``: the YAML as written (``env_name: envpool``, rl_games' own
  ``Envpool`` wrapper), with ``sys.modules["envpool"]`` = ``torchpool.envpool_compat``;
* ``torchpool``: ``env_name: torchpool`` (``torchpool.rl_games.register()``),
  the same ``env_config`` plus ``device: cpu``.

One config of each kind of agent (algorithm, network, rnn, dict observations)
also builds rl_games' agent on the env and takes one step of its policy: the
spaces must satisfy rl_games' network builders, not only its wrapper.

The dm_control YAMLs (``configs/dm_control/``, ``flatten_obs: True``) run too,
but for the ids torchpool's Control Suite family does not have yet (named in
``DMC_NOT_YET``). The MuJoCo YAMLs name ``-v4`` ids (``Ant-v4``, ...), which
torchpool has with Gymnasium's v4 semantics.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
import yaml

import torchpool.envpool_compat
import torchpool.registry
import torchpool.rl_games

rl_games = pytest.importorskip("rl_games", reason="rl_games is in the test extra; install .[test]")

from rl_games.algos_torch.sac_agent import SACAgent  # noqa: E402
from rl_games.common import vecenv  # noqa: E402
from rl_games.torch_runner import Runner  # noqa: E402

CONFIGS = Path(rl_games.__file__).resolve().parent / "configs"
NUM_ACTORS = 2
WAYS = ["envpool", "torchpool"]


def _params(path: Path) -> dict:
    return yaml.safe_load(path.read_text())["params"]


# The dm_control YAMLs whose task torchpool's Control Suite family lacks for now.
DMC_NOT_YET: set[str] = set()


def _config_paths() -> list[Path]:
    envpool_yamls = sorted(CONFIGS.glob("**/*envpool*.yaml"))
    dm_control_yamls = sorted((CONFIGS / "dm_control").glob("*.yaml"))
    return envpool_yamls + [path for path in dm_control_yamls
                            if _params(path)["config"]["env_config"]["env_name"] not in DMC_NOT_YET]


def test_every_dm_control_yaml_runs_but_the_known_gaps():
    names = {_params(path)["config"]["env_config"]["env_name"] for path in (CONFIGS / "dm_control").glob("*.yaml")}
    assert len(names) == 15 and DMC_NOT_YET <= names
    assert not (names - DMC_NOT_YET) - set(torchpool.families.dmc.DMC_IDS)


def _case(path: Path):
    return pytest.param(path, id=str(path.relative_to(CONFIGS)))


def _agent_kind(path: Path) -> tuple:
    params = _params(path)
    network = params["network"]
    return (params["algo"]["name"], network["name"], "rnn" in network,
            bool(params["config"]["env_config"].get("use_dict_obs_space")))


def _one_config_per_agent_kind() -> list[Path]:
    kinds: dict[tuple, Path] = {}
    for path in _config_paths():
        kinds.setdefault(_agent_kind(path), path)
    return list(kinds.values())


@pytest.fixture
def envpool_is_torchpool(monkeypatch):
    """``import envpool`` gives ``torchpool.envpool_compat`` for the test; the real module is back after it."""
    monkeypatch.setitem(sys.modules, "envpool", torchpool.envpool_compat)


def _env_name_and_config(params: dict, way: str) -> tuple[str, dict]:
    config = params["config"]
    assert config["env_name"] == "envpool", f"an EnvPool YAML names env {config['env_name']!r}"
    if way == "envpool":
        return config["env_name"], dict(config["env_config"])
    torchpool.rl_games.register()
    return torchpool.rl_games.ENV_NAME, dict(config["env_config"], device="cpu")


def _close(vec_env) -> None:
    # rl_games' Envpool wrapper has no close(); the pool it made is its .env.
    (vec_env if isinstance(vec_env, torchpool.rl_games.RlGamesVecEnv) else vec_env.env).close()


def _check_in_space(obs, space, when: str) -> None:
    """Observations ``[NUM_ACTORS, *space.shape]`` in the space (a Dict: per key)."""
    if isinstance(space, gymnasium.spaces.Dict):
        assert isinstance(obs, dict) and set(obs) == set(space.spaces), (
            f"{when}: observation keys {sorted(obs) if isinstance(obs, dict) else type(obs)}, "
            f"the space has {sorted(space.spaces)}")
        _check_in_space(obs["observation"], space["observation"], f"{when}, 'observation'")
        for key in set(space.spaces) - {"observation"}:  # rl_games' reward / last_action: shapes only
            assert tuple(obs[key].shape) == (NUM_ACTORS, *space[key].shape), (
                f"{when}, {key!r}: shape {tuple(obs[key].shape)}, the space {space[key]}")
        return
    batch = obs.cpu().numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs)
    assert batch.shape == (NUM_ACTORS, *space.shape) and batch.dtype == space.dtype, (
        f"{when}: observations {batch.dtype}{batch.shape}, the space {space}")
    outside = [i for i, row in enumerate(batch) if not space.contains(row)]
    assert not outside, f"{when}: rows {outside} lie outside {space}"


def test_the_walk_finds_the_envpool_configs():
    paths = _config_paths()
    assert len(paths) >= 30, f"only {len(paths)} EnvPool YAMLs under {CONFIGS}: {[p.name for p in paths]}"
    assert {_params(path)["config"]["env_name"] for path in paths} == {"envpool"}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("path", [_case(path) for path in _config_paths()])
def test_config_env_builds_resets_and_steps(path: Path, way: str, envpool_is_torchpool):
    name, env_config = _env_name_and_config(_params(path), way)
    env = vecenv.create_vec_env(name, NUM_ACTORS, **env_config)
    try:
        info = env.get_env_info()
        observation_space, action_space = info["observation_space"], info["action_space"]
        _check_in_space(env.reset(), observation_space, "reset")
        action_space.seed(0)
        for t in range(3):
            actions = np.stack([action_space.sample() for _ in range(NUM_ACTORS)])
            obs, rewards, dones, infos = env.step(actions if way == "envpool" else torch.from_numpy(actions))
            _check_in_space(obs, observation_space, f"step {t}")
            assert tuple(rewards.shape) == (NUM_ACTORS,) and tuple(dones.shape) == (NUM_ACTORS,), (
                f"step {t}: rewards {tuple(rewards.shape)} dones {tuple(dones.shape)}")
            assert {"time_outs", "scores"} <= set(infos), f"step {t}: infos has only {sorted(infos)}"
    finally:
        _close(env)


@pytest.mark.parametrize("path", [_case(path) for path in _config_paths()])
def test_both_ways_give_the_same_spaces(path: Path, envpool_is_torchpool):
    spaces = {}
    for way in WAYS:
        name, env_config = _env_name_and_config(_params(path), way)
        env = vecenv.create_vec_env(name, NUM_ACTORS, **env_config)
        info = env.get_env_info()
        spaces[way] = info["observation_space"], info["action_space"]
        _close(env)
    assert spaces["envpool"] == spaces["torchpool"], (
        f"through rl_games' Envpool: {spaces['envpool']}; natively: {spaces['torchpool']}")


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("path", [_case(path) for path in _one_config_per_agent_kind()])
def test_config_agent_builds_and_acts(path: Path, way: str, envpool_is_torchpool, tmp_path):
    params = _params(path)
    name, env_config = _env_name_and_config(params, way)
    config = params["config"]
    # A small agent on the CPU: 2 actors, one rnn sequence a horizon, a tiny replay buffer.
    horizon = config.get("seq_length", 4)
    config.update(env_name=name, env_config=env_config, device="cpu", num_actors=NUM_ACTORS, horizon_length=horizon,
                  minibatch_size=NUM_ACTORS * horizon, mixed_precision=False, torch_compile=False,
                  replay_buffer_size=64, train_dir=str(tmp_path))
    runner = Runner()
    runner.load({"params": params})
    agent = runner.algo_factory.create(runner.algo_name, base_name="run", params=runner.params)
    try:
        agent.init_tensors()
        obs = agent.env_reset()
        with torch.no_grad():
            if isinstance(agent, SACAgent):
                actions = agent.act(obs, agent.env_info["action_space"].shape, sample=True)
            else:
                actions = agent.get_action_values(obs)["actions"]
        assert actions.shape[0] == NUM_ACTORS, f"{actions.shape[0]} actions for {NUM_ACTORS} actors"
        _, rewards, dones, _ = agent.env_step(actions)
        assert rewards.shape[0] == NUM_ACTORS and dones.shape[0] == NUM_ACTORS
    finally:
        _close(agent.vec_env)
