// rooms.h — the classes that build their own rooms and hallways rather than a RoomGrid, and the moving
// obstacles: MultiRoomEnv, LockedRoomEnv, PlaygroundEnv, MemoryEnv, DynamicObstaclesEnv
// (minigrid/envs/{multiroom,lockedroom,playground,memory,dynamicobstacles}.py), their step() rules included.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../task.h"

namespace torchpool::minigrid {

class MultiRoomTask : public Task {
 public:
  MultiRoomTask(int min_rooms, int max_rooms, int max_room_size)
      : min_rooms_(min_rooms), max_rooms_(max_rooms), max_room_size_(max_room_size) {}
  static TaskShape define(const Config& config) {
    const int min_rooms = int_kwarg(config, "minNumRooms");
    const int max_rooms = int_kwarg(config, "maxNumRooms");
    const int max_room_size = int_kwarg(config, "maxRoomSize");
    const int width = int_kwarg(config, "width"), height = int_kwarg(config, "height");
    if (min_rooms < 1 || max_rooms < min_rooms)
      throw std::invalid_argument("multiroom needs 0 < minNumRooms <= maxNumRooms");
    if (max_room_size < 4) throw std::invalid_argument("multiroom's maxRoomSize must be at least 4");
    return {width, height, 7, [=] { return std::make_unique<MultiRoomTask>(min_rooms, max_rooms, max_room_size); }};
  }

  void gen_grid(WorldState& w) override {
    const std::vector<Room> rooms = draw_rooms(w);
    draw_walls_and_doors(w, rooms);
    w.place_agent(rooms.front().top, rooms.front().size);
    w.place_obj(Obj::goal(), rooms.back().top, rooms.back().size);
    w.mission = "traverse the rooms to get to the goal";
  }

 private:
  struct Room {
    Pos top, size, entry_door;
  };

  // Chains of rooms are drawn until one is as long as the drawn count; the longest so far is kept.
  // The reference loops forever on a count that never fits; we give up after kMaxChains.
  std::vector<Room> draw_rooms(WorldState& w) const {
    static constexpr long kMaxChains = 1'000'000;
    const int width = w.grid.width();
    const int num_rooms = w.rand_int(min_rooms_, max_rooms_ + 1);
    std::vector<Room> rooms;
    for (long chain = 0; rooms.size() < static_cast<size_t>(num_rooms); ++chain) {
      if (chain == kMaxChains)
        throw std::runtime_error("multiroom: no chain of " + std::to_string(num_rooms) + " rooms fits");
      std::vector<Room> attempt;
      const int door_x = w.rand_int(0, width - 2);
      const int door_y = w.rand_int(0, width - 2);  // sic: the reference draws both from the width
      place_room(w, num_rooms, attempt, /*entry_wall=*/2, {door_x, door_y});
      if (attempt.size() > rooms.size()) rooms = std::move(attempt);
    }
    return rooms;
  }

  // _placeRoom: a room of drawn size entered through `entry_door` on its `entry_wall` (0 right, 1 south,
  // 2 left, 3 north), then up to 8 tries at the next room through an exit on another wall. A room
  // once added stays, whatever its successors do; false only when this room itself does not fit.
  bool place_room(WorldState& w, int num_left, std::vector<Room>& rooms, int entry_wall, Pos entry_door) const {
    const int size_x = w.rand_int(4, max_room_size_ + 1);
    const int size_y = w.rand_int(4, max_room_size_ + 1);
    Pos top;
    if (rooms.empty()) {
      top = entry_door;
    } else if (entry_wall == 0) {
      top = {entry_door.x - size_x + 1, w.rand_int(entry_door.y - size_y + 2, entry_door.y)};
    } else if (entry_wall == 1) {
      const int x = w.rand_int(entry_door.x - size_x + 2, entry_door.x);
      top = {x, entry_door.y - size_y + 1};
    } else if (entry_wall == 2) {
      top = {entry_door.x, w.rand_int(entry_door.y - size_y + 2, entry_door.y)};
    } else {
      const int x = w.rand_int(entry_door.x - size_x + 2, entry_door.x);
      top = {x, entry_door.y};
    }
    if (top.x < 0 || top.y < 0) return false;
    // sic: the reference lets a room touch the right edge but not the bottom one.
    if (top.x + size_x > w.grid.width() || top.y + size_y >= w.grid.height()) return false;
    // The previous room shares the entry wall, so only the ones before it must stay clear.
    for (size_t i = 0; i + 1 < rooms.size(); ++i) {
      const Room& room = rooms[i];
      const bool apart = top.x + size_x < room.top.x || room.top.x + room.size.x <= top.x ||
                         top.y + size_y < room.top.y || room.top.y + room.size.y <= top.y;
      if (!apart) return false;
    }
    rooms.push_back({top, {size_x, size_y}, entry_door});
    if (num_left == 1) return true;
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::vector<int> walls;
      for (int wall = 0; wall < 4; ++wall)
        if (wall != entry_wall) walls.push_back(wall);
      const int exit_wall = w.rand_elem(walls);
      const Pos exit_door = draw_exit(w, exit_wall, top, {size_x, size_y});
      if (place_room(w, num_left - 1, rooms, (exit_wall + 2) % 4, exit_door)) break;
    }
    return true;
  }

