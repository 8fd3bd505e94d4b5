// render.h — minigrid's pixels, equal to minigrid 3.x's byte for byte: the tiles of Grid.render_tile
// (core/grid.py) drawn with utils/rendering.py's fill_coords and shapes and each object's render()
// (core/world_object.py), and the frames of Grid.render as MiniGridEnv.get_full_render (the whole grid,
// the agent's view highlighted: RGBImgObsWrapper, render()) and get_pov_render (the agent's view alone:
// RGBImgPartialObsWrapper) lay them out.
//
// minigrid draws a tile at three times its size on a uint8 image, sampling each pixel's centre, then
// averages 3x3 blocks in float64; the frame takes the truncated means. The shapes test those centres
// in NumPy's arithmetic, which is not plain double: the triangle and the lava's lines keep their
// corners in float32 arrays, and np.dot of two pairs is OpenBLAS's dot (sdot, ddot), whose float64 tail
// loop is fused (fma) on the x86-64 kernels. Each test below does those operations in that order and
// precision (the module builds with -ffp-contract=off, so nothing else is fused). Checked once over
// every tile of every size from 1 to 64: an unfused ddot, or the shapes done wholly in float64, change
// no pixel (so a NumPy whose BLAS does not fuse draws the same); the mean's two float64 steps do matter
// (one exact mean of the nine changes 13 tiles).
//
// Like minigrid's class-level Grid.tile_cache, the tiles are drawn once per process: a TileSet per
// tile size, each tile built on first use under a lock and read without one after. A frame is then
// a copy of tiles.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "world_state.h"

namespace torchpool::minigrid {
namespace render_detail {

struct Rgb {
  uint8_t r, g, b;
};

// COLORS, by COLOR_TO_IDX.
inline constexpr Rgb kColors[6] = {{255, 0, 0},    {0, 255, 0},   {0, 0, 255},
                                   {112, 39, 195}, {255, 255, 0}, {100, 100, 100}};
inline constexpr Rgb kBlack = {0, 0, 0};

// `factor * np.array(color)` assigned into the uint8 image: a float64 product, truncated.
inline Rgb scaled(Rgb color, double factor) {
  return {static_cast<uint8_t>(factor * color.r), static_cast<uint8_t>(factor * color.g),
          static_cast<uint8_t>(factor * color.b)};
}

// np.dot of two float32 pairs: OpenBLAS's sdot adds the float products (in double, which rounds back
// to the float sum).
inline float sdot2(float x0, float x1, float y0, float y1) { return x0 * y0 + x1 * y1; }

// np.dot of two float64 pairs: OpenBLAS's ddot runs its scalar tail loop, `dot += y[i] * x[i]`, which
// the x86-64 kernels compile to fused multiply-adds.
inline double ddot2(double x0, double x1, double y0, double y1) { return std::fma(x1, y1, x0 * y0); }

// --- utils/rendering.py's shapes: tests of a point (x, y) in [0, 1]^2 ---

// point_in_rect, in float64.
struct Rect {
  double xmin, xmax, ymin, ymax;
  bool operator()(double x, double y) const { return x >= xmin && x <= xmax && y >= ymin && y <= ymax; }
};

// point_in_circle, in float64.
struct Circle {
  double cx, cy, r;
  bool operator()(double x, double y) const { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r; }
};

// point_in_triangle: the corners are float32 arrays, so v0, v1 and their dots (and inv_denom) are float32;
// the point is a float64 array, so v2, its dots and the barycentric coordinates are float64.
class Triangle {
 public:
  Triangle(double ax, double ay, double bx, double by, double cx, double cy)
      : ax_(static_cast<float>(ax)), ay_(static_cast<float>(ay)) {
    v0x_ = static_cast<float>(cx) - ax_, v0y_ = static_cast<float>(cy) - ay_;
    v1x_ = static_cast<float>(bx) - ax_, v1y_ = static_cast<float>(by) - ay_;
    dot00_ = sdot2(v0x_, v0y_, v0x_, v0y_);
    dot01_ = sdot2(v0x_, v0y_, v1x_, v1y_);
    dot11_ = sdot2(v1x_, v1y_, v1x_, v1y_);
    inv_denom_ = 1.0f / (dot00_ * dot11_ - dot01_ * dot01_);
  }

