"""Env ids, defaults and kwarg schemas; the family files and the modules they declare."""

import dataclasses

import pytest

import torchpool
from torchpool import _family_modules, registry
from torchpool.families import atari


def test_list_envs_has_every_classic_task_and_hides_test_envs():
    envs = torchpool.list_envs()
    for env_id in ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1"]:
        assert env_id in envs
    assert "_Probe-v0" not in envs
    assert envs == sorted(envs)


def test_each_built_module_holds_exactly_the_families_its_family_file_declares():
    # The family name is written in module.cpp and in the family file's ids (torchpool/families/<family>.py):
    # a family the C++ lacks, or one it has that no id uses, shows here.
    declared = _family_modules.declared()
    assert declared, "no family file declared a module"
    for name, declaration in declared.items():
        if not declaration.built():
            continue  # an optional family left out of this build (TORCHPOOL_ATARI=0)
        exported = set(declaration.load().families)
        assert exported == declaration.families, (
            f"torchpool.{name} exports the families {sorted(exported)}, its family file declares "
            f"{sorted(declaration.families)}")
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
    unplayable = set(atari.rom_files()) - set(atari.playable_roms())
    assert unplayable == atari.ROMS_NOT_SINGLE_PLAYER, "ale-py's two-player ROMs changed: update the list"


def _code_words(module) -> set[str]:
    """The names and string constants of a module's code, its comments and docstrings left out."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    words = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.add(node.value)
    return words


def test_the_mechanism_names_no_family():
    # registry.py and _family_modules.py know families only through the family files (torchpool/families/).
    for module in (registry, _family_modules):
        words = " ".join(_code_words(module))
        for family in ("CartPole", "Atari", "atari", "MuJoCo", "mujoco", "Dmc", "dmc", "_classic", "rom"):
            assert family not in words, f"{module.__name__}'s code names {family!r}: that belongs in a family file"


def test_every_id_made_with_its_defaults_has_every_kwarg_read():
    # NOTE [Every kwarg is read] (csrc/core/spec.h): a pool whose family never read a kwarg it was given is
    # refused, so making each id with its defaults (what the family file passes, the fixed ones included)
    # shows a kwarg the C++ reads under another name. (MuJoCo and dm_control ids need their packages.)
    for env_id in torchpool.list_envs() + ["_Probe-v0"]:
        family = registry.lookup(env_id).family
        if not _family_modules.built(family):
            continue
        torchpool.make(env_id, num_envs=1, num_threads=1).close()


def test_a_kwarg_the_family_never_reads_is_refused_naming_it_and_the_family(monkeypatch):
    entry = registry.lookup("MountainCar-v0")
    renamed = lambda kwargs: {"goal_speed" if name == "goal_velocity" else name: value  # noqa: E731
                              for name, value in kwargs.items()}
    monkeypatch.setitem(registry._REGISTRY, "MountainCar-v0", dataclasses.replace(
        entry, prepare=lambda kwargs: {**kwargs, "goal_speed": 0.0}))
    with pytest.raises(ValueError, match="family 'MountainCar' never read the task kwarg 'goal_speed'"):
        torchpool.make("MountainCar-v0", num_envs=1)
    monkeypatch.setitem(registry._REGISTRY, "MountainCar-v0", dataclasses.replace(entry, prepare=renamed))
    with pytest.raises(ValueError, match="missing task kwarg 'goal_velocity'"):
        torchpool.make("MountainCar-v0", num_envs=1)