  static Pos draw_exit(WorldState& w, int wall, Pos top, Pos size) {
    switch (wall) {
      case 0:
        return {top.x + size.x - 1, top.y + w.rand_int(1, size.y - 1)};
      case 1:
        return {top.x + w.rand_int(1, size.x - 1), top.y + size.y - 1};
      case 2:
        return {top.x, top.y + w.rand_int(1, size.y - 1)};
      default:
        return {top.x + w.rand_int(1, size.x - 1), top.y};
    }
  }

  // Each room's walls, then its entry door in a colour other than the previous door's; a later room's
  // walls may cover an earlier room's, as in the reference.
  static void draw_walls_and_doors(WorldState& w, const std::vector<Room>& rooms) {
    int prev_color = -1;
    for (size_t idx = 0; idx < rooms.size(); ++idx) {
      const Room& room = rooms[idx];
      for (int i = 0; i < room.size.x; ++i) {
        w.grid.set(room.top.x + i, room.top.y, Obj::wall());
        w.grid.set(room.top.x + i, room.top.y + room.size.y - 1, Obj::wall());
      }
      for (int j = 0; j < room.size.y; ++j) {
        w.grid.set(room.top.x, room.top.y + j, Obj::wall());
        w.grid.set(room.top.x + room.size.x - 1, room.top.y + j, Obj::wall());
      }
      if (idx == 0) continue;
      std::vector<uint8_t> colors;
      for (uint8_t color : kColorNames)
        if (color != prev_color) colors.push_back(color);
      const uint8_t color = w.rand_elem(colors);
      w.grid.set(room.entry_door.x, room.entry_door.y, Obj::door(color));
      prev_color = color;
    }
  }

  int min_rooms_, max_rooms_, max_room_size_;
};

class LockedRoomTask : public Task {
 public:
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    // Below 10 the bottom rooms' doors fall outside the grid (the reference fails there too).
    if (size < 10) throw std::invalid_argument("lockedroom's size must be at least 10, got " + std::to_string(size));
    return {size, size, 7, [] { return std::make_unique<LockedRoomTask>(); }};
  }

  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    const int left_wall = width / 2 - 2, right_wall = width / 2 + 2;
    w.grid.vert_wall(left_wall, 0, height);
    w.grid.vert_wall(right_wall, 0, height);
    // Three rooms a side, listed row by row, left before right.
    std::vector<Room> rooms;
    for (int n = 0; n < 3; ++n) {
      const int j = n * (height / 3);
      for (int i = 0; i < left_wall; ++i) w.grid.set(i, j, Obj::wall());
      for (int i = right_wall; i < width; ++i) w.grid.set(i, j, Obj::wall());
      const Pos size = {left_wall + 1, height / 3 + 1};
      rooms.push_back({{0, j}, size, {left_wall, j + 3}});
      rooms.push_back({{right_wall, j}, size, {right_wall, j + 3}});
    }
    const int locked = w.rand_int(0, static_cast<int>(rooms.size()));
    const Pos goal = rand_pos(w, rooms[locked]);
    w.grid.set(goal.x, goal.y, Obj::goal());
    // _rand_elem(sorted(colours left)): color_names() is sorted, and erasing keeps what is left in order.
    std::vector<uint8_t> colors = color_names();
    for (size_t i = 0; i < rooms.size(); ++i) {
      const size_t index = static_cast<size_t>(w.rand_int(0, static_cast<int>(colors.size())));
      rooms[i].color = colors[index];
      colors.erase(colors.begin() + static_cast<std::ptrdiff_t>(index));
      w.grid.set(rooms[i].door.x, rooms[i].door.y, Obj::door(rooms[i].color, static_cast<int>(i) == locked));
    }
    // The key lies in any other room (the reference compares the rooms by identity).
    int key_room = locked;
    while (key_room == locked) key_room = w.rand_int(0, static_cast<int>(rooms.size()));
    const Pos key = rand_pos(w, rooms[key_room]);
    w.grid.set(key.x, key.y, Obj::key(rooms[locked].color));
    w.place_agent({left_wall, 0}, {right_wall - left_wall, height});
    const std::string locked_color = color_name(rooms[locked].color);
    w.mission = "get the " + locked_color + " key from the " + color_name(rooms[key_room].color) +
                " room, unlock the " + locked_color + " door and go to the goal";
  }

 private:
  struct Room {
    Pos top, size, door;
    uint8_t color = 0;
  };

  // LockedRoom.rand_pos: a cell inside the room's walls.
  static Pos rand_pos(WorldState& w, const Room& room) {
    return w.rand_pos(room.top.x + 1, room.top.x + room.size.x - 1, room.top.y + 1, room.top.y + room.size.y - 1);
  }
};