  bool operator()(double x, double y) const {
    const double v2x = x - ax_, v2y = y - ay_;
    const double dot02 = ddot2(v0x_, v0y_, v2x, v2y);
    const double dot12 = ddot2(v1x_, v1y_, v2x, v2y);
    const double u = (double{dot11_} * dot02 - double{dot01_} * dot12) * double{inv_denom_};
    const double v = (double{dot00_} * dot12 - double{dot01_} * dot02) * double{inv_denom_};
    return u >= 0 && v >= 0 && u + v < 1;
  }

 private:
  float ax_, ay_, v0x_, v0y_, v1x_, v1y_, dot00_, dot01_, dot11_, inv_denom_;
};

// point_in_line: the ends and the unit direction are float32 (np.linalg.norm: float32 sqrt of sdot);
// the bounding box is float64 from the arguments; the projection is float64 (a float64 scalar times
// a float32 array is float64 under NumPy 2's promotion).
class Line {
 public:
  Line(double x0, double y0, double x1, double y1, double r)
      : p0x_(static_cast<float>(x0)), p0y_(static_cast<float>(y0)), r_(r) {
    const float dx = static_cast<float>(x1) - p0x_, dy = static_cast<float>(y1) - p0y_;
    length_ = std::sqrt(sdot2(dx, dy, dx, dy));
    dirx_ = dx / length_, diry_ = dy / length_;
    xmin_ = std::min(x0, x1) - r, xmax_ = std::max(x0, x1) + r;
    ymin_ = std::min(y0, y1) - r, ymax_ = std::max(y0, y1) + r;
  }

  bool operator()(double x, double y) const {
    if (x < xmin_ || x > xmax_ || y < ymin_ || y > ymax_) return false;
    const double pqx = x - p0x_, pqy = y - p0y_;
    const double a = std::min(std::max(ddot2(pqx, pqy, dirx_, diry_), 0.0), double{length_});  // np.clip
    const double px = p0x_ + a * dirx_, py = p0y_ + a * diry_;
    const double dx = x - px, dy = y - py;
    return std::sqrt(ddot2(dx, dy, dx, dy)) <= r_;
  }

 private:
  float p0x_, p0y_, dirx_, diry_, length_;
  double r_, xmin_, xmax_, ymin_, ymax_;
};

// rotate_fn: the point turned by -theta about (cx, cy), in Python's order of operations.
template <class Shape>
class Rotated {
 public:
  Rotated(Shape shape, double cx, double cy, double theta)
      : shape_(shape), cx_(cx), cy_(cy), cos_(std::cos(-theta)), sin_(std::sin(-theta)) {}

  bool operator()(double x, double y) const {
    x = x - cx_, y = y - cy_;
    const double x2 = cx_ + x * cos_ - y * sin_;
    const double y2 = cy_ + y * cos_ + x * sin_;
    return shape_(x2, y2);
  }

 private:
  Shape shape_;
  double cx_, cy_, cos_, sin_;
};

// The supersampled uint8 image render_tile draws on: side*side pixels, RGB.
class Canvas {
 public:
  explicit Canvas(int side) : side_(side), pixels_(static_cast<size_t>(side) * side * 3, 0) {}

  int side() const { return side_; }
  uint8_t* pixel(int x, int y) { return &pixels_[(static_cast<size_t>(y) * side_ + x) * 3]; }

  // fill_coords: every pixel whose centre ((x + 0.5) / side, (y + 0.5) / side) is in the shape.
  template <class Shape>
  void fill(const Shape& shape, Rgb color) {
    for (int y = 0; y < side_; ++y) {
      const double yf = (y + 0.5) / side_;
      for (int x = 0; x < side_; ++x) {
        if (!shape((x + 0.5) / side_, yf)) continue;
        uint8_t* p = pixel(x, y);
        p[0] = color.r, p[1] = color.g, p[2] = color.b;
      }
    }
  }

  // highlight_img: img + 0.30 * (255 - img), the difference in uint8 and the blend in float64, truncated.
  void highlight() {
    for (uint8_t& value : pixels_) {
      const auto lighter = static_cast<uint8_t>(255 - value);
      value = static_cast<uint8_t>(std::clamp(value + 0.30 * lighter, 0.0, 255.0));
    }
  }

