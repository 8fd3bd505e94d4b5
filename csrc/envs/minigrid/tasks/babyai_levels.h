// babyai_levels.h — BabyAI's levels (minigrid/envs/babyai/{goto,open,pickup,unlock,putnext,other,synth}.py),
// each a gen_mission over BabyAILevel (babyai_level.h) drawing from np_random as the reference's does,
// and babyai_tasks(): the table of them by the env_name torchpool/families/babyai.py registers them with.
//
// Levels keep the reference's class split: one class per minigrid class, its constructor kwargs read
// from the registration's config.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "babyai_level.h"

namespace torchpool::minigrid::babyai {

// "" (minigrid's None) or a colour name.
inline std::optional<uint8_t> color_kwarg(const std::string& name) {
  if (name.empty()) return std::nullopt;
  for (uint8_t color : kColorNames)
    if (name == color_name(color)) return color;
  throw std::invalid_argument("unknown colour '" + name + "'");
}

// A level's TaskShape: its grid, minigrid's 7 actions, and a factory.
template <class Level, class... Args>
TaskShape level_shape(int room_size, int num_rows, int num_cols, int mission_tokens, Args... args) {
  if (room_size < 3 || num_rows < 1 || num_cols < 1)
    throw std::invalid_argument("a BabyAI level needs room_size >= 3 and at least one row and column");
  TaskShape shape{RoomGridTask::grid_side(room_size, num_cols), RoomGridTask::grid_side(room_size, num_rows), 7,
                  [=] { return std::make_unique<Level>(args...); }};
  shape.mission_tokens = mission_tokens;
  shape.per_episode_limit = true;  // every RoomGridLevel: max_steps=None is a limit per episode
  return shape;
}

inline constexpr int kShortMission = 24;  // every level but LevelGen's: "put ..., then put ..." is 17 words

// The objects of add_distractors, as placed.
inline std::vector<Obj> objs_of(const std::vector<RoomGridTask::Placed>& placed) {
  std::vector<Obj> objs;
  for (const auto& p : placed) objs.push_back(p.obj);
  return objs;
}

// --- goto.py ---

// GoToRedBall, GoToRedBallGrey (distractors turned grey), GoToRedBallNoDists.
class GoToRedBall : public BabyAILevel {
 public:
  GoToRedBall(int room_size, int num_dists, bool grey)
      : BabyAILevel(room_size, 1, 1), num_dists_(num_dists), grey_(grey) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), num_dists = int_kwarg(c, "num_dists");
    return level_shape<GoToRedBall>(room_size, 1, 1, kShortMission, room_size, num_dists, false);
  }
  static TaskShape define_grey(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), num_dists = int_kwarg(c, "num_dists");
    return level_shape<GoToRedBall>(room_size, 1, 1, kShortMission, room_size, num_dists, true);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    const Placed obj = add_object(w, 0, 0, kBall, kRed);
    const std::vector<Placed> dists = add_distractors(w, std::nullopt, std::nullopt, num_dists_, false);
    if (grey_)
      for (const Placed& dist : dists) w.grid.at(dist.pos.x, dist.pos.y).color = kGrey;
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kGoTo, desc_of(obj.obj));
  }

 private:
  int num_dists_;
  bool grey_;
};

class GoToObj : public BabyAILevel {
 public:
  explicit GoToObj(int room_size) : BabyAILevel(room_size, 1, 1) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size");
    return level_shape<GoToObj>(room_size, 1, 1, kShortMission, room_size);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    const Obj obj = add_distractors(w, std::nullopt, std::nullopt, 1)[0].obj;
    instrs_ = Instr::action(Instr::kGoTo, desc_of(obj));
  }
};

class GoToLocal : public BabyAILevel {
 public:
  GoToLocal(int room_size, int num_dists) : BabyAILevel(room_size, 1, 1), num_dists_(num_dists) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), num_dists = int_kwarg(c, "num_dists");
    return level_shape<GoToLocal>(room_size, 1, 1, kShortMission, room_size, num_dists);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    const std::vector<Obj> objs = objs_of(add_distractors(w, std::nullopt, std::nullopt, num_dists_, false));
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kGoTo, desc_of(w.rand_elem(objs)));
  }

 private:
  int num_dists_;
};

