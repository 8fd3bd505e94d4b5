// wfc.h — WFCEnv (minigrid/envs/wfc/wfcenv.py), the MiniGrid-WFC-* ids: a level laid out by Wave Function
// Collapse from one of minigrid's pattern images (wfc_solver.h), its largest open area kept (wfc_graph.h),
// the agent and the goal on two of its cells. The six presets minigrid registers are supported (wfc_config
// is their WFC_PRESETS name; their images are wfc_patterns.h).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../task.h"
#include "wfc_graph.h"
#include "wfc_solver.h"

namespace torchpool::minigrid {

class WfcTask : public Task {
 public:
  WfcTask(const wfc::Catalog& catalog, bool ensure_connected)
      : catalog_(catalog), ensure_connected_(ensure_connected) {}

  static TaskShape define(const Config& config) {
    const std::string& preset = config.string("wfc_config");
    const wfc::Catalog* catalog = wfc::catalog_of(preset);
    if (catalog == nullptr) {
      std::string names;
      for (const wfc::PatternImage& image : wfc::kPatternImages)
        names += std::string(names.empty() ? "" : ", ") + image.preset;
      throw std::invalid_argument("wfc_config must be one of minigrid's registered presets (" + names + "), got '" +
                                  preset + "'");
    }
    const int size = int_kwarg(config, "size");
    if (size < 3) throw std::invalid_argument("Grid size must be at least 3 (currently " + std::to_string(size) + ")");
    const bool ensure_connected = config.flag("ensure_connected");
    return {size, size, 7, [=] { return std::make_unique<WfcTask>(*catalog, ensure_connected); }};
  }

  void gen_grid(WorldState& w) override {
    const int width = w.grid.width(), height = w.grid.height();
    const int rows = height - 2, cols = width - 2;  // the padding of 1 is wall
    std::vector<uint8_t> navigable = solve(w, rows, cols);
    const std::vector<wfc::Node> nodes =
        ensure_connected_ ? wfc::largest_component(navigable, rows, cols) : navigable_nodes(navigable, rows, cols);
    // _place_start_and_goal_random: two nodes by a permutation of the graph's node list.
    const std::vector<int64_t> order = w.rng.permutation(static_cast<int64_t>(nodes.size()));
    if (order.size() < 2) throw std::runtime_error("minigrid WFC: fewer than two navigable cells");
    const wfc::Node start = nodes[static_cast<size_t>(order[0])], goal = nodes[static_cast<size_t>(order[1])];
    // dense_graph_to_minigrid + Grid.decode: the graph's nodes open, everything else wall; array[i, j] is
    // cell (x=i, y=j), so a node (row, col) of the layout is cell (row + 1, col + 1).
    for (int x = 0; x < width; ++x)
      for (int y = 0; y < height; ++y) w.grid.set(x, y, Obj::wall());
    for (const wfc::Node& node : nodes) w.grid.remove(node.row + 1, node.col + 1);
    w.put_obj(Obj::goal(), goal.row + 1, goal.col + 1);
    w.dir = w.rand_int(0, 4);
    w.agent = {start.row + 1, start.col + 1};
    w.mission = "traverse the maze to get to the goal";
  }

 private:
  static constexpr int kMaxAttempts = 1000;  // WFCEnv.max_attempts

  // execute_wfc's pattern, as _pattern_to_minigrid_layout reads it: 1 where a cell is open.
  std::vector<uint8_t> solve(WorldState& w, int rows, int cols) const {
    wfc::Solver solver(catalog_, rows, cols);
    const std::optional<std::vector<int>> solution = solver.execute(w.rng, kMaxAttempts);
    if (!solution)
      throw std::runtime_error("Could not generate a valid pattern within " + std::to_string(kMaxAttempts) +
                               " attempts");
    std::vector<uint8_t> navigable;
    for (const int pattern : *solution) navigable.push_back(catalog_.wall[pattern] ? 0 : 1);
    return navigable;
  }

  // Without ensure_connected the graph keeps every cell, row by row; the navigable ones are the candidates.
  static std::vector<wfc::Node> navigable_nodes(const std::vector<uint8_t>& navigable, int rows, int cols) {
    std::vector<wfc::Node> nodes;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        if (navigable[static_cast<size_t>(r) * cols + c]) nodes.push_back({r, c});
    return nodes;
  }

  const wfc::Catalog& catalog_;
  bool ensure_connected_;
};

inline const std::vector<TaskEntry>& wfc_tasks() {
  static const std::vector<TaskEntry> entries = {
      {"wfc", &WfcTask::define},
  };
  return entries;
}

}  // namespace torchpool::minigrid