  // downsample(img, 3) then Grid.render's assignment into its uint8 frame: the mean of each row's
  // three pixels, then the mean of the three rows (float64, in np.mean's order), truncated.
  void downsample_into(uint8_t* tile) const {
    const int tile_side = side_ / 3;
    for (int ty = 0; ty < tile_side; ++ty)
      for (int tx = 0; tx < tile_side; ++tx)
        for (int channel = 0; channel < 3; ++channel) {
          double rows = 0.0;
          for (int k = 0; k < 3; ++k) {
            const uint8_t* p = &pixels_[(static_cast<size_t>(3 * ty + k) * side_ + 3 * tx) * 3 + channel];
            const double row_mean = (p[0] + p[3] + p[6]) / 3.0;  // the sum is exact either way
            rows = k == 0 ? row_mean : rows + row_mean;
          }
          tile[(static_cast<size_t>(ty) * tile_side + tx) * 3 + channel] = static_cast<uint8_t>(rows / 3.0);
        }
  }

 private:
  int side_;
  std::vector<uint8_t> pixels_;
};

// Lava.render's waves: four strokes a row, three rows.
inline void draw_lava(Canvas& img) {
  img.fill(Rect{0, 1, 0, 1}, {255, 128, 0});
  for (int i = 0; i < 3; ++i) {
    const double ylo = 0.3 + 0.2 * i, yhi = 0.4 + 0.2 * i;
    img.fill(Line(0.1, ylo, 0.3, yhi, 0.03), kBlack);
    img.fill(Line(0.3, yhi, 0.5, ylo, 0.03), kBlack);
    img.fill(Line(0.5, ylo, 0.7, yhi, 0.03), kBlack);
    img.fill(Line(0.7, yhi, 0.9, ylo, 0.03), kBlack);
  }
}

inline void draw_door(Canvas& img, Rgb c, uint8_t state) {
  if (state == kOpen) {
    img.fill(Rect{0.88, 1.00, 0.00, 1.00}, c);
    img.fill(Rect{0.92, 0.96, 0.04, 0.96}, kBlack);
  } else if (state == kLocked) {
    img.fill(Rect{0.00, 1.00, 0.00, 1.00}, c);
    img.fill(Rect{0.06, 0.94, 0.06, 0.94}, scaled(c, 0.45));
    img.fill(Rect{0.52, 0.75, 0.50, 0.56}, c);  // the key slot
  } else {
    img.fill(Rect{0.00, 1.00, 0.00, 1.00}, c);
    img.fill(Rect{0.04, 0.96, 0.04, 0.96}, kBlack);
    img.fill(Rect{0.08, 0.92, 0.08, 0.92}, c);
    img.fill(Rect{0.12, 0.88, 0.12, 0.88}, kBlack);
    img.fill(Circle{0.75, 0.50, 0.08}, c);  // the handle
  }
}

inline void draw_key(Canvas& img, Rgb c) {
  img.fill(Rect{0.50, 0.63, 0.31, 0.88}, c);
  img.fill(Rect{0.38, 0.50, 0.59, 0.66}, c);
  img.fill(Rect{0.38, 0.50, 0.81, 0.88}, c);
  img.fill(Circle{0.56, 0.28, 0.190}, c);
  img.fill(Circle{0.56, 0.28, 0.064}, kBlack);
}

inline void draw_box(Canvas& img, Rgb c) {
  img.fill(Rect{0.12, 0.88, 0.12, 0.88}, c);
  img.fill(Rect{0.18, 0.82, 0.18, 0.82}, kBlack);
  img.fill(Rect{0.16, 0.84, 0.47, 0.53}, c);
}

// WorldObj.render of each type (world_object.py).
inline void draw_object(Canvas& img, uint8_t type, uint8_t color, uint8_t state) {
  const Rgb c = kColors[color];
  switch (type) {
    case kNone:
      return;
    case kWall:
    case kGoal:
      return img.fill(Rect{0, 1, 0, 1}, c);
    case kFloor:
      return img.fill(Rect{0.031, 1, 0.031, 1}, scaled(c, 0.5));  // COLORS[color] / 2
    case kLava:
      return draw_lava(img);
    case kDoor:
      return draw_door(img, c, state);
    case kKey:
      return draw_key(img, c);
    case kBall:
      return img.fill(Circle{0.5, 0.5, 0.31}, c);
    case kBox:
      return draw_box(img, c);
    default:
      throw std::logic_error(std::string("minigrid: no tile for a ") + type_name(type));
  }
}

// Grid.render_tile, uncached: grid lines, the object, the agent's triangle, the highlight, then 3x3 means.
inline void draw_tile(int tile_size, uint8_t type, uint8_t color, uint8_t state, int agent_dir, bool highlight,
                      uint8_t* tile) {
  Canvas img(tile_size * 3);
  img.fill(Rect{0, 0.031, 0, 1}, {100, 100, 100});
  img.fill(Rect{0, 1, 0, 0.031}, {100, 100, 100});
  draw_object(img, type, color, state);
  if (agent_dir >= 0) {
    const Triangle agent(0.12, 0.19, 0.87, 0.50, 0.12, 0.81);
    img.fill(Rotated<Triangle>(agent, 0.5, 0.5, 0.5 * std::numbers::pi * agent_dir), {255, 0, 0});
  }
  if (highlight) img.highlight();
  img.downsample_into(tile);
}

// The tile cache's key, as an index: what encode() gives of the object (a door's state alone counts;
// no object and "empty" are one), the agent's direction or none, and the highlight.
inline constexpr int kObjectKeys = 11 * 6 * 3;
inline constexpr int kNoAgent = 4;
inline constexpr int kTileKeys = kObjectKeys * 5 * 2;

inline int tile_key(const Obj& obj, int agent_dir, bool highlight) {
  if (obj.type > kAgent || obj.color > kGrey || (obj.type == kDoor && obj.state > kLocked))
    throw std::logic_error("minigrid: an object out of range reached the renderer");
  const int object = obj.type <= kEmpty ? 0 : (obj.type * 6 + obj.color) * 3 + (obj.type == kDoor ? obj.state : 0);
  return (object * 5 + agent_dir) * 2 + (highlight ? 1 : 0);
}

// Every tile of one size, each drawn the first time a frame asks for it. Envs on several threads share
// a TileSet: a drawn tile is published with a release store and never changes, so readers take no lock.
class TileSet {
 public:
  explicit TileSet(int tile_size) : tile_size_(tile_size) {}

