"""torchpool.gym.VectorEnv against Gymnasium's SyncVectorEnv, and Gymnasium/torchrl wrappers on it.

Parity: torchpool and ``SyncVectorEnv`` of the Gymnasium reference run side by
side in the same autoreset mode, with the same actions. torchpool's resets
draw from its own RNG, so whenever an env starts an episode (at the first
reset, and wherever either side reset it) the torchpool env's state
(``pool._core.get_state(i)``) is copied into the reference env, and that row
of the reference's observation is recomputed by the reference's own
observation code. Everything else must agree exactly: observations
(torchpool's float64, cast to float32, against the reference's float32),
rewards (as float32), terminations, truncations, the info keys and masks, and
``final_obs`` in SAME_STEP mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import torchpool
import torchpool.gym
from torchpool.gym import VectorEnv

NUM_ENVS = 4

# The reference's observation of its current (injected) state, by its own code.
REFERENCE_OBSERVATION: dict[str, Callable[[Any], np.ndarray]] = {
    "CartPole-v1": lambda env: np.array(env.state, dtype=np.float32),
    "Pendulum-v1": lambda env: env._get_obs(),
    "MountainCar-v0": lambda env: np.array(env.state, dtype=np.float32),
    "MountainCarContinuous-v0": lambda env: np.array(env.state, dtype=np.float32),
    "Acrobot-v1": lambda env: env._get_ob(),
}
CLASSIC = sorted(REFERENCE_OBSERVATION)
MODES = [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED]


def _sample_actions(space: gymnasium.Space, rng: np.random.Generator) -> np.ndarray:
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return rng.integers(0, space.nvec, dtype=np.int64)
    # float64, as in tests/test_classic_parity.py: with a float32 action NumPy 2
    # computes part of the reference's step in float32, which torchpool's
    # parity (float64 actions) does not cover.
    return rng.uniform(space.low, space.high).astype(np.float64)


def _inject(ours: VectorEnv, ref: SyncVectorEnv, rows: np.ndarray, ref_obs: np.ndarray, env_id: str) -> None:
    """Copies torchpool's state of each env in ``rows`` into the reference, and fixes its observation row."""
    for i in np.flatnonzero(rows):
        ref.envs[i].unwrapped.state = np.array(ours.pool._core.get_state(int(i)), dtype=np.float64)
        ref_obs[i] = REFERENCE_OBSERVATION[env_id](ref.envs[i].unwrapped)


def _assert_same_step(where: str, ours: tuple, ref: tuple) -> None:
    obs, reward, terminated, truncated, _ = ours
    ref_obs, ref_reward, ref_terminated, ref_truncated, _ = ref
    assert obs.dtype == np.float64 and ref_obs.dtype == np.float32
    assert np.array_equal(obs.astype(np.float32), ref_obs), (
        f"{where}: observations differ\n  torchpool {obs.astype(np.float32).tolist()}\n  gymnasium {ref_obs.tolist()}")
    assert reward.dtype == np.float32 and np.array_equal(reward, ref_reward.astype(np.float32)), (
        f"{where}: rewards torchpool {reward.tolist()} gymnasium {ref_reward.tolist()}")
    assert np.array_equal(terminated, ref_terminated), (
        f"{where}: terminations torchpool {terminated.tolist()} gymnasium {ref_terminated.tolist()}")
    assert np.array_equal(truncated, ref_truncated), (
        f"{where}: truncations torchpool {truncated.tolist()} gymnasium {ref_truncated.tolist()}")


def _assert_same_info(where: str, info: dict, ref_info: dict) -> None:
    assert sorted(info) == sorted(ref_info), f"{where}: info keys torchpool {sorted(info)} gymnasium {sorted(ref_info)}"
    for key in info:
        if key.startswith("_"):
            assert np.array_equal(info[key], ref_info[key]), (
                f"{where}: info[{key!r}] torchpool {info[key]} gymnasium {ref_info[key]}")
    if "final_obs" in info:
        assert info["final_info"] == ref_info["final_info"] == {}, f"{where}: final_info {info['final_info']}"
        for i, (ours, ref) in enumerate(zip(info["final_obs"], ref_info["final_obs"])):
            if ref is None:
                assert ours is None, f"{where}: final_obs[{i}] is {ours}, gymnasium has None"
                continue
            assert np.array_equal(ours.astype(np.float32), ref), (
                f"{where}: final_obs[{i}] torchpool {ours.astype(np.float32).tolist()} gymnasium {ref.tolist()}")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("env_id", CLASSIC)