// GoTo: the object may be in another room (GoTo, GoToOpen, GoToObjMaze*).
class GoTo : public BabyAILevel {
 public:
  GoTo(int room_size, int num_rows, int num_cols, int num_dists, bool doors_open)
      : BabyAILevel(room_size, num_rows, num_cols), num_dists_(num_dists), doors_open_(doors_open) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), rows = int_kwarg(c, "num_rows"), cols = int_kwarg(c, "num_cols");
    return level_shape<GoTo>(room_size, rows, cols, kShortMission, room_size, rows, cols, int_kwarg(c, "num_dists"),
                             c.flag("doors_open"));
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    connect_all(w);
    const std::vector<Obj> objs = objs_of(add_distractors(w, std::nullopt, std::nullopt, num_dists_, false));
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kGoTo, desc_of(w.rand_elem(objs)));
    if (doors_open_) open_all_doors(w);
  }

 private:
  int num_dists_;
  bool doors_open_;
};

class GoToImpUnlock : public BabyAILevel {
 public:
  GoToImpUnlock() : BabyAILevel(8, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<GoToImpUnlock>(8, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    const int id = w.rand_int(0, num_cols()), jd = w.rand_int(0, num_rows());
    const PlacedDoor door = add_door(w, id, jd, std::nullopt, std::nullopt, true);
    add_key(w, door.door.color);
    connect_all(w);
    // `if i is not id or j is not jd`: np.int64 against int, never the same object: every room.
    for (int i = 0; i < num_cols(); ++i)
      for (int j = 0; j < num_rows(); ++j) add_distractors(w, i, j, 2, false);
    place_agent_outside(w, id, jd);
    check_objs_reachable(w);
    const Obj obj = add_distractors(w, id, jd, 1, false)[0].obj;
    instrs_ = Instr::action(Instr::kGoTo, desc_of(obj));
  }

 public:
  // The key, in a drawn room. minigrid means another room than the locked one, but its test
  // `ik is id and jk is jd` compares np.int64 objects by identity, which never holds: the first room drawn
  // it is, the locked one included.
  void add_key(WorldState& w, uint8_t color) {
    const int ik = w.rand_int(0, num_cols()), jk = w.rand_int(0, num_rows());
    add_object(w, ik, jk, kKey, color);
  }
  void place_agent_outside(WorldState& w, int id, int jd) {
    while (true) {
      place_agent(w);
      if (&room_from_pos(w.agent) != &get_room(id, jd)) break;
    }
  }
};

class GoToRedBlueBall : public BabyAILevel {
 public:
  GoToRedBlueBall(int room_size, int num_dists) : BabyAILevel(room_size, 1, 1), num_dists_(num_dists) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), num_dists = int_kwarg(c, "num_dists");
    return level_shape<GoToRedBlueBall>(room_size, 1, 1, kShortMission, room_size, num_dists);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    for (const Placed& dist : add_distractors(w, std::nullopt, std::nullopt, num_dists_, false))
      if (dist.obj.type == kBall && (dist.obj.color == kBlue || dist.obj.color == kRed))
        throw RejectSampling("can only have one blue or red ball");
    const uint8_t color = w.rand_elem(std::vector<uint8_t>{kRed, kBlue});
    const Placed obj = add_object(w, 0, 0, kBall, color);
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kGoTo, desc_of(obj.obj));
  }

 private:
  int num_dists_;
};

class GoToDoor : public BabyAILevel {
 public:
  GoToDoor() : BabyAILevel(7, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<GoToDoor>(7, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    std::vector<Obj> doors;
    for (int k = 0; k < 4; ++k) doors.push_back(add_door(w, 1, 1).door);
    place_agent(w, 1, 1);
    instrs_ = Instr::action(Instr::kGoTo, desc(kDoor, w.rand_elem(doors).color));
  }
};

class GoToObjDoor : public BabyAILevel {
 public:
  GoToObjDoor() : BabyAILevel(8, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<GoToObjDoor>(8, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w, 1, 1);
    std::vector<Obj> objs = objs_of(add_distractors(w, 1, 1, 8, false));
    for (int k = 0; k < 4; ++k) objs.push_back(add_door(w, 1, 1).door);
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kGoTo, desc_of(w.rand_elem(objs)));
  }
};

// --- open.py ---

