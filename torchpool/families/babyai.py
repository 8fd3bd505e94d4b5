"""BabyAI (csrc/envs/minigrid/tasks/babyai_*.h, in the ``_minigrid`` module): minigrid 3.x's BabyAI levels
(``minigrid/envs/babyai``) under minigrid's ``BabyAI-*`` ids and kwargs, laying out the same grids and
missions as minigrid for the same seed and verifying the instructions as it does.

They are MiniGrid envs (see torchpool.families.minigrid): the same observations, seeding and kwargs
(``observation``, ``mission_bytes``, ...); their missions fit MiniGrid's 24 tokens, but LevelGen's with ``and``
(35) and sequences (72).

``max_steps=None`` is the level's own limit, num_navs * room_size² * rooms as minigrid sets it: a fixed number
(the pool's time limit) for the levels whose instructions always need the same navigations; for LevelGen's
sequences (GoToSeq, Synth*, BossLevel, ...) a limit per episode, which the env applies itself (the pool then has
no time limit of its own: ``pool.max_episode_steps`` is 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..registry import Kwarg
from .minigrid import StrOrNone, _register


def _level(env_id: str, env_name: str, max_steps: Callable[[dict[str, Any]], int], **task: Kwarg) -> None:
    """minigrid.py's _register: BabyAI levels see no further than walls."""
    _register(env_id, env_name, max_steps, False, **task)


def _navs(navs: int, rows: int = 1, cols: int = 1, size: int | None = None) -> Callable[[dict[str, Any]], int]:
    """RoomGridLevel's limit: navs * room_size² * rooms (the sizes as given, or the level's)."""
    return lambda k: navs * k.get("room_size", size) ** 2 * k.get("num_rows", rows) * k.get("num_cols", cols)


def _fixed(steps: int) -> Callable[[dict[str, Any]], int]:
    return lambda k: steps


def _room(size: int) -> Kwarg:
    return Kwarg(int, size, "a room's side, walls included")


def _dists(count: int) -> Kwarg:
    return Kwarg(int, count, "distractor objects")


def _rows(count: int) -> Kwarg:
    return Kwarg(int, count, "rows of rooms")


def _cols(count: int) -> Kwarg:
    return Kwarg(int, count, "columns of rooms")


def _flag(value: bool, doc: str) -> Kwarg:
    return Kwarg(bool, value, doc)


# --- goto.py ---
_level("BabyAI-GoToRedBallGrey-v0", "babyai_gotoredballgrey", _navs(1), room_size=_room(8), num_dists=_dists(7))
_level("BabyAI-GoToRedBall-v0", "babyai_gotoredball", _navs(1), room_size=_room(8), num_dists=_dists(7))
_level("BabyAI-GoToRedBallNoDists-v0", "babyai_gotoredball", _navs(1), room_size=_room(8), num_dists=_dists(0))
for _suffix, _size in (("", 8), ("S4", 4)):
    _level(f"BabyAI-GoToObj{_suffix}-v0", "babyai_gotoobj", _navs(1), room_size=_room(_size))
_level("BabyAI-GoToObjS6-v1", "babyai_gotoobj", _navs(1), room_size=_room(6))
_level("BabyAI-GoToLocal-v0", "babyai_gotolocal", _navs(1), room_size=_room(8), num_dists=_dists(8))
for _size, _count in ((5, 2), (6, 2), (6, 3), (6, 4), (7, 4), (7, 5), (8, 2), (8, 3), (8, 4), (8, 5), (8, 6), (8, 7)):
    _level(f"BabyAI-GoToLocalS{_size}N{_count}-v0", "babyai_gotolocal", _navs(1), room_size=_room(_size),
           num_dists=_dists(_count))
for _id, _size, _rows_n, _count, _open in (
        ("GoTo-v0", 8, 3, 18, False), ("GoToOpen-v0", 8, 3, 18, True), ("GoToObjMaze-v0", 8, 3, 1, False),
        ("GoToObjMazeOpen-v0", 8, 3, 1, True), ("GoToObjMazeS4R2-v0", 4, 2, 1, False),
        ("GoToObjMazeS4-v0", 4, 3, 1, False), ("GoToObjMazeS5-v0", 5, 3, 1, False),
        ("GoToObjMazeS6-v0", 6, 3, 1, False), ("GoToObjMazeS7-v0", 7, 3, 1, False)):
    _level(f"BabyAI-{_id}", "babyai_goto", _navs(1), room_size=_room(_size), num_rows=_rows(_rows_n),
           num_cols=_cols(_rows_n), num_dists=_dists(_count),
           doors_open=_flag(_open, "every door open from the start"))