def test_matches_sync_vector_env(env_id: str, mode: AutoresetMode):
    max_steps, num_steps, seed = 15, 120, 5
    label = f"{env_id} {mode.value}"
    rng = np.random.default_rng(seed)
    ours = VectorEnv(env_id, NUM_ENVS, autoreset_mode=mode, obs_dtype=torch.float64, max_episode_steps=max_steps,
                     seed=seed)
    ref = SyncVectorEnv([lambda: gymnasium.make(env_id, max_episode_steps=max_steps, disable_env_checker=True)]
                        * NUM_ENVS, autoreset_mode=mode)
    try:
        assert ours.metadata["autoreset_mode"] is mode and ours.autoreset_mode is mode
        obs, info = ours.reset(seed=seed)
        ref_obs, ref_info = ref.reset(seed=seed)
        _inject(ours, ref, np.ones(NUM_ENVS, dtype=bool), ref_obs, env_id)
        assert np.array_equal(obs.astype(np.float32), ref_obs) and info == ref_info == {}, f"{label}: first reset"
        ended_before = np.zeros(NUM_ENVS, dtype=bool)
        endings = 0
        for t in range(num_steps):
            where = f"{label} step {t}"
            actions = _sample_actions(ours.action_space, rng)
            out = ours.step(actions)
            ref_out = ref.step(actions)
            done = out[2] | out[3]
            # Rows the reference reset with its own RNG inside this step.
            fresh = {AutoresetMode.SAME_STEP: done, AutoresetMode.NEXT_STEP: ended_before,
                     AutoresetMode.DISABLED: np.zeros(NUM_ENVS, dtype=bool)}[mode]
            _inject(ours, ref, fresh, ref_out[0], env_id)
            _assert_same_step(where, out, ref_out)
            _assert_same_info(where, out[4], ref_out[4])
            endings += int(done.sum())
            ended_before = done
            if mode is AutoresetMode.DISABLED and done.any():
                obs, info = ours.reset(options={"reset_mask": done.copy()})
                ref_obs, ref_info = ref.reset(options={"reset_mask": done.copy()})
                _inject(ours, ref, done, ref_obs, env_id)
                assert np.array_equal(obs.astype(np.float32), ref_obs), f"{where}: partial reset observations"
                _assert_same_info(where + " partial reset", info, ref_info)
        assert endings >= NUM_ENVS, f"{label}: only {endings} episodes ended in {num_steps} steps"
    finally:
        ours.close()
        ref.close()


@pytest.mark.parametrize("env_id", CLASSIC)
def test_spaces_match_sync_vector_env(env_id: str):
    ref = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync")
    with torchpool.gym.VectorEnv(env_id, 3) as ours:
        for name in ("single_observation_space", "single_action_space", "observation_space", "action_space"):
            assert getattr(ours, name) == getattr(ref, name), (
                f"{env_id} {name}: torchpool {getattr(ours, name)} gymnasium {getattr(ref, name)}")
    ref.close()


def test_make_vec_builds_a_vector_env_for_every_registered_id():
    ids = torchpool.gym.register_envs()
    assert ids == [f"torchpool/{env_id}" for env_id in torchpool.list_envs()]
    for gym_id in ids:
        assert gymnasium.spec(gym_id).vector_entry_point == "torchpool.gym:VectorEnv", gym_id
    envs = gymnasium.make_vec("torchpool/CartPole-v1", num_envs=8, vectorization_mode="vector_entry_point", seed=3)
    try:
        assert isinstance(envs, gymnasium.vector.VectorEnv) and isinstance(envs, VectorEnv)
        assert envs.num_envs == 8 and envs.pool.num_envs == 8 and envs.spec.id == "torchpool/CartPole-v1"
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # Gymnasium's default
        obs, _ = envs.reset()
        assert obs.shape == (8, 4) and obs.dtype == np.float32
    finally:
        envs.close()
    # The "module:id" form imports torchpool.gym itself, for scripts that never do.
    envs = gymnasium.make_vec("torchpool.gym:torchpool/Pendulum-v1", num_envs=2, autoreset_mode="SameStep")
    assert envs.autoreset_mode is AutoresetMode.SAME_STEP and envs.pool.autoreset == "same_step"
    envs.close()