class Open : public BabyAILevel {
 public:
  Open() : BabyAILevel(8, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<Open>(8, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    connect_all(w);
    add_distractors(w, std::nullopt, std::nullopt, 18, false);
    check_objs_reachable(w);
    // Every room's doors, column by column: each door twice (once from either side).
    std::vector<Obj> doors;
    for (int i = 0; i < num_cols(); ++i)
      for (int j = 0; j < num_rows(); ++j) {
        const Room& room = get_room(i, j);
        for (int k = 0; k < 4; ++k)
          if (room.doors[k] == Wall::kDoor) doors.push_back(w.grid.get(room.door_pos[k].x, room.door_pos[k].y));
      }
    instrs_ = Instr::action(Instr::kOpen, desc(kDoor, w.rand_elem(doors).color));
  }
};

class OpenRedDoor : public BabyAILevel {
 public:
  OpenRedDoor() : BabyAILevel(5, 1, 2) {}
  static TaskShape define(const Config&) { return level_shape<OpenRedDoor>(5, 1, 2, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    add_door(w, 0, 0, 0, kRed, false);
    place_agent(w, 0, 0);
    instrs_ = Instr::action(Instr::kOpen, desc(kDoor, kRed));
  }
};

class OpenDoor : public BabyAILevel {
 public:
  enum SelectBy { kDrawn, kByColor, kByLoc };
  OpenDoor(bool debug, SelectBy select_by) : BabyAILevel(8, 3, 3), debug_(debug), select_by_(select_by) {}
  static TaskShape define(const Config& c) {
    const std::string& by = c.string("select_by");
    if (!by.empty() && by != "color" && by != "loc")
      throw std::invalid_argument("select_by must be None, 'color' or 'loc', got '" + by + "'");
    const SelectBy select_by = by.empty() ? kDrawn : by == "color" ? kByColor : kByLoc;
    return level_shape<OpenDoor>(8, 3, 3, kShortMission, c.flag("debug"), select_by);
  }

 protected:
  void gen_mission(WorldState& w) override {
    const std::vector<uint8_t> colors = w.rand_subset(color_names(), 4);
    std::vector<Obj> doors;
    for (int k = 0; k < 4; ++k) doors.push_back(add_door(w, 1, 1, k, colors[k], false).door);
    SelectBy select_by = select_by_;
    if (select_by == kDrawn) select_by = w.rand_bool() ? kByColor : kByLoc;
    ObjDesc target = select_by == kByColor ? desc(kDoor, doors[0].color)
                                           : desc(kDoor, kAnyColor, static_cast<Loc>(w.rand_int(0, 4)));
    place_agent(w, 1, 1);
    instrs_ = Instr::action(Instr::kOpen, std::move(target), debug_);
  }

 private:
  bool debug_;
  SelectBy select_by_;
};

class OpenTwoDoors : public BabyAILevel {
 public:
  OpenTwoDoors(std::optional<uint8_t> first, std::optional<uint8_t> second, bool strict)
      : BabyAILevel(6, 3, 3), first_(first), second_(second), strict_(strict) {}
  static TaskShape define(const Config& c) {
    return level_shape<OpenTwoDoors>(6, 3, 3, kShortMission, color_kwarg(c.string("first_color")),
                                     color_kwarg(c.string("second_color")), c.flag("strict"));
  }

 protected:
  void gen_mission(WorldState& w) override {
    const std::vector<uint8_t> colors = w.rand_subset(color_names(), 2);
    const Obj door1 = add_door(w, 1, 1, 2, first_.value_or(colors[0]), false).door;
    const Obj door2 = add_door(w, 1, 1, 0, second_.value_or(colors[1]), false).door;
    place_agent(w, 1, 1);
    instrs_ = Instr::seq(Instr::kBefore, Instr::action(Instr::kOpen, desc_of(door1), strict_),
                         Instr::action(Instr::kOpen, desc_of(door2)));
  }

 private:
  std::optional<uint8_t> first_, second_;
  bool strict_;
};

class OpenDoorsOrder : public BabyAILevel {
 public:
  OpenDoorsOrder(int num_doors, bool debug) : BabyAILevel(6, 3, 3), num_doors_(num_doors), debug_(debug) {}
  static TaskShape define(const Config& c) {
    const int num_doors = int_kwarg(c, "num_doors");
    if (num_doors < 2 || num_doors > 4) throw std::invalid_argument("num_doors must be 2 to 4");
    return level_shape<OpenDoorsOrder>(6, 3, 3, kShortMission, num_doors, c.flag("debug"));
  }

