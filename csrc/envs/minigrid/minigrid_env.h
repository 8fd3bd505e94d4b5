// minigrid_env.h — the MiniGrid family: minigrid 3.x's env classes (tasks/), seeded and stepped as
// Gymnasium's minigrid envs are, with the observations minigrid and its wrappers give.
//
// Seeds: env i of a pool seeded s draws its layouts from np_random as gym.make(id).reset(seed=s + i)
// does (reseed() below; the core passes seed + i), and every later reset continues that stream, as a
// reset without a seed does in Gymnasium. So episode for episode the grids are minigrid's.
//
// Observations (the `observation` kwarg):
//   "partial"      image [view, view, 3] (object, colour, state), as minigrid's obs["image"]
//   "full"         image [width, height, 3] with the agent drawn in (FullyObsWrapper)
//   "rgb"          image [height*tile, width*tile, 3], the whole grid's pixels (RGBImgObsWrapper)
//   "rgb_partial"  image [view*tile, view*tile, 3], the agent's view in pixels (RGBImgPartialObsWrapper)
// beside direction (int64, 0-3) and mission (uint8 tokens, kMissionTokens of them, mission.h; or, with
// mission_bytes=n, the text's first n bytes zero-padded, as EnvPool gives it); image_only keeps the image
// alone (ImgObsWrapper).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../core/env.h"
#include "mission.h"
#include "render.h"
#include "task.h"
#include "tasks/all.h"

namespace torchpool::minigrid {

enum class ObservationMode { kPartial, kFull, kRgb, kRgbPartial };

struct MiniGridModel {
  std::string env_name;
  TaskShape shape;
  int max_steps;
  bool see_through_walls;
  int view_size;
  ObservationMode mode = ObservationMode::kPartial;
  bool image_only;
  int tile_size;
  bool highlight;
  int mission_bytes;  // 0: tokens

  explicit MiniGridModel(const Config& config)
      : env_name(config.string("env_name")),
        shape(define_task(env_name, config)),
        max_steps(int_kwarg(config, "max_steps")),
        see_through_walls(config.flag("see_through_walls")),
        view_size(int_kwarg(config, "agent_view_size")),
        image_only(config.flag("image_only")),
        tile_size(int_kwarg(config, "tile_size")),
        highlight(config.flag("highlight")),
        mission_bytes(int_kwarg(config, "mission_bytes")) {
    if (mission_bytes < 0 || mission_bytes > 4096)
      throw std::invalid_argument("mission_bytes must be in [0, 4096], got " + std::to_string(mission_bytes));
    if (shape.width < 3 || shape.height < 3)  // Grid's own assertion
      throw std::invalid_argument("a MiniGrid grid is at least 3x3, got " + std::to_string(shape.width) + "x" +
                                  std::to_string(shape.height));
    if (view_size < 3 || view_size % 2 == 0)
      throw std::invalid_argument("agent_view_size must be odd and at least 3, got " + std::to_string(view_size));
    if (max_steps < 1 && !(max_steps == 0 && shape.per_episode_limit))
      throw std::invalid_argument("max_steps must be at least 1, got " + std::to_string(max_steps));
    if (tile_size < 1 || tile_size > 64)
      throw std::invalid_argument("tile_size must be in [1, 64], got " + std::to_string(tile_size));
    const std::string& observation = config.string("observation");
    if (observation == "partial")
      mode = ObservationMode::kPartial;
    else if (observation == "full")
      mode = ObservationMode::kFull;
    else if (observation == "rgb")
      mode = ObservationMode::kRgb;
    else if (observation == "rgb_partial")
      mode = ObservationMode::kRgbPartial;
    else
      throw std::invalid_argument("observation must be 'partial', 'full', 'rgb' or 'rgb_partial', got '" + observation +
                                  "'");
  }

  std::vector<int64_t> image_shape() const {
    switch (mode) {
      case ObservationMode::kPartial:
        return {view_size, view_size, 3};
      case ObservationMode::kFull:
        return {shape.width, shape.height, 3};
      case ObservationMode::kRgb:
        return {int64_t{shape.height} * tile_size, int64_t{shape.width} * tile_size, 3};
      case ObservationMode::kRgbPartial:
        return {int64_t{view_size} * tile_size, int64_t{view_size} * tile_size, 3};
    }
    return {};
  }

  int mission_length() const { return mission_bytes > 0 ? mission_bytes : shape.mission_tokens; }

