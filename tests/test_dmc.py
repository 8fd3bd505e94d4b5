"""The Control Suite family's own contract, without the reference environment: rewards.tolerance against
dm_control's (its utils import only NumPy), the registry's ids and kwargs, bad input, time limits."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from split_tail import assert_split_steps_equal_one_thread

import torchpool
from torchpool import _family_modules
from torchpool.families import dmc

pytestmark = pytest.mark.skipif(not _family_modules.built("DmcWalker"),
                                reason="torchpool was built without the Control Suite family")

SIGMOIDS = ["gaussian", "hyperbolic", "long_tail", "reciprocal", "cosine", "linear", "quadratic", "tanh_squared"]


def test_tolerance_equals_dm_controls_for_every_sigmoid():
    rewards = pytest.importorskip("dm_control.utils.rewards")
    ours = _family_modules.module("DmcWalker").tolerance
    xs = np.concatenate([np.linspace(-4, 4, 81), [-math.inf, math.inf, 1e-300, -0.0, 0.995, 1.2]])
    bounds = [(0.0, 0.0), (-0.25, 0.25), (1.2, math.inf), (-math.inf, 0.3), (0.995, 1.0)]
    checked = 0
    for sigmoid, (lower, upper), margin, value in itertools.product(
            SIGMOIDS, bounds, [0.0, 0.6, 2.0, 10.0], [0.0, 0.1, 0.5, 0.9]):
        if value == 0.0 and sigmoid not in ("cosine", "linear", "quadratic"):
            with pytest.raises(ValueError, match="value_at_margin"):
                ours(2.0, lower, upper, 1.0, sigmoid, value)
            continue
        for x in xs:
            want = rewards.tolerance(float(x), (lower, upper), margin, sigmoid, value)
            got = ours(float(x), lower, upper, margin, sigmoid, value)
            # libm's exp/cosh/tanh against NumPy's own: an ulp apart at most, which 1 - tanh(x)^2 near x's
            # saturation turns into 1e-15 absolute.
            assert got == pytest.approx(want, rel=1e-13, abs=1e-15), (sigmoid, lower, upper, margin, value, x)
            checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("shape,factor", [((30, 30), 201 / 30), ((5, 7), 3.3), ((2, 2), 4.0), ((1, 5), 2.0),
                                          ((13, 4), 0.5)])
def test_spline_zoom_is_scipys_zoom_bit_for_bit(shape, factor):
    """Quadruped escape smooths its terrain bumps with a C++ port of scipy.ndimage.zoom (cubic spline,
    mode 'constant'); (30, 30) by 201/30 is escape's own case."""
    from scipy import ndimage

    zoom = _family_modules.module("DmcQuadruped").spline_zoom
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    for _ in range(10):
        image = rng.uniform(0.15, 1.0, shape)
        want = ndimage.zoom(image, factor)
        got = np.array(zoom(image.ravel().tolist(), shape[0], shape[1], factor)).reshape(want.shape)
        assert np.array_equal(got, want), np.abs(got - want).max()
    with pytest.raises(ValueError, match="rows x cols"):
        zoom([1.0, 2.0, 3.0], 2, 2, 2.0)


def test_tolerance_refuses_what_dm_control_refuses():
    ours = _family_modules.module("DmcWalker").tolerance
    with pytest.raises(ValueError, match="lower bound"):
        ours(0.0, 1.0, 0.0, 0.0, "gaussian", 0.1)
    with pytest.raises(ValueError, match="margin"):
        ours(0.0, 0.0, 0.0, -1.0, "gaussian", 0.1)
    with pytest.raises(ValueError, match="sigmoid"):
        ours(2.0, 0.0, 0.0, 1.0, "sigmoidal", 0.1)


def test_the_ids_are_envpools():
    assert dmc.dmc_env_id("humanoid_CMU", "run") == "HumanoidCMURun-v1"
    assert dmc.dmc_env_id("ball_in_cup", "catch") == "BallInCupCatch-v1"
    assert dmc.dmc_env_id("humanoid", "run_pure_state") == "HumanoidRunPureState-v1"
    assert set(dmc.DMC_IDS) <= set(torchpool.list_envs())
    assert len(dmc.DMC_IDS) == 51


@pytest.mark.parametrize("env_id", ["CheetahRun-v1", "WalkerWalk-v1", "FingerTurnHard-v1", "DogFetch-v1"])
def test_flatten_obs_is_the_fields_concatenated_in_order(env_id):
    named = torchpool.make(env_id, num_envs=3, seed=4, obs_dtype=torch.float64)
    flat = torchpool.make(env_id, num_envs=3, seed=4, obs_dtype=torch.float64, flatten_obs=True)
    try:
        fields, vector = named.reset()["observation"], flat.reset()["observation"]
        want = torch.cat([value.reshape(3, -1) for value in fields.values()], dim=1)
        assert torch.equal(vector, want)
        action = torch.zeros(3, *named.action_spec.shape)
        for _ in range(5):
            fields, vector = named.step(action)["observation"], flat.step(action)["observation"]
        assert torch.equal(vector, torch.cat([value.reshape(3, -1) for value in fields.values()], dim=1))
    finally:
        named.close()
        flat.close()


