"""Pool.render(): Atari's screen from the emulator (tests/test_atari.py), classic control and MuJoCo drawn by
their Gymnasium reference env from the pool's state; Python envs do not render."""

import gymnasium
import numpy as np
import pytest
import torch

import torchpool


@pytest.mark.parametrize("env_id, actions", [
    ("CartPole-v1", lambda t: torch.tensor([t % 2, (t + 1) % 2])),
    ("Pendulum-v1", lambda t: torch.full((2, 1), 1.5 if t % 6 < 3 else -1.5, dtype=torch.float64)),
    ("Acrobot-v1", lambda t: torch.tensor([t % 3, 2])),
])
def test_classic_control_frames_are_gymnasiums_for_the_same_state(env_id, actions):
    pytest.importorskip("pygame")
    pool = torchpool.make(env_id, num_envs=2, seed=4)
    reference = gymnasium.make(env_id, render_mode="rgb_array")
    try:
        assert pool.renders
        pool.reset()
        reference.reset(seed=0)
        reference.unwrapped.state = np.array(pool._core.get_state(1), dtype=np.float64)  # same start
        for t in range(12):
            action = actions(t)
            pool.step(action)
            reference.step(action[1].numpy() if action.dim() > 1 else int(action[1]))
        if hasattr(reference.unwrapped, "last_u"):
            reference.unwrapped.last_u = None  # torchpool's frame shows the state, not the last torque
        frame = pool.render(1)
        assert frame.dtype == torch.uint8 and frame.shape[-1] == 3
        np.testing.assert_array_equal(frame.numpy(), reference.render())
        assert not np.array_equal(frame.numpy(), pool.render(0).numpy()), "two envs in other states drew alike"
    finally:
        pool.close()
        reference.close()


def test_mujoco_frames_come_from_gymnasiums_renderer():
    pool = torchpool.make("HalfCheetah-v5", num_envs=1)
    try:
        assert pool.renders
        pool.reset()
        try:
            frame = pool.render(0)
        except Exception as error:  # no OpenGL backend (MUJOCO_GL) on this machine
            pytest.skip(f"MuJoCo cannot render here: {type(error).__name__}: {error}")
        assert frame.dtype == torch.uint8 and frame.shape == (480, 480, 3)
    finally:
        pool.close()


def test_python_env_pools_do_not_render():
    with torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=1) as pool:
        pool.reset()
        assert not pool.renders
        with pytest.raises(ValueError, match="this env family does not render"):
            pool.render(0)
