// actions.h — the pool's per-env action slots, filled from one send().
//
// copy() validates every action of a call before it writes any (a call is
// all-or-nothing: a bad action raises InputError and leaves every slot as it
// was), then stores them in canonical form: discrete actions as an index,
// continuous ones as doubles, never clipped (each family clips exactly where
// its reference does). The caller writes a slot before the push that uses it;
// the worker reads it after claiming the item, so slots need no atomics.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "env.h"
#include "errors.h"
#include "spec.h"

namespace torchpool {

class ActionTable {
 public:
  ActionTable(const ActionSpec& spec, size_t num_envs)
      : spec_(spec),
        size_(spec.element_count()),
        index_(num_envs, 0),
        values_(spec.discrete ? 0 : num_envs * spec.element_count(), 0.0) {}

  size_t action_size() const { return size_; }

  // actions[i] (or actions[i * action_size() ...]) is env ids[i]'s.
  void copy(const void* actions, Dtype dtype, const int64_t* ids, size_t count) {
    switch (dtype) {
      case Dtype::UInt8:
        return copy_typed(static_cast<const uint8_t*>(actions), ids, count);
      case Dtype::Int32:
        return copy_typed(static_cast<const int32_t*>(actions), ids, count);
      case Dtype::Int64:
        return copy_typed(static_cast<const int64_t*>(actions), ids, count);
      case Dtype::Float32:
        return copy_typed(static_cast<const float*>(actions), ids, count);
      case Dtype::Float64:
        return copy_typed(static_cast<const double*>(actions), ids, count);
      default:
        throw InputError("unsupported action dtype");
    }
  }

  Action at(int32_t env_id) const {
    Action action;
    if (spec_.discrete) {
      action.index = index_[env_id];
    } else {
      action.values = values_.data() + static_cast<size_t>(env_id) * size_;
      action.size = static_cast<int64_t>(size_);
    }
    return action;
  }

 private:
  // Integers print as integers; a float action (1.5) keeps its fraction.
  template <class T>
  static std::string format(T value) {
    const double as_double = static_cast<double>(value);
    if (std::isfinite(as_double) && as_double == std::trunc(as_double) && std::abs(as_double) < 1e15)
      return std::to_string(static_cast<int64_t>(as_double));
    std::ostringstream text;
    text << as_double;
    return text.str();
  }

  template <class T>
  void copy_typed(const T* actions, const int64_t* ids, size_t count) {
    if (spec_.discrete) {
      const int64_t n = spec_.num_actions;
      for (size_t i = 0; i < count; ++i) {
        const T value = actions[i];
        if (!(value >= 0 && static_cast<double>(value) < static_cast<double>(n)) ||
            static_cast<double>(static_cast<int64_t>(value)) != static_cast<double>(value))
          throw InputError("action " + format(value) + " for env " + std::to_string(ids[i]) +
                           " is not a valid index in [0, " + std::to_string(n) + ")");
      }
      for (size_t i = 0; i < count; ++i) index_[ids[i]] = static_cast<int64_t>(actions[i]);
    } else {
      for (size_t i = 0; i < count * size_; ++i)
        if (!std::isfinite(static_cast<double>(actions[i])))
          throw InputError("action for env " + std::to_string(ids[i / size_]) + " is not finite");
      for (size_t i = 0; i < count; ++i)
        for (size_t k = 0; k < size_; ++k) values_[ids[i] * size_ + k] = static_cast<double>(actions[i * size_ + k]);
    }
  }

  const ActionSpec spec_;
  const size_t size_;
  std::vector<int64_t> index_;
  std::vector<double> values_;
};

}  // namespace torchpool
