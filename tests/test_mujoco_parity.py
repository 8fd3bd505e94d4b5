"""Step-for-step parity of the MuJoCo tasks with Gymnasium's v5 and v4 envs, by state injection.

Each torchpool env i runs beside its own reference ``gymnasium.make(env_id)``
(TimeLimit included) with the same kwargs. torchpool's resets draw from its
own RNG, so at every episode start the torchpool env's reset state (qpos,
qvel: ``pool._core.get_state(i)``) is copied into the reference with
``env.unwrapped.set_state(qpos, qvel)`` right after the reference's own reset
(which, like torchpool's, starts from ``mj_resetData``). Both then get the
same random float64 actions, a sixth of them beyond the control range (the
reference does not clip; MuJoCo clamps ``ctrl`` inside the step and the
control cost sees the raw action), for whole episodes across terminations and
time limits. At every step:

- the float64 observation (``final_observation`` where the episode ended)
  within ``OBS_TOL`` of the reference's, and the first observation of every
  new episode within ``OBS_TOL`` of the reference's after the injection;
- the reward (float32 by contract) within one float32 rounding of the
  reference's, and each float64 info extra (``reward_forward``,
  ``x_velocity``, …) within ``INFO_TOL`` of the reference's ``info``;
- terminated and truncated exactly; ``unstable`` never set;
- the extras are the keys of the reference's step ``info``, no more and no
  fewer, and on the rows of ``pool.reset()`` they hold the reference's reset
  info (``_get_reset_info()`` after the injection; v4 has none) and 0 for the
  step-only values.

The -v4 ids run against Gymnasium's -v4 envs exactly as the v5 ones against
-v5 (the same ``CASES``; docs/parity.md lists how v4 differs).

The same libmujoco runs both sides, so the state agrees bit for bit; the
tolerances leave room only for NumPy's own kernels (BLAS norms, SIMD sin/cos).
The largest differences seen are asserted small and printed with ``-s``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("mujoco")

from mujoco_reference import make_reference  # noqa: E402

import torchpool  # noqa: E402

OBS_TOL = 1e-6
INFO_TOL = 1e-6
NUM_ENVS = 2

# gymnasium.make("<Task>-v4") warns that v5 exists.
pytestmark = pytest.mark.filterwarnings("ignore:.*is out of date:DeprecationWarning")


@pytest.fixture(autouse=True)
def _mujoco_log_in_tmp(tmp_path, monkeypatch):
    # MuJoCo appends its warnings (e.g. half_cheetah.xml's deprecated
    # settotalmass) to MUJOCO_LOG.TXT in the working directory.
    monkeypatch.chdir(tmp_path)


@dataclass(frozen=True)
class Case:
    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    steps: int = 500
    max_episode_steps: int | None = None  # None: the reference's
    can_terminate: bool = True
    seed: int | None = None  # None: the case's index in CASES

    def __str__(self) -> str:
        return f"{self.env_id}{self.kwargs or ''}"


# Each task with its defaults and with one variant changing most of its kwargs.
# Tasks that never terminate get a shorter time limit, so episodes end.
CASES = [
    Case("Ant-v5", steps=500),
    Case("Ant-v5", {"frame_skip": 4, "forward_reward_weight": 2.0, "ctrl_cost_weight": 0.3,
                    "contact_cost_weight": 1e-3, "healthy_reward": 0.5, "main_body": "torso",
                    "healthy_z_range": (0.3, 0.9), "contact_force_range": (-0.5, 2.0), "reset_noise_scale": 0.2,
                    "exclude_current_positions_from_observation": False,
                    "include_cfrc_ext_in_observation": False}, steps=500),
    Case("HalfCheetah-v5", max_episode_steps=150, can_terminate=False),
    Case("HalfCheetah-v5", {"frame_skip": 3, "forward_reward_weight": 2.0, "ctrl_cost_weight": 0.2,
                            "reset_noise_scale": 0.2, "exclude_current_positions_from_observation": False},
         max_episode_steps=150, can_terminate=False),
    Case("Hopper-v5"),
    Case("Hopper-v5", {"frame_skip": 5, "forward_reward_weight": 0.5, "ctrl_cost_weight": 0.01,
                       "healthy_reward": 2.0, "healthy_state_range": (-50.0, 50.0), "healthy_z_range": (0.8, 2.0),
                       "healthy_angle_range": (-0.3, 0.3), "reset_noise_scale": 0.01,
                       "exclude_current_positions_from_observation": False}),
    Case("Walker2d-v5"),
    Case("Walker2d-v5", {"xml_file": "walker2d.xml", "frame_skip": 5, "forward_reward_weight": 0.5,
                         "ctrl_cost_weight": 0.01, "healthy_reward": 2.0, "healthy_z_range": (0.9, 2.0),
                         "healthy_angle_range": (-0.8, 0.8), "reset_noise_scale": 0.01,
                         "exclude_current_positions_from_observation": False}),
    Case("Humanoid-v5", steps=250),
    Case("Humanoid-v5", {"frame_skip": 4, "forward_reward_weight": 1.0, "ctrl_cost_weight": 0.2,
                         "contact_cost_weight": 1e-6, "contact_cost_range": (-1.0, 5.0), "healthy_reward": 4.0,
                         "healthy_z_range": (1.1, 2.0), "reset_noise_scale": 0.02,
                         "exclude_current_positions_from_observation": False,
                         "include_cinert_in_observation": False, "include_cvel_in_observation": False},
         steps=250),
    Case("HumanoidStandup-v5", steps=250, max_episode_steps=50, can_terminate=False),
    Case("HumanoidStandup-v5", {"frame_skip": 4, "uph_cost_weight": 2.0, "ctrl_cost_weight": 0.2,
                                "impact_cost_weight": 1e-6, "impact_cost_range": (-1.0, 5.0),
                                "reset_noise_scale": 0.02, "include_qfrc_actuator_in_observation": False,
                                "include_cfrc_ext_in_observation": False},
         steps=250, max_episode_steps=50, can_terminate=False),
    Case("Swimmer-v5", max_episode_steps=150, can_terminate=False),
    Case("Swimmer-v5", {"frame_skip": 2, "forward_reward_weight": 2.0, "ctrl_cost_weight": 1e-3,
                        "reset_noise_scale": 0.2, "exclude_current_positions_from_observation": False},
         max_episode_steps=150, can_terminate=False),
    Case("Reacher-v5", steps=200, can_terminate=False),
    Case("Reacher-v5", {"frame_skip": 3, "reward_dist_weight": 2.0, "reward_control_weight": 0.5},
         steps=200, can_terminate=False),
    Case("Pusher-v5", steps=250, can_terminate=False),
    Case("Pusher-v5", {"xml_file": "pusher.xml", "frame_skip": 4, "reward_near_weight": 1.0,
                       "reward_dist_weight": 2.0, "reward_control_weight": 0.2}, steps=250, can_terminate=False),
    Case("InvertedPendulum-v5", max_episode_steps=100),
    Case("InvertedPendulum-v5", {"frame_skip": 3, "reset_noise_scale": 0.05}, max_episode_steps=100),
    Case("InvertedDoublePendulum-v5", max_episode_steps=100),
    Case("InvertedDoublePendulum-v5", {"frame_skip": 3, "healthy_reward": 5.0, "reset_noise_scale": 0.2},
         max_episode_steps=100),
    # The -v4 ids against gymnasium.make("<Task>-v4"), each with its defaults and a variant of most of its
    # kwargs (v4 takes no frame_skip, and an xml_file only for Ant).
    Case("Ant-v4", seed=0),  # Ant-v5's seed: the same episodes (v4's defaults simulate alike), which terminate
    Case("Ant-v4", {"xml_file": "ant.xml", "ctrl_cost_weight": 0.3, "use_contact_forces": True,
                    "contact_cost_weight": 1e-3, "healthy_reward": 0.5, "healthy_z_range": (0.3, 0.9),
                    "contact_force_range": (-0.5, 2.0), "reset_noise_scale": 0.2,
                    "exclude_current_positions_from_observation": False}),
    Case("HalfCheetah-v4", max_episode_steps=150, can_terminate=False),
    Case("HalfCheetah-v4", {"forward_reward_weight": 2.0, "ctrl_cost_weight": 0.2, "reset_noise_scale": 0.2,
                            "exclude_current_positions_from_observation": False},
         max_episode_steps=150, can_terminate=False),
    Case("Hopper-v4"),
    Case("Hopper-v4", {"forward_reward_weight": 0.5, "ctrl_cost_weight": 0.01, "healthy_reward": 2.0,
                       "healthy_state_range": (-50.0, 50.0), "healthy_z_range": (0.8, 2.0),
                       "healthy_angle_range": (-0.3, 0.3), "reset_noise_scale": 0.01,
                       "exclude_current_positions_from_observation": False}),
    # Unhealthy steps that do not terminate: v4 pays the healthy reward only while healthy, as v5 does.
    Case("Hopper-v4", {"terminate_when_unhealthy": False}, steps=300, max_episode_steps=100, can_terminate=False),
    Case("Walker2d-v4"),
    Case("Walker2d-v4", {"forward_reward_weight": 0.5, "ctrl_cost_weight": 0.01, "healthy_reward": 2.0,
                         "healthy_z_range": (0.9, 2.0), "healthy_angle_range": (-0.8, 0.8), "reset_noise_scale": 0.01,
                         "exclude_current_positions_from_observation": False}),
    Case("Humanoid-v4", steps=250),
    Case("Humanoid-v4", {"forward_reward_weight": 1.0, "ctrl_cost_weight": 0.2, "healthy_reward": 4.0,
                         "healthy_z_range": (1.1, 2.0), "reset_noise_scale": 0.02,
                         "exclude_current_positions_from_observation": False}, steps=250),
    # The v4 tasks whose constructors take no kwargs (Swimmer's those of v5 less xml_file and frame_skip).
    Case("HumanoidStandup-v4", steps=150, max_episode_steps=50, can_terminate=False),
    Case("InvertedDoublePendulum-v4", max_episode_steps=100),
    Case("InvertedPendulum-v4", max_episode_steps=100),
    Case("Pusher-v4", steps=250, can_terminate=False),  # (its reference: tests/mujoco_reference.py)
    Case("Reacher-v4", steps=200, can_terminate=False),
    Case("Swimmer-v4", {"forward_reward_weight": 2.0, "ctrl_cost_weight": 1e-3, "reset_noise_scale": 0.2,
                        "exclude_current_positions_from_observation": False}, max_episode_steps=150,
         can_terminate=False),
]


@dataclass
class Seen:
    terminations: int = 0
    truncations: int = 0
    max_obs_error: float = 0.0
    max_info_error: float = 0.0
    max_reward_error: float = 0.0  # |float32 reward - reference|


def _floats(value: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(value, dtype=np.float64))


def _run_parity(case: Case, seed: int) -> Seen:
    make_kwargs = {} if case.max_episode_steps is None else {"max_episode_steps": case.max_episode_steps}
    pool = torchpool.make(case.env_id, num_envs=NUM_ENVS, obs_dtype=torch.float64, seed=seed, **make_kwargs,
                          **case.kwargs)
    refs = [make_reference(case.env_id, disable_env_checker=True, **make_kwargs, **case.kwargs)
            for _ in range(NUM_ENVS)]
    rng = np.random.default_rng(seed)
    seen = Seen()
    info_keys = [key for key in pool.reset().keys() if key not in
                 {"observation", "reward", "terminated", "truncated", "done", "env_id", "episode_return",
                  "episode_length", "final_observation", "unstable"}]
    nq = refs[0].unwrapped.model.nq
    low = refs[0].action_space.low.astype(np.float64)
    high = refs[0].action_space.high.astype(np.float64)

    def start_episode(i: int, first_observation: np.ndarray, where: str) -> None:
        state = np.array(pool._core.get_state(i))
        refs[i].reset(seed=seed + i)
        refs[i].unwrapped.set_state(state[:nq], state[nq:])
        want = refs[i].unwrapped._get_obs()
        error = float(np.max(np.abs(first_observation - want), initial=0.0))
        assert error <= OBS_TOL, (
            f"{where}: the first observation of an episode differs by {error:.3g}:\n"
            f"  torchpool {first_observation.tolist()}\n  gymnasium {want.tolist()}")
        seen.max_obs_error = max(seen.max_obs_error, error)

    def check_reset_info(i: int, extras: dict[str, np.ndarray], where: str) -> None:
        # A reset row's extras: the reference's reset info for the injected state, 0 for the step-only values.
        reset_info = refs[i].unwrapped._get_reset_info()
        assert set(reset_info) <= set(info_keys), (
            f"{where}: the reference's reset info has {sorted(reset_info)}, torchpool's extras {sorted(info_keys)}")
        for key in info_keys:
            got = _floats(extras[key])
            want = _floats(reset_info[key]) if key in reset_info else np.zeros_like(got)
            error = float(np.max(np.abs(got - want), initial=0.0))
            assert got.shape == want.shape and error <= INFO_TOL, (
                f"{where}: reset info[{key!r}] torchpool={got.tolist()} gymnasium={want.tolist()}")

    try:
        td = pool.reset()
        for i in range(NUM_ENVS):
            start_episode(i, td["observation"][i].numpy().copy(), f"{case} env {i} reset")
            check_reset_info(i, {key: td[key][i].numpy().copy() for key in info_keys}, f"{case} env {i} reset")
        del td
        for t in range(case.steps):
            # Uniform over 1.2x the control range: a sixth of the values lie outside it.
            span = (high - low) * 0.1
            actions = rng.uniform(low - span, high + span, size=(NUM_ENVS, len(low)))
            td = pool.step(torch.from_numpy(actions))
            rows = {key: value.numpy().copy() for key, value in td.items()}
            del td
            for i in range(NUM_ENVS):
                where = f"{case} env {i} step {t}"
                ref_obs, ref_reward, ref_terminated, ref_truncated, info = refs[i].step(actions[i].copy())
                done = bool(rows["done"][i])
                assert not rows["unstable"][i], f"{where}: flagged unstable in an ordinary episode"
                assert bool(rows["terminated"][i]) == bool(ref_terminated), (
                    f"{where}: terminated torchpool={bool(rows['terminated'][i])} gymnasium={ref_terminated}")
                assert bool(rows["truncated"][i]) == bool(ref_truncated), (
                    f"{where}: truncated torchpool={bool(rows['truncated'][i])} gymnasium={ref_truncated}")

                observation = rows["final_observation" if done else "observation"][i]
                error = float(np.max(np.abs(observation - ref_obs), initial=0.0))
                assert observation.shape == ref_obs.shape and error <= OBS_TOL, (
                    f"{where}: observation differs by {error:.3g}:\n"
                    f"  torchpool {observation.tolist()}\n  gymnasium {ref_obs.tolist()}")
                seen.max_obs_error = max(seen.max_obs_error, error)

                reward = float(rows["reward"][i])
                reward_error = abs(reward - float(ref_reward))
                # float32 by contract: within one float32 rounding of the reference.
                allowed = INFO_TOL + abs(float(ref_reward)) * 2.0**-23
                assert reward_error <= allowed, (
                    f"{where}: reward torchpool={reward!r} gymnasium={float(ref_reward)!r}")
                seen.max_reward_error = max(seen.max_reward_error, reward_error)

                assert set(info_keys) == set(info), (
                    f"{where}: torchpool's extras {sorted(info_keys)}, gymnasium's info {sorted(info)}")
                for key in info_keys:
                    got, want = _floats(rows[key][i]), _floats(info[key])
                    info_error = float(np.max(np.abs(got - want), initial=0.0))
                    assert got.shape == want.shape and info_error <= INFO_TOL, (
                        f"{where}: info[{key!r}] torchpool={got.tolist()} gymnasium={want.tolist()}")
                    seen.max_info_error = max(seen.max_info_error, info_error)

                if done:
                    seen.terminations += bool(ref_terminated)
                    seen.truncations += bool(ref_truncated)
                    start_episode(i, rows["observation"][i], f"{where} (autoreset)")
    finally:
        pool.close()
        for ref in refs:
            ref.close()
    return seen


@pytest.mark.parametrize("case", CASES, ids=str)
def test_mujoco_task_matches_gymnasium(case: Case):
    seen = _run_parity(case, seed=CASES.index(case) if case.seed is None else case.seed)
    print(f"\n{case}: max |obs diff| {seen.max_obs_error:.3g}, max |info diff| {seen.max_info_error:.3g}, "
          f"max |reward diff| {seen.max_reward_error:.3g} (float32 reward), "
          f"{seen.terminations} terminations, {seen.truncations} truncations")
    if case.can_terminate:
        assert seen.terminations > 0, f"{case}: no episode terminated in {case.steps} steps; the check saw none"
    else:
        assert seen.truncations > 0, f"{case}: no episode reached the time limit in {case.steps} steps"


@pytest.mark.parametrize("env_id", sorted({case.env_id for case in CASES}))
def test_mujoco_default_time_limit_matches_gymnasium(env_id):
    with torchpool.make(env_id, num_envs=1) as pool:
        assert pool.max_episode_steps == gymnasium.spec(env_id).max_episode_steps, (
            f"{env_id}: torchpool's default time limit is {pool.max_episode_steps}, "
            f"gymnasium's is {gymnasium.spec(env_id).max_episode_steps}")


@pytest.mark.parametrize("env_id", sorted({case.env_id for case in CASES}))
def test_mujoco_spaces_match_gymnasium(env_id):
    ref = make_reference(env_id)
    with torchpool.make(env_id, num_envs=1) as pool:
        assert pool.observation_spec.shape == ref.observation_space.shape, env_id
        action_space = pool.action_spec.to_gymnasium()
        assert action_space.shape == ref.action_space.shape, env_id
        assert np.array_equal(action_space.low, ref.action_space.low), env_id
        assert np.array_equal(action_space.high, ref.action_space.high), env_id
    ref.close()


@pytest.mark.parametrize("env_id", sorted({case.env_id for case in CASES}))
def test_mujoco_kwargs_match_gymnasium_constructor(env_id):
    # Every kwarg of the reference's constructor, by name, with its default; rendering's default_camera_config
    # aside (torchpool does not render).
    spec = gymnasium.spec(env_id)
    env_class = gymnasium.envs.registration.load_env_creator(spec.entry_point)
    want = {parameter.name: parameter.default for parameter in inspect.signature(env_class.__init__).parameters.values()
            if parameter.name not in ("self", "default_camera_config")
            and parameter.kind is not inspect.Parameter.VAR_KEYWORD}
    want.update(spec.kwargs)
    got = {name: kwarg.default for name, kwarg in torchpool.registry.lookup(env_id).kwargs.items()}
    assert got == want, f"{env_id}: torchpool's kwargs and defaults {got}, gymnasium's {want}"