 protected:
  void gen_mission(WorldState& w) override {
    const std::vector<uint8_t> colors = w.rand_subset(color_names(), static_cast<size_t>(num_doors_));
    std::vector<Obj> doors;
    for (int k = 0; k < num_doors_; ++k) doors.push_back(add_door(w, 1, 1, std::nullopt, colors[k], false).door);
    place_agent(w, 1, 1);
    const std::vector<Obj> pair = w.rand_subset(doors, 2);
    auto open = [this](const Obj& door) { return Instr::action(Instr::kOpen, desc_of(door), debug_); };
    switch (w.rand_int(0, 3)) {
      case 0:
        instrs_ = open(pair[0]);
        break;
      case 1:
        instrs_ = Instr::seq(Instr::kBefore, open(pair[0]), open(pair[1]));
        break;
      default:
        instrs_ = Instr::seq(Instr::kAfter, open(pair[0]), open(pair[1]));
        break;
    }
  }

 private:
  int num_doors_;
  bool debug_;
};

// --- pickup.py ---

// Pickup, and UnblockPickup (some object must be blocked).
class Pickup : public BabyAILevel {
 public:
  explicit Pickup(bool unblock) : BabyAILevel(8, 3, 3), unblock_(unblock) {}
  static TaskShape define(const Config&) { return level_shape<Pickup>(8, 3, 3, kShortMission, false); }
  static TaskShape define_unblock(const Config&) { return level_shape<Pickup>(8, 3, 3, kShortMission, true); }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    connect_all(w);
    const std::vector<Obj> objs = objs_of(add_distractors(w, std::nullopt, std::nullopt, unblock_ ? 20 : 18, false));
    if (unblock_) {
      if (check_objs_reachable(w, false)) throw RejectSampling("all objects reachable");
    } else {
      check_objs_reachable(w);
    }
    instrs_ = Instr::action(Instr::kPickup, desc_of(w.rand_elem(objs)));
  }

 private:
  bool unblock_;
};

class PickupDist : public BabyAILevel {
 public:
  explicit PickupDist(bool debug) : BabyAILevel(7, 1, 1), debug_(debug) {}
  static TaskShape define(const Config& c) { return level_shape<PickupDist>(7, 1, 1, kShortMission, c.flag("debug")); }

 protected:
  void gen_mission(WorldState& w) override {
    const std::vector<Obj> objs = objs_of(add_distractors(w, std::nullopt, std::nullopt, 5));
    place_agent(w, 0, 0);
    const Obj obj = w.rand_elem(objs);
    ObjDesc target = desc_of(obj);
    switch (w.rand_int(0, 3)) {  // select_by: type, color, both
      case 0:
        target.color = kAnyColor;
        break;
      case 1:
        target.type = kAnyType;
        break;
      default:
        break;
    }
    instrs_ = Instr::action(Instr::kPickup, std::move(target), debug_);
  }

 private:
  bool debug_;
};

class PickupAbove : public BabyAILevel {
 public:
  PickupAbove() : BabyAILevel(6, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<PickupAbove>(6, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    const Placed obj = add_object(w, 1, 0);
    add_door(w, 1, 1, 3, std::nullopt, false);
    place_agent(w, 1, 1);
    connect_all(w);
    instrs_ = Instr::action(Instr::kPickup, desc_of(obj.obj));
  }
};

// --- unlock.py ---

class Unlock : public GoToImpUnlock {
 public:
  static TaskShape define(const Config&) { return level_shape<Unlock>(8, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    const int id = w.rand_int(0, num_cols()), jd = w.rand_int(0, num_rows());
    const PlacedDoor door = add_door(w, id, jd, std::nullopt, std::nullopt, true);
    add_key(w, door.door.color);
    if (w.rand_bool()) {  // no other door of the locked door's colour
      std::vector<uint8_t> colors;
      for (uint8_t color : color_names())
        if (color != door.door.color) colors.push_back(color);
      connect_all(w, colors);
    } else {
      connect_all(w);
    }
    // `if i is not id or j is not jd`: np.int64 against int, never the same object: every room.
    for (int i = 0; i < num_cols(); ++i)
      for (int j = 0; j < num_rows(); ++j) add_distractors(w, i, j, 3, false);
    place_agent_outside(w, id, jd);
    check_objs_reachable(w);
    instrs_ = Instr::action(Instr::kOpen, desc_of(door.door));
  }
};

// UnlockLocal (with or without distractors) and KeyInBox (the key in a box).
class UnlockLocal : public BabyAILevel {
 public:
  UnlockLocal(bool distractors, bool key_in_box)
      : BabyAILevel(8, 3, 3), distractors_(distractors), key_in_box_(key_in_box) {}
  static TaskShape define(const Config& c) {
    return level_shape<UnlockLocal>(8, 3, 3, kShortMission, c.flag("distractors"), false);
  }
  static TaskShape define_key_in_box(const Config&) {
    return level_shape<UnlockLocal>(8, 3, 3, kShortMission, false, true);
  }

