// task.h — what one MiniGrid env class (minigrid/envs/*.py) is here: its layout and its rules.
//
// A Task lays out a fresh grid from the env's draws (gen_grid, the reference's _gen_grid, draw for draw)
// and may wrap the base step with the class's own rules (step, its step()). It keeps whatever it
// remembers of the episode (the target's position, the door to open). One Task per env; the env's
// thread alone touches it.
//
// TaskShape is what the class fixes before any episode: the grid's size, its actions, whether it sees
// through walls and its step limit, from the task kwargs of its registration (torchpool/families/minigrid.py).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "../../core/spec.h"
#include "mission.h"
#include "world_state.h"

namespace torchpool::minigrid {

class Task {
 public:
  virtual ~Task() = default;
  virtual void gen_grid(WorldState& world) = 0;
  virtual StepOutcome step(WorldState& world, int action) { return world.base_step(action); }
};

struct TaskShape {
  int width = 0, height = 0;
  int num_actions = 7;
  std::function<std::unique_ptr<Task>()> make;
  int mission_tokens = kMissionTokens;  // the mission field's length in tokens
  // max_steps=0 lets the task set WorldState::max_steps at each reset (BabyAI's RoomGridLevel: from the
  // instruction's navigations); the env then truncates itself, and the pool has no time limit of its own.
  bool per_episode_limit = false;
};

// A task file's table: each env class by the env_name its registration gives (tasks/all.h looks it up).
struct TaskEntry {
  const char* name;
  TaskShape (*define)(const Config&);
};

// The four outer walls, drawn wall by wall as the classes without wall_rect draw them.
inline void outer_walls(WorldState& w) {
  const int width = w.grid.width(), height = w.grid.height();
  w.grid.horz_wall(0, 0);
  w.grid.horz_wall(0, height - 1);
  w.grid.vert_wall(0, 0);
  w.grid.vert_wall(width - 1, 0);
}

// `agent_start_pos`: the agent at `start` facing `dir`, or, for None ((-1, -1)), place_agent()'s draws.
inline void start_agent(WorldState& w, Pos start, int dir) {
  if (start.x >= 0) {
    w.agent = start, w.dir = dir;
  } else {
    w.place_agent();
  }
}

// An int kwarg (the Config's are int64; every MiniGrid one is a size or a count).
inline int int_kwarg(const Config& config, const char* name) { return static_cast<int>(config.integer(name)); }

// An obj_type kwarg: the kind of object a task asks for (KeyCorridor's).
inline uint8_t kind_kwarg(const std::string& name) {
  if (name == "ball") return kBall;
  if (name == "box") return kBox;
  if (name == "key") return kKey;
  throw std::invalid_argument("obj_type must be 'ball', 'box' or 'key', got '" + name + "'");
}

// A (x, y) kwarg; (-1, -1) stands for minigrid's None.
inline Pos position_kwarg(const Config& config, const std::string& name) {
  const std::vector<double>& values = config.sequence(name);
  if (values.size() != 2) throw std::invalid_argument("task kwarg '" + name + "' must be an (x, y) pair");
  return {static_cast<int>(values[0]), static_cast<int>(values[1])};
}

}  // namespace torchpool::minigrid
