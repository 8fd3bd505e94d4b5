"""Env ids, defaults and kwarg schemas."""

import torchpool
from torchpool import _core, registry


def test_list_envs_has_every_classic_task_and_hides_test_envs():
    envs = torchpool.list_envs()
    for env_id in ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1"]:
        assert env_id in envs
    assert "_Probe-v0" not in envs
    assert envs == sorted(envs)


def test_every_registered_family_exists_in_the_extension():
    families = set(_core.families())
    for env_id in torchpool.list_envs() + ["_Probe-v0"]:
        assert registry.lookup(env_id).family in families, env_id


def test_defaults_fill_missing_kwargs():
    entry = registry.lookup("Pendulum-v1")
    assert registry.resolve_kwargs(entry, {}) == {"g": 10.0}
    assert registry.resolve_kwargs(entry, {"g": 9.81}) == {"g": 9.81}
