// all.h — every MiniGrid env class by the env_name its registration gives (torchpool/families/minigrid.py).
#pragma once

#include <string>

#include "babyai_levels.h"
#include "object_tasks.h"
#include "open_grids.h"
#include "room_grid_tasks.h"
#include "rooms.h"
#include "wfc.h"

namespace torchpool::minigrid {

inline TaskShape define_task(const std::string& env_name, const Config& config) {
  static const TaskEntry open_grids[] = {
      {"empty", &EmptyTask::define},     {"doorkey", &DoorKeyTask::define},   {"distshift", &DistShiftTask::define},
      {"lavagap", &LavaGapTask::define}, {"crossing", &CrossingTask::define}, {"fourrooms", &FourRoomsTask::define},
  };
  for (const TaskEntry& entry : open_grids)
    if (env_name == entry.name) return entry.define(config);
  for (const TaskEntry& entry : object_tasks())
    if (env_name == entry.name) return entry.define(config);
  for (const TaskEntry& entry : room_grid_tasks())
    if (env_name == entry.name) return entry.define(config);
  for (const TaskEntry& entry : room_tasks())
    if (env_name == entry.name) return entry.define(config);
  for (const TaskEntry& entry : wfc_tasks())
    if (env_name == entry.name) return entry.define(config);
  for (const TaskEntry& entry : babyai_tasks())
    if (env_name == entry.name) return entry.define(config);
  throw std::invalid_argument("unknown MiniGrid env_name '" + env_name + "'");
}

}  // namespace torchpool::minigrid
