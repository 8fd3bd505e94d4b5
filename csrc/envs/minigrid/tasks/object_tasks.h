// object_tasks.h — the one-room classes about objects and doors: FetchEnv, GoToDoorEnv, GoToObjectEnv,
// PutNearEnv, RedBlueDoorEnv (minigrid/envs/{fetch,gotodoor,gotoobject,putnear,redbluedoors}.py), with
// their step() rules.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "../task.h"

namespace torchpool::minigrid {

// GoToDoor's and GoToObject's rule: toggle ends the episode; done ends it, rewarded next to the target.
inline StepOutcome go_to_step(WorldState& w, int action, Pos target) {
  StepOutcome outcome = w.base_step(action);
  if (action == kToggle) outcome.terminated = true;
  if (action == kDone) {
    const Pos a = w.agent;
    if ((a.x == target.x && std::abs(a.y - target.y) == 1) || (a.y == target.y && std::abs(a.x - target.x) == 1))
      outcome.reward = w.success_reward();
    outcome.terminated = true;
  }
  return outcome;
}

class FetchTask : public Task {
 public:
  explicit FetchTask(int num_objs) : num_objs_(num_objs) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const int num_objs = int_kwarg(config, "numObjs");
    return {size, size, 7, [=] { return std::make_unique<FetchTask>(num_objs); }};
  }
  void gen_grid(WorldState& w) override {
    outer_walls(w);
    std::vector<Obj> objs;
    while (static_cast<int>(objs.size()) < num_objs_) {
      const uint8_t type = w.rand_elem(std::vector<uint8_t>{kKey, kBall});
      const uint8_t color = w.rand_color();
      const Obj obj = Obj::make(type, color);
      w.place_obj(obj);
      objs.push_back(obj);
    }
    w.place_agent();
    target_ = objs[static_cast<size_t>(w.rand_int(0, static_cast<int>(objs.size())))];
    static const char* const syntax[5] = {"get a", "go get a", "fetch a", "go fetch a", "you must fetch a"};
    w.mission = std::string(syntax[w.rand_int(0, 5)]) + " " + describe(target_);
  }
  StepOutcome step(WorldState& w, int action) override {
    StepOutcome outcome = w.base_step(action);
    if (!w.carrying.empty()) {  // anything picked up ends the episode; the target is rewarded
      outcome.reward = w.carrying.same(target_) ? w.success_reward() : 0.0;
      outcome.terminated = true;
    }
    return outcome;
  }

 private:
  int num_objs_;
  Obj target_;
};

class GoToDoorTask : public Task {
 public:
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    if (size < 5) throw std::invalid_argument("GoToDoor's size must be at least 5, got " + std::to_string(size));
    return {size, size, 7, [] { return std::make_unique<GoToDoorTask>(); }};
  }
  void gen_grid(WorldState& w) override {
    // The room is drawn smaller than the grid, at most as large.
    const int width = w.rand_int(5, w.grid.width() + 1);
    const int height = w.rand_int(5, w.grid.height() + 1);
    w.grid.wall_rect(0, 0, width, height);
    Pos doors[4];
    doors[0] = {w.rand_int(2, width - 2), 0};
    doors[1] = {w.rand_int(2, width - 2), height - 1};
    doors[2] = {0, w.rand_int(2, height - 2)};
    doors[3] = {width - 1, w.rand_int(2, height - 2)};
    std::vector<uint8_t> colors;
    while (colors.size() < 4) {
      const uint8_t color = w.rand_color();
      if (std::find(colors.begin(), colors.end(), color) == colors.end()) colors.push_back(color);
    }
    for (int i = 0; i < 4; ++i) w.grid.set(doors[i].x, doors[i].y, Obj::door(colors[static_cast<size_t>(i)]));
    w.place_agent({0, 0}, {width, height});
    const int index = w.rand_int(0, 4);
    target_ = doors[index];
    w.mission = std::string("go to the ") + color_name(colors[static_cast<size_t>(index)]) + " door";
  }
  StepOutcome step(WorldState& w, int action) override { return go_to_step(w, action, target_); }

 private:
  Pos target_;
};

// Draws distinct (type, colour) objects from key/ball/box, as GoToObject and PutNear do; with `apart`
// (PutNear's near_obj) none lands next to one placed before it. Returns them and where they went.
inline std::pair<std::vector<Obj>, std::vector<Pos>> place_distinct_objects(WorldState& w, int count, bool apart) {
  std::vector<Obj> objs;
  std::vector<Pos> positions;
  const WorldState::Reject near_placed = [&positions](Pos p) {
    for (const Pos& q : positions)
      if (std::abs(p.x - q.x) <= 1 && std::abs(p.y - q.y) <= 1) return true;
    return false;
  };
  while (static_cast<int>(objs.size()) < count) {
    const uint8_t type = w.rand_elem(std::vector<uint8_t>{kKey, kBall, kBox});
    const uint8_t color = w.rand_color();
    const Obj obj = Obj::make(type, color);
    bool seen = false;
    for (const Obj& other : objs) seen = seen || other.same(obj);
    if (seen) continue;
    positions.push_back(w.place_obj(obj, {0, 0}, {-1, -1}, apart ? near_placed : WorldState::Reject{}));
    objs.push_back(obj);
  }
  return {objs, positions};
}

