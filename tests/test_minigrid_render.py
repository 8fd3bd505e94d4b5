"""MiniGrid's pixels (csrc/envs/minigrid/render.h) against the installed minigrid, byte for byte.

The frames: ``observation="rgb"`` must be ``RGBImgObsWrapper``'s image and ``"rgb_partial"``
``RGBImgPartialObsWrapper``'s (``ImgObsWrapper`` on top with ``image_only``), every step of random play
across autoresets, at several tile sizes, with and without the highlight; and ``pool.render()`` must be
``env.render()`` of a ``render_mode="rgb_array"`` env in the same state.

The tiles: every (object, colour, door state) x agent direction or none x highlight, drawn by render.h
(through a small program compiled here against it, with the modules' flags) against
``Grid.render_tile``. Random play never shows many of them (a key under the agent, a floor: no
registered env lays one), and minigrid's Python drawing is slow, so the big size is checked without
the agent. (Checked once by hand beyond this: sizes 1, 2, 3, 5, 8, 13, 16 and 32 in full.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

import torchpool

pytest.importorskip("minigrid")  # registers its ids with Gymnasium
from minigrid.core.constants import IDX_TO_COLOR  # noqa: E402
from minigrid.core.grid import Grid  # noqa: E402
from minigrid.core.world_object import Ball, Box, Door, Floor, Goal, Key, Lava, Wall  # noqa: E402
from minigrid.wrappers import ImgObsWrapper, RGBImgObsWrapper, RGBImgPartialObsWrapper  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NUM_ENVS = 2
NUM_STEPS = 150  # per env
MAX_STEPS = 40   # short episodes: more layouts, more autoresets
RENDER_EVERY = 30

# Between them: walls, goals, keys, balls, boxes, lava, doors locked, closed and (toggled) open, moving
# obstacles, see-through-walls envs, a 19x19 grid.
IDS = [
    "MiniGrid-DoorKey-8x8-v0",
    "MiniGrid-LavaCrossingS9N1-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-Dynamic-Obstacles-8x8-v0",
    "MiniGrid-UnlockPickup-v0",
    "MiniGrid-Playground-v0",
    "MiniGrid-Empty-5x5-v0",
    "MiniGrid-FourRooms-v0",
]

# (observation, tile_size, image_only, highlight)
CONFIGS = [
    ("rgb", 8, False, True),
    ("rgb", 32, True, True),
    ("rgb", 5, False, False),
    ("rgb_partial", 8, True, True),
    ("rgb_partial", 32, False, True),
]


def _reference(env_id: str, observation: str, tile_size: int, image_only: bool, kwargs: dict):
    env = gymnasium.make(env_id, disable_env_checker=True, render_mode="rgb_array", **kwargs).unwrapped
    wrapper = RGBImgObsWrapper if observation == "rgb" else RGBImgPartialObsWrapper
    env = wrapper(env, tile_size=tile_size)
    return ImgObsWrapper(env) if image_only else env


def _check_image(ours: np.ndarray, ref: np.ndarray, tile_size: int, where: str) -> None:
    if ours.shape != ref.shape:
        raise AssertionError(f"{where}: shape {ours.shape} != minigrid's {ref.shape}")
    if np.array_equal(ours, ref):
        return
    pixels = np.argwhere((ours != ref).any(-1))
    cells = sorted({(int(x) // tile_size, int(y) // tile_size) for y, x in pixels})
    y, x = pixels[0]
    raise AssertionError(f"{where}: {len(pixels)} pixels differ, in cells (x, y) {cells[:10]}; first at "
                         f"pixel (y={y}, x={x}): ours {ours[y, x].tolist()}, minigrid {ref[y, x].tolist()}")


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-tile{c[1]}-{'img' if c[2] else 'dict'}"
                                                         f"{'' if c[3] else '-nohighlight'}")
@pytest.mark.parametrize("env_id", IDS)
def test_frames_are_minigrids(env_id, config):
    observation, tile_size, image_only, highlight = config
    _compare_frames(env_id, observation, tile_size, image_only, highlight=highlight, max_steps=MAX_STEPS)


@pytest.mark.parametrize("observation", ["rgb", "rgb_partial"])
@pytest.mark.parametrize("view", [3, 9])
def test_other_view_sizes(observation, view):
    _compare_frames("MiniGrid-DoorKey-8x8-v0", observation, 8, False, agent_view_size=view, max_steps=MAX_STEPS)


def _compare_frames(env_id: str, observation: str, tile_size: int, image_only: bool, **kwargs) -> None:
    """Pool and references side by side under the same random actions; every image must be minigrid's."""
    seed = 11
    pool = torchpool.make(env_id, num_envs=NUM_ENVS, seed=seed, observation=observation, tile_size=tile_size,
                          image_only=image_only, **kwargs)
    refs = [_reference(env_id, observation, tile_size, image_only, kwargs) for _ in range(NUM_ENVS)]

    def image(obs):
        return obs if image_only else obs["image"]

    def check(observations, ref_obs, where):
        for i, ref in enumerate(ref_obs):
            _check_image(image(observations)[i].numpy(), image(ref), tile_size, f"{where}, env {i}")

    def check_render(where):
        for i, ref in enumerate(refs):
            _check_image(pool.render(i).numpy(), ref.render(), 32, f"{where}, env {i} render()")

    try:
        td = pool.reset()
        check(td["observation"], [ref.reset(seed=seed + i)[0] for i, ref in enumerate(refs)], f"{env_id} reset")
        check_render(f"{env_id} reset")
        rng = np.random.default_rng(seed)
        for step in range(NUM_STEPS):
            actions = rng.integers(0, pool.action_spec.n, size=NUM_ENVS)
            td = pool.step(torch.from_numpy(actions))
            after = []
            for i, ref in enumerate(refs):
                obs, _, terminated, truncated, _ = ref.step(int(actions[i]))
                where = f"{env_id} env {i} step {step}"
                assert bool(td["terminated"][i]) == terminated and bool(td["truncated"][i]) == truncated, where
                if terminated or truncated:
                    _check_image(image(td["final_observation"])[i].numpy(), image(obs), tile_size, where + " final")
                    obs, _ = ref.reset()
                after.append(obs)
            check(td["observation"], after, f"{env_id} step {step}")
            if step % RENDER_EVERY == 0:
                check_render(f"{env_id} step {step}")
    finally:
        pool.close()
        for ref in refs:
            ref.close()


