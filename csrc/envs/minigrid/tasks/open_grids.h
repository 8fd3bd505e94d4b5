// open_grids.h — the single-room and wall-split classes: EmptyEnv, DoorKeyEnv, DistShiftEnv, LavaGapEnv,
// CrossingEnv, FourRoomsEnv (minigrid/envs/{empty,doorkey,distshift,lavagap,crossing,fourrooms}.py).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "../task.h"

namespace torchpool::minigrid {

// "lava" or "wall": what CrossingEnv and LavaGapEnv build their obstacles of.
inline Obj obstacle_kwarg(const Config& config) {
  const std::string& name = config.string("obstacle_type");
  if (name == "lava") return Obj::lava();
  if (name == "wall") return Obj::wall();
  throw std::invalid_argument("obstacle_type must be 'lava' or 'wall', got '" + name + "'");
}

class EmptyTask : public Task {
 public:
  EmptyTask(Pos start, int start_dir) : start_(start), start_dir_(start_dir) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const Pos start = position_kwarg(config, "agent_start_pos");
    const int start_dir = int_kwarg(config, "agent_start_dir");
    return {size, size, 7, [=] { return std::make_unique<EmptyTask>(start, start_dir); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.put_obj(Obj::goal(), width - 2, height - 2);
    start_agent(w, start_, start_dir_);
    w.mission = "get to the green goal square";
  }

 private:
  Pos start_;
  int start_dir_;
};

class DoorKeyTask : public Task {
 public:
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    // The wall is drawn in [2, size - 2): minigrid's draw fails (low >= high) below 5.
    if (size < 5) throw std::invalid_argument("DoorKey's size must be at least 5, got " + std::to_string(size));
    return {size, size, 7, [] { return std::make_unique<DoorKeyTask>(); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.put_obj(Obj::goal(), width - 2, height - 2);
    const int split = w.rand_int(2, width - 2);
    w.grid.vert_wall(split, 0);
    w.place_agent({0, 0}, {split, height});
    const int door = w.rand_int(1, height - 2);
    w.put_obj(Obj::door(kYellow, true), split, door);
    w.place_obj(Obj::key(kYellow), {0, 0}, {split, height});
    w.mission = "use the key to open the door and then get to the goal";
  }
};

class DistShiftTask : public Task {
 public:
  DistShiftTask(Pos start, int start_dir, int strip2_row)
      : start_(start), start_dir_(start_dir), strip2_row_(strip2_row) {}
  static TaskShape define(const Config& config) {
    const int width = int_kwarg(config, "width"), height = int_kwarg(config, "height");
    const Pos start = position_kwarg(config, "agent_start_pos");
    const int start_dir = int_kwarg(config, "agent_start_dir");
    const int strip2_row = int_kwarg(config, "strip2_row");
    return {width, height, 7, [=] { return std::make_unique<DistShiftTask>(start, start_dir, strip2_row); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.put_obj(Obj::goal(), width - 2, 1);
    for (int i = 0; i < width - 6; ++i) {
      w.grid.set(3 + i, 1, Obj::lava());
      w.grid.set(3 + i, strip2_row_, Obj::lava());
    }
    start_agent(w, start_, start_dir_);
    w.mission = "get to the green goal square";
  }

 private:
  Pos start_;
  int start_dir_, strip2_row_;
};

class LavaGapTask : public Task {
 public:
  explicit LavaGapTask(Obj obstacle) : obstacle_(obstacle) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const Obj obstacle = obstacle_kwarg(config);
    return {size, size, 7, [=] { return std::make_unique<LavaGapTask>(obstacle); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.agent = {1, 1}, w.dir = 0;
    w.put_obj(Obj::goal(), width - 2, height - 2);
    const int gap_x = w.rand_int(2, width - 2);
    const int gap_y = w.rand_int(1, height - 1);
    w.grid.vert_wall(gap_x, 1, height - 2, obstacle_);
    w.grid.remove(gap_x, gap_y);
    w.mission = obstacle_.type == kLava ? "avoid the lava and get to the green goal square"
                                        : "find the opening and get to the green goal square";
  }

 private:
  Obj obstacle_;
};

class CrossingTask : public Task {
 public:
  CrossingTask(int num_crossings, Obj obstacle) : num_crossings_(num_crossings), obstacle_(obstacle) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const int num_crossings = int_kwarg(config, "num_crossings");
    const Obj obstacle = obstacle_kwarg(config);
    if (size % 2 == 0) throw std::invalid_argument("a crossing's size must be odd, got " + std::to_string(size));
    return {size, size, 7, [=] { return std::make_unique<CrossingTask>(num_crossings, obstacle); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    w.grid.wall_rect(0, 0, width, height);
    w.agent = {1, 1}, w.dir = 0;
    w.put_obj(Obj::goal(), width - 2, height - 2);
    // rivers: (vertical?, position); the reference shuffles the list, keeps num_crossings of them.
    std::vector<std::pair<bool, int>> rivers;
    for (int i = 2; i < height - 2; i += 2) rivers.push_back({true, i});
    for (int j = 2; j < width - 2; j += 2) rivers.push_back({false, j});
    w.rng.shuffle(rivers);
    rivers.resize(std::min(rivers.size(), static_cast<size_t>(num_crossings_)));
    std::vector<int> rivers_v, rivers_h;
    for (const auto& [vertical, pos] : rivers) (vertical ? rivers_v : rivers_h).push_back(pos);
    std::sort(rivers_v.begin(), rivers_v.end());
    std::sort(rivers_h.begin(), rivers_h.end());
    for (int i = 1; i < width - 1; ++i)
      for (int j : rivers_h) w.put_obj(obstacle_, i, j);
    for (int i : rivers_v)
      for (int j = 1; j < height - 1; ++j) w.put_obj(obstacle_, i, j);
    // path: one crossing per river, true = through a vertical river (the reference's `h` steps).
    std::vector<char> path(rivers_v.size(), 1);
    path.insert(path.end(), rivers_h.size(), 0);
    w.rng.shuffle(path);
    std::vector<int> limits_v = {0}, limits_h = {0};
    limits_v.insert(limits_v.end(), rivers_v.begin(), rivers_v.end());
    limits_v.push_back(height - 1);
    limits_h.insert(limits_h.end(), rivers_h.begin(), rivers_h.end());
    limits_h.push_back(width - 1);
    int room_i = 0, room_j = 0;
    for (const char across_vertical : path) {
      int i = 0, j = 0;
      if (across_vertical) {
        i = limits_v[room_i + 1];
        j = choice(w, limits_h[room_j] + 1, limits_h[room_j + 1]);
        ++room_i;
      } else {
        i = choice(w, limits_v[room_i] + 1, limits_v[room_i + 1]);
        j = limits_h[room_j + 1];
        ++room_j;
      }
      w.grid.remove(i, j);
    }
    w.mission = obstacle_.type == kLava ? "avoid the lava and get to the green goal square"
                                        : "find the opening and get to the green goal square";
  }

 private:
  // np_random.choice(range(low, high)): an index drawn as integers(0, n).
  static int choice(WorldState& w, int low, int high) { return low + w.rand_int(0, high - low); }

  int num_crossings_;
  Obj obstacle_;
};

class FourRoomsTask : public Task {
 public:
  FourRoomsTask(Pos agent_pos, Pos goal_pos) : agent_pos_(agent_pos), goal_pos_(goal_pos) {}
  static TaskShape define(const Config& config) {
    const Pos agent_pos = position_kwarg(config, "agent_pos"), goal_pos = position_kwarg(config, "goal_pos");
    return {19, 19, 7, [=] { return std::make_unique<FourRoomsTask>(agent_pos, goal_pos); }};
  }
  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    outer_walls(w);
    const int room_w = width / 2, room_h = height / 2;
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) {
        const int x_left = i * room_w, y_top = j * room_h, x_right = x_left + room_w, y_bottom = y_top + room_h;
        if (i + 1 < 2) {
          w.grid.vert_wall(x_right, y_top, room_h);
          w.grid.remove(x_right, w.rand_int(y_top + 1, y_bottom));
        }
        if (j + 1 < 2) {
          w.grid.horz_wall(x_left, y_bottom, room_w);
          w.grid.remove(w.rand_int(x_left + 1, x_right), y_bottom);
        }
      }
    if (agent_pos_.x >= 0) {
      w.agent = agent_pos_;
      w.grid.remove(agent_pos_.x, agent_pos_.y);
      w.dir = w.rand_int(0, 4);
    } else {
      w.place_agent();
    }
    if (goal_pos_.x >= 0)
      w.put_obj(Obj::goal(), goal_pos_.x, goal_pos_.y);
    else
      w.place_obj(Obj::goal());
    w.mission = "reach the goal";
  }

 private:
  Pos agent_pos_, goal_pos_;
};

}  // namespace torchpool::minigrid
