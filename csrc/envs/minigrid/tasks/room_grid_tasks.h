// room_grid_tasks.h — the classes built on RoomGrid (room_grid.h): UnlockEnv, UnlockPickupEnv,
// BlockedUnlockPickupEnv, KeyCorridorEnv, ObstructedMaze_1Dlhb, ObstructedMaze_Full and
// ObstructedMaze_Full_V1 (minigrid/envs/{unlock,unlockpickup,blockedunlockpickup,keycorridor,
// obstructedmaze,obstructedmaze_v1}.py), with their step() rules. The object a class asks for carries
// RoomGridTask::kTargetTag: our stand-in for the reference's `self.carrying == self.obj` identity test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "room_grid.h"

namespace torchpool::minigrid {

class UnlockTask : public RoomGridTask {
 public:
  UnlockTask() : RoomGridTask(6, 1, 2) {}
  static TaskShape define(const Config&) {
    return {grid_side(6, 2), grid_side(6, 1), 7, [] { return std::make_unique<UnlockTask>(); }};
  }
  void gen_grid(WorldState& w) override {
    RoomGridTask::gen_grid(w);
    const PlacedDoor door = add_door(w, 0, 0, 0, std::nullopt, true);
    add_object(w, 0, 0, kKey, door.door.color);
    place_agent(w, 0, 0);
    door_pos_ = door.pos;
    w.mission = "open the door";
  }
  // Any toggle that leaves the door open wins (only the one opening it can: that ends the episode).
  StepOutcome step(WorldState& w, int action) override {
    StepOutcome outcome = w.base_step(action);
    if (action == kToggle && w.grid.get(door_pos_.x, door_pos_.y).state == kOpen) {
      outcome.reward = w.success_reward();
      outcome.terminated = true;
    }
    return outcome;
  }

 private:
  Pos door_pos_;  // doors never move: the door is the one at this cell
};

class UnlockPickupTask : public RoomGridTask {
 public:
  UnlockPickupTask() : RoomGridTask(6, 1, 2) {}
  static TaskShape define(const Config&) {
    return {grid_side(6, 2), grid_side(6, 1), 7, [] { return std::make_unique<UnlockPickupTask>(); }};
  }
  void gen_grid(WorldState& w) override {
    RoomGridTask::gen_grid(w);
    const Placed obj = add_object(w, 1, 0, kBox, std::nullopt, kTargetTag);
    const PlacedDoor door = add_door(w, 0, 0, 0, std::nullopt, true);
    add_object(w, 0, 0, kKey, door.door.color);
    place_agent(w, 0, 0);
    w.mission = "pick up the " + describe(obj.obj);
  }
  StepOutcome step(WorldState& w, int action) override { return pick_up_target_step(w, action); }
};

class BlockedUnlockPickupTask : public RoomGridTask {
 public:
  BlockedUnlockPickupTask() : RoomGridTask(6, 1, 2) {}
  static TaskShape define(const Config&) {
    return {grid_side(6, 2), grid_side(6, 1), 7, [] { return std::make_unique<BlockedUnlockPickupTask>(); }};
  }
  void gen_grid(WorldState& w) override {
    RoomGridTask::gen_grid(w);
    const Placed obj = add_object(w, 1, 0, kBox, std::nullopt, kTargetTag);
    const PlacedDoor door = add_door(w, 0, 0, 0, std::nullopt, true);
    // A ball just left of the door, in the agent's room (not one of the room's objects).
    const uint8_t color = w.rand_color();
    w.grid.set(door.pos.x - 1, door.pos.y, Obj::ball(color));
    add_object(w, 0, 0, kKey, door.door.color);
    place_agent(w, 0, 0);
    w.mission = "pick up the " + describe(obj.obj);
  }
  StepOutcome step(WorldState& w, int action) override { return pick_up_target_step(w, action); }
};

class KeyCorridorTask : public RoomGridTask {
 public:
  KeyCorridorTask(int num_rows, uint8_t obj_type, int room_size)
      : RoomGridTask(room_size, num_rows, 3), obj_type_(obj_type) {}
  static TaskShape define(const Config& config) {
    const int num_rows = int_kwarg(config, "num_rows");
    const uint8_t obj_type = kind_kwarg(config.string("obj_type"));
    const int room_size = int_kwarg(config, "room_size");
    if (room_size < 3 || num_rows < 1)
      throw std::invalid_argument("KeyCorridor needs room_size >= 3 and num_rows >= 1");
    return {grid_side(room_size, 3), grid_side(room_size, num_rows), 7,
            [=] { return std::make_unique<KeyCorridorTask>(num_rows, obj_type, room_size); }};
  }
  void gen_grid(WorldState& w) override {
    RoomGridTask::gen_grid(w);
    // The middle column is one hallway.
    for (int j = 1; j < num_rows(); ++j) remove_wall(w, 1, j, 3);
    // The target behind a locked door on the right, its key in a room on the left.
    const int room_idx = w.rand_int(0, num_rows());
    const PlacedDoor door = add_door(w, 2, room_idx, 2, std::nullopt, true);
    const Placed obj = add_object(w, 2, room_idx, obj_type_, std::nullopt, kTargetTag);
    const int key_row = w.rand_int(0, num_rows());
    add_object(w, 0, key_row, kKey, door.door.color);
    place_agent(w, 1, num_rows() / 2);
    connect_all(w);
    w.mission = "pick up the " + describe(obj.obj);
  }
  StepOutcome step(WorldState& w, int action) override { return pick_up_target_step(w, action); }