# --- the tiles -----------------------------------------------------------------------------------

# Reads "tile type colour state agent_dir highlight" lines; writes each tile's bytes.
TILE_PROGRAM = r"""
#include <cstdio>
#include <iostream>
#include "envs/minigrid/render.h"
int main() {
  int tile, type, color, state, dir, highlight;
  while (std::cin >> tile >> type >> color >> state >> dir >> highlight) {
    const auto obj = torchpool::minigrid::Obj::make(type, color, state);
    const uint8_t* pixels = torchpool::minigrid::render_tile(obj, dir, highlight != 0, tile);
    std::fwrite(pixels, 1, static_cast<size_t>(tile) * tile * 3, stdout);
  }
}
"""


def _objects():
    """Every object minigrid draws, with its encode() (type, colour, state)."""
    yield None, (0, 0, 0)
    for c in range(6):
        name = IDX_TO_COLOR[c]
        yield Wall(name), (2, c, 0)
        yield Floor(name), (3, c, 0)
        yield Door(name, is_open=True), (4, c, 0)
        yield Door(name), (4, c, 1)
        yield Door(name, is_locked=True), (4, c, 2)
        yield Key(name), (5, c, 0)
        yield Ball(name), (6, c, 0)
        yield Box(name), (7, c, 0)
        yield Goal(name), (8, c, 0)
    yield Lava(), (9, 0, 0)


@pytest.fixture(scope="module")
def tile_program(tmp_path_factory):
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    folder = tmp_path_factory.mktemp("minigrid_tiles")
    (folder / "tiles.cpp").write_text(TILE_PROGRAM)
    flags = (ROOT / "csrc" / "module_flags.txt").read_text().split()
    subprocess.run([compiler, *flags, "-std=c++20", "-I", str(ROOT / "csrc"), str(folder / "tiles.cpp"), "-o",
                    str(folder / "tiles")], check=True)
    return folder / "tiles"


@pytest.mark.parametrize("tile_size,with_agent", [(1, True), (3, True), (8, True), (32, False)])
def test_tiles_are_minigrids(tile_program, tile_size, with_agent):
    directions = (None, 0, 1, 2, 3) if with_agent else (None,)
    cases = [(obj, key, d, h) for obj, key in _objects() for d in directions for h in (False, True)]
    request = "".join(f"{tile_size} {t} {c} {s} {-1 if d is None else d} {int(h)}\n"
                      for _, (t, c, s), d, h in cases)
    out = subprocess.run([str(tile_program)], input=request.encode(), capture_output=True, check=True).stdout
    size = tile_size * tile_size * 3
    assert len(out) == size * len(cases)
    wrong = []
    for n, (obj, key, d, h) in enumerate(cases):
        ours = np.frombuffer(out[n * size:(n + 1) * size], np.uint8).reshape(tile_size, tile_size, 3)
        ref = np.zeros_like(ours)
        ref[...] = Grid.render_tile(obj, agent_dir=d, highlight=h, tile_size=tile_size)  # Grid.render's uint8
        if not np.array_equal(ours, ref):
            wrong.append(f"{key} agent_dir={d} highlight={h}: {int((ours != ref).any(-1).sum())} pixels")
    assert not wrong, f"tile {tile_size}: {len(wrong)} of {len(cases)} tiles differ: {wrong[:10]}"