_level("BabyAI-GoToImpUnlock-v0", "babyai_gotoimpunlock", _navs(1, 3, 3, 8))
_level("BabyAI-GoToRedBlueBall-v0", "babyai_gotoredblueball", _navs(1), room_size=_room(8), num_dists=_dists(7))
_level("BabyAI-GoToDoor-v0", "babyai_gotodoor", _navs(1, 3, 3, 7))
_level("BabyAI-GoToObjDoor-v0", "babyai_gotoobjdoor", _navs(1, 3, 3, 8))

# --- open.py ---
_level("BabyAI-Open-v0", "babyai_open", _navs(1, 3, 3, 8))
_level("BabyAI-OpenRedDoor-v0", "babyai_openreddoor", _navs(1, 1, 2, 5))
for _id, _debug, _select in (("OpenDoor-v0", False, None), ("OpenDoorDebug-v0", True, None),
                             ("OpenDoorColor-v0", False, "color"), ("OpenDoorLoc-v0", False, "loc")):
    _level(f"BabyAI-{_id}", "babyai_opendoor", _navs(1, 3, 3, 8),
           debug=_flag(_debug, "opening another door fails the episode"),
           select_by=Kwarg(StrOrNone, _select, "the door named by 'color' or 'loc' (None: drawn)"))
for _id, _first, _second, _strict in (("OpenTwoDoors-v0", None, None, False),
                                      ("OpenRedBlueDoors-v0", "red", "blue", False),
                                      ("OpenRedBlueDoorsDebug-v0", "red", "blue", True)):
    _level(f"BabyAI-{_id}", "babyai_opentwodoors", _fixed(20 * 6 ** 2),
           first_color=Kwarg(StrOrNone, _first, "the first door's colour (None: drawn)"),
           second_color=Kwarg(StrOrNone, _second, "the second door's colour (None: drawn)"),
           strict=_flag(_strict, "opening another door first fails the episode"))
for _n in (2, 4):
    for _debug in (False, True):
        _level(f"BabyAI-OpenDoorsOrderN{_n}{'Debug' if _debug else ''}-v0", "babyai_opendoorsorder",
               _fixed(20 * 6 ** 2), num_doors=Kwarg(int, _n, "doors in the room (2-4)"),
               debug=_flag(_debug, "opening another door fails the episode"))

# --- pickup.py ---
_level("BabyAI-Pickup-v0", "babyai_pickup", _navs(1, 3, 3, 8))
_level("BabyAI-UnblockPickup-v0", "babyai_unblockpickup", _navs(1, 3, 3, 8))
_level("BabyAI-PickupLoc-v0", "babyai_pickuploc", _navs(1), room_size=_room(8), num_rows=_rows(1),
       num_cols=_cols(1), num_dists=_dists(8), locked_room_prob=Kwarg(float, 0.0, "chance of a locked room"))
for _id, _debug in (("PickupDist-v0", False), ("PickupDistDebug-v0", True)):
    _level(f"BabyAI-{_id}", "babyai_pickupdist", _navs(1, 1, 1, 7),
           debug=_flag(_debug, "picking up another object fails the episode"))
_level("BabyAI-PickupAbove-v0", "babyai_pickupabove", _fixed(8 * 6 ** 2))

# --- unlock.py ---
_level("BabyAI-Unlock-v0", "babyai_unlock", _navs(1, 3, 3, 8))
for _id, _distractors in (("UnlockLocal-v0", False), ("UnlockLocalDist-v0", True)):
    _level(f"BabyAI-{_id}", "babyai_unlocklocal", _navs(1, 3, 3, 8),
           distractors=_flag(_distractors, "three distractors in the room"))
_level("BabyAI-KeyInBox-v0", "babyai_keyinbox", _navs(1, 3, 3, 8))
for _id, _distractors in (("UnlockPickup-v0", False), ("UnlockPickupDist-v0", True)):
    _level(f"BabyAI-{_id}", "babyai_unlockpickup", _navs(1, 1, 2, 6),
           distractors=_flag(_distractors, "four distractors"))
