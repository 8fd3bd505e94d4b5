// render.h — minigrid's pixels (Grid.render_tile, Grid.render, get_full_render, get_pov_render).
#pragma once

#include <cstdint>
#include <stdexcept>

#include "world_state.h"

namespace torchpool::minigrid {

// get_frame(highlight, tile_size): the whole grid, [height*tile][width*tile][3].
inline void render_full(const WorldState&, int, bool, int, bool, uint8_t*) {
  throw std::logic_error("minigrid: RGB rendering is not built yet");
}

// get_frame(tile_size, agent_pov=True): the agent's view, [view*tile][view*tile][3].
inline void render_pov(const WorldState&, int, bool, int, uint8_t*) {
  throw std::logic_error("minigrid: RGB rendering is not built yet");
}

}  // namespace torchpool::minigrid