class PlaygroundTask : public Task {
 public:
  static TaskShape define(const Config&) {
    return {19, 19, 7, [] { return std::make_unique<PlaygroundTask>(); }};
  }

  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    outer_walls(w);
    const int room_w = width / 3, room_h = height / 3;
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const int x_left = i * room_w, y_top = j * room_h, x_right = x_left + room_w, y_bottom = y_top + room_h;
        if (i + 1 < 3) {
          w.grid.vert_wall(x_right, y_top, room_h);
          const int y = w.rand_int(y_top + 1, y_bottom - 1);
          w.grid.set(x_right, y, Obj::door(w.rand_color()));
        }
        if (j + 1 < 3) {
          w.grid.horz_wall(x_left, y_bottom, room_w);
          const int x = w.rand_int(x_left + 1, x_right - 1);
          w.grid.set(x, y_bottom, Obj::door(w.rand_color()));
        }
      }
    w.place_agent();
    static constexpr uint8_t kTypes[3] = {kKey, kBall, kBox};
    for (int n = 0; n < 12; ++n) {
      const uint8_t type = kTypes[w.rand_int(0, 3)];
      const uint8_t color = w.rand_color();
      w.place_obj(Obj::make(type, color));
    }
    w.mission = "";  // the reference has no mission here
  }
};

class MemoryTask : public Task {
 public:
  explicit MemoryTask(bool random_length) : random_length_(random_length) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const bool random_length = config.flag("random_length");
    if (size < 7 || size % 2 == 0)
      throw std::invalid_argument("memory's size must be odd and at least 7, got " + std::to_string(size));
    return {size, size, 7, [=] { return std::make_unique<MemoryTask>(random_length); }};
  }

  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    outer_walls(w);
    const int mid = height / 2, upper_wall = mid - 2, lower_wall = mid + 2;
    const int hallway_end = random_length_ ? w.rand_int(4, width - 2) : width - 3;
    // The start room, the hallway east of it, and the split at its end.
    for (int i = 1; i < 5; ++i) {
      w.grid.set(i, upper_wall, Obj::wall());
      w.grid.set(i, lower_wall, Obj::wall());
    }
    w.grid.set(4, upper_wall + 1, Obj::wall());
    w.grid.set(4, lower_wall - 1, Obj::wall());
    for (int i = 5; i < hallway_end; ++i) {
      w.grid.set(i, upper_wall + 1, Obj::wall());
      w.grid.set(i, lower_wall - 1, Obj::wall());
    }
    for (int j = 0; j < height; ++j) {
      if (j != mid) w.grid.set(hallway_end, j, Obj::wall());
      w.grid.set(hallway_end + 2, j, Obj::wall());
    }
    w.agent = {w.rand_int(1, hallway_end + 1), mid};
    w.dir = 0;
    // The object to remember, then which end of the split holds its twin ([Ball, Key] or [Key, Ball]).
    const uint8_t start_type = w.rand_int(0, 2) == 0 ? kKey : kBall;
    w.grid.set(1, mid - 1, Obj::make(start_type, kGreen));
    const bool ball_first = w.rand_int(0, 2) == 0;
    const uint8_t upper_type = ball_first ? kBall : kKey, lower_type = ball_first ? kKey : kBall;
    const Pos upper = {hallway_end + 1, mid - 2}, lower = {hallway_end + 1, mid + 2};
    w.grid.set(upper.x, upper.y, Obj::make(upper_type, kGreen));
    w.grid.set(lower.x, lower.y, Obj::make(lower_type, kGreen));
    const Pos below_upper = {upper.x, upper.y + 1}, above_lower = {lower.x, lower.y - 1};
    success_ = start_type == upper_type ? below_upper : above_lower;
    failure_ = start_type == upper_type ? above_lower : below_upper;
    w.mission = "go to the matching object at the end of the hallway";
  }

  // Pickup toggles instead; stepping next to either object ends the episode, rewarded at the twin.
  StepOutcome step(WorldState& w, int action) override {
    StepOutcome outcome = w.base_step(action == kPickup ? kToggle : action);
    if (w.agent == success_) outcome.reward = w.success_reward(), outcome.terminated = true;
    if (w.agent == failure_) outcome.reward = 0.0, outcome.terminated = true;
    return outcome;
  }

 private:
  bool random_length_;
  Pos success_, failure_;
};