 protected:
  void gen_mission(WorldState& w) override {
    const PlacedDoor door = add_door(w, 1, 1, std::nullopt, std::nullopt, true);
    if (key_in_box_) {
      Obj box = Obj::box(w.rand_color());
      box.put_inside(Obj::key(door.door.color));
      place_in_room(w, 1, 1, box);
    } else {
      add_object(w, 1, 1, kKey, door.door.color);
      if (distractors_) add_distractors(w, 1, 1, 3);
    }
    place_agent(w, 1, 1);
    instrs_ = Instr::action(Instr::kOpen, desc(kDoor));
  }

 private:
  bool distractors_, key_in_box_;
};

class UnlockPickup : public BabyAILevel {
 public:
  explicit UnlockPickup(bool distractors) : BabyAILevel(6, 1, 2), distractors_(distractors) {}
  static TaskShape define(const Config& c) {
    return level_shape<UnlockPickup>(6, 1, 2, kShortMission, c.flag("distractors"));
  }

 protected:
  void gen_mission(WorldState& w) override {
    const Placed obj = add_object(w, 1, 0, kBox);
    const PlacedDoor door = add_door(w, 0, 0, 0, std::nullopt, true);
    add_object(w, 0, 0, kKey, door.door.color);
    if (distractors_) add_distractors(w, std::nullopt, std::nullopt, 4);
    place_agent(w, 0, 0);
    instrs_ = Instr::action(Instr::kPickup, desc_of(obj.obj));
  }

 private:
  bool distractors_;
};

class BlockedUnlockPickup : public BabyAILevel {
 public:
  BlockedUnlockPickup() : BabyAILevel(6, 1, 2) {}
  static TaskShape define(const Config&) { return level_shape<BlockedUnlockPickup>(6, 1, 2, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    add_object(w, 1, 0, kBox);
    const PlacedDoor door = add_door(w, 0, 0, 0, std::nullopt, true);
    const uint8_t color = w.rand_color();
    w.grid.set(door.pos.x - 1, door.pos.y, Obj::ball(color));  // blocking the door (not a room object)
    add_object(w, 0, 0, kKey, door.door.color);
    place_agent(w, 0, 0);
    instrs_ = Instr::action(Instr::kPickup, desc(kBox));
  }
};

class UnlockToUnlock : public BabyAILevel {
 public:
  UnlockToUnlock() : BabyAILevel(6, 1, 3) {}
  static TaskShape define(const Config&) { return level_shape<UnlockToUnlock>(6, 1, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    const std::vector<uint8_t> colors = w.rand_subset(color_names(), 2);
    add_door(w, 0, 0, 0, colors[0], true);
    add_object(w, 2, 0, kKey, colors[0]);
    add_door(w, 1, 0, 0, colors[1], true);
    add_object(w, 1, 0, kKey, colors[1]);
    add_object(w, 0, 0, kBall);
    place_agent(w, 1, 0);
    instrs_ = Instr::action(Instr::kPickup, desc(kBall));
  }
};

// --- putnext.py ---

class PutNextLocal : public BabyAILevel {
 public:
  PutNextLocal(int room_size, int num_objs) : BabyAILevel(room_size, 1, 1), num_objs_(num_objs) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), num_objs = int_kwarg(c, "num_objs");
    return level_shape<PutNextLocal>(room_size, 1, 1, kShortMission, room_size, num_objs);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w);
    const std::vector<Obj> objs = objs_of(add_distractors(w, std::nullopt, std::nullopt, num_objs_, true));
    check_objs_reachable(w);
    const std::vector<Obj> pair = w.rand_subset(objs, 2);
    instrs_ = Instr::put_next(desc_of(pair[0]), desc_of(pair[1]));
  }