class GoToObjectTask : public Task {
 public:
  explicit GoToObjectTask(int num_objs) : num_objs_(num_objs) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const int num_objs = int_kwarg(config, "numObjs");
    return {size, size, 7, [=] { return std::make_unique<GoToObjectTask>(num_objs); }};
  }
  void gen_grid(WorldState& w) override {
    w.grid.wall_rect(0, 0, w.grid.width(), w.grid.height());
    const auto [objs, positions] = place_distinct_objects(w, num_objs_, false);
    w.place_agent();
    const size_t index = static_cast<size_t>(w.rand_int(0, static_cast<int>(objs.size())));
    target_ = positions[index];
    w.mission = "go to the " + describe(objs[index]);
  }
  StepOutcome step(WorldState& w, int action) override { return go_to_step(w, action, target_); }

 private:
  int num_objs_;
  Pos target_;
};

class PutNearTask : public Task {
 public:
  explicit PutNearTask(int num_objs) : num_objs_(num_objs) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    const int num_objs = int_kwarg(config, "numObjs");
    return {size, size, 7, [=] { return std::make_unique<PutNearTask>(num_objs); }};
  }
  void gen_grid(WorldState& w) override {
    outer_walls(w);
    const auto [objs, placed] = place_distinct_objects(w, num_objs_, true);
    w.place_agent();
    const int count = static_cast<int>(objs.size());
    const int move_index = w.rand_int(0, count);
    int target_index = move_index;
    while (target_index == move_index) target_index = w.rand_int(0, count);
    move_ = objs[static_cast<size_t>(move_index)];
    target_pos_ = placed[static_cast<size_t>(target_index)];
    w.mission = "put the " + describe(move_) + " near the " + describe(objs[static_cast<size_t>(target_index)]);
  }
  StepOutcome step(WorldState& w, int action) override {
    const bool was_carrying = !w.carrying.empty();
    StepOutcome outcome = w.base_step(action);
    const Pos front = w.front();
    if (action == kPickup && !w.carrying.empty() && !w.carrying.same(move_)) outcome.terminated = true;
    if (action == kDrop && was_carrying) {
      // `grid.get(front) is preCarrying`: the drop happened (the agent holds nothing now).
      if (w.carrying.empty() && std::abs(front.x - target_pos_.x) <= 1 && std::abs(front.y - target_pos_.y) <= 1)
        outcome.reward = w.success_reward();
      outcome.terminated = true;
    }
    return outcome;
  }

 private:
  int num_objs_;
  Obj move_;
  Pos target_pos_;
};

class RedBlueDoorsTask : public Task {
 public:
  explicit RedBlueDoorsTask(int size) : size_(size) {}
  static TaskShape define(const Config& config) {
    const int size = int_kwarg(config, "size");
    return {2 * size, size, 7, [=] { return std::make_unique<RedBlueDoorsTask>(size); }};
  }
  void gen_grid(WorldState& w) override {
    w.grid.wall_rect(0, 0, 2 * size_, size_);
    w.grid.wall_rect(size_ / 2, 0, size_, size_);
    w.place_agent({size_ / 2, 0}, {size_, size_});
    red_ = {size_ / 2, w.rand_int(1, size_ - 1)};
    w.grid.set(red_.x, red_.y, Obj::door(kRed));
    blue_ = {size_ / 2 + size_ - 1, w.rand_int(1, size_ - 1)};
    w.grid.set(blue_.x, blue_.y, Obj::door(kBlue));
    w.mission = "open the red door then the blue door";
  }
  StepOutcome step(WorldState& w, int action) override {
    const bool red_before = open(w, red_), blue_before = open(w, blue_);
    StepOutcome outcome = w.base_step(action);
    if (open(w, blue_)) {
      outcome.reward = red_before ? w.success_reward() : 0.0;
      outcome.terminated = true;
    } else if (open(w, red_) && blue_before) {
      outcome.reward = 0.0;
      outcome.terminated = true;
    }
    return outcome;
  }

 private:
  static bool open(const WorldState& w, Pos door) { return w.grid.get(door.x, door.y).state == kOpen; }

  int size_;
  Pos red_, blue_;
};

inline const std::vector<TaskEntry>& object_tasks() {
  static const std::vector<TaskEntry> entries = {
      {"fetch", &FetchTask::define},
      {"gotodoor", &GoToDoorTask::define},
      {"gotoobject", &GoToObjectTask::define},
      {"putnear", &PutNearTask::define},
      {"redbluedoors", &RedBlueDoorsTask::define},
  };
  return entries;
}

}  // namespace torchpool::minigrid
