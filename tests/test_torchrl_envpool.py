"""torchrl's EnvPool wrapper (``torchrl/envs/libs/envpool.py``) runs on ``torchpool.envpool_compat``.

``MultiThreadedEnv`` and ``MultiThreadedEnvWrapper`` are torchrl's own, unchanged;
only ``sys.modules["envpool"]`` is torchpool's compat module. What the wrapper
reads: ``envpool.make(task_id, env_type="gym", num_envs, gym_reset_return_info=True,
max_num_players=1)``, ``isinstance(env, envpool.python.envpool.EnvPoolMixin)``,
``env.config["num_envs"]``, ``env.spec.observation_space`` / ``action_space``
(converted under torchrl's "gym" backend), ``reset()`` / ``reset(env_ids)`` /
``step(actions)`` in either tuple format, and EnvPool's next-step autoreset.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import pytest
import torch

import torchpool
import torchpool.envpool_compat

pytest.importorskip("torchrl", reason="torchrl is in the test extra; install .[test]")
pytest.importorskip("gym", reason="torchrl's EnvPool wrapper converts spaces under its 'gym' backend")

import torchrl.envs.libs.envpool as torchrl_envpool  # noqa: E402
from torchrl.data import Categorical  # noqa: E402
from torchrl.envs import MultiThreadedEnv, MultiThreadedEnvWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs, step_mdp  # noqa: E402

ENV_IDS = ["CartPole-v1", "Pong-v5"]


def _no_treevalue() -> types.ModuleType:
    # torchrl's wrapper imports treevalue on every reset and step, only to
    # recognise EnvPool's nested (dict) observations; torchpool's are arrays,
    # so a TreeValue class nothing is an instance of answers as the real
    # package would. (EnvPool >= 1.0 no longer installs treevalue.)
    module = types.ModuleType("treevalue")
    module.TreeValue = module.FastTreeValue = type("TreeValue", (), {})
    return module


@pytest.fixture(autouse=True)
def envpool_is_torchpool(monkeypatch):
    """``import envpool`` gives ``torchpool.envpool_compat`` for each test; the real module is back after it."""
    monkeypatch.setitem(sys.modules, "envpool", torchpool.envpool_compat)
    # torchrl decides at import whether envpool can be imported; ask again now.
    monkeypatch.setattr(torchrl_envpool, "_has_envpool", importlib.util.find_spec("envpool") is not None)
    if importlib.util.find_spec("treevalue") is None:
        monkeypatch.setitem(sys.modules, "treevalue", _no_treevalue())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_multithreaded_env_passes_check_env_specs(env_id: str):
    env = MultiThreadedEnv(4, env_id)
    try:
        check_env_specs(env)
        with torchpool.make(env_id, num_envs=1) as pool:
            shape, dtype = pool.observation_spec.shape, pool.observation_spec.dtype
            n = pool.action_spec.n
        spec = env.observation_spec["observation"]
        assert spec.shape == torch.Size([4, *shape]) and spec.dtype == dtype, (
            f"observation spec {spec.dtype}{tuple(spec.shape)}, the pool's {dtype}{(4, *shape)}")
        action_spec = env.action_spec
        assert isinstance(action_spec, Categorical) and action_spec.shape == torch.Size([4]) \
            and action_spec.space.n == n, f"action spec {action_spec}, the pool has {n} actions"
    finally:
        env.close()


@pytest.mark.parametrize("env_id, steps", [("CartPole-v1", 60), ("Pong-v5", 12)])
def test_multithreaded_env_rollout_matches_a_torchpool_pool(env_id: str, steps: int):
    # MultiThreadedEnv makes its pool with EnvPool's default seed, 42.
    env = MultiThreadedEnv(4, env_id)
    try:
        rollout = env.rollout(steps, break_when_any_done=False)
    finally:
        env.close()
    assert rollout.batch_size == torch.Size([4, steps]), rollout.batch_size
    with torchpool.make(env_id, num_envs=4, seed=42, autoreset="next_step") as pool:
        first = pool.reset()["observation"]
        assert torch.equal(rollout["observation"][:, 0], first), "the first observation differs from the pool's"
        dones = 0
        for t in range(steps):
            td = pool.step(rollout["action"][:, t])
            for key in ("observation", "reward", "done"):
                assert torch.equal(rollout["next", key][:, t], td[key].to(rollout["next", key].dtype)), (
                    f"step {t}: torchrl's next {key!r} differs from the pool's")
            dones += int(td["done"].sum())
    if env_id == "CartPole-v1":
        assert dones > 0, f"no episode ended in {steps} random steps: the autoreset went untested"


@pytest.mark.parametrize("env_id, env_type", [("CartPole-v1", "gym"), ("CartPole-v1", "gymnasium"), ("Pong-v5", "gym")])
def test_multithreaded_env_wrapper_runs_a_compat_pool(env_id: str, env_type: str):
    pool = torchpool.envpool_compat.make(env_id, env_type=env_type, num_envs=3, gym_reset_return_info=True)
    env = MultiThreadedEnvWrapper(pool)
    try:
        assert env.batch_size == torch.Size([3])
        check_env_specs(env)
        rollout = env.rollout(5, break_when_any_done=False)
        assert rollout["next", "observation"].shape == (3, 5, *pool.observation_space.shape)
        assert rollout["next", "reward"].shape == (3, 5) and rollout["next", "done"].dtype == torch.bool
    finally:
        env.close()


def test_partial_reset_resets_only_the_named_envs():
    env = MultiThreadedEnv(3, "CartPole-v1")
    try:
        td = step_mdp(env.rand_step(env.reset()))
        moved = td["observation"].clone()
        td["_reset"] = torch.tensor([True, False, True])
        observation = env.reset(td)["observation"]  # torchrl calls the pool's reset([0, 2])
        assert torch.equal(observation[1], moved[1]), "env 1 was not asked to reset but its observation changed"
        assert not torch.equal(observation[[0, 2]], moved[[0, 2]]) and (observation[[0, 2]].abs() <= 0.05).all(), (
            f"envs 0 and 2 were reset but hold {observation[[0, 2]]}, not new CartPole reset states")
    finally:
        env.close()
