"""The test family (csrc/envs/testing, the ``_testing`` module): ``_Probe-v0``, an env whose timing and
failures the tests choose. Hidden from ``list_envs``; registered as every family is (docs/design.md,
"Adding an env family")."""

from __future__ import annotations

from .._family_modules import FamilyModule
from ..registry import EnvEntry, Kwarg

MODULE = FamilyModule("_testing")

MODULE.register(EnvEntry("_Probe-v0", "Probe", {
    "episode_length": Kwarg(int, 5, "steps until terminated"),
    "max_sleep_us": Kwarg(float, 0.0, "each step/reset sleeps uniformly up to this"),
    "max_busy_us": Kwarg(float, 0.0, "each step/reset computes (spins) uniformly up to this, like a real env"),
    "fail_at_step": Kwarg(int, -1, "the env's n-th step raises; -1 never"),
    "fail_probability": Kwarg(float, 0.0, "each step raises with this probability (drawn from the env's RNG)"),
    "dict_observation": Kwarg(bool, False, "named observation fields: counters, last_action, grid"),
}, hidden=True))