 private:
  int num_objs_;
};

// PutNext: an object of the left room next to one of the right room (or the other way round); with
// start_carrying the agent holds the one to move from the first step on.
class PutNext : public BabyAILevel {
 public:
  PutNext(int room_size, int objs_per_room, bool start_carrying)
      : BabyAILevel(room_size, 1, 2), objs_per_room_(objs_per_room), start_carrying_(start_carrying) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), objs_per_room = int_kwarg(c, "objs_per_room");
    if (room_size < 4 || objs_per_room > 9)
      throw std::invalid_argument("PutNext needs room_size >= 4, objs_per_room <= 9");
    return level_shape<PutNext>(room_size, 1, 2, kShortMission, room_size, objs_per_room, c.flag("start_carrying"));
  }

  // PutNext.reset takes the object off the grid into the agent's hands after the first observation
  // was made; here that happens just before the first step acts, which no observation can tell apart.
  StepOutcome step(WorldState& w, int action) override {
    if (pending_carry_) {
      pending_carry_ = false;
      w.carrying = w.grid.get(obj_a_pos_.x, obj_a_pos_.y);
      w.grid.remove(obj_a_pos_.x, obj_a_pos_.y);
      carried_cur_pos_ = obj_a_pos_;  // minigrid leaves its cur_pos where it was placed
    }
    return BabyAILevel::step(w, action);
  }
  void gen_grid(WorldState& w) override {
    BabyAILevel::gen_grid(w);
    pending_carry_ = start_carrying_;
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w, 0, 0);
    const std::vector<Placed> objs_l = add_distractors(w, 0, 0, objs_per_room_);
    const std::vector<Placed> objs_r = add_distractors(w, 1, 0, objs_per_room_);
    remove_wall(w, 0, 0, 0);
    Placed a = w.rand_elem(objs_l), b = w.rand_elem(objs_r);
    if (w.rand_bool()) std::swap(a, b);
    obj_a_pos_ = a.pos;
    instrs_ = Instr::put_next(desc_of(a.obj), desc_of(b.obj));
  }

 private:
  int objs_per_room_;
  bool start_carrying_;
  bool pending_carry_ = false;
  Pos obj_a_pos_;
};

// --- other.py ---

class ActionObjDoor : public BabyAILevel {
 public:
  ActionObjDoor() : BabyAILevel(7, 3, 3) {}
  static TaskShape define(const Config&) { return level_shape<ActionObjDoor>(7, 3, 3, kShortMission); }

 protected:
  void gen_mission(WorldState& w) override {
    std::vector<Obj> objs = objs_of(add_distractors(w, 1, 1, 5));
    for (int k = 0; k < 4; ++k) objs.push_back(add_door(w, 1, 1, std::nullopt, std::nullopt, false).door);
    place_agent(w, 1, 1);
    const Obj obj = w.rand_elem(objs);
    const bool go_to = w.rand_bool();
    const Instr::Kind other = obj.type == kDoor ? Instr::kOpen : Instr::kPickup;
    instrs_ = Instr::action(go_to ? Instr::kGoTo : other, desc_of(obj));
  }
};

class FindObj : public BabyAILevel {
 public:
  explicit FindObj(int room_size) : BabyAILevel(room_size, 3, 3) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size");
    return level_shape<FindObj>(room_size, 3, 3, kShortMission, room_size);
  }

 protected:
  void gen_mission(WorldState& w) override {
    // (sic) a row index for the column and a column index for the row: the grid is square.
    const int i = w.rand_int(0, num_rows()), j = w.rand_int(0, num_cols());
    const Placed obj = add_object(w, i, j);
    place_agent(w, 1, 1);
    connect_all(w);
    instrs_ = Instr::action(Instr::kPickup, desc(obj.obj.type));
  }
};