 private:
  uint8_t obj_type_;
};

// ObstructedMazeEnv: 6-cell rooms, door colours a random permutation of COLOR_NAMES, a blue ball to
// find; doors may be locked with their key in the room (hidden in a grey box) and blocked by a green ball.
class ObstructedMazeTask : public RoomGridTask {
 public:
  ObstructedMazeTask(int num_rows, int num_cols) : RoomGridTask(6, num_rows, num_cols) {}
  void gen_grid(WorldState& w) override {
    RoomGridTask::gen_grid(w);
    door_colors_ = w.rand_subset(color_names(), color_names().size());
    w.mission = std::string("pick up the ") + color_name(kBallToFind) + " ball";
  }
  StepOutcome step(WorldState& w, int action) override { return pick_up_target_step(w, action); }

 protected:
  // COLOR_NAMES[0], [1], [2].
  static constexpr uint8_t kBallToFind = kColorNames[0];
  static constexpr uint8_t kBlockingBall = kColorNames[1];
  static constexpr uint8_t kKeyBox = kColorNames[2];

  // Door colour n of the permutation; n may be negative, as Python's index modulo its length.
  uint8_t door_color(int n) const {
    const int count = static_cast<int>(door_colors_.size());
    return door_colors_[static_cast<size_t>(((n % count) + count) % count)];
  }

  // ObstructedMazeEnv.add_door: the door, then its blocking ball, then (locked) its key in the room.
  PlacedDoor add_maze_door(WorldState& w, int i, int j, int door_idx, uint8_t color, bool locked,
                           bool key_in_box = false, bool blocked = false) {
    const PlacedDoor door = add_door(w, i, j, door_idx, color, locked);
    if (blocked) block_door(w, door.pos, door_idx);
    if (locked) add_key(w, i, j, door.door.color, key_in_box);
    return door;
  }

  // A green ball on the room's side of the door (over whatever was there: the reference's grid.set).
  void block_door(WorldState& w, Pos door_pos, int door_idx) {
    w.grid.set(door_pos.x - kDirX[door_idx], door_pos.y - kDirY[door_idx], Obj::ball(kBlockingBall));
  }

  // A key of `color` in room (i, j), inside a grey box when key_in_box.
  void add_key(WorldState& w, int i, int j, uint8_t color, bool key_in_box) {
    Obj obj = Obj::key(color);
    if (key_in_box) {
      Obj box = Obj::box(kKeyBox);
      box.put_inside(obj);
      obj = box;
    }
    place_in_room(w, i, j, obj);
  }

 private:
  std::vector<uint8_t> door_colors_;
};

class ObstructedMaze1DlhbTask : public ObstructedMazeTask {
 public:
  ObstructedMaze1DlhbTask(bool key_in_box, bool blocked)
      : ObstructedMazeTask(1, 2), key_in_box_(key_in_box), blocked_(blocked) {}
  static TaskShape define(const Config& config) {
    const bool key_in_box = config.flag("key_in_box"), blocked = config.flag("blocked");
    return {grid_side(6, 2), grid_side(6, 1), 7,
            [=] { return std::make_unique<ObstructedMaze1DlhbTask>(key_in_box, blocked); }};
  }
  void gen_grid(WorldState& w) override {
    ObstructedMazeTask::gen_grid(w);
    add_maze_door(w, 0, 0, 0, door_color(0), true, key_in_box_, blocked_);
    add_object(w, 1, 0, kBall, kBallToFind, kTargetTag);
    place_agent(w, 0, 0);
  }