def test_make_vec_takes_autoreset_mode_as_a_keyword_as_the_readme_shows():
    envs = gymnasium.make_vec("torchpool/CartPole-v1", num_envs=8, autoreset_mode=AutoresetMode.SAME_STEP,
                              max_episode_steps=3, seed=0)
    try:
        assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP and envs.pool.autoreset == "same_step"
        envs.reset()
        for _ in range(3):
            obs, _, _, truncated, info = envs.step(np.zeros(8, dtype=np.int64))
        assert truncated.all() and "final_obs" in info, "SAME_STEP reports the last observations in the ending step"
        assert not np.array_equal(np.stack(info["final_obs"]), obs), "and returns the new episodes' first"
    finally:
        envs.close()
    # Gymnasium passes vector_kwargs only to its own SyncVectorEnv/AsyncVectorEnv (docs/adapters.md says so).
    with pytest.raises(gymnasium.error.Error, match="vector_kwargs"):
        gymnasium.make_vec("torchpool/CartPole-v1", num_envs=2, vector_kwargs={"autoreset_mode": "SameStep"})


def test_gymnasiums_vector_wrappers_take_a_renamed_id_unchanged():
    # NormalizeObservation refuses SAME_STEP; with Gymnasium's default mode it works as on SyncVectorEnv.
    from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

    envs = RecordEpisodeStatistics(NormalizeObservation(gymnasium.make_vec("torchpool/CartPole-v1", num_envs=4)))
    try:
        envs.reset(seed=0)
        for _ in range(50):
            obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
        assert obs.shape == (4, 4) and np.isfinite(obs).all()
    finally:
        envs.close()


def test_partial_reset_with_seed_matches_a_full_reset_with_that_seed():
    mask = np.array([True, False, True, False])
    options = {"reset_mask": mask}
    with VectorEnv("CartPole-v1", 4, seed=0) as envs, VectorEnv("CartPole-v1", 4, seed=0) as fresh:
        before, _ = envs.reset()
        before = before.copy()
        after, info = envs.reset(seed=7, options=options)
        reseeded, _ = fresh.reset(seed=7)
        # SyncVectorEnv seeds env i with seed + i under a mask too.
        assert np.array_equal(after[mask], reseeded[mask]), f"reset rows {after[mask]} != seed-7 rows {reseeded[mask]}"
        assert np.array_equal(after[~mask], before[~mask]), "rows outside reset_mask changed"
        assert info == {} and options == {"reset_mask": mask}, "reset() must not consume the caller's options"
        with pytest.raises(ValueError, match="at least one True"):
            envs.reset(options={"reset_mask": np.zeros(4, dtype=bool)})
        with pytest.raises(ValueError, match="no reset options"):
            envs.reset(options={"low": -0.1})


def test_torch_outputs():
    with VectorEnv("CartPole-v1", 3, array_type="torch", max_episode_steps=2, seed=0,
                   autoreset_mode=AutoresetMode.SAME_STEP) as envs:
        obs, info = envs.reset()
        assert isinstance(obs, torch.Tensor) and obs.shape == (3, 4) and obs.dtype == torch.float32
        envs.step(torch.ones(3, dtype=torch.int64))
        obs, reward, terminated, truncated, info = envs.step(torch.ones(3, dtype=torch.int64))
        assert reward.dtype == torch.float32 and terminated.dtype == truncated.dtype == torch.bool
        assert truncated.all() and info["_final_obs"].all() and info["_final_info"].all()
        # The batch of final observations: two steps to the right from a near-zero start.
        assert isinstance(info["final_obs"], torch.Tensor) and info["final_obs"].shape == (3, 4)
        assert not torch.equal(info["final_obs"], obs) and (info["final_obs"][:, 1] > 0.2).all(), info["final_obs"]


def _as_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.numpy()
    if isinstance(value, tuple):
        return tuple(_as_numpy(item) for item in value)
    if hasattr(value, "items"):  # a dict or a TensorDict
        return {key: _as_numpy(item) for key, item in value.items()}
    return value


def _assert_equal(where: str, got: Any, want: Any) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{where}: {got} against {want}"
        for i, (mine, theirs) in enumerate(zip(got, want)):
            _assert_equal(f"{where}[{i}]", mine, theirs)
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys {list(got)} against {list(want)}"
        for key in want:
            _assert_equal(f"{where}[{key!r}]", got[key], want[key])
    elif isinstance(want, np.ndarray) and want.dtype == object:  # final_obs: an env's observation or None
        for i, (mine, theirs) in enumerate(zip(got, want)):
            _assert_equal(f"{where}[{i}]", mine, theirs)
    else:
        assert (got is None) == (want is None), f"{where}: {got} against {want}"
        if want is not None:
            assert np.asarray(got).dtype == np.asarray(want).dtype and np.array_equal(got, want), (
                f"{where}: {got} against {want}")