_level("BabyAI-BlockedUnlockPickup-v0", "babyai_blockedunlockpickup", _fixed(16 * 6 ** 2))
_level("BabyAI-UnlockToUnlock-v0", "babyai_unlocktounlock", _fixed(30 * 6 ** 2))

# --- putnext.py ---
for _suffix, _size, _count in (("", 8, 8), ("S5N3", 5, 3), ("S6N4", 6, 4)):
    _level(f"BabyAI-PutNextLocal{_suffix}-v0", "babyai_putnextlocal", _navs(2), room_size=_room(_size),
           num_objs=Kwarg(int, _count, "objects in the room"))
for _size, _count, _carrying in ((4, 1, False), (5, 2, False), (5, 1, False), (6, 3, False), (7, 4, False),
                                 (5, 2, True), (6, 3, True), (7, 4, True)):
    _level(f"BabyAI-PutNextS{_size}N{_count}{'Carrying' if _carrying else ''}-v0", "babyai_putnext",
           lambda k: 8 * k["room_size"] ** 2, room_size=_room(_size),
           objs_per_room=Kwarg(int, _count, "objects in each room (at most 9)"),
           start_carrying=_flag(_carrying, "the agent starts holding the object to move"))

# --- other.py ---
_level("BabyAI-ActionObjDoor-v0", "babyai_actionobjdoor", _navs(1, 3, 3, 7))
for _size in (5, 6, 7):
    _level(f"BabyAI-FindObjS{_size}-v0", "babyai_findobj", lambda k: 20 * k["room_size"] ** 2, room_size=_room(_size))
for _id, _size, _rows_n in (("KeyCorridor-v0", 6, 3), ("KeyCorridorS3R1-v0", 3, 1), ("KeyCorridorS3R2-v0", 3, 2),
                            ("KeyCorridorS3R3-v0", 3, 3), ("KeyCorridorS4R3-v0", 4, 3),
                            ("KeyCorridorS5R3-v0", 5, 3), ("KeyCorridorS6R3-v0", 6, 3)):
    _level(f"BabyAI-{_id}", "babyai_keycorridor", lambda k: 30 * k["room_size"] ** 2, room_size=_room(_size),
           num_rows=_rows(_rows_n), obj_type=Kwarg(str, "ball", "'ball', 'box' or 'key'"))
for _size in (8, 12, 16, 20):
    _level(f"BabyAI-OneRoomS{_size}-v0", "babyai_oneroom", _navs(1), room_size=_room(_size))
for _size, _count in ((5, 2), (8, 9)):
    _level(f"BabyAI-MoveTwoAcrossS{_size}N{_count}-v0", "babyai_movetwoacross", lambda k: 16 * k["room_size"] ** 2,
           room_size=_room(_size), objs_per_room=Kwarg(int, _count, "objects in each room (at most 9)"))

# --- LevelGen's sequences (goto.py's GoToSeq, synth.py): their step limit is per episode (max_steps=0) ---
def _per_episode(k: dict[str, Any]) -> int:
    return 0


def _level_gen(env_id: str, env_name: str, room_size: int = 8, rows: int = 3, cols: int = 3, dists: int = 18,
               locked_room_prob: float = 0.5) -> None:
    _level(env_id, env_name, _per_episode, room_size=_room(room_size), num_rows=_rows(rows), num_cols=_cols(cols),
           num_dists=_dists(dists), locked_room_prob=Kwarg(float, locked_room_prob, "chance of a locked room"))


_level_gen("BabyAI-GoToSeq-v0", "babyai_gotoseq", locked_room_prob=0.0)
_level_gen("BabyAI-GoToSeqS5R2-v0", "babyai_gotoseq", room_size=5, rows=2, cols=2, dists=4, locked_room_prob=0.0)
_level_gen("BabyAI-Synth-v0", "babyai_synth")
_level_gen("BabyAI-SynthS5R2-v0", "babyai_synth", room_size=5, rows=2)
_level_gen("BabyAI-SynthLoc-v0", "babyai_synthloc")
_level_gen("BabyAI-SynthSeq-v0", "babyai_synthseq")
_level_gen("BabyAI-MiniBossLevel-v0", "babyai_bosslevel", room_size=5, rows=2, cols=2, dists=7, locked_room_prob=0.25)
_level_gen("BabyAI-BossLevel-v0", "babyai_bosslevel")
_level_gen("BabyAI-BossLevelNoUnlock-v0", "babyai_bosslevelnounlock", locked_room_prob=0.0)
