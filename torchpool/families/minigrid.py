"""MiniGrid (csrc/envs/minigrid, the ``_minigrid`` module): minigrid 3.x's env classes in C++, under
minigrid's own ids and kwargs, laying out the same grids as minigrid for the same seed.

Env ``i`` of ``make(id, seed=s)`` lays out its episodes as ``gymnasium.make(id).reset(seed=s + i)`` and the
resets after it do. Observations are minigrid's dict (``image``, ``direction``, ``mission`` as word
tokens: ``mission_text`` reads them back); ``observation=`` gives the wrappers' views (``"full"``:
FullyObsWrapper, ``"rgb"``: RGBImgObsWrapper, ``"rgb_partial"``: RGBImgPartialObsWrapper) and
``image_only=True`` ImgObsWrapper's image alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._family_modules import FamilyModule
from ..registry import EnvEntry, Kwarg, _Checked

MODULE = FamilyModule("_minigrid")


class CellOrNone(metaclass=_Checked):
    """A grid cell ``(x, y)`` of two ints, or None (minigrid's "drawn at random")."""

    @staticmethod
    def accepts(value: Any) -> bool:
        return value is None or (isinstance(value, (tuple, list)) and len(value) == 2
                                 and all(isinstance(v, int) and not isinstance(v, bool) for v in value))


class IntOrNone(metaclass=_Checked):
    """An int, or None for the env class's own default."""

    @staticmethod
    def accepts(value: Any) -> bool:
        return value is None or (isinstance(value, int) and not isinstance(value, bool))


class StrOrNone(metaclass=_Checked):
    """A string, or None (the env draws it: a BabyAI level's colour or selection)."""

    @staticmethod
    def accepts(value: Any) -> bool:
        return value is None or isinstance(value, str)


# What a None of each "or None" kwarg type reaches the C++ as.
_NONE_AS = {CellOrNone: (-1, -1), StrOrNone: ""}


def vocabulary() -> tuple[str, ...]:
    """The mission's words by token (0 is the padding); a token keeps its word across versions."""
    return MODULE.load().vocabulary


def mission_text(tokens: Sequence[int] | Any) -> str | list[str]:
    """The mission string of one env's ``mission`` tokens, or a list of them for a batch ``[n, tokens]``."""
    import torch

    tokens = torch.as_tensor(tokens)
    if tokens.dim() > 1:
        return [mission_text(row) for row in tokens.reshape(-1, tokens.shape[-1])]
    words = vocabulary()
    return " ".join(words[int(t)] for t in tokens.tolist() if int(t) != 0)


_COMMON = {
    "agent_view_size": Kwarg(int, 7, "the agent's view, cells a side (odd, >= 3)"),
    "observation": Kwarg(str, "partial", "'partial' (minigrid's), 'full' (FullyObsWrapper), 'rgb' "
                                         "(RGBImgObsWrapper) or 'rgb_partial' (RGBImgPartialObsWrapper)"),
    "image_only": Kwarg(bool, False, "the image alone, as ImgObsWrapper gives it"),
    "tile_size": Kwarg(int, 8, "pixels a cell for the 'rgb' observations"),
    "highlight": Kwarg(bool, True, "'rgb': the cells the agent sees drawn lighter, as minigrid does"),
    "mission_bytes": Kwarg(int, 0, "0: the mission as word tokens; n: its text's first n bytes, zero-padded "
                                   "(EnvPool's encoding)"),
}


def _prepare(env_name: str, max_steps: Callable[[dict[str, Any]], int], declared: dict[str, Kwarg]) -> Any:
    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        prepared = {"env_name": env_name}
        if kwargs["max_steps"] is None:  # the class's default, from its sizes as given
            kwargs = {**kwargs, "max_steps": max_steps(kwargs)}
        for name, value in kwargs.items():
            if value is None and declared[name].type in _NONE_AS:
                prepared[name] = _NONE_AS[declared[name].type]
            else:
                prepared[name] = tuple(value) if isinstance(value, (tuple, list)) else value
        return prepared

    return prepare


def _register(env_id: str, env_name: str, max_steps: Callable[[dict[str, Any]], int], see_through_walls: bool,
              **task: Kwarg) -> None:
    kwargs = {
        **task,
        "max_steps": Kwarg(IntOrNone, None, "steps before the episode is truncated (None: the class's default, "
                                            "from its sizes); the reward is 1 - 0.9 * steps / max_steps"),
        "see_through_walls": Kwarg(bool, see_through_walls, "the agent sees behind walls and closed doors"),
        **_COMMON,
    }
    MODULE.register(EnvEntry(env_id, "MiniGrid", kwargs, observation="image", reference=env_id,
                             prepare=_prepare(env_name, max_steps, kwargs)))


def _size(size: int) -> Kwarg:
    return Kwarg(int, size, "the grid's width and height")


for _n in (5, 6, 8, 16):
    _register(f"MiniGrid-Empty-{_n}x{_n}-v0", "empty", lambda k: 4 * k["size"] ** 2, True, size=_size(_n),
              agent_start_pos=Kwarg(CellOrNone, (1, 1), "where the agent starts; None: at random"),
              agent_start_dir=Kwarg(int, 0, "the agent's first direction (0 right, 1 down, 2 left, 3 up)"))
for _n in (5, 6):
    _register(f"MiniGrid-Empty-Random-{_n}x{_n}-v0", "empty", lambda k: 4 * k["size"] ** 2, True, size=_size(_n),
              agent_start_pos=Kwarg(CellOrNone, None, "where the agent starts; None: at random"),
              agent_start_dir=Kwarg(int, 0, "the agent's first direction (0 right, 1 down, 2 left, 3 up)"))
for _n in (5, 6, 8, 16):
    _register(f"MiniGrid-DoorKey-{_n}x{_n}-v0", "doorkey", lambda k: 10 * k["size"] ** 2, False, size=_size(_n))
for _row, _name in ((2, "DistShift1"), (5, "DistShift2")):
    _register(f"MiniGrid-{_name}-v0", "distshift", lambda k: 4 * k["width"] * k["height"], True,
              width=Kwarg(int, 9, "the grid's width"), height=Kwarg(int, 7, "the grid's height"),
              agent_start_pos=Kwarg(CellOrNone, (1, 1), "where the agent starts; None: at random"),
              agent_start_dir=Kwarg(int, 0, "the agent's first direction"),
              strip2_row=Kwarg(int, _row, "the row of the second lava strip"))
for _n in (5, 6, 7):
    _register(f"MiniGrid-LavaGapS{_n}-v0", "lavagap", lambda k: 4 * k["size"] ** 2, False, size=_size(_n),
              obstacle_type=Kwarg(str, "lava", "'lava' or 'wall'"))
for _obstacle, _prefix in (("lava", "Lava"), ("wall", "Simple")):
    for _n, _crossings in ((9, 1), (9, 2), (9, 3), (11, 5)):
        _register(f"MiniGrid-{_prefix}CrossingS{_n}N{_crossings}-v0", "crossing", lambda k: 4 * k["size"] ** 2,
                  False, size=_size(_n),
                  num_crossings=Kwarg(int, _crossings, "rivers to cross"),
                  obstacle_type=Kwarg(str, _obstacle, "'lava' or 'wall'"))
_register("MiniGrid-FourRooms-v0", "fourrooms", lambda k: 100, False,
          agent_pos=Kwarg(CellOrNone, None, "where the agent starts; None: at random"),
          goal_pos=Kwarg(CellOrNone, None, "where the goal is; None: at random"))
_register("MiniGrid-Dynamic-Obstacles-8x8-v0", "dynamicobstacles", lambda k: 4 * k["size"] ** 2, True,
          size=_size(8), agent_start_pos=Kwarg(CellOrNone, (1, 1), "where the agent starts; None: at random"),
          agent_start_dir=Kwarg(int, 0, "the agent's first direction"),
          n_obstacles=Kwarg(int, 4, "moving balls (at most size / 2)"))
for _n, _obstacles in ((5, 2), (6, 3), (16, 8)):
    _register(f"MiniGrid-Dynamic-Obstacles-{_n}x{_n}-v0", "dynamicobstacles", lambda k: 4 * k["size"] ** 2, True,
              size=_size(_n), agent_start_pos=Kwarg(CellOrNone, (1, 1), "where the agent starts; None: at random"),
              agent_start_dir=Kwarg(int, 0, "the agent's first direction"),
              n_obstacles=Kwarg(int, _obstacles, "moving balls (at most size / 2)"))
for _n, _obstacles in ((5, 2), (6, 3)):
    _register(f"MiniGrid-Dynamic-Obstacles-Random-{_n}x{_n}-v0", "dynamicobstacles", lambda k: 4 * k["size"] ** 2,
              True, size=_size(_n), agent_start_pos=Kwarg(CellOrNone, None, "where the agent starts; None: at random"),
              agent_start_dir=Kwarg(int, 0, "the agent's first direction"),
              n_obstacles=Kwarg(int, _obstacles, "moving balls (at most size / 2)"))
for _n, _objs in ((5, 2), (6, 2), (8, 3)):
    _register(f"MiniGrid-Fetch-{_n}x{_n}-N{_objs}-v0", "fetch", lambda k: 5 * k["size"] ** 2, True, size=_size(_n),
              numObjs=Kwarg(int, _objs, "objects on the floor"))
for _n in (5, 6, 8):
    _register(f"MiniGrid-GoToDoor-{_n}x{_n}-v0", "gotodoor", lambda k: 4 * k["size"] ** 2, True, size=_size(_n))
for _n in (6, 8):
    _register(f"MiniGrid-GoToObject-{_n}x{_n}-N2-v0", "gotoobject", lambda k: 5 * k["size"] ** 2, True,
              size=_size(_n), numObjs=Kwarg(int, 2, "objects on the floor"))
for _s, _r in ((3, 1), (3, 2), (3, 3), (4, 3), (5, 3), (6, 3)):
    _register(f"MiniGrid-KeyCorridorS{_s}R{_r}-v0", "keycorridor", lambda k: 30 * k["room_size"] ** 2, False,
              num_rows=Kwarg(int, _r, "rows of rooms"), obj_type=Kwarg(str, "ball", "'ball', 'box' or 'key'"),
              room_size=Kwarg(int, _s, "a room's side, walls included"))
_register("MiniGrid-LockedRoom-v0", "lockedroom", lambda k: 10 * k["size"], False, size=_size(19))
for _n, _random in ((17, True), (13, True), (13, False), (11, False), (9, False), (7, False)):
    _register(f"MiniGrid-MemoryS{_n}{'Random' if _random else ''}-v0", "memory", lambda k: 5 * k["size"] ** 2,
              False, size=_size(_n), random_length=Kwarg(bool, _random, "the hallway's length drawn per episode"))
for _id, _rooms, _room_size in (("N2-S4-v0", 2, 4), ("N4-S5-v0", 6, 5), ("N4-S5-v1", 4, 5), ("N6-v0", 6, 10)):
    # MiniGrid-MultiRoom-N4-S5-v0 has six rooms: minigrid registers it so (its -v1 has four).
    _register(f"MiniGrid-MultiRoom-{_id}", "multiroom", lambda k: k["maxNumRooms"] * 20, False,
              minNumRooms=Kwarg(int, _rooms, "fewest rooms"), maxNumRooms=Kwarg(int, _rooms, "most rooms"),
              maxRoomSize=Kwarg(int, _room_size, "a room's largest side"),
              width=Kwarg(int, 25, "the grid's width"), height=Kwarg(int, 25, "the grid's height"))
for _name, _in_box, _blocked in (("1Dl", False, False), ("1Dlh", True, False), ("1Dlhb", True, True)):
    _register(f"MiniGrid-ObstructedMaze-{_name}-v0", "obstructedmaze_1dlhb", lambda k: 4 * 2 * 36, False,
              key_in_box=Kwarg(bool, _in_box, "the key is hidden in a box"),
              blocked=Kwarg(bool, _blocked, "a ball blocks the door"))
for _version, _env_name in (("v0", "obstructedmaze_full"), ("v1", "obstructedmaze_full_v1")):
    for _name, _room, _in_box, _blocked, _quarters, _visited in (
            ("2Dl", (2, 1), False, False, 1, 4), ("2Dlh", (2, 1), True, False, 1, 4),
            ("2Dlhb", (2, 1), True, True, 1, 4), ("1Q", (1, 1), True, True, 1, 5),
            ("2Q", (2, 1), True, True, 2, 11), ("Full", (1, 1), True, True, 4, 25)):
        if _version == "v1" and _name in ("2Dl", "2Dlh"):
            continue  # minigrid has no -v1 of these
        _register(f"MiniGrid-ObstructedMaze-{_name}-{_version}", _env_name,
                  lambda k: 4 * k["num_rooms_visited"] * 36, False,
                  agent_room=Kwarg(CellOrNone, _room, "the room (column, row) the agent starts in"),
                  key_in_box=Kwarg(bool, _in_box, "keys are hidden in boxes"),
                  blocked=Kwarg(bool, _blocked, "balls block the doors"),
                  num_quarters=Kwarg(int, _quarters, "quarters of the maze in play (1-4)"),
                  num_rooms_visited=Kwarg(int, _visited, "rooms the step limit allows for"))
_register("MiniGrid-Playground-v0", "playground", lambda k: 100, False)
for _n, _objs in ((6, 2), (8, 3)):
    _register(f"MiniGrid-PutNear-{_n}x{_n}-N{_objs}-v0", "putnear", lambda k: 5 * k["size"], True, size=_size(_n),
              numObjs=Kwarg(int, _objs, "objects on the floor"))
for _n in (6, 8):
    _register(f"MiniGrid-RedBlueDoors-{_n}x{_n}-v0", "redbluedoors", lambda k: 20 * k["size"] ** 2, False,
              size=Kwarg(int, _n, "the room's side (the grid is twice as wide)"))
_register("MiniGrid-Unlock-v0", "unlock", lambda k: 8 * 36, False)
_register("MiniGrid-UnlockPickup-v0", "unlockpickup", lambda k: 8 * 36, False)
_register("MiniGrid-BlockedUnlockPickup-v0", "blockedunlockpickup", lambda k: 16 * 36, False)
# WFCEnv (minigrid/envs/wfc): the six presets minigrid registers, under their WFC_PRESETS names.
for _preset in ("MazeSimple", "DungeonMazeScaled", "RoomsFabric", "ObstaclesBlackdots", "ObstaclesAngular",
                "ObstaclesHogs3"):
    _register(f"MiniGrid-WFC-{_preset}-v0", "wfc", lambda k: k["size"] * 20, False,
              wfc_config=Kwarg(str, _preset, "the WFC preset (a WFC_PRESETS name of minigrid's six registered ones)"),
              size=_size(25),
              ensure_connected=Kwarg(bool, True, "keep only the largest connected open area; the rest is wall"))