  int tile_size() const { return tile_size_; }
  size_t tile_bytes() const { return static_cast<size_t>(tile_size_) * tile_size_ * 3; }

  // agent_dir: 0-3, or kNoAgent.
  const uint8_t* get(const Obj& obj, int agent_dir, bool highlight) {
    const int key = tile_key(obj, agent_dir, highlight);
    const uint8_t* tile = tiles_[static_cast<size_t>(key)].load(std::memory_order_acquire);
    return tile != nullptr ? tile : draw(key);
  }

 private:
  const uint8_t* draw(int key) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::atomic<const uint8_t*>& slot = tiles_[static_cast<size_t>(key)];
    if (const uint8_t* tile = slot.load(std::memory_order_relaxed)) return tile;  // drawn while we waited
    const int object = key / 10, agent_dir = key / 2 % 5;
    auto tile = std::make_unique<uint8_t[]>(tile_bytes());
    draw_tile(tile_size_, static_cast<uint8_t>(object / 18), static_cast<uint8_t>(object / 3 % 6),
              static_cast<uint8_t>(object % 3), agent_dir == kNoAgent ? -1 : agent_dir, key % 2 == 1, tile.get());
    storage_.push_back(std::move(tile));
    slot.store(storage_.back().get(), std::memory_order_release);
    return storage_.back().get();
  }

