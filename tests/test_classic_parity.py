"""Step-for-step parity of the classic-control tasks with Gymnasium 1.x, by state injection.

Each torchpool env i runs beside its own reference ``gymnasium.make(env_id)``
(TimeLimit included). torchpool's resets draw from its own RNG, so at every
episode start the torchpool env's state (``pool._core.get_state(i)``) is
copied into ``ref.unwrapped.state``; sometimes a state drawn from a wider range
(near the goal, the walls, the speed limits, the termination thresholds) is
injected into both instead, so terminations and clipping branches occur under
random actions. Then both get the same random actions, and every step must
agree exactly: the float64 state bit for bit, the float64 observation bit for
bit with the reference's observation formula, the float32 observation, reward,
terminated, truncated, done, and the episode bookkeeping. The parity checks use
no tolerance. Each run must also see episodes end by termination and by the
time limit, and see the named branches of the reference's step() taken.

The reset tests at the end are statistical: torchpool's resets come from its
own RNG, so only their ranges and rough uniformity can match the reference's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch
from gym020_pendulum import make_pendulum_v0

import torchpool

NUM_ENVS = 4
NUM_STEPS = 1000


def _bits(values: Any) -> np.ndarray:
    """float64 values as their bit patterns, so -0.0 != 0.0 and equality is bit for bit."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


def _same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(_bits(a) == _bits(b)))


def _show(values: Any) -> str:
    # repr of each float64 is the shortest string that round-trips: no digits hidden.
    return repr(np.asarray(values, dtype=np.float64).tolist())


# ---- the five tasks: observation formula, action sampler, wide start states ----


Branch = Callable[[np.ndarray, bool], bool]  # (reference state after a step, terminated) -> taken?


@dataclass(frozen=True)
class Task:
    env_id: str
    # The reference's _get_obs without its final float32 cast, from its float64 state.
    observation: Callable[[np.ndarray], np.ndarray]
    # (rng, num_envs) -> float64 or int64 actions, shape [num_envs] or [num_envs, 1]
    sample_actions: Callable[[np.random.Generator, int], np.ndarray]
    # rng -> a float64 state from a wider range than reset's
    sample_wide_state: Callable[[np.random.Generator], np.ndarray]
    can_terminate: bool = True
    # task kwargs -> the branches of the reference's step() a test must see taken.
    branches: Callable[[dict], dict[str, Branch]] = lambda kwargs: {}
    # (env_id, **kwargs) -> the reference env: Gymnasium's, or gym 0.20's Pendulum-v0 (tests/gym020_pendulum.py)
    make_reference: Callable[..., gymnasium.Env] = gymnasium.make


def _state_observation(state: np.ndarray) -> np.ndarray:
    return np.array(state, dtype=np.float64)


def _pendulum_observation(state: np.ndarray) -> np.ndarray:
    theta, thetadot = state
    return np.array([np.cos(theta), np.sin(theta), thetadot], dtype=np.float64)


def _acrobot_observation(s: np.ndarray) -> np.ndarray:
    return np.array([np.cos(s[0]), np.sin(s[0]), np.cos(s[1]), np.sin(s[1]), s[2], s[3]], dtype=np.float64)


def _discrete(n: int) -> Callable[[np.random.Generator, int], np.ndarray]:
    return lambda rng, num_envs: rng.integers(0, n, size=num_envs, dtype=np.int64)


