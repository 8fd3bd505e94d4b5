"""Step-for-step parity of the Atari family with ale-py + Gymnasium's preprocessing.

The reference for each case is ``gymnasium.make("ALE/<Game>-v5", frameskip=1,
repeat_action_probability=0)`` wrapped in ``AtariPreprocessing`` (same
frame_skip, size, grayscale; no-op starts and terminal-on-life-loss off) and
``FrameStackObservation`` (padded with the reset frame). torchpool runs with
``noop_max=0, use_fire_reset=False``, so both start every episode identically
and need no shared randomness. Both get the same random actions; the
reference is reset whenever it ends, as torchpool's same-step autoreset does.

Asserted at every step: the observation (uint8, exactly), the reward, and
terminated. The one frame allowed to differ is the last frame of a finished
episode: when the game ends inside the frame skip, AtariPreprocessing stops
before copying the screen and returns the previous observation again, while
torchpool shows the frames reached (csrc/envs/atari/atari.h). The earlier
frames of that final stack, and the next episode's first observation, are
still compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import torch

gymnasium = pytest.importorskip("gymnasium")
ale_py = pytest.importorskip("ale_py")
pytest.importorskip("cv2")

import torchpool  # noqa: E402

if "Pong-v5" not in torchpool.list_envs():
    pytest.skip("torchpool was built without the Atari family", allow_module_level=True)

gymnasium.register_envs(ale_py)


@dataclass(frozen=True)
class Case:
    game: str
    steps: int
    kwargs: dict[str, Any] = field(default_factory=dict)
    min_episodes: int = 1  # episode ends the run must cross


CASES = [
    Case("Breakout", 2500, min_episodes=3),
    # Pong ends at 21 points; random play loses 21-0 in ~3400 steps.
    Case("Pong", 4200, min_episodes=1),
    Case("SpaceInvaders", 2000, {"img_height": 72, "img_width": 60, "stack_num": 2, "frame_skip": 3}),
    Case("Breakout", 600, {"gray_scale": False}, min_episodes=0),
]


def reference(case: Case):
    kwargs = {"img_height": 84, "img_width": 84, "stack_num": 4, "frame_skip": 4, "gray_scale": True, **case.kwargs}
    env = gymnasium.make(f"ALE/{case.game}-v5", frameskip=1, repeat_action_probability=0.0, full_action_space=False)
    env = gymnasium.wrappers.AtariPreprocessing(
        env, noop_max=0, frame_skip=kwargs["frame_skip"], screen_size=(kwargs["img_width"], kwargs["img_height"]),
        terminal_on_life_loss=False, grayscale_obs=kwargs["gray_scale"])
    return gymnasium.wrappers.FrameStackObservation(env, kwargs["stack_num"])


def as_torchpool_layout(observation: np.ndarray) -> np.ndarray:
    # The reference stacks [stack, H, W] (grey) or [stack, H, W, 3] (RGB);
    # torchpool's RGB frames are 3 planes each: [stack * 3, H, W].
    observation = np.asarray(observation)
    if observation.ndim == 4:
        observation = observation.transpose(0, 3, 1, 2).reshape(-1, *observation.shape[1:3])
    return observation


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.game}-{'-'.join(f'{k}={v}' for k, v in c.kwargs.items())}")
def test_matches_ale_py_and_gymnasium_preprocessing(case: Case) -> None:
    pool = torchpool.make(f"{case.game}-v5", num_envs=1, seed=3, noop_max=0, use_fire_reset=False, **case.kwargs)
    ref = reference(case)
    channels = 1 if case.kwargs.get("gray_scale", True) else 3
    rng = np.random.default_rng(0)
    n = pool.action_spec.n
    assert n == ref.action_space.n

    expected, _ = ref.reset(seed=0)
    td = pool.reset()
    np.testing.assert_array_equal(td["observation"][0].numpy(), as_torchpool_layout(expected))

    episodes = 0
    for t in range(case.steps):
        action = int(rng.integers(n))
        td = pool.step(torch.tensor([action]))
        expected, reward, terminated, truncated, _ = ref.step(action)
        expected = as_torchpool_layout(expected)
        assert float(td["reward"][0]) == reward, f"step {t}"
        assert bool(td["terminated"][0]) == terminated, f"step {t}"
        assert not truncated and not bool(td["truncated"][0])
        if terminated:
            episodes += 1
            final = td["final_observation"][0].numpy()
            np.testing.assert_array_equal(final[:-channels], expected[:-channels], err_msg=f"step {t}")
            expected, _ = ref.reset()
            expected = as_torchpool_layout(expected)
        np.testing.assert_array_equal(td["observation"][0].numpy(), expected, err_msg=f"step {t}")
    assert episodes >= case.min_episodes, f"only {episodes} episode ends in {case.steps} steps"
    pool.close()
    ref.close()


def test_bilinear_resize_is_within_one_grey_level_of_opencv() -> None:
    import cv2

    pool = torchpool.make("Breakout-v5", num_envs=1, noop_max=0, use_fire_reset=False, stack_num=1,
                          resize="bilinear", img_height=84, img_width=84)
    ale = ale_py.ALEInterface()
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(ale_py.roms.get_rom_path("breakout"))
    ale.reset_game()
    expected = cv2.resize(ale.getScreenGrayscale(), (84, 84), interpolation=cv2.INTER_LINEAR)
    got = pool.reset()["observation"][0, 0].numpy()
    difference = np.abs(got.astype(int) - expected.astype(int))
    assert difference.max() <= 1, difference.max()
    assert (difference > 0).mean() < 0.05