def _object_rows(batch: Any, rows: np.ndarray) -> np.ndarray:
    """torch outputs' batch of final observations laid out as NumPy outputs give them (SyncVectorEnv's): an
    object array of each ended env's own observation, None elsewhere."""
    out = np.full(len(rows), None, dtype=object)
    for i in np.flatnonzero(rows):
        out[i] = {key: value[i] for key, value in batch.items()} if isinstance(batch, dict) else batch[i]
    return out


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED], ids=lambda m: m.value)
@pytest.mark.parametrize("env_id, kwargs", [("Pong-v5", {"max_episode_steps": 3}),  # extras: lives, raw_reward, ...
                                            ("_Probe-v0", {"dict_observation": True, "episode_length": 2})],
                         ids=["extras", "named fields"])
def test_numpy_outputs_equal_torch_outputs_step_for_step(env_id, kwargs, mode):
    # NumPy outputs take their own path (Pool.step_arrays); the torch one reads the TensorDict. The same pool
    # twice, seeded alike: everything step() and reset() return must agree, info and final_obs included.
    if env_id == "Pong-v5":
        pytest.importorskip("ale_py")
    numpy_env = VectorEnv(env_id, 2, autoreset_mode=mode, seed=3, **kwargs)
    torch_env = VectorEnv(env_id, 2, autoreset_mode=mode, seed=3, array_type="torch", **kwargs)
    try:
        _assert_equal("reset", numpy_env.reset(), _as_numpy(torch_env.reset()))
        ended = 0
        for t in range(8):
            actions = np.stack([numpy_env.single_action_space.sample() for _ in range(2)])
            if env_id == "_Probe-v0":
                actions = actions % 50
            got, want = numpy_env.step(actions), torch_env.step(torch.from_numpy(actions))
            want = _as_numpy(want)
            if "final_obs" in want[4]:
                want[4]["final_obs"] = _object_rows(want[4]["final_obs"], want[4]["_final_obs"])
            _assert_equal(f"step {t}", got, want)
            done = got[2] | got[3]
            ended += int(done.sum())
            if mode is AutoresetMode.DISABLED and done.any():
                mask = done.copy()  # where one env ended, the other's row must stay as it was
                _assert_equal(f"reset after step {t}", numpy_env.reset(options={"reset_mask": mask}),
                              _as_numpy(torch_env.reset(options={"reset_mask": torch.from_numpy(mask)})))
        assert ended >= 2, f"only {ended} episode ends: the final infos went untested"
    finally:
        numpy_env.close()
        torch_env.close()


def test_numpy_outputs_are_the_callers_own_dict():
    with VectorEnv("_Probe-v0", 2, dict_observation=True, seed=0) as envs:
        envs.reset()
        first = envs.step(np.zeros(2, dtype=np.int64))[0]
        first.clear()
        second = envs.step(np.zeros(2, dtype=np.int64))[0]
        assert list(second) == list(envs.single_observation_space.spaces), "clearing a returned dict changed the next"


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        VectorEnv("CartPole-v1", 4, batch_size=2)
    with pytest.raises(ValueError, match="autoreset_mode"):
        VectorEnv("CartPole-v1", 4, autoreset_mode="sometimes")
    with pytest.raises(ValueError, match="contradicts"):
        VectorEnv("CartPole-v1", 4, autoreset_mode=AutoresetMode.DISABLED, autoreset="same_step")
    with pytest.raises(ValueError, match="device"):
        VectorEnv("CartPole-v1", 4, device="cpu")


