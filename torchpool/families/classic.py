"""Classic control (csrc/envs/classic, the ``_classic`` module): Gymnasium 1.x's five tasks, bit for bit,
and gym 0.20's Pendulum-v0."""

from __future__ import annotations

from .._family_modules import FamilyModule
from ..registry import EnvEntry, Kwarg

MODULE = FamilyModule("_classic")

MODULE.register(EnvEntry("CartPole-v1", "CartPole",
                  {"sutton_barto_reward": Kwarg(bool, False, "reward 0 per step and -1 on failure")},
                  reference="CartPole-v1"))
# Pendulum-v0 is gym 0.20's (and EnvPool's): the angle integrated with the unclipped velocity (pendulum.h);
# Gymnasium's Pendulum-v1 draws it (the same pendulum).
MODULE.register(EnvEntry("Pendulum-v1", "Pendulum",
                  {"g": Kwarg(float, 10.0, "gravity")},
                  reference="Pendulum-v1", prepare=lambda kwargs: {**kwargs, "pendulum_version": 1}))
MODULE.register(EnvEntry("Pendulum-v0", "Pendulum",
                  {"g": Kwarg(float, 10.0, "gravity")},
                  reference="Pendulum-v1", prepare=lambda kwargs: {**kwargs, "pendulum_version": 0}))
MODULE.register(EnvEntry("MountainCar-v0", "MountainCar",
                  {"goal_velocity": Kwarg(float, 0.0, "minimum velocity at the goal")},
                  reference="MountainCar-v0"))
MODULE.register(EnvEntry("MountainCarContinuous-v0", "MountainCarContinuous",
                  {"goal_velocity": Kwarg(float, 0.0, "minimum velocity at the goal")},
                  reference="MountainCarContinuous-v0"))
MODULE.register(EnvEntry("Acrobot-v1", "Acrobot", {}, reference="Acrobot-v1"))
