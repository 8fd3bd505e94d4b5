"""Python envs' spaces through torchpool.gym.VectorEnv, against Gymnasium's SyncVectorEnv.

Every space Gymnasium's own vector envs take is served (torchpool/_workers/spaces.py,
NOTE [Python objects]): observations come back in their space's dtype and structure
(nested Dict and Tuple spaces as nested dicts and tuples; Text, Sequence, Graph and OneOf
leaves as tuples of the envs' values), actions reach the env as the space holds them,
and infos are merged as SyncVectorEnv merges them, whatever keys each step gives.
Each check runs the envs in the calling process and in worker processes.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.spaces import Box, Dict, Discrete, Graph, MultiBinary, MultiDiscrete, OneOf, Sequence, Text, Tuple
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import torchpool
import torchpool.gym

NUM_ENVS = 3
WHERE = ["caller", "workers"]


class SpaceEnv(gymnasium.Env):
    """Observations drawn from its observation space (seeded by reset); every step checks its action is in
    the action space. Episodes end after ``length`` steps; step infos name the step and, at times, more."""

    def __init__(self, observation_space: gymnasium.Space, action_space: gymnasium.Space, length: int = 3,
                 reset_info: dict | None = None):
        # its own copies: a space's sample() draws from the space's RNG, which envs must not share
        self.observation_space, self.action_space = copy.deepcopy(observation_space), copy.deepcopy(action_space)
        self.length, self.reset_info = length, reset_info or {}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.count = 0
        return self.observation_space.sample(), dict(self.reset_info)

    def step(self, action):
        if action not in self.action_space:
            raise AssertionError(f"action {action!r} is not in {self.action_space}")
        self.count += 1
        info: dict[str, Any] = {"count": self.count}
        if self.count % 2 == 0:
            info["even"] = {"half": self.count // 2, "text": "even"}
        return self.observation_space.sample(), float(self.count), self.count == self.length, False, info


def _make(observation_space, action_space, **kwargs):
    return [lambda: SpaceEnv(observation_space, action_space, **kwargs) for _ in range(NUM_ENVS)]


def _assert_equal(where: str, got: Any, want: Any) -> None:
    assert data_equivalence(got, want, exact=True), f"{where}: torchpool gave\n{got!r}\nSyncVectorEnv gave\n{want!r}"


def _run_against_sync(env_fns, steps: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP,
                      steps_in: str = "caller") -> None:
    ours = torchpool.gym.VectorEnv(env_fns, num_envs=len(env_fns), autoreset_mode=mode, steps_in=steps_in)
    ref = SyncVectorEnv(env_fns, autoreset_mode=mode)
    try:
        assert ours.single_observation_space == ref.single_observation_space
        assert ours.observation_space == ref.observation_space
        assert ours.action_space == ref.action_space
        obs, info = ours.reset(seed=5)
        ref_obs, ref_info = ref.reset(seed=5)
        _assert_equal("reset observation", obs, ref_obs)
        _assert_equal("reset info", info, ref_info)
        ref.action_space.seed(1)
        for step in range(steps):
            actions = ref.action_space.sample()
            got, want = ours.step(actions), ref.step(actions)
            _assert_equal(f"step {step} observation", got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1].astype(np.float32), err_msg=f"step {step} reward")
            _assert_equal(f"step {step} terminated", got[2], want[2])
            _assert_equal(f"step {step} truncated", got[3], want[3])
            _assert_equal(f"step {step} info", got[4], want[4])
            if mode is AutoresetMode.DISABLED and want[2].any():
                mask = want[2] | want[3]
                got_reset, want_reset = (ours.reset(options={"reset_mask": mask}),
                                         ref.reset(options={"reset_mask": mask}))
                _assert_equal(f"step {step} partial reset", got_reset, want_reset)
    finally:
        ours.close()
        ref.close()


# Observation spaces whose batch leaves the space today's columns hold as is (its dtype, its structure).
OBSERVATION_SPACES = {
    "MultiDiscrete int8": MultiDiscrete([2, 3], dtype=np.int8),
    "MultiDiscrete uint16": MultiDiscrete([2, 3], dtype=np.uint16),
    "MultiBinary int8": MultiBinary(8),
    "Discrete int32 from 1": Discrete(4, start=1, dtype=np.int32),
    "Box int8": Box(-5, 5, (2,), dtype=np.int8),
    "Box bool": Box(np.array([0, 0, 1]), np.array([1, 0, 1]), dtype=np.bool_),
    "Tuple": Tuple((Discrete(3), Box(0, 1, (2,)))),
    "nested Dict": Dict(a=Box(0, 1, (3, 3)), b=Dict(b_1=Box(-100, 100, (2,)), b_2=Discrete(4)), c=Discrete(4)),
    "Tuple of a Dict": Tuple((Discrete(3), Dict(position=Box(0.0, 1.0), velocity=Discrete(2)))),
    "Dict of one leaf": Dict(only=Discrete(5, start=-2)),
}
# Spaces that cannot batch: each env's value, as Gymnasium's vector envs hand them back (tuples).
OBJECT_SPACES = {
    "Text": Text(6),
    "Text in a Dict": Dict(mission=Text(8), image=Box(0, 255, (3, 3, 3), dtype=np.uint8), direction=Discrete(4)),
    "Sequence": Sequence(Discrete(4)),
    "Graph": Graph(node_space=Box(-1, 1, shape=(2,)), edge_space=Discrete(3)),
    "Graph in a Tuple": Tuple((Graph(node_space=Box(-1, 1, shape=(2, 1)), edge_space=None), Discrete(2))),
    "OneOf": OneOf([Discrete(3), Box(0, 1, (2,))]),
}
# Action spaces that reach the env as the space holds them.
ACTION_SPACES = {
    "Discrete from -2": Discrete(5, start=-2),
    "Box bool": Box(np.array([0, 0, 1]), np.array([1, 0, 1]), dtype=np.bool_),
    "MultiDiscrete int8": MultiDiscrete([2, 3], dtype=np.int8),
    "MultiBinary": MultiBinary([2, 3]),
    "Dict": Dict(position=Discrete(6), velocity=Box(np.array([0.0, 0.0]), np.array([1.0, 5.0]), dtype=np.float64)),
    "nested Tuple": Tuple((Discrete(5), Tuple((Box(0.0, 1.0, shape=(3,)), Discrete(2, start=1))))),
    "Text": Text(4),
    "Graph": Graph(node_space=Discrete(3), edge_space=Discrete(4)),
}


@pytest.mark.parametrize("steps_in", WHERE)
@pytest.mark.parametrize("name", sorted(OBSERVATION_SPACES))
def test_observations_keep_their_space_as_in_sync_vector_env(name, steps_in):
    _run_against_sync(_make(OBSERVATION_SPACES[name], Discrete(2)), steps=7, steps_in=steps_in)


@pytest.mark.parametrize("steps_in", WHERE)
@pytest.mark.parametrize("name", sorted(OBJECT_SPACES))
def test_spaces_that_cannot_batch_come_back_as_sync_vector_envs_tuples(name, steps_in):
    _run_against_sync(_make(OBJECT_SPACES[name], Discrete(2)), steps=7, steps_in=steps_in)


@pytest.mark.parametrize("steps_in", WHERE)
@pytest.mark.parametrize("name", sorted(ACTION_SPACES))
def test_actions_reach_the_env_as_its_space_holds_them(name, steps_in):
    _run_against_sync(_make(Box(0, 1, (2,)), ACTION_SPACES[name]), steps=7, steps_in=steps_in)


@pytest.mark.parametrize("steps_in", WHERE)
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_infos_given_only_by_some_steps_are_merged_as_in_sync_vector_env(mode, steps_in):
    # reset's numeric key "level" is an extra; "count" and the dict "even" come from steps only
    env_fns = [lambda: SpaceEnv(Dict(mission=Text(5), x=Discrete(3)), Discrete(2), length=3,
                                reset_info={"level": 2})] * NUM_ENVS
    _run_against_sync(env_fns, steps=9, mode=mode, steps_in=steps_in)


def test_pool_reports_each_answers_python_objects():
    with torchpool.make(lambda: SpaceEnv(Dict(mission=Text(5), x=Discrete(3)), Discrete(2)), num_envs=2,
                        steps_in="workers", autoreset="next_step") as pool:
        assert [c.name for c in pool.observation_columns] == [""]  # one field: the core's is unnamed
        pool.reset(seed=0)
        resets = pool.objects(1)
        assert [len(answer[0]) for answer in resets] == [1, 1] and all(isinstance(a[0][0], str) for a in resets)
        pool.step(np.zeros(2, dtype=np.int64))
        assert [answer[1] for answer in pool.objects(2)] == [{"count": 1}, {"count": 1}]


@pytest.mark.parametrize("env_id", ["CartPole-v1", None])
def test_np_random_seed_is_one_per_env_as_in_gymnasiums_vector_envs(env_id):
    envs = (torchpool.gym.VectorEnv(env_id, num_envs=NUM_ENVS) if env_id else
            torchpool.gym.VectorEnv(_make(Box(0, 1, (2,)), Discrete(2)), num_envs=NUM_ENVS))
    try:
        envs.reset(seed=42)
        assert envs.np_random_seed == (42, 43, 44)
        envs.reset()
        assert envs.np_random_seed == (42, 43, 44)
        envs.reset(seed=[7, 8, 9])
        assert envs.np_random_seed == (7, 8, 9)
    finally:
        envs.close()


class SeedRecorder(SpaceEnv):
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observation, info = super().reset(seed=seed, options=options)
        return observation, {**info, "seed": seed}


@pytest.mark.parametrize("steps_in", WHERE)
def test_reset_without_a_seed_passes_none_to_python_envs_as_gymnasiums_vector_envs(steps_in):
    env_fns = [lambda: SeedRecorder(Box(0, 1, (2,)), Discrete(2))] * 2
    with torchpool.gym.VectorEnv(env_fns, num_envs=2, steps_in=steps_in) as envs:
        assert envs.reset()[1]["seed"].tolist() == [None, None]
        assert envs.reset(seed=4)[1]["seed"].tolist() == [4, 5]
        assert envs.reset()[1]["seed"].tolist() == [None, None]
    # A seed given to the pool seeds the first reset, as torchpool's pools do
    with torchpool.gym.VectorEnv(env_fns, num_envs=2, steps_in=steps_in, seed=10) as envs:
        assert envs.reset()[1]["seed"].tolist() == [10, 11]


@pytest.mark.parametrize("steps_in", WHERE)
def test_get_attr_set_attr_and_call_reach_the_envs_as_in_sync_vector_env(steps_in):
    env_fns = _make(Box(0, 1, (2,)), Discrete(2))
    ours = torchpool.gym.VectorEnv(env_fns, num_envs=NUM_ENVS, steps_in=steps_in)
    ref = SyncVectorEnv(env_fns)
    try:
        for envs in (ours, ref):
            envs.reset(seed=3)
            envs.set_attr("length", [4, 5, 6])
            envs.set_attr("tag", "all")
        assert ours.get_attr("length") == ref.get_attr("length") == (4, 5, 6)
        assert ours.get_attr("tag") == ref.get_attr("tag") == ("all",) * 3
        assert ours.call("length") == ref.call("length")  # an attribute that is not callable: its value
        _assert_equal("call", ours.call("reset", seed=1), ref.call("reset", seed=1))
        assert ours.np_random_seed == ref.np_random_seed == (1, 1, 1)
        assert [g.bit_generator.state for g in ours.np_random] == [g.bit_generator.state for g in ref.np_random]
        with pytest.raises(ValueError, match="Values must be a list or tuple"):
            ours.set_attr("length", [1, 2])
    finally:
        ours.close()
        ref.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", None])
def test_a_scalar_action_is_a_type_error_as_in_gymnasiums_vector_envs(env_id):
    envs = (torchpool.gym.VectorEnv(env_id, num_envs=2) if env_id else
            torchpool.gym.VectorEnv(_make(Box(0, 1, (2,)), Discrete(2)), num_envs=NUM_ENVS))
    try:
        envs.reset(seed=0)
        with pytest.raises(TypeError, match="one action per env"):
            envs.step(0)
        with pytest.raises(ValueError):
            envs.step(np.zeros(envs.num_envs + 1, dtype=np.int64))
    finally:
        envs.close()


def test_an_ignored_action_of_a_next_step_reset_is_not_checked():
    # Gymnasium's test_final_obs_info: after an episode's end, the next step resets and ignores its action
    env_fns = [lambda: SpaceEnv(Discrete(4), Discrete(4), length=1)]
    envs = torchpool.gym.VectorEnv(env_fns, num_envs=1)
    try:
        envs.reset(seed=0)
        assert envs.step(np.array([3]))[2].tolist() == [True]
        envs.step(np.array([4]))  # out of Discrete(4): the env never sees it
    finally:
        envs.close()


def _bounded(high: float, shape: tuple = (5,)):
    return lambda: SpaceEnv(Box(0, high, shape), Discrete(2))


@pytest.mark.parametrize("steps_in", WHERE)
def test_observation_mode_different_takes_spaces_whose_bounds_differ_as_gymnasium(steps_in):
    env_fns = [_bounded(1.0), _bounded(2.0), _bounded(3.0)]
    envs = torchpool.gym.VectorEnv(env_fns, num_envs=3, observation_mode="different", steps_in=steps_in)
    try:
        assert envs.observation_space == gymnasium.vector.utils.batch_differing_spaces([Box(0, h, (5,))
                                                                                       for h in (1.0, 2.0, 3.0)])
        assert envs.single_observation_space == Box(0, 1.0, (5,))
        assert envs.reset(seed=0)[0] in envs.observation_space
        assert envs.step(np.zeros(3, dtype=np.int64))[0] in envs.observation_space
    finally:
        envs.close()
    with pytest.raises(RuntimeError, match="not equivalent.*use `observation_mode='different'` instead"):
        torchpool.gym.VectorEnv(env_fns, num_envs=3, steps_in=steps_in)
    with pytest.raises(ValueError, match="other shapes or dtypes"):
        torchpool.gym.VectorEnv([_bounded(1.0, (1,)), _bounded(1.0, (2,))], num_envs=2,
                                observation_mode="different", steps_in=steps_in)
    mixed = [_bounded(1.0), lambda: SpaceEnv(Discrete(5), Discrete(2))]
    with pytest.raises(TypeError, match="not made of the spaces"):
        torchpool.gym.VectorEnv(mixed, num_envs=2, observation_mode="different", steps_in=steps_in)
    # the pool itself: one space unless asked
    with pytest.raises(ValueError, match="another observation space than env 0"):
        torchpool.make(env_fns, num_envs=3, steps_in=steps_in)
    with torchpool.make(env_fns, num_envs=3, steps_in=steps_in, observation_mode="different") as pool:
        assert [space.high[0] for space in pool.observation_spaces] == [1.0, 2.0, 3.0]


def test_observation_mode_takes_the_spaces_to_report():
    env_fns = _make(Box(0, 1, (5,)), Discrete(2))
    spaces = (Box(0, 4, (3, 5)), Box(0, 4, (5,)))
    envs = torchpool.gym.VectorEnv(env_fns, num_envs=NUM_ENVS, observation_mode=spaces)
    try:
        assert (envs.observation_space, envs.single_observation_space) == spaces
        envs.reset(seed=0)
    finally:
        envs.close()
    with pytest.raises(ValueError, match="Invalid `observation_mode`"):
        torchpool.gym.VectorEnv(env_fns, num_envs=NUM_ENVS, observation_mode="invalid")


def test_the_readmes_minigrid_example_steps_as_sync_vector_env():
    pytest.importorskip("minigrid")
    with torchpool.make("gymnasium:minigrid:MiniGrid-Empty-8x8-v0", num_envs=2) as pool:
        pool.reset()  # "mission" is MiniGrid's MissionSpace, a custom Space of strings: a Python object
        assert [answer[0] for answer in pool.objects(1)] == [("get to the green goal square",)] * 2
    env_fns = [lambda: gymnasium.make("MiniGrid-Empty-8x8-v0")] * 2
    _run_against_sync(env_fns, steps=20, steps_in="workers")
