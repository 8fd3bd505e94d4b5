// object_tasks.h — (being written)
#pragma once

#include <vector>

#include "../task.h"

namespace torchpool::minigrid {

inline const std::vector<TaskEntry>& object_tasks() {
  static const std::vector<TaskEntry> entries = {};
  return entries;
}

}  // namespace torchpool::minigrid