class KeyCorridor : public BabyAILevel {
 public:
  KeyCorridor(int num_rows, uint8_t obj_type, int room_size)
      : BabyAILevel(room_size, num_rows, 3), obj_type_(obj_type) {}
  static TaskShape define(const Config& c) {
    const int rows = int_kwarg(c, "num_rows"), room_size = int_kwarg(c, "room_size");
    return level_shape<KeyCorridor>(room_size, rows, 3, kShortMission, rows, kind_kwarg(c.string("obj_type")),
                                    room_size);
  }

 protected:
  void gen_mission(WorldState& w) override {
    for (int j = 1; j < num_rows(); ++j) remove_wall(w, 1, j, 3);
    const int room_idx = w.rand_int(0, num_rows());
    const PlacedDoor door = add_door(w, 2, room_idx, 2, std::nullopt, true);
    const Placed obj = add_object(w, 2, room_idx, obj_type_);
    add_object(w, 0, w.rand_int(0, num_rows()), kKey, door.door.color);
    place_agent(w, 1, num_rows() / 2);
    connect_all(w);
    instrs_ = Instr::action(Instr::kPickup, desc(obj.obj.type));
  }

 private:
  uint8_t obj_type_;
};

class OneRoom : public BabyAILevel {
 public:
  explicit OneRoom(int room_size) : BabyAILevel(room_size, 1, 1) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size");
    return level_shape<OneRoom>(room_size, 1, 1, kShortMission, room_size);
  }

 protected:
  void gen_mission(WorldState& w) override {
    add_object(w, 0, 0, kBall);
    place_agent(w);
    instrs_ = Instr::action(Instr::kPickup, desc(kBall));
  }
};

class MoveTwoAcross : public BabyAILevel {
 public:
  MoveTwoAcross(int room_size, int objs_per_room) : BabyAILevel(room_size, 1, 2), objs_per_room_(objs_per_room) {}
  static TaskShape define(const Config& c) {
    const int room_size = int_kwarg(c, "room_size"), objs_per_room = int_kwarg(c, "objs_per_room");
    if (objs_per_room > 9) throw std::invalid_argument("MoveTwoAcross needs objs_per_room <= 9");
    return level_shape<MoveTwoAcross>(room_size, 1, 2, kShortMission, room_size, objs_per_room);
  }

 protected:
  void gen_mission(WorldState& w) override {
    place_agent(w, 0, 0);
    const std::vector<Obj> objs_l = objs_of(add_distractors(w, 0, 0, objs_per_room_));
    const std::vector<Obj> objs_r = objs_of(add_distractors(w, 1, 0, objs_per_room_));
    remove_wall(w, 0, 0, 0);
    const std::vector<Obj> left = w.rand_subset(objs_l, 2), right = w.rand_subset(objs_r, 2);
    instrs_ = Instr::seq(Instr::kBefore, Instr::put_next(desc_of(left[0]), desc_of(right[0])),
                         Instr::put_next(desc_of(right[1]), desc_of(left[1])));
  }

 private:
  int objs_per_room_;
};

// --- LevelGen's levels (pickup.py's PickupLoc, goto.py's GoToSeq, synth.py) ---

// A LevelGen level's mission tokens: "put a red ball on your left next to a red ball in front of you" is
// 17 words, two joined by "and" 35, two of those by ", then" or "after you" 72.
inline int level_gen_tokens(const LevelGen::Options& options) {
  int tokens = kShortMission;
  for (LevelGen::InstrKind kind : options.instr_kinds) {
    if (kind == LevelGen::kAndKind) tokens = std::max(tokens, 35);
    if (kind == LevelGen::kSeqKind) tokens = std::max(tokens, 72);
  }
  return tokens;
}

// The LevelGen kwargs every such level passes on (room_size, num_rows, num_cols, num_dists, ...); the
// level fixes the rest.
template <LevelGen::Options (*Fix)(LevelGen::Options)>
TaskShape level_gen_shape(const Config& c) {
  LevelGen::Options options;
  options.room_size = int_kwarg(c, "room_size");
  options.num_rows = int_kwarg(c, "num_rows");
  options.num_cols = int_kwarg(c, "num_cols");
  options.num_dists = int_kwarg(c, "num_dists");
  options.locked_room_prob = c.real("locked_room_prob");
  options = Fix(options);
  return level_shape<LevelGen>(options.room_size, options.num_rows, options.num_cols, level_gen_tokens(options),
                               options);
}

