// world.h — MiniGrid's world (minigrid 3.x: core/constants.py, world_object.py, grid.py): the objects
// as small values, the grid, and what the agent sees of it.
//
// An object is a value (Obj, 8 bytes), not a Python object: the grid holds them inline, a box holds its
// content inline, and where minigrid compares objects by identity (`self.carrying == self.obj`: the one
// ball a task asked for, never another of the same colour) the task marks its object with a tag.
#pragma once

#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace torchpool::minigrid {

// OBJECT_TO_IDX; 0 (unseen) doubles as "no object" in a cell, which encodes as empty (1).
enum Type : uint8_t {
  kNone = 0,
  kEmpty = 1,
  kWall = 2,
  kFloor = 3,
  kDoor = 4,
  kKey = 5,
  kBall = 6,
  kBox = 7,
  kGoal = 8,
  kLava = 9,
  kAgent = 10
};
// COLOR_TO_IDX.
enum Color : uint8_t { kRed = 0, kGreen = 1, kBlue = 2, kPurple = 3, kYellow = 4, kGrey = 5 };
// COLOR_NAMES: sorted by name, the order minigrid's random colour draws index.
inline constexpr Color kColorNames[6] = {kBlue, kGreen, kGrey, kPurple, kRed, kYellow};
// A door's state, as encode() writes it (STATE_TO_IDX).
enum DoorState : uint8_t { kOpen = 0, kClosed = 1, kLocked = 2 };

inline const char* color_name(uint8_t color) {
  static const char* const names[6] = {"red", "green", "blue", "purple", "yellow", "grey"};
  return names[color];
}
inline const char* type_name(uint8_t type) {
  static const char* const names[11] = {"unseen", "empty", "wall", "floor", "door", "key",
                                        "ball",   "box",   "goal", "lava",  "agent"};
  return names[type];
}

// COLOR_NAMES as a list, for the draws that take one (_rand_elem, _rand_subset).
inline const std::vector<uint8_t>& color_names() {
  static const std::vector<uint8_t> names(std::begin(kColorNames), std::end(kColorNames));
  return names;
}

struct Obj {
  uint8_t type = kNone;
  uint8_t color = 0;
  uint8_t state = 0;  // doors: DoorState
  uint8_t tag = 0;    // a task's mark on an object it must recognise again (0: none)
  // A box's content (kNone: empty); boxes never hold boxes.
  uint8_t in_type = kNone, in_color = 0, in_state = 0, in_tag = 0;

  static Obj make(uint8_t type, uint8_t color, uint8_t state = 0) {
    Obj obj;
    obj.type = type, obj.color = color, obj.state = state;
    return obj;
  }
  static Obj wall(uint8_t color = kGrey) { return make(kWall, color); }
  static Obj goal() { return make(kGoal, kGreen); }
  static Obj lava() { return make(kLava, kRed); }
  static Obj door(uint8_t color, bool locked = false) { return make(kDoor, color, locked ? kLocked : kClosed); }
  static Obj key(uint8_t color) { return make(kKey, color); }
  static Obj ball(uint8_t color) { return make(kBall, color); }
  static Obj box(uint8_t color) { return make(kBox, color); }

  bool empty() const { return type == kNone; }
  bool can_overlap() const {
    return type == kGoal || type == kFloor || type == kLava || (type == kDoor && state == kOpen);
  }
  bool can_pickup() const { return type == kKey || type == kBall || type == kBox; }
  bool see_behind() const { return type != kWall && !(type == kDoor && state != kOpen); }
  Obj content() const {
    Obj obj = make(in_type, in_color, in_state);
    obj.tag = in_tag;
    return obj;
  }
  void put_inside(const Obj& obj) { in_type = obj.type, in_color = obj.color, in_state = obj.state, in_tag = obj.tag; }
  bool same(const Obj& other) const { return type == other.type && color == other.color; }
  // encode(): (type, colour, state); no object is "empty".
  void encode(uint8_t* out) const {
    if (type == kNone) {
      out[0] = kEmpty, out[1] = 0, out[2] = 0;
    } else {
      out[0] = type, out[1] = color, out[2] = type == kDoor ? state : 0;
    }
  }
};

// "{colour} {type}", as the missions name an object.
inline std::string describe(const Obj& obj) { return std::string(color_name(obj.color)) + " " + type_name(obj.type); }

struct Pos {
  int x = -1, y = -1;
  bool operator==(const Pos& other) const { return x == other.x && y == other.y; }
  bool operator!=(const Pos& other) const { return !(*this == other); }
};

// DIR_TO_VEC: right, down, left, up.
inline constexpr int kDirX[4] = {1, 0, -1, 0};
inline constexpr int kDirY[4] = {0, 1, 0, -1};

class Grid {
 public:
  Grid() = default;
  Grid(int width, int height) { resize(width, height); }

  void resize(int width, int height) {
    width_ = width, height_ = height;
    cells_.assign(static_cast<size_t>(width) * height, Obj{});
  }
  void clear() { std::fill(cells_.begin(), cells_.end(), Obj{}); }

  int width() const { return width_; }
  int height() const { return height_; }
  bool inside(int x, int y) const { return x >= 0 && y >= 0 && x < width_ && y < height_; }

  // minigrid asserts every index; so do we (a layout bug must not write outside the grid).
  const Obj& get(int x, int y) const { return cells_[index(x, y)]; }
  Obj& at(int x, int y) { return cells_[index(x, y)]; }
  void set(int x, int y, const Obj& obj) { cells_[index(x, y)] = obj; }
  void remove(int x, int y) { cells_[index(x, y)] = Obj{}; }