 private:
  bool key_in_box_, blocked_;
};

// ObstructedMaze_Full and its V1: 3x3 rooms; the middle one opens (unlocked) onto the side rooms of
// num_quarters quarters, each side room has locked doors to its two corners, the ball is in one of them.
// V1 adds both of a side room's doors (and their blocking balls) before their keys, so that no ball is
// set over a key already placed; the original places each key right after its door.
class ObstructedMazeFullTask : public ObstructedMazeTask {
 public:
  ObstructedMazeFullTask(Pos agent_room, bool key_in_box, bool blocked, int num_quarters, bool v1)
      : ObstructedMazeTask(3, 3),
        agent_room_(agent_room),
        key_in_box_(key_in_box),
        blocked_(blocked),
        num_quarters_(num_quarters),
        v1_(v1) {}
  static TaskShape define_v0(const Config& config) { return define(config, false); }
  static TaskShape define_v1(const Config& config) { return define(config, true); }

  void gen_grid(WorldState& w) override {
    ObstructedMazeTask::gen_grid(w);
    static const Pos side_rooms[4] = {{2, 1}, {1, 2}, {0, 1}, {1, 0}};
    for (int i = 0; i < num_quarters_; ++i) {
      const Pos side = side_rooms[i];
      add_maze_door(w, 1, 1, i, door_color(i), false);
      if (v1_) {
        for (int k : {-1, 1}) {
          const int door_idx = (i + k + 4) % 4;
          const PlacedDoor door = add_door(w, side.x, side.y, door_idx, door_color(i + k), true);
          if (blocked_) block_door(w, door.pos, door_idx);
        }
        for (int k : {-1, 1}) add_key(w, side.x, side.y, door_color(i + k), key_in_box_);
      } else {
        for (int k : {-1, 1})
          add_maze_door(w, side.x, side.y, (i + k + 4) % 4, door_color(i + k), true, key_in_box_, blocked_);
      }
    }
    static const std::vector<Pos> all_corners = {{2, 0}, {2, 2}, {0, 2}, {0, 0}};
    const std::vector<Pos> corners(all_corners.begin(), all_corners.begin() + num_quarters_);
    const Pos ball_room = w.rand_elem(corners);
    add_object(w, ball_room.x, ball_room.y, kBall, kBallToFind, kTargetTag);
    place_agent(w, agent_room_.x, agent_room_.y);
  }

 private:
  static TaskShape define(const Config& config, bool v1) {
    const Pos agent_room = position_kwarg(config, "agent_room");
    const bool key_in_box = config.flag("key_in_box"), blocked = config.flag("blocked");
    const int num_quarters = int_kwarg(config, "num_quarters");
    config.integer("num_rooms_visited");  // only the step limit's (the registration's max_steps)
    if (agent_room.x < 0 || agent_room.y < 0 || agent_room.x > 2 || agent_room.y > 2)
      throw std::invalid_argument("agent_room must be a room (column, row) of the 3x3 maze");
    if (num_quarters < 1 || num_quarters > 4) throw std::invalid_argument("num_quarters must be in [1, 4]");
    return {grid_side(6, 3), grid_side(6, 3), 7, [=] {
              return std::make_unique<ObstructedMazeFullTask>(agent_room, key_in_box, blocked, num_quarters, v1);
            }};
  }

  Pos agent_room_;
  bool key_in_box_, blocked_;
  int num_quarters_;
  bool v1_;
};

inline const std::vector<TaskEntry>& room_grid_tasks() {
  static const std::vector<TaskEntry> entries = {
      {"unlock", &UnlockTask::define},
      {"unlockpickup", &UnlockPickupTask::define},
      {"blockedunlockpickup", &BlockedUnlockPickupTask::define},
      {"keycorridor", &KeyCorridorTask::define},
      {"obstructedmaze_1dlhb", &ObstructedMaze1DlhbTask::define},
      {"obstructedmaze_full", &ObstructedMazeFullTask::define_v0},
      {"obstructedmaze_full_v1", &ObstructedMazeFullTask::define_v1},
  };
  return entries;
}

}  // namespace torchpool::minigrid
