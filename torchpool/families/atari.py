"""Atari (csrc/envs/atari, the ``_atari`` module).

Every game whose ROM the installed ale-py ships, as <Game>-v5 with EnvPool's
option names and defaults. ROMs are read from the ale-py package at make()
time; nothing from ALE lives in this repository. The ids are registered on
first need (``registry.register_later``): finding which ROMs ALE plays imports
the module and hashes each ROM, a second of CPU that ``import torchpool``
should not pay.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

from .. import registry
from .._family_modules import FamilyModule
from ..registry import EnvEntry, Kwarg

MODULE = FamilyModule("_atari", extra="atari")
MODULE.declare("Atari")


def ale_roms_dir() -> str:
    """ale_py/roms of the installed ale-py (found without importing it)."""
    spec = importlib.util.find_spec("ale_py")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the Atari games read their ROMs from the ale-py package: pip install ale-py==0.12.0")
    return os.path.join(spec.submodule_search_locations[0], "roms")


def atari_env_id(rom: str) -> str:
    """ALE's ROM name to the env id, as ale-py and EnvPool spell it: ``space_invaders`` -> ``SpaceInvaders-v5``."""
    return "".join(part.capitalize() for part in rom.split("_")) + "-v5"


def rom_files() -> dict[str, str]:
    """ROM name -> path, for every .bin the installed ale-py ships (none without ale-py)."""
    try:
        directory = ale_roms_dir()
        names = os.listdir(directory)
    except FileNotFoundError:
        return {}
    return {name[:-4]: os.path.join(directory, name) for name in names if name.endswith(".bin")}


# The ROMs ale-py 0.12.0 ships that ALE plays only with two players: what the
# MD5 check of playable_roms() leaves out, known without reading a ROM
# (tests/test_registry.py checks the two agree for the pinned ale-py).
ROMS_NOT_SINGLE_PLAYER = frozenset({"combat", "joust", "maze_craze", "warlords"})


def playable_roms() -> list[str]:
    """The ROMs of the installed ale-py that ALE can play single-player (by MD5)."""
    rom_supported = MODULE.load().rom_supported
    return sorted(rom for rom, path in rom_files().items() if rom_supported(path))


def _prepare_atari(rom: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        env_id = atari_env_id(rom)
        checks = [
            ("img_height", 1 <= kwargs["img_height"] <= 210, "in [1, 210] (the screen is 210 x 160)"),
            ("img_width", 1 <= kwargs["img_width"] <= 160, "in [1, 160] (the screen is 210 x 160)"),
            ("stack_num", kwargs["stack_num"] >= 1, "at least 1"),
            ("frame_skip", kwargs["frame_skip"] >= 1, "at least 1"),
            ("noop_max", kwargs["noop_max"] >= 0, "at least 0"),
            ("repeat_action_probability", 0.0 <= kwargs["repeat_action_probability"] <= 1.0, "in [0, 1]"),
            ("resize", kwargs["resize"] in ("area", "bilinear"), "'area' or 'bilinear'"),
            ("preprocessing", kwargs["preprocessing"] in ("gymnasium", "sb3"), "'gymnasium' or 'sb3'"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise ValueError(f"{env_id}: {name} must be {expected}, got {kwargs[name]!r}")
        path = os.path.join(ale_roms_dir(), f"{rom}.bin")
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"{env_id}: no ROM {path}. The ROMs come with ale-py: "
                f"pip install --force-reinstall ale-py==0.12.0")
        return {**kwargs, "rom_path": path}
    return prepare


ATARI_KWARGS = {
    "img_height": Kwarg(int, 84, "observation height"),
    "img_width": Kwarg(int, 84, "observation width"),
    "stack_num": Kwarg(int, 4, "frames stacked into one observation"),
    "gray_scale": Kwarg(bool, True, "grey frames (else RGB: 3 planes per frame)"),
    "frame_skip": Kwarg(int, 4, "emulator frames per step; the last two are max-pooled"),
    "noop_max": Kwarg(int, 30, "reset plays 1..noop_max no-op frames (0: none)"),
    "use_fire_reset": Kwarg(bool, True, "press FIRE once after each reset (games that have FIRE)"),
    "episodic_life": Kwarg(bool, False, "a lost life ends the episode (extras' game_over marks the real end)"),
    "reward_clip": Kwarg(bool, False, "rewards become their sign (extras' raw_reward keeps the score)"),
    "repeat_action_probability": Kwarg(float, 0.0, "sticky actions per frame (0.25: Gymnasium's ALE v5)"),
    "full_action_space": Kwarg(bool, False, "all 18 actions instead of the game's minimal set"),
    "resize": Kwarg(str, "area", "'area' (cv2.INTER_AREA, bit-exact) or 'bilinear'"),
    "preprocessing": Kwarg(str, "gymnasium", "'gymnasium' (AtariPreprocessing's frames) or 'sb3' (SB3's "
                           "AtariWrapper: OpenCV grey of the RGB max, FIRE and lost-life resets as SB3 does them)"),
    "mode": Kwarg(int, -1, "the game's mode (ALE's setMode; -1: the game's default)"),
    "difficulty": Kwarg(int, -1, "the game's difficulty (ALE's setDifficulty; -1: the game's default)"),
}


def _register_ids() -> None:
    if MODULE.built():
        for rom in playable_roms():
            MODULE.register(EnvEntry(atari_env_id(rom), "Atari", dict(ATARI_KWARGS), observation="image",
                                     reference=f"ALE/{atari_env_id(rom)}", prepare=_prepare_atari(rom)))


def _ids_unchecked() -> list[str]:
    """The ids without asking ALE which ROMs it plays: the installed ROMs' names, less the two-player ones."""
    if not MODULE.built():
        return []
    return [atari_env_id(rom) for rom in rom_files() if rom not in ROMS_NOT_SINGLE_PLAYER]


def _explain(env_id: str) -> str | None:
    if not env_id.endswith("-v5"):
        return None
    if not MODULE.built():
        if env_id in {atari_env_id(rom) for rom in rom_files()}:
            return (f"{env_id} is an Atari game, but this torchpool was built without the Atari family "
                    "(TORCHPOOL_ATARI=0); reinstall it with Atari (docs/parity.md: where the dependencies "
                    "come from)")
        return None
    if not rom_files():
        return (f"unknown env id {env_id!r}. Atari games (<Game>-v5) read their ROMs from ale-py, which is not "
                f"installed: pip install 'torchpool[atari]'. torchpool.list_envs() lists all "
                f"{len(registry.list_envs())} ids.")
    return None


registry.register_later(_register_ids, _ids_unchecked)
registry.explain_unknown_ids(_explain)