  // horz_wall / vert_wall / wall_rect; length -1: to the grid's edge.
  void horz_wall(int x, int y, int length = -1, const Obj& obj = Obj::wall()) {
    if (length < 0) length = width_ - x;
    for (int i = 0; i < length; ++i) set(x + i, y, obj);
  }
  void vert_wall(int x, int y, int length = -1, const Obj& obj = Obj::wall()) {
    if (length < 0) length = height_ - y;
    for (int j = 0; j < length; ++j) set(x, y + j, obj);
  }
  void wall_rect(int x, int y, int w, int h) {
    horz_wall(x, y, w);
    horz_wall(x, y + h - 1, w);
    vert_wall(x, y, h);
    vert_wall(x + w - 1, y, h);
  }

  // encode() of the whole grid: [width][height][3], the first index x.
  void encode(uint8_t* out) const {
    for (int x = 0; x < width_; ++x)
      for (int y = 0; y < height_; ++y) get(x, y).encode(out + (static_cast<size_t>(x) * height_ + y) * 3);
  }

 private:
  size_t index(int x, int y) const {
    if (!inside(x, y))
      throw std::logic_error("minigrid: cell (" + std::to_string(x) + ", " + std::to_string(y) + ") outside a " +
                             std::to_string(width_) + "x" + std::to_string(height_) + " grid");
    return static_cast<size_t>(y) * width_ + x;
  }

  int width_ = 0, height_ = 0;
  std::vector<Obj> cells_;
};

// What the agent sees: gen_obs_grid()'s slice of the grid, rotated so the agent looks up from the middle
// of the bottom row, with process_vis()'s occlusion. cells[vx * size + vy] after compute(); `visible` is
// the mask (all set when the env sees through walls). The agent's own cell shows what it carries.
class View {
 public:
  explicit View(int size = 7) : size_(size), cells_(static_cast<size_t>(size) * size), visible_(cells_.size()) {}

  int size() const { return size_; }
  const Obj& cell(int vx, int vy) const { return cells_[static_cast<size_t>(vx) * size_ + vy]; }
  bool visible(int vx, int vy) const { return visible_[static_cast<size_t>(vx) * size_ + vy] != 0; }

  // The world cell that view cell (vx, vy) shows: agent + forward * (size-1-vy) + right * (vx - size/2)
  // (get_full_render's inverse of get_view_coords).
  static Pos world_of(Pos agent, int dir, int size, int vx, int vy) {
    const int fx = kDirX[dir], fy = kDirY[dir], rx = -fy, ry = fx;
    const int forward = size - 1 - vy, right = vx - size / 2;
    return {agent.x + fx * forward + rx * right, agent.y + fy * forward + ry * right};
  }

  void compute(const Grid& grid, Pos agent, int dir, const Obj& carrying, bool see_through_walls) {
    for (int vx = 0; vx < size_; ++vx)
      for (int vy = 0; vy < size_; ++vy) {
        const Pos world = world_of(agent, dir, size_, vx, vy);
        // Grid.slice(): outside the grid is wall.
        at(vx, vy) = grid.inside(world.x, world.y) ? grid.get(world.x, world.y) : Obj::wall();
      }
    if (see_through_walls)
      std::fill(visible_.begin(), visible_.end(), uint8_t{1});
    else
      process_vis();
    at(size_ / 2, size_ - 1) = carrying;  // gen_obs_grid: the carried object (or nothing) at the agent
  }

  // encode(vis_mask): [size][size][3]; a cell the agent cannot see is (0, 0, 0).
  void encode(uint8_t* out) const {
    for (int vx = 0; vx < size_; ++vx)
      for (int vy = 0; vy < size_; ++vy) {
        uint8_t* cell_out = out + (static_cast<size_t>(vx) * size_ + vy) * 3;
        if (visible(vx, vy))
          cell(vx, vy).encode(cell_out);
        else
          cell_out[0] = cell_out[1] = cell_out[2] = 0;
      }
  }

 private:
  Obj& at(int vx, int vy) { return cells_[static_cast<size_t>(vx) * size_ + vy]; }
  uint8_t& mask(int vx, int vy) { return visible_[static_cast<size_t>(vx) * size_ + vy]; }

  // Grid.process_vis, line for line: light spreads from the agent row by row, upwards, stopped by
  // what cannot be seen behind; cells left dark are emptied.
  void process_vis() {
    std::fill(visible_.begin(), visible_.end(), uint8_t{0});
    mask(size_ / 2, size_ - 1) = 1;
    for (int j = size_ - 1; j >= 0; --j) {
      for (int i = 0; i < size_ - 1; ++i) {
        if (!mask(i, j)) continue;
        if (!at(i, j).see_behind()) continue;
        mask(i + 1, j) = 1;
        if (j > 0) mask(i + 1, j - 1) = 1, mask(i, j - 1) = 1;
      }
      for (int i = size_ - 1; i >= 1; --i) {
        if (!mask(i, j)) continue;
        if (!at(i, j).see_behind()) continue;
        mask(i - 1, j) = 1;
        if (j > 0) mask(i - 1, j - 1) = 1, mask(i, j - 1) = 1;
      }
    }
    for (size_t k = 0; k < cells_.size(); ++k)
      if (!visible_[k]) cells_[k] = Obj{};
  }

  int size_;
  std::vector<Obj> cells_;
  std::vector<uint8_t> visible_;
};

}  // namespace torchpool::minigrid