def _continuous(bound: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    def sample(rng: np.random.Generator, num_envs: int) -> np.ndarray:
        # 1.5x the bounds: a third of the actions are clipped by the env.
        actions = rng.uniform(-1.5 * bound, 1.5 * bound, size=(num_envs, 1))
        # Now and then exactly on a bound, the edge of the clip.
        on_bound = rng.random(num_envs) < 0.05
        actions[on_bound, 0] = rng.choice([-bound, bound], size=int(on_bound.sum()))
        return actions

    return sample


def _uniform_state(low: list[float], high: list[float]) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(np.array(low), np.array(high))


def _one_of(*regions: tuple[list[float], list[float]]) -> Callable[[np.random.Generator], np.ndarray]:
    """Uniform in a box (low, high) chosen at random among ``regions``."""
    def sample(rng: np.random.Generator) -> np.ndarray:
        low, high = regions[rng.integers(len(regions))]
        return rng.uniform(np.array(low), np.array(high))

    return sample


def _mountain_car_state(goal_position: float) -> Callable[[np.random.Generator], np.ndarray]:
    return _one_of(
        ([-1.2, -0.07], [0.6, 0.07]),                     # anywhere
        ([goal_position - 0.05, -0.02], [0.6, 0.07]),     # near the goal, fast or slow
        ([goal_position, -0.03], [0.6, 0.015]),           # at the goal, slow or drifting back
        ([-1.2, -0.07], [-1.1, 0.0]),                     # against the left wall
        ([-1.1, 0.068], [-0.7, 0.07]),                    # falling right at the speed limit
        ([-0.3, -0.07], [0.3, -0.068]),                   # falling left at the speed limit
    )


def _mountain_car_branches(goal_position: float) -> Callable[[dict], dict[str, Branch]]:
    def branches(kwargs: dict) -> dict[str, Branch]:
        found = {
            # MountainCarContinuous keeps its state float32-rounded: float32(-1.2) is the wall there.
            "the left wall stopped the car": lambda s, terminated: s[0] in (-1.2, np.float32(-1.2)) and s[1] == 0,
            "speed clipped": lambda s, terminated: abs(s[1]) in (0.07, np.float32(0.07)),
            "at the goal but too slow": lambda s, terminated: s[0] >= goal_position and not terminated,
        }
        if kwargs.get("goal_velocity", 0.0) > 0:
            found["at the goal, moving forward, but below goal_velocity"] = (
                lambda s, terminated: s[0] >= goal_position and s[1] >= 0 and not terminated)
        return found

    return branches


def _pendulum_task(env_id: str, **options: Any) -> Task:
    return Task(
        env_id, _pendulum_observation, _continuous(2.0),
        # Several turns either way (angle_normalize of negative and large
        # angles) and speeds up to the clip.
        _uniform_state([-4 * np.pi, -8.0], [4 * np.pi, 8.0]), can_terminate=False,
        branches=lambda kwargs: {
            "speed clipped": lambda s, terminated: abs(s[1]) == 8.0,
            "angle below -pi": lambda s, terminated: s[0] < -np.pi,
            "angle above pi": lambda s, terminated: s[0] > np.pi},
        **options)


TASKS = {
    "CartPole-v1": Task(
        "CartPole-v1", _state_observation, _discrete(2),
        # Near the theta threshold, and at either end of the track moving
        # outward: terminates within a few steps.
        _one_of(([-2.3, -2.0, -0.2, -2.0], [2.3, 2.0, 0.2, 2.0]),
                ([2.2, 0.5, -0.05, -0.5], [2.4, 2.0, 0.05, 0.5]),
                ([-2.4, -2.0, -0.05, -0.5], [-2.2, -0.5, 0.05, 0.5])),
        branches=lambda kwargs: {
            "x out of bounds": lambda s, terminated: abs(s[0]) > 2.4,
            "theta out of bounds": lambda s, terminated: abs(s[2]) > 12 * 2 * np.pi / 360}),
    "Pendulum-v1": _pendulum_task("Pendulum-v1"),
    # gym 0.20's: the angle moves by the unclipped speed, so a clipped step tells it from Pendulum-v1.
    "Pendulum-v0": _pendulum_task(
        "Pendulum-v0", make_reference=lambda env_id, disable_env_checker, **kwargs: make_pendulum_v0(**kwargs)),
    "MountainCar-v0": Task(
        "MountainCar-v0", _state_observation, _discrete(3),
        _mountain_car_state(0.5), branches=_mountain_car_branches(0.5)),
    "MountainCarContinuous-v0": Task(
        "MountainCarContinuous-v0", _state_observation, _continuous(1.0),
        _mountain_car_state(0.45), branches=_mountain_car_branches(0.45)),
    "Acrobot-v1": Task(
        "Acrobot-v1", _acrobot_observation, _discrete(3),
        # Any angles, any speeds up to the bounds: many states terminate soon.
        _uniform_state([-np.pi, -np.pi, -4 * np.pi, -9 * np.pi], [np.pi, np.pi, 4 * np.pi, 9 * np.pi]),
        branches=lambda kwargs: {
            # A proxy: wrap() moves an angle that overshot +-pi to near -+pi.
            "an angle near +-pi": lambda s, terminated: max(abs(s[0]), abs(s[1])) > 3.0,
            "speed bounded": lambda s, terminated: abs(s[2]) == 4 * np.pi or abs(s[3]) == 9 * np.pi}),
}


# ---- the parity loop ----------------------------------------------------------------


@dataclass
class Counts:
    terminations: int = 0
    truncations: int = 0
    episodes_by_env: list[int] = field(default_factory=lambda: [0] * NUM_ENVS)
    branches: dict[str, int] = field(default_factory=dict)


def _run_parity(env_id: str, task_kwargs: dict[str, Any], max_episode_steps: int, seed: int,
                num_steps: int = NUM_STEPS) -> Counts:
    task = TASKS[env_id]
    label = f"{env_id}{task_kwargs or ''}"
    rng = np.random.default_rng(seed)
    branches = task.branches(task_kwargs)
    counts = Counts(branches=dict.fromkeys(branches, 0))
    pool = torchpool.make(env_id, num_envs=NUM_ENVS, obs_dtype=torch.float64, seed=seed,
                          max_episode_steps=max_episode_steps, **task_kwargs)
    refs = [task.make_reference(env_id, max_episode_steps=max_episode_steps, disable_env_checker=True,
                                **task_kwargs) for _ in range(NUM_ENVS)]
    try:
        pool.reset()
        returns = [0.0] * NUM_ENVS   # the reference's rewards summed in float64, in order
        lengths = [0] * NUM_ENVS

        def start_episode(i: int) -> None:
            refs[i].reset(seed=seed + i)
            if rng.random() < 0.5:
                state = task.sample_wide_state(rng)
                pool._core.set_state(i, state.tolist())
            # float64, whatever the reference keeps (MountainCarContinuous keeps float32).
            refs[i].unwrapped.state = np.array(pool._core.get_state(i), dtype=np.float64)
            returns[i], lengths[i] = 0.0, 0

        for i in range(NUM_ENVS):
            start_episode(i)

        for t in range(num_steps):
            actions = task.sample_actions(rng, NUM_ENVS)
            td = pool.step(torch.from_numpy(actions))
            observation = td["observation"].numpy().copy()
            final_observation = td["final_observation"].numpy().copy()
            reward = td["reward"].numpy().copy()
            terminated = td["terminated"].numpy().copy()
            truncated = td["truncated"].numpy().copy()
            done = td["done"].numpy().copy()
            episode_return = td["episode_return"].numpy().copy()
            episode_length = td["episode_length"].numpy().copy()
            del td
            assert observation.dtype == np.float64, f"{label}: observation dtype is {observation.dtype}"
            assert reward.dtype == np.float32, f"{label}: reward dtype is {reward.dtype}"

            for i in range(NUM_ENVS):
                where = f"{label} env {i} step {t} (episode step {lengths[i] + 1})"
                ref = refs[i]
                # Continuous actions go to the reference as float64 arrays (see pendulum.h).
                ref_action = actions[i].copy() if actions.ndim == 2 else int(actions[i])
                ref_obs, ref_reward, ref_terminated, ref_truncated, _ = ref.step(ref_action)
                ref_obs = np.array(ref_obs, copy=True)
                ref_state = np.array(ref.unwrapped.state, dtype=np.float64)
                returns[i] += float(ref_reward)
                lengths[i] += 1

                assert bool(terminated[i]) == bool(ref_terminated), (
                    f"{where}: terminated torchpool={bool(terminated[i])} gymnasium={ref_terminated} "
                    f"(action {actions[i].tolist()}, reference state after the step {_show(ref_state)})")
                assert bool(truncated[i]) == bool(ref_truncated), (
                    f"{where}: truncated torchpool={bool(truncated[i])} gymnasium={ref_truncated}")
                assert bool(done[i]) == bool(ref_terminated or ref_truncated), (
                    f"{where}: done={bool(done[i])} but terminated={ref_terminated} truncated={ref_truncated}")
                assert reward[i] == np.float32(ref_reward), (
                    f"{where}: reward torchpool={reward[i]!r} gymnasium={ref_reward!r} "
                    f"(as float32 {np.float32(ref_reward)!r}; action {actions[i].tolist()})")
                assert episode_length[i] == lengths[i], (
                    f"{where}: episode_length torchpool={episode_length[i]} gymnasium steps={lengths[i]}")
                assert episode_return[i] == np.float32(returns[i]), (
                    f"{where}: episode_return torchpool={episode_return[i]!r} "
                    f"gymnasium sum={returns[i]!r} (as float32 {np.float32(returns[i])!r})")

                # The observation of the step the reference just took: `final_observation`
                # where the episode ended, `observation` otherwise (same_step autoreset).
                last_obs = final_observation[i] if done[i] else observation[i]
                want_obs64 = task.observation(ref_state)
                assert _same_bits(last_obs, want_obs64), (
                    f"{where}: float64 {'final_observation' if done[i] else 'observation'} differs:\n"
                    f"  torchpool {_show(last_obs)}\n  gymnasium {_show(want_obs64)} "
                    f"(from reference state {_show(ref_state)}; action {actions[i].tolist()})")
                assert ref_obs.dtype == np.float32 and np.array_equal(last_obs.astype(np.float32), ref_obs), (
                    f"{where}: float32 observation differs: torchpool {last_obs.astype(np.float32).tolist()} "
                    f"gymnasium {ref_obs.tolist()} ({ref_obs.dtype})")

                for name, taken in branches.items():
                    counts.branches[name] += bool(taken(ref_state, bool(ref_terminated)))
                if done[i]:
                    counts.terminations += bool(ref_terminated)
                    counts.truncations += bool(ref_truncated)
                    counts.episodes_by_env[i] += 1
                    assert not np.array_equal(observation[i], final_observation[i]), (
                        f"{where}: the episode ended but observation == final_observation "
                        f"({_show(observation[i])}): no autoreset happened")
                    # The new episode's first observation comes from its reset state.
                    new_state = np.array(pool._core.get_state(i), dtype=np.float64)
                    assert _same_bits(observation[i], task.observation(new_state)), (
                        f"{where}: the first observation of the new episode {_show(observation[i])} "
                        f"does not match the env's reset state {_show(new_state)}")
                    start_episode(i)
                else:
                    state = pool._core.get_state(i)
                    assert _same_bits(state, ref_state), (
                        f"{where}: state differs:\n  torchpool {_show(state)}\n  gymnasium {_show(ref_state)} "
                        f"(action {actions[i].tolist()})")
                    assert _same_bits(final_observation[i], observation[i]), (
                        f"{where}: final_observation {_show(final_observation[i])} != observation "
                        f"{_show(observation[i])} on a row that is not done")
    finally:
        pool.close()
        for ref in refs:
            ref.close()

    assert all(n > 0 for n in counts.episodes_by_env), (
        f"{label}: some env never ended an episode in {num_steps} steps: {counts.episodes_by_env}")
    assert counts.truncations > 0, f"{label}: no time-limit truncation occurred in {num_steps} steps"
    if task.can_terminate:
        assert counts.terminations > 0, f"{label}: no termination occurred in {num_steps} steps"
    missed = [name for name, hits in counts.branches.items() if hits == 0]
    assert not missed, f"{label}: these branches of the reference were never taken: {missed}"
    return counts


# ---- one test per task, and one per non-default kwarg ---------------------------------


def test_cartpole_matches_gymnasium():
    _run_parity("CartPole-v1", {}, max_episode_steps=40, seed=1)


def test_cartpole_sutton_barto_reward_matches_gymnasium():
    _run_parity("CartPole-v1", {"sutton_barto_reward": True}, max_episode_steps=40, seed=2)


def test_pendulum_matches_gymnasium():
    _run_parity("Pendulum-v1", {}, max_episode_steps=100, seed=3)


def test_pendulum_g_matches_gymnasium():
    _run_parity("Pendulum-v1", {"g": 9.81}, max_episode_steps=100, seed=4)


def test_pendulum_v0_matches_gym_0_20():
    _run_parity("Pendulum-v0", {"g": 9.81}, max_episode_steps=100, seed=5)


def test_mountain_car_matches_gymnasium():
    _run_parity("MountainCar-v0", {}, max_episode_steps=50, seed=5)


def test_mountain_car_goal_velocity_matches_gymnasium():
    _run_parity("MountainCar-v0", {"goal_velocity": 0.01}, max_episode_steps=50, seed=6)


def test_mountain_car_continuous_matches_gymnasium():
    _run_parity("MountainCarContinuous-v0", {}, max_episode_steps=50, seed=7)


def test_mountain_car_continuous_goal_velocity_matches_gymnasium():
    _run_parity("MountainCarContinuous-v0", {"goal_velocity": 0.01}, max_episode_steps=50, seed=8)


def test_acrobot_matches_gymnasium():
    _run_parity("Acrobot-v1", {}, max_episode_steps=100, seed=9)


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_default_time_limit_matches_gymnasium(env_id):
    # Pendulum-v0: gym 0.20's registration (gym/envs/__init__.py there) gives it 200 steps.
    want = 200 if env_id == "Pendulum-v0" else gymnasium.spec(env_id).max_episode_steps
    with torchpool.make(env_id, num_envs=1) as pool:
        assert pool.max_episode_steps == want, (
            f"{env_id}: torchpool's default time limit is {pool.max_episode_steps}, the reference's is {want}")


# ---- reset distributions ----------------------------------------------------------------

# The reference's reset ranges, per state element: (low, high), or a constant.
RESET_RANGES = {
    "CartPole-v1": [(-0.05, 0.05)] * 4,
    "Pendulum-v1": [(-np.pi, np.pi), (-1.0, 1.0)],
    "MountainCar-v0": [(-0.6, -0.4), 0.0],
    "MountainCarContinuous-v0": [(-0.6, -0.4), 0.0],
    "Acrobot-v1": [(-0.1, 0.1)] * 4,
}
RESET_POOL_ENVS = 500
RESET_ROUNDS = 4  # 2000 resets per task


def _reset_states(pool: torchpool.Pool, seed: int | None = None) -> np.ndarray:
    pool.reset(seed=seed)
    return np.array([pool._core.get_state(i) for i in range(pool.num_envs)], dtype=np.float64)


@pytest.mark.parametrize("env_id", sorted(RESET_RANGES))
def test_reset_distributions_match_reference_ranges(env_id):
    with torchpool.make(env_id, num_envs=RESET_POOL_ENVS, obs_dtype=torch.float64, seed=123) as pool:
        states = np.concatenate([_reset_states(pool, seed=1000 * (r + 1)) for r in range(RESET_ROUNDS)])
    count = len(states)
    for k, expected in enumerate(RESET_RANGES[env_id]):
        column = states[:, k]
        what = f"{env_id} reset state[{k}] over {count} resets"
        if not isinstance(expected, tuple):
            assert np.all(column == expected), f"{what}: expected always {expected}, got {np.unique(column)[:10]}"
            continue
        low, high = expected
        width = high - low
        assert column.min() >= low and column.max() <= high, (
            f"{what}: outside [{low}, {high}]: min {column.min()!r} max {column.max()!r}")
        # Uniform: the extremes lie within ~width/count of the bounds (1% is >20x that),
        assert column.min() < low + 0.01 * width and column.max() > high - 0.01 * width, (
            f"{what}: does not fill [{low}, {high}]: min {column.min()!r} max {column.max()!r}")
        # the mean within ~5 standard errors of the centre,
        standard_error = width / np.sqrt(12 * count)
        assert abs(column.mean() - (low + high) / 2) < 5 * standard_error, (
            f"{what}: mean {column.mean()!r} is far from the centre {(low + high) / 2!r}")
        # and each tenth of the range holds 10% +- 5% of the draws (std ~0.7%).
        histogram, _ = np.histogram(column, bins=10, range=(low, high))
        assert np.all(np.abs(histogram / count - 0.1) < 0.05), f"{what}: not uniform: histogram {histogram.tolist()}"
    if env_id == "Acrobot-v1":
        # uniform(...).astype(np.float32) in the reference.
        assert np.array_equal(states.astype(np.float32).astype(np.float64), states), (
            f"{env_id}: reset states are not float32-rounded")
    # Distinct draws: every env has its own stream.
    assert len(np.unique(states[:, 0])) == count, f"{env_id}: repeated reset states across envs or rounds"


@pytest.mark.parametrize("env_id", sorted(RESET_RANGES))
def test_reset_is_deterministic_per_seed(env_id):
    def first_states(seed: int) -> np.ndarray:
        with torchpool.make(env_id, num_envs=8, obs_dtype=torch.float64, seed=seed) as pool:
            return _reset_states(pool)

    a, b, c = first_states(7), first_states(7), first_states(8)
    assert _same_bits(a, b), f"{env_id}: make(seed=7).reset() differs between two pools:\n{a}\n{b}"
    assert not np.array_equal(a[:, 0], c[:, 0]), f"{env_id}: seeds 7 and 8 give the same reset states:\n{a}"
    # reset(seed=s) reseeds env i with s + i, as make(seed=s) seeds it.
    with torchpool.make(env_id, num_envs=8, obs_dtype=torch.float64, seed=0) as pool:
        reseeded = _reset_states(pool, seed=7)
        again = _reset_states(pool, seed=7)
        continued = _reset_states(pool)
    assert _same_bits(reseeded, a), f"{env_id}: reset(seed=7) differs from make(seed=7).reset():\n{reseeded}\n{a}"
    assert _same_bits(again, a), f"{env_id}: a second reset(seed=7) differs from the first"
    assert not np.array_equal(continued[:, 0], a[:, 0]), f"{env_id}: reset() without a seed repeated the last draw"