class DynamicObstaclesTask : public Task {
 public:
  DynamicObstaclesTask(Pos start, int start_dir, int num_obstacles)
      : start_(start), start_dir_(start_dir), num_obstacles_(num_obstacles) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const Pos start = position_kwarg(config, "agent_start_pos");
    const int start_dir = int_kwarg(config, "agent_start_dir");
    int num_obstacles = int_kwarg(config, "n_obstacles");
    // The reference's cap: `n <= size / 2 + 1` in floats, else int(size / 2).
    if (2 * num_obstacles > size + 2) num_obstacles = size / 2;
    return {size, size, 3, [=] { return std::make_unique<DynamicObstaclesTask>(start, start_dir, num_obstacles); }};
  }

  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.grid.set(width - 2, height - 2, Obj::goal());
    start_agent(w, start_, start_dir_);
    obstacles_.clear();
    for (int i = 0; i < num_obstacles_; ++i) obstacles_.push_back(w.place_obj(kObstacle, {0, 0}, {-1, -1}, {}, 100));
    w.mission = "get to the green goal square";
  }

  // The balls move first, each to a free cell around it if 100 draws find one; walking into anything
  // but the goal (judged before they moved) ends the episode at -1.
  StepOutcome step(WorldState& w, int action) override {
    if (action >= 3) action = kLeft;
    const Pos front = w.front();
    const Obj& front_cell = w.grid.get(front.x, front.y);
    const bool blocked = !front_cell.empty() && front_cell.type != kGoal;
    for (Pos& obstacle : obstacles_) move_obstacle(w, obstacle);
    StepOutcome outcome = w.base_step(action);
    if (action == kForward && blocked) outcome.reward = -1.0, outcome.terminated = true;
    return outcome;
  }

 private:
  static inline const Obj kObstacle = Obj::ball(kBlue);  // Ball()'s default colour

  static void move_obstacle(WorldState& w, Pos& obstacle) {
    try {
      const Pos moved = w.place_obj(kObstacle, {obstacle.x - 1, obstacle.y - 1}, {3, 3}, {}, 100);
      w.grid.remove(obstacle.x, obstacle.y);
      obstacle = moved;
    } catch (const WorldState::PlacementFailed&) {
      // the reference leaves a ball with no free cell around it where it is
    }
  }

  Pos start_;
  int start_dir_, num_obstacles_;
  std::vector<Pos> obstacles_;
};

inline const std::vector<TaskEntry>& room_tasks() {
  static const std::vector<TaskEntry> entries = {
      {"multiroom", &MultiRoomTask::define},
      {"lockedroom", &LockedRoomTask::define},
      {"playground", &PlaygroundTask::define},
      {"memory", &MemoryTask::define},
      {"dynamicobstacles", &DynamicObstaclesTask::define},
  };
  return entries;
}

}  // namespace torchpool::minigrid