def test_episodes_last_1000_steps_and_frame_skip_changes_only_the_physics():
    pool = torchpool.make("CartpoleSwingup-v1", num_envs=2, seed=0, autoreset="next_step")
    try:
        pool.reset()
        lengths = []
        for _ in range(1001):
            td = pool.step(torch.zeros(2, 1))
            lengths += td["episode_length"][td["done"]].tolist()
        assert lengths == [1000, 1000] and td["truncated"].sum() == 0  # the step after: the reset row
    finally:
        pool.close()
    slow = torchpool.make("CartpoleSwingup-v1", num_envs=1, seed=0, frame_skip=3, obs_dtype=torch.float64)
    fast = torchpool.make("CartpoleSwingup-v1", num_envs=1, seed=0, obs_dtype=torch.float64)
    try:
        assert torch.equal(slow.reset()["observation", "position"], fast.reset()["observation", "position"])
        slow.step(torch.ones(1, 1))
        for _ in range(3):
            fast.step(torch.ones(1, 1))
        # One step of frame_skip=3 is three steps of frame_skip=1 (the same physics calls in the same order).
        assert list(slow._core.get_state(0)) == list(fast._core.get_state(0))
    finally:
        slow.close()
        fast.close()


def test_bad_kwargs_ids_and_actions_are_refused_by_name():
    with pytest.raises(ValueError, match="frame_skip"):
        torchpool.make("WalkerWalk-v1", frame_skip=0)
    with pytest.raises(TypeError, match="Did you mean 'flatten_obs'"):
        torchpool.make("WalkerWalk-v1", flaten_obs=True)
    with pytest.raises(ValueError, match="WalkerWalk-v1"):
        torchpool.make("WalkerWalks-v1")
    with torchpool.make("WalkerWalk-v1", num_envs=2) as pool:
        pool.reset()
        with pytest.raises(ValueError, match="finite|NaN"):
            pool.step(torch.full((2, 6), float("nan")))
        with pytest.raises(ValueError, match="shape"):
            pool.step(torch.zeros(2, 5))


def test_gymnasium_make_vec_gives_a_dict_space_in_dm_controls_order():
    import gymnasium

    import torchpool.gym

    envs = gymnasium.make_vec(torchpool.gym.register_env("WalkerWalk-v1"), num_envs=3)
    try:
        space = envs.single_observation_space
        assert isinstance(space, gymnasium.spaces.Dict)
        assert list(space.spaces) == ["orientations", "height", "velocity"]
        assert space["height"].shape == () and space["orientations"].shape == (14,)
        obs, _ = envs.reset(seed=0)
        obs, *_ = envs.step(envs.action_space.sample())
        assert envs.observation_space.contains(obs)
    finally:
        envs.close()


def test_lqr_terminates_with_discount_zero_near_the_origin_and_its_springs_follow_the_seed():
    import torchpool.envpool_compat as envpool

    env = envpool.make_dm("LqrLqr21-v1", num_envs=2, seed=5)
    try:
        env.reset()
        core = env.pool._core
        stiffness = [list(core.get_state(i))[-2:] for i in range(2)]
        assert all(15.0 <= k < 25.0 for pair in stiffness for k in pair) and stiffness[0] != stiffness[1]
        state = list(core.get_state(0))
        state[1:5] = [1e-9, -1e-9, 0.0, 0.0]  # qpos, qvel of both masses (time first)
        core.set_state(0, state)
        step = env.step(np.zeros((2, 1)))
        assert step.step_type.tolist() == [2, 1] and step.discount.tolist() == [0.0, 1.0]
    finally:
        env.close()
    again = envpool.make_dm("LqrLqr21-v1", num_envs=2, seed=5)
    try:
        again.reset()
        assert [list(again.pool._core.get_state(i))[-2:] for i in range(2)] == stiffness
    finally:
        again.close()


# NOTE [Split tail]: here the split steps are the suite's frame_skip physics steps; the first is the legacy
# step's mj_step2, the step's end its mj_step1.
@pytest.mark.parametrize("env_id, autoreset", [("WalkerWalk-v1", "same_step"), ("QuadrupedRun-v1", "same_step"),
                                               ("FingerTurnHard-v1", "next_step")])
def test_steps_split_over_threads_give_every_output_of_one_thread(env_id, autoreset):
    one = assert_split_steps_equal_one_thread(env_id, num_envs=8, steps=120, autoreset=autoreset, flatten_obs=True,
                                              max_episode_steps=50)
    assert one["done"].any(), "the time limit should end episodes inside the run"


# NOTE [Shallow model copies]: an env that edits its model per episode edits its own arrays only.
@pytest.mark.parametrize("env_id", ["ReacherEasy-v1", "PointMassHard-v1", "QuadrupedEscape-v1"])
def test_envs_editing_their_model_share_none_of_their_edits(env_id):
    """Env i of a pool of 4 on 2 threads (short episodes, so envs reset and redraw their edits while the others
    step) gives, step for step, what a pool of one env seeded seed + i gives: no env sees another's target,
    gains or terrain."""
    steps, num_envs = 40, 4
    with torchpool.make(env_id, num_envs=1) as pool:
        low, high = pool.action_spec.low.numpy(), pool.action_spec.high.numpy()
    actions = torch.from_numpy(np.random.default_rng(3).uniform(low, high, size=(steps, num_envs, *low.shape)))

    def run(num_envs: int, seed: int, columns: slice) -> list:
        pool = torchpool.make(env_id, num_envs=num_envs, seed=seed, num_threads=min(num_envs, 2),
                              max_episode_steps=15, flatten_obs=True, obs_dtype=torch.float64)
        try:
            pool.reset()
            return [pool.step(actions[t, columns].float())["observation"].clone() for t in range(steps)]
        finally:
            pool.close()

    together = torch.stack(run(num_envs, 9, slice(None)))
    for i in range(num_envs):
        alone = torch.stack(run(1, 9 + i, slice(i, i + 1)))[:, 0]
        assert torch.equal(alone, together[:, i]), f"{env_id}: env {i} of the pool differs from the same env alone"