inline LevelGen::Options pickup_loc(LevelGen::Options o) {
  o.action_kinds = {LevelGen::kPickupAction};
  o.instr_kinds = {LevelGen::kActionKind};
  o.locations = true, o.unblocking = false;
  return o;
}
inline LevelGen::Options go_to_seq(LevelGen::Options o) {
  o.action_kinds = {LevelGen::kGoToAction};
  o.locations = false, o.unblocking = false;
  return o;
}
inline LevelGen::Options synth(LevelGen::Options o) {
  o.instr_kinds = {LevelGen::kActionKind};
  o.locations = false, o.unblocking = true, o.implicit_unlock = false;
  return o;
}
inline LevelGen::Options synth_loc(LevelGen::Options o) {
  o.instr_kinds = {LevelGen::kActionKind};
  o.locations = true, o.unblocking = true, o.implicit_unlock = false;
  return o;
}
inline LevelGen::Options synth_seq(LevelGen::Options o) {
  o.locations = true, o.unblocking = true, o.implicit_unlock = false;
  return o;
}
inline LevelGen::Options boss(LevelGen::Options o) { return o; }
inline LevelGen::Options boss_no_unlock(LevelGen::Options o) {
  o.implicit_unlock = false;
  return o;
}

}  // namespace torchpool::minigrid::babyai

namespace torchpool::minigrid {

// The BabyAI levels by env_name (torchpool/families/babyai.py).
inline const std::vector<TaskEntry>& babyai_tasks() {
  using namespace babyai;
  static const std::vector<TaskEntry> table = {
      {"babyai_gotoredball", &GoToRedBall::define},
      {"babyai_gotoredballgrey", &GoToRedBall::define_grey},
      {"babyai_gotoobj", &GoToObj::define},
      {"babyai_gotolocal", &GoToLocal::define},
      {"babyai_goto", &GoTo::define},
      {"babyai_gotoimpunlock", &GoToImpUnlock::define},
      {"babyai_gotoseq", &level_gen_shape<go_to_seq>},
      {"babyai_gotoredblueball", &GoToRedBlueBall::define},
      {"babyai_gotodoor", &GoToDoor::define},
      {"babyai_gotoobjdoor", &GoToObjDoor::define},
      {"babyai_open", &Open::define},
      {"babyai_openreddoor", &OpenRedDoor::define},
      {"babyai_opendoor", &OpenDoor::define},
      {"babyai_opentwodoors", &OpenTwoDoors::define},
      {"babyai_opendoorsorder", &OpenDoorsOrder::define},
      {"babyai_pickup", &Pickup::define},
      {"babyai_unblockpickup", &Pickup::define_unblock},
      {"babyai_pickuploc", &level_gen_shape<pickup_loc>},
      {"babyai_pickupdist", &PickupDist::define},
      {"babyai_pickupabove", &PickupAbove::define},
      {"babyai_unlock", &Unlock::define},
      {"babyai_unlocklocal", &UnlockLocal::define},
      {"babyai_keyinbox", &UnlockLocal::define_key_in_box},
      {"babyai_unlockpickup", &UnlockPickup::define},
      {"babyai_blockedunlockpickup", &BlockedUnlockPickup::define},
      {"babyai_unlocktounlock", &UnlockToUnlock::define},
      {"babyai_putnextlocal", &PutNextLocal::define},
      {"babyai_putnext", &PutNext::define},
      {"babyai_actionobjdoor", &ActionObjDoor::define},
      {"babyai_findobj", &FindObj::define},
      {"babyai_keycorridor", &KeyCorridor::define},
      {"babyai_oneroom", &OneRoom::define},
      {"babyai_movetwoacross", &MoveTwoAcross::define},
      {"babyai_synth", &level_gen_shape<synth>},
      {"babyai_synthloc", &level_gen_shape<synth_loc>},
      {"babyai_synthseq", &level_gen_shape<synth_seq>},
      {"babyai_bosslevel", &level_gen_shape<boss>},
      {"babyai_bosslevelnounlock", &level_gen_shape<boss_no_unlock>},
  };
  return table;
}

}  // namespace torchpool::minigrid