  int tile_size_;
  std::array<std::atomic<const uint8_t*>, kTileKeys> tiles_{};
  std::mutex mutex_;
  std::vector<std::unique_ptr<uint8_t[]>> storage_;
};

// The process's TileSet of a size, made on first use and kept for the process (as minigrid's cache is).
inline constexpr int kMaxTileSize = 64;
inline TileSet& tile_set(int tile_size) {
  if (tile_size < 1 || tile_size > kMaxTileSize)
    throw std::invalid_argument("minigrid: tile_size must be in [1, 64], got " + std::to_string(tile_size));
  static std::array<std::atomic<TileSet*>, kMaxTileSize + 1> sets{};
  static std::mutex mutex;
  std::atomic<TileSet*>& slot = sets[static_cast<size_t>(tile_size)];
  if (TileSet* set = slot.load(std::memory_order_acquire)) return *set;
  std::lock_guard<std::mutex> lock(mutex);
  if (TileSet* set = slot.load(std::memory_order_relaxed)) return *set;
  auto* set = new TileSet(tile_size);  // never freed: frames may be drawn until the process ends
  slot.store(set, std::memory_order_release);
  return *set;
}

// Copies one row of a tile. Rows are short (3 * tile_size bytes): a memcpy of a size unknown at compile
// time was inlined as `rep movs`, several times slower here than fixed 24-byte pieces (8 pixels), which
// compile to two moves.
inline void copy_row(uint8_t* to, const uint8_t* from, size_t bytes) {
  size_t i = 0;
  for (; i + 24 <= bytes; i += 24) std::memcpy(to + i, from + i, 24);
  for (; i < bytes; ++i) to[i] = from[i];
}

// Copies a tile to cell (cx, cy) of a frame `frame_cells` cells wide.
inline void put_tile(const uint8_t* tile, int tile_size, int frame_cells, int cx, int cy, uint8_t* frame) {
  const size_t row_bytes = static_cast<size_t>(tile_size) * 3;
  const size_t frame_row_bytes = row_bytes * frame_cells;
  uint8_t* at = frame + static_cast<size_t>(cy) * tile_size * frame_row_bytes + cx * row_bytes;
  for (int row = 0; row < tile_size; ++row) copy_row(at + row * frame_row_bytes, tile + row * row_bytes, row_bytes);
}

// Whether the agent sees world cell `cell`: its place in the view (get_view_coords, the inverse of
// View::world_of), if there, and visible.
inline bool sees(const View& view, Pos agent, int dir, Pos cell) {
  const int dx = cell.x - agent.x, dy = cell.y - agent.y;
  const int forward = dx * kDirX[dir] + dy * kDirY[dir];
  const int right = -dx * kDirY[dir] + dy * kDirX[dir];
  const int vx = view.size() / 2 + right, vy = view.size() - 1 - forward;
  return vx >= 0 && vy >= 0 && vx < view.size() && vy < view.size() && view.visible(vx, vy);
}

}  // namespace render_detail

// Grid.render_tile(obj, agent_dir (-1: none), highlight, tile_size): [tile][tile][3], cached for the process.
inline const uint8_t* render_tile(const Obj& obj, int agent_dir, bool highlight, int tile_size) {
  return render_detail::tile_set(tile_size).get(obj, agent_dir < 0 ? render_detail::kNoAgent : agent_dir, highlight);
}

// get_frame(highlight, tile_size): the whole grid, [height*tile][width*tile][3], the agent drawn on its
// cell and, with highlight, the cells it sees lighter. `view` is scratch for the agent's visibility.
inline void render_full(const WorldState& world, View& view, bool see_through_walls, int tile_size, bool highlight,
                        uint8_t* out) {
  render_detail::TileSet& tiles = render_detail::tile_set(tile_size);
  if (highlight) view.compute(world.grid, world.agent, world.dir, world.carrying, see_through_walls);
  const Grid& grid = world.grid;
  for (int y = 0; y < grid.height(); ++y)
    for (int x = 0; x < grid.width(); ++x) {
      const Pos cell{x, y};
      const int agent_dir = cell == world.agent ? world.dir : render_detail::kNoAgent;
      const bool lit = highlight && render_detail::sees(view, world.agent, world.dir, cell);
      render_detail::put_tile(tiles.get(grid.get(x, y), agent_dir, lit), tile_size, grid.width(), x, y, out);
    }
}

// get_frame(tile_size, agent_pov=True): the agent's view, [view*tile][view*tile][3]: what it sees (the
// rest blank), lighter, the agent at the bottom middle facing up over what it carries.
inline void render_pov(const WorldState& world, View& view, bool see_through_walls, int tile_size, uint8_t* out) {
  render_detail::TileSet& tiles = render_detail::tile_set(tile_size);
  view.compute(world.grid, world.agent, world.dir, world.carrying, see_through_walls);
  const int size = view.size();
  for (int vy = 0; vy < size; ++vy)
    for (int vx = 0; vx < size; ++vx) {
      const int agent_dir = vx == size / 2 && vy == size - 1 ? 3 : render_detail::kNoAgent;
      render_detail::put_tile(tiles.get(view.cell(vx, vy), agent_dir, view.visible(vx, vy)), tile_size, size, vx, vy,
                              out);
    }
}

}  // namespace torchpool::minigrid