  EnvSpec spec(Dtype) const {
    EnvSpec spec;
    ObservationSpec image{image_shape(), Dtype::UInt8, {}, {}, image_only ? "" : "image"};
    size_t count = 1;
    for (int64_t extent : image.shape) count *= static_cast<size_t>(extent);
    image.low.assign(count, 0.0);
    image.high.assign(count, 255.0);
    if (mode == ObservationMode::kPartial || mode == ObservationMode::kFull) {
      // Cell codes, bounded by what they can be: object <= agent (10), colour <= grey (5), state <= 3 (a
      // door's is <= 2, FullyObsWrapper's agent cell holds its direction). minigrid declares 0-255, which
      // makes SB3 take the 7x7 view for a picture and build a Nature CNN it cannot hold.
      for (size_t i = 0; i < count; ++i) image.high[i] = i % 3 == 0 ? kAgent : i % 3 == 1 ? kGrey : 3.0;
    }
    spec.observations.push_back(image);
    if (!image_only) {
      spec.observations.push_back({{}, Dtype::Int64, {0.0}, {3.0}, "direction"});
      const int length = mission_length();
      const double high = mission_bytes > 0 ? 255.0 : static_cast<double>(vocabulary().size() - 1);
      spec.observations.push_back({{length},
                                   Dtype::UInt8,
                                   std::vector<double>(static_cast<size_t>(length), 0.0),
                                   std::vector<double>(static_cast<size_t>(length), high),
                                   "mission"});
    }
    spec.action.discrete = true;
    spec.action.num_actions = shape.num_actions;
    spec.max_episode_steps = max_steps;
    spec.step_cost_ns = mode == ObservationMode::kPartial || mode == ObservationMode::kFull ? 300 : 3000;
    return spec;
  }
};

class MiniGrid {
 public:
  using Model = MiniGridModel;
  explicit MiniGrid(const Model& model)
      : model_(model), task_(model.shape.make()), view_(model.view_size), mission_(model.mission_length()) {}

  // The core's seed + env_id, and reset(seed=...)'s: np_random = Generator(PCG64(SeedSequence(seed))).
  void reseed(uint64_t seed) { world_.rng = NumpyGenerator(seed); }

  void reset(Rng&, StepOutput& out) {
    world_.begin_episode(model_.shape.width, model_.shape.height);
    world_.max_steps = model_.max_steps;  // 0: the task sets this episode's (TaskShape::per_episode_limit)
    world_.mission.clear();
    task_->gen_grid(world_);
    if (model_.mission_bytes > 0) {
      std::fill(mission_.begin(), mission_.end(), uint8_t{0});
      std::memcpy(mission_.data(), world_.mission.data(), std::min(world_.mission.size(), mission_.size()));
    } else {
      tokenize(world_.mission, mission_.data(), static_cast<int>(mission_.size()));
    }
    write_observation(out);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const StepOutcome outcome = task_->step(world_, static_cast<int>(action.index));
    write_observation(out);
    StepResult result;
    result.reward = outcome.reward;
    result.terminated = outcome.terminated;
    // MiniGridEnv.step's own limit, where it changes per episode; a fixed one is the pool's time limit.
    result.truncated = model_.max_steps == 0 && world_.step_count >= world_.max_steps;
    return result;
  }

  // render_mode="rgb_array": minigrid's render(), get_frame(self.highlight, 32): the whole grid at 32
  // pixels a tile, highlighted as the env's `highlight` says (minigrid's default: yes).
  std::vector<int64_t> render(std::vector<uint8_t>& pixels) const {
    const int tile = 32;
    pixels.resize(static_cast<size_t>(world_.grid.height()) * tile * world_.grid.width() * tile * 3);
    View view(model_.view_size);  // render() is const: scratch of its own for what the agent sees
    render_full(world_, view, model_.see_through_walls, tile, model_.highlight, pixels.data());
    return {int64_t{world_.grid.height()} * tile, int64_t{world_.grid.width()} * tile, 3};
  }

  const WorldState& world() const { return world_; }

 private:
  void write_observation(StepOutput& out) {
    uint8_t* image = out.observation<uint8_t>(0);
    switch (model_.mode) {
      case ObservationMode::kPartial:
        view_.compute(world_.grid, world_.agent, world_.dir, world_.carrying, model_.see_through_walls);
        view_.encode(image);
        break;
      case ObservationMode::kFull: {
        world_.grid.encode(image);
        uint8_t* agent = image + (static_cast<size_t>(world_.agent.x) * world_.grid.height() + world_.agent.y) * 3;
        agent[0] = kAgent, agent[1] = kRed, agent[2] = static_cast<uint8_t>(world_.dir);
        break;
      }
      case ObservationMode::kRgb:
        render_full(world_, view_, model_.see_through_walls, model_.tile_size, model_.highlight, image);
        break;
      case ObservationMode::kRgbPartial:
        render_pov(world_, view_, model_.see_through_walls, model_.tile_size, image);
        break;
    }
    if (model_.image_only) return;
    out.observation<int64_t>(1)[0] = world_.dir;
    std::memcpy(out.observation<uint8_t>(2), mission_.data(), mission_.size());
  }

  const Model& model_;
  std::unique_ptr<Task> task_;
  WorldState world_;
  View view_;
  std::vector<uint8_t> mission_;  // this episode's, written every step
};

}  // namespace torchpool::minigrid
