"""Env ids, defaults and kwarg schemas."""

import torchpool
from torchpool import _family_modules, registry


def test_list_envs_has_every_classic_task_and_hides_test_envs():
    envs = torchpool.list_envs()
    for env_id in ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1"]:
        assert env_id in envs
    assert "_Probe-v0" not in envs
    assert envs == sorted(envs)


def test_every_registered_family_is_in_its_module():
    for env_id in torchpool.list_envs() + ["_Probe-v0"]:
        family = registry.lookup(env_id).family
        assert family in _family_modules.module(family).families, f"{env_id}: no module exports family {family}"


def test_defaults_fill_missing_kwargs():
    entry = registry.lookup("MountainCar-v0")
    assert registry.resolve_kwargs(entry, {}) == {"goal_velocity": 0.0}
    assert registry.resolve_kwargs(entry, {"goal_velocity": 0.1}) == {"goal_velocity": 0.1}
    # What the id fixes reaches the C++ beside them: Pendulum-v0 and -v1 are one family.
    assert registry.resolve_kwargs(registry.lookup("Pendulum-v0"), {"g": 9.81}) == {"g": 9.81, "pendulum_version": 0}
    assert registry.resolve_kwargs(registry.lookup("Pendulum-v1"), {}) == {"g": 10.0, "pendulum_version": 1}


def test_the_ids_listed_without_reading_roms_are_the_ids_ale_plays():
    # list_envs_unchecked() (Gymnasium's ids at import) names the two-player ROMs instead of hashing every ROM.
    assert registry.list_envs_unchecked() == torchpool.list_envs()
    unplayable = set(registry._rom_files()) - set(registry._atari_roms())
    assert unplayable == registry._ROMS_NOT_SINGLE_PLAYER, "ale-py's two-player ROMs changed: update the list"
