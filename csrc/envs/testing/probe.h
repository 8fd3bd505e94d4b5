// probe.h — a test-only env whose observations record what happened to it.
//
// Observation: [steps in this episode, last action, resets so far, total
// steps]; with dict_observation, that is the field "counters" beside
// "last_action" (int64) and "grid" (uint8 [2, 3], total steps % 256). It can sleep or compute (spin) a random time per
// step (so workers finish out of order; spinning keeps the thread on its core as a real env does) and throw at a chosen
// step (to test error capture). Registered as
// "_Probe-v0", hidden from list_envs().
#pragma once

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "../../core/env.h"

namespace torchpool::testing {

struct ProbeModel {
  int64_t episode_length;
  double max_sleep_us;
  double max_busy_us;
  int64_t fail_at_step;     // total step count at which step() throws; < 0: never
  double fail_probability;  // each step throws with this probability
  bool dict_observation;    // named fields instead of one: counters, last_action, grid

  explicit ProbeModel(const Config& config)
      : episode_length(config.integer("episode_length")),
        max_sleep_us(config.real("max_sleep_us")),
        max_busy_us(config.real("max_busy_us")),
        fail_at_step(config.integer("fail_at_step")),
        fail_probability(config.real("fail_probability")),
        dict_observation(config.flag("dict_observation")) {}

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    spec.observations = {{{4}, obs_dtype, {}, {}}};
    if (dict_observation)  // fields of three dtypes and ranks, for the tests of named observations
      spec.observations = {{{4}, obs_dtype, {}, {}, "counters"},
                           {{}, Dtype::Int64, {}, {}, "last_action"},
                           {{2, 3}, Dtype::UInt8, {}, {}, "grid"}};
    spec.action.discrete = true;
    spec.action.num_actions = 1000;
    spec.max_episode_steps = 0;
    const double max_us = std::max(max_sleep_us, max_busy_us);
    spec.step_cost_ns = max_us > 0 ? max_us * 500 : 10;
    return spec;
  }
};

class Probe {
 public:
  using Model = ProbeModel;
  explicit Probe(const Model& model) : model_(model) {}

  void reset(Rng& rng, StepOutput& out) {
    steps_ = 0;
    last_action_ = -1;
    ++resets_;
    nap(rng);
    write(out);
  }

  StepResult step(const Action& action, Rng& rng, StepOutput& out) {
    ++total_steps_;
    if (model_.fail_at_step >= 0 && total_steps_ == model_.fail_at_step)
      throw std::runtime_error("probe failure at step " + std::to_string(total_steps_));
    if (model_.fail_probability > 0 && rng.uniform(0, 1) < model_.fail_probability)
      throw std::runtime_error("probe random failure at step " + std::to_string(total_steps_));
    ++steps_;
    last_action_ = action.index;
    nap(rng);
    write(out);
    StepResult result;
    result.reward = static_cast<double>(action.index);
    result.terminated = steps_ >= model_.episode_length;
    return result;
  }

 private:
  void nap(Rng& rng) {
    if (model_.max_sleep_us > 0)
      std::this_thread::sleep_for(
          std::chrono::nanoseconds(static_cast<int64_t>(rng.uniform(0, model_.max_sleep_us) * 1000)));
    if (model_.max_busy_us > 0) {
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::nanoseconds(static_cast<int64_t>(rng.uniform(0, model_.max_busy_us) * 1000));
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  }
  // counters = [steps in this episode, last action, resets, total steps]; with
  // named fields also last_action and a grid of (total steps % 256).
  void write(StepOutput& out) {
    out.set_observation(0, {static_cast<double>(steps_), static_cast<double>(last_action_),
                            static_cast<double>(resets_), static_cast<double>(total_steps_)});
    if (!model_.dict_observation) return;
    *out.observation<int64_t>(1) = last_action_;
    std::fill_n(out.observation<uint8_t>(2), 6, static_cast<uint8_t>(total_steps_ % 256));
  }

  const Model& model_;
  int64_t steps_ = 0, last_action_ = -1, resets_ = 0, total_steps_ = 0;
};

}  // namespace torchpool::testing
