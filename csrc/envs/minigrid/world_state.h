// world_state.h — one MiniGrid env's state and the base class's rules (minigrid 3.x minigrid_env.py):
// the random draws every layout makes (_rand_int, _rand_elem, place_obj, place_agent, ...), in the
// reference's order, from Gymnasium's np_random (NumpyGenerator); and the step every task starts from.
//
// A task (tasks/*.h) lays out its grid with these and adds its own rules around step(); the draws
// must be the reference's one for one, or every later layout of the env differs.
#pragma once

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/numpy_random.h"
#include "world.h"

namespace torchpool::minigrid {

enum Actions : int { kLeft = 0, kRight = 1, kForward = 2, kPickup = 3, kDrop = 4, kToggle = 5, kDone = 6 };

struct StepOutcome {
  double reward = 0.0;
  bool terminated = false;
};

class WorldState {
 public:
  NumpyGenerator rng{0};
  Grid grid;
  Pos agent;
  int dir = -1;
  Obj carrying;
  int step_count = 0;
  int max_steps = 100;
  std::string mission;

  // reset(): what MiniGridEnv.reset does around _gen_grid (the task's).
  void begin_episode(int width, int height) {
    agent = {-1, -1};
    dir = -1;
    grid.resize(width, height);
    carrying = Obj{};
    step_count = 0;
  }

  // _reward(): 1 - 0.9 * step_count / max_steps.
  double success_reward() const { return 1.0 - 0.9 * (static_cast<double>(step_count) / max_steps); }

  Pos front() const { return {agent.x + kDirX[dir], agent.y + kDirY[dir]}; }

  // --- the draws (MiniGridEnv._rand_*) ---
  int rand_int(int low, int high) { return static_cast<int>(rng.integers(low, high)); }
  bool rand_bool() { return rng.integers(0, 2) == 0; }
  template <class T>
  T rand_elem(const std::vector<T>& items) {
    return items[static_cast<size_t>(rand_int(0, static_cast<int>(items.size())))];
  }
  uint8_t rand_color() { return kColorNames[rand_int(0, 6)]; }
  // _rand_subset: distinct elements, drawn one by one from what is left.
  template <class T>
  std::vector<T> rand_subset(std::vector<T> items, size_t count) {
    std::vector<T> out;
    while (out.size() < count) {
      const size_t index = static_cast<size_t>(rand_int(0, static_cast<int>(items.size())));
      out.push_back(items[index]);
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(index));
    }
    return out;
  }
  Pos rand_pos(int x_low, int x_high, int y_low, int y_high) {
    const int x = rand_int(x_low, x_high);
    const int y = rand_int(y_low, y_high);
    return {x, y};
  }

  // place_obj(obj, top, size, reject_fn, max_tries): rejection-samples an empty cell (not the agent's)
  // in the rectangle; size {-1, -1} is the whole grid. `obj` null places nothing (place_agent's use).
  // minigrid's default max_tries is unbounded; ours stops at kUnbounded so a layout with no room left
  // fails as an error instead of hanging the env's thread.
  static constexpr long kUnbounded = 100'000'000;
  using Reject = std::function<bool(Pos)>;
  Pos place_obj(const Obj* obj, Pos top = {0, 0}, Pos size = {-1, -1}, const Reject& reject = {},
                long max_tries = kUnbounded) {
    top = {std::max(top.x, 0), std::max(top.y, 0)};
    if (size.x < 0) size = {grid.width(), grid.height()};
    long tries = 0;
    Pos pos;
    while (true) {
      if (tries > max_tries) throw PlacementFailed();
      ++tries;
      pos.x = rand_int(top.x, std::min(top.x + size.x, grid.width()));
      pos.y = rand_int(top.y, std::min(top.y + size.y, grid.height()));
      if (!grid.get(pos.x, pos.y).empty()) continue;
      if (pos == agent) continue;
      if (reject && reject(pos)) continue;
      break;
    }
    if (obj != nullptr) grid.set(pos.x, pos.y, *obj);
    return pos;
  }
  Pos place_obj(const Obj& obj, Pos top = {0, 0}, Pos size = {-1, -1}, const Reject& reject = {},
                long max_tries = kUnbounded) {
    return place_obj(&obj, top, size, reject, max_tries);
  }

  void put_obj(const Obj& obj, int x, int y) { grid.set(x, y, obj); }

  Pos place_agent(Pos top = {0, 0}, Pos size = {-1, -1}, bool rand_dir = true, long max_tries = kUnbounded) {
    agent = {-1, -1};
    const Pos pos = place_obj(nullptr, top, size, {}, max_tries);
    agent = pos;
    if (rand_dir) dir = rand_int(0, 4);
    return pos;
  }

  // place_obj's RecursionError: a layout that found no cell in max_tries.
  struct PlacementFailed : std::runtime_error {
    PlacementFailed() : std::runtime_error("minigrid: rejection sampling failed in place_obj") {}
  };

  // MiniGridEnv.step without the time limit (the pool's): move, turn, pick up, drop, toggle.
  StepOutcome base_step(int action) {
    ++step_count;
    StepOutcome outcome;
    const Pos fwd = front();
    Obj& fwd_cell = grid.at(fwd.x, fwd.y);
    switch (action) {
      case kLeft:
        dir = (dir + 3) % 4;
        break;
      case kRight:
        dir = (dir + 1) % 4;
        break;
      case kForward:
        if (fwd_cell.empty() || fwd_cell.can_overlap()) agent = fwd;
        if (fwd_cell.type == kGoal) outcome.terminated = true, outcome.reward = success_reward();
        if (fwd_cell.type == kLava) outcome.terminated = true;
        break;
      case kPickup:
        if (fwd_cell.can_pickup() && carrying.empty()) {
          carrying = fwd_cell;
          grid.remove(fwd.x, fwd.y);
        }
        break;
      case kDrop:
        if (fwd_cell.empty() && !carrying.empty()) {
          fwd_cell = carrying;
          carrying = Obj{};
        }
        break;
      case kToggle:
        toggle(fwd_cell);
        break;
      default:  // done: nothing
        break;
    }
    return outcome;
  }

 private:
  // WorldObj.toggle: a locked door opens for a key of its colour, another door flips; a box gives
  // way to its content (nothing, if empty).
  void toggle(Obj& cell) {
    if (cell.type == kDoor) {
      if (cell.state == kLocked) {
        if (carrying.type == kKey && carrying.color == cell.color) cell.state = kOpen;
      } else {
        cell.state = cell.state == kOpen ? kClosed : kOpen;
      }
    } else if (cell.type == kBox) {
      cell = cell.content();
    }
  }
};

}  // namespace torchpool::minigrid