# ---- wrappers ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP], ids=lambda m: m.value)
def test_record_episode_statistics(mode: AutoresetMode):
    max_steps = 12
    envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(
        VectorEnv("CartPole-v1", NUM_ENVS, autoreset_mode=mode, max_episode_steps=max_steps, seed=1))
    envs.reset()
    rng = np.random.default_rng(0)
    episodes = []
    for _ in range(200):
        _, _, terminated, truncated, info = envs.step(rng.integers(0, 2, NUM_ENVS))
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                episodes.append((float(info["episode"]["r"][i]), int(info["episode"]["l"][i]),
                                 bool(terminated[i]), bool(truncated[i])))
    envs.close()
    assert len(episodes) >= 2 * NUM_ENVS, f"{mode.value}: only {len(episodes)} episodes recorded"
    assert any(e[2] for e in episodes) and any(e[3] and not e[2] for e in episodes), "want both kinds of ending"
    for r, length, _terminated, truncated in episodes:
        # CartPole pays 1 per step: a return that is not the length means a
        # reset step was counted (NEXT_STEP) or an episode was not cut (SAME_STEP).
        assert r == length, f"{mode.value}: episode return {r} over {length} steps"
        assert length == max_steps if truncated else length < max_steps, (
            f"{mode.value}: an episode {'truncated' if truncated else 'terminated'} after {length} steps")


class _Recorder(gymnasium.vector.VectorWrapper):
    """Keeps every observation the inner env returns."""

    def __init__(self, env):
        super().__init__(env)
        self.seen: list[np.ndarray] = []

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.seen.append(obs.copy())
        return obs, info

    def step(self, actions):
        out = self.env.step(actions)
        self.seen.append(out[0].copy())
        return out


def test_normalize_observation():
    with pytest.raises(ValueError, match="NEXT_STEP"):  # Gymnasium refuses same-step envs
        gymnasium.wrappers.vector.NormalizeObservation(VectorEnv("CartPole-v1", 2, autoreset_mode="same_step"))
    recorder = _Recorder(VectorEnv("CartPole-v1", NUM_ENVS, autoreset_mode=AutoresetMode.NEXT_STEP, seed=2))
    envs = gymnasium.wrappers.vector.NormalizeObservation(recorder)
    envs.reset()
    rng = np.random.default_rng(0)
    for _ in range(150):
        obs, *_ = envs.step(rng.integers(0, 2, NUM_ENVS))
    raw = np.concatenate(recorder.seen)
    rms = envs.obs_rms
    assert np.allclose(rms.mean, raw.mean(axis=0), rtol=1e-4, atol=1e-6), f"running mean {rms.mean} vs {raw.mean(0)}"
    assert np.allclose(rms.var, raw.var(axis=0), rtol=1e-3, atol=1e-6), f"running var {rms.var} vs {raw.var(0)}"
    want = ((recorder.seen[-1] - rms.mean) / np.sqrt(rms.var + envs.epsilon)).astype(np.float32)
    assert obs.dtype == np.float32 and np.array_equal(obs, want)
    envs.close()


def _is_reset_state(obs: torch.Tensor) -> torch.Tensor:
    return (obs.abs() <= 0.05).all(-1)


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED], ids=lambda m: m.value)
def test_torchrl_gym_wrapper(mode: AutoresetMode):
    from torchrl.envs import GymWrapper

    max_steps = 10
    env = GymWrapper(VectorEnv("CartPole-v1", NUM_ENVS, autoreset_mode=mode, max_episode_steps=max_steps, seed=4))
    torch.manual_seed(0)
    rollout = env.rollout(60, break_when_any_done=False)
    env.close()
    assert rollout.batch_size == (NUM_ENVS, 60), rollout.batch_size
    done = rollout["next", "done"].squeeze(-1)
    terminated = rollout["next", "terminated"].squeeze(-1)
    truncated = rollout["next", "truncated"].squeeze(-1)
    assert terminated.any() and (truncated & ~terminated).any(), "want both kinds of ending"
    last = rollout["next", "observation"][done]
    fell = (last[:, 0].abs() > 2.4) | (last[:, 2].abs() > 12 * 2 * np.pi / 360)
    # The transition into a done carries the true last observation (final_obs
    # in SAME_STEP mode, the reset_mask reset in DISABLED mode)...
    assert torch.equal(fell, terminated[done]), "a terminated row's next observation is not a fallen pole"
    assert not _is_reset_state(last).any(), "a done row's next observation is a reset state"
    # ...and the step after starts from a reset state.
    starts = rollout["observation"][:, 1:][done[:, :-1]]
    assert _is_reset_state(starts).all(), f"steps after a done start from {starts}"
    # Episodes last at most max_steps; truncated ones exactly that.
    for i in range(NUM_ENVS):
        ends = torch.nonzero(done[i]).flatten().tolist()
        lengths = np.diff([-1] + ends)
        for end, length in zip(ends, lengths):
            assert (length == max_steps) if truncated[i, end] else (length < max_steps), (
                f"env {i}: an episode ended at step {end} after {length} steps")
