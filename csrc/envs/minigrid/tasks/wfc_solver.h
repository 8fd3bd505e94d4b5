// wfc_solver.h — minigrid's Wave Function Collapse (minigrid/envs/wfc/wfclogic: tiles.py, patterns.py,
// adjacency.py, solver.py, control.py's execute_wfc) for the settings its registered presets use: 1-pixel
// tiles, 8 symmetries, the "entropy" location and "weighted" pattern heuristics, no backtracking.
//
// The catalog (a preset's patterns, their weights and which may sit beside which) depends on the image alone
// and is built once per preset; its order is minigrid's, the patterns sorted by their hash_downto codes. The
// solve draws from the env's np_random as execute_wfc does: random((rows, cols)) once for the cells'
// preferences, then one choice(n, p=...) per collapsed cell, across attempts until one has no contradiction.
//
// Where the reference's arithmetic is not ours, it gives the same answer: propagate() recomputes every
// cell's support from the whole wave until nothing changes; we revise only the cells around what changed.
// Both reach the same wave, the largest in which each pattern a cell keeps is allowed by some pattern of the
// neighbour in every direction (arc consistency's fixed point is unique, whatever the order of the revisions),
// and a contradiction is a cell emptied in either.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../../core/numpy_random.h"
#include "wfc_patterns.h"

namespace torchpool::minigrid::wfc {

// execute_wfc's direction_offsets: (dx, dy). propagate() shifts the wave's rows by dx and its columns by dy;
// adjacency_extraction shifts a pattern's columns by dx and its rows by dy (sic: both kept as they are).
inline constexpr int kDirections = 4;
inline constexpr int kOffsetX[kDirections] = {0, 1, 0, -1};
inline constexpr int kOffsetY[kDirections] = {-1, 0, 1, 0};

using PatternSet = uint64_t;  // one bit a pattern; the presets have at most 42
inline constexpr int kMaxPatterns = 64;

struct Catalog {
  const PatternImage* image = nullptr;
  int count = 0;                // patterns
  std::vector<double> weights;  // encoded_weights: the symmetries a pattern appears in
  std::vector<bool> wall;       // the pattern's top-left pixel, what the solution shows, is a wall
  PatternSet supports[kDirections][kMaxPatterns] = {};  // [d][q]: the p with adjacency_matrix[d][p, q]
  PatternSet all = 0;
};

namespace detail {

// A grid of tile codes, row-major.
struct CodeGrid {
  int rows = 0, cols = 0;
  std::vector<int64_t> codes;
  int64_t at(int r, int c) const { return codes[static_cast<size_t>(r) * cols + c]; }
};

// hash_downto(values, rank): the inner product with kHashWeights, in int64 that wraps (NumPy's).
inline int64_t hash_code(const std::vector<int64_t>& values) {
  uint64_t code = 0;
  for (size_t i = 0; i < values.size(); ++i)
    code += static_cast<uint64_t>(values[i]) * static_cast<uint64_t>(kHashWeights[i]);
  return static_cast<int64_t>(code);
}

// make_tile_catalog with tile_size 1: each pixel's code from its RGB.
inline CodeGrid tile_grid(const PatternImage& image) {
  CodeGrid grid{image.height, image.width, {}};
  for (int i = 0; i < image.width * image.height; ++i) {
    const uint8_t* rgb = image.palette[image.pixels[i] - '0'];
    grid.codes.push_back(hash_code({rgb[0], rgb[1], rgb[2]}));
  }
  return grid;
}

// np.fliplr and np.rot90(grid, axes=(1, 0)) (a quarter turn clockwise).
inline CodeGrid reflect(const CodeGrid& g) {
  CodeGrid out{g.rows, g.cols, std::vector<int64_t>(g.codes.size())};
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) out.codes[static_cast<size_t>(r) * g.cols + c] = g.at(r, g.cols - 1 - c);
  return out;
}
inline CodeGrid rotate(const CodeGrid& g) {
  CodeGrid out{g.cols, g.rows, std::vector<int64_t>(g.codes.size())};
  for (int r = 0; r < out.rows; ++r)
    for (int c = 0; c < out.cols; ++c) out.codes[static_cast<size_t>(r) * out.cols + c] = g.at(g.rows - 1 - c, r);
  return out;
}

// unique_patterns_2d: every k x k window of the grid, wrapping (both branches of the reference wrap),
// by code; the window's tiles row-major.
inline std::map<int64_t, std::vector<int64_t>> windows(const CodeGrid& g, int k) {
  std::map<int64_t, std::vector<int64_t>> found;
  std::vector<int64_t> tiles(static_cast<size_t>(k) * k);
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      for (int a = 0; a < k; ++a)
        for (int b = 0; b < k; ++b) tiles[static_cast<size_t>(a) * k + b] = g.at((r + a) % g.rows, (c + b) % g.cols);
      found.emplace(hash_code(tiles), tiles);
    }
  return found;
}

// is_valid_overlap_xy: pattern q shifted by (dx columns, dy rows) agrees with p where they overlap.
inline bool overlaps(const std::vector<int64_t>& p, const std::vector<int64_t>& q, int k, int dx, int dy) {
  for (int r = std::max(0, dy); r < std::min(k, k + dy); ++r)
    for (int c = std::max(0, dx); c < std::min(k, k + dx); ++c)
      if (p[static_cast<size_t>(r) * k + c] != q[static_cast<size_t>(r - dy) * k + (c - dx)]) return false;
  return true;
}

inline Catalog build_catalog(const PatternImage& image) {
  const int k = image.pattern_width;
  // make_pattern_catalog_with_rotations: the grid operations apply one after another, each catalogued; a
  // pattern's weight counts the grids it appears in.
  std::map<int64_t, std::vector<int64_t>> patterns;  // ordered by code: np.unique's order
  std::map<int64_t, int> appearances;
  CodeGrid grid = tile_grid(image);
  for (int op = 0; op < 8; ++op) {
    if (op > 0) grid = op % 2 == 1 ? reflect(grid) : rotate(grid);
    for (const auto& [code, tiles] : windows(grid, k)) {
      patterns.emplace(code, tiles);
      ++appearances[code];
    }
  }
  if (static_cast<int>(patterns.size()) != image.minigrid_patterns || patterns.size() > kMaxPatterns)
    throw std::logic_error(std::string("minigrid WFC: ") + image.preset + " has " + std::to_string(patterns.size()) +
                           " patterns, minigrid's catalog " + std::to_string(image.minigrid_patterns));
  Catalog catalog;
  catalog.image = &image;
  catalog.count = static_cast<int>(patterns.size());
  catalog.all = catalog.count == 64 ? ~PatternSet{0} : (PatternSet{1} << catalog.count) - 1;
  // _pattern_to_minigrid_layout: a pixel whose red is 0 is a wall (pattern == (0, 0, 0) per channel, then
  // channel 0); the solution shows each cell's pattern's top-left pixel (pattern_grid_to_tiles).
  std::map<int64_t, bool> wall_tiles;
  for (int i = 0; i < image.colours; ++i) {
    const uint8_t* rgb = image.palette[i];
    wall_tiles[hash_code({rgb[0], rgb[1], rgb[2]})] = rgb[0] == 0;
  }
  std::vector<const std::vector<int64_t>*> contents;
  for (const auto& [code, tiles] : patterns) {
    contents.push_back(&tiles);
    catalog.weights.push_back(appearances[code]);
    catalog.wall.push_back(wall_tiles.at(tiles[0]));
  }
  for (int d = 0; d < kDirections; ++d)
    for (int p = 0; p < catalog.count; ++p)
      for (int q = 0; q < catalog.count; ++q)
        if (overlaps(*contents[p], *contents[q], k, kOffsetX[d], kOffsetY[d]))
          catalog.supports[d][q] |= PatternSet{1} << p;
  return catalog;
}

}  // namespace detail

// The catalog of a WFC_PRESETS name (nullptr: not one of the six), built on first use.
inline const Catalog* catalog_of(const std::string& preset) {
  static const std::vector<Catalog> catalogs = [] {
    std::vector<Catalog> built;
    for (const PatternImage& image : kPatternImages) built.push_back(detail::build_catalog(image));
    return built;
  }();
  for (const Catalog& catalog : catalogs)
    if (preset == catalog.image->preset) return &catalog;
  return nullptr;
}

// One solve of execute_wfc: the wave of rows x cols cells, each the set of patterns it may still hold.
class Solver {
 public:
  Solver(const Catalog& catalog, int rows, int cols)
      : catalog_(catalog), rows_(rows), cols_(cols), wave_(static_cast<size_t>(rows) * cols) {}

  // execute_wfc's loop: attempts until one solves (attempt_limit of them). Returns the pattern of each cell,
  // row-major, or nothing when every attempt met a contradiction (the reference's pattern None).
  std::optional<std::vector<int>> execute(NumpyGenerator& rng, int attempt_limit) {
    // choice_random_weighting = np_random.random(wave.shape[1:]) * 0.1, drawn before any attempt.
    preferences_.resize(wave_.size());
    for (double& preference : preferences_) preference = rng.random() * 0.1;
    for (int attempt = 0; attempt < attempt_limit; ++attempt)
      if (run(rng)) {
        std::vector<int> solution;
        for (PatternSet cell : wave_) solution.push_back(std::countr_zero(cell));  // argmax(wave, axis=0)
        return solution;
      }
    return std::nullopt;
  }

 private:
  // run(): Solver.solve_next until solved; false on a contradiction. The first step propagates the fresh
  // wave; each step observes one cell, even one whose wave is already settled (observe's argmin of all inf
  // is cell 0, and its pattern is drawn all the same), then propagates.
  bool run(NumpyGenerator& rng) {
    std::fill(wave_.begin(), wave_.end(), catalog_.all);
    bool first = true;
    while (!solved()) {
      if (first && !propagate_all()) return false;
      first = false;
      const size_t cell = location();
      wave_[cell] = PatternSet{1} << pattern(rng, wave_[cell]);
      if (!propagate_from(cell)) return false;
    }
    return true;
  }

  bool solved() const {
    return std::all_of(wave_.begin(), wave_.end(), [](PatternSet cell) { return std::popcount(cell) == 1; });
  }

  // makeEntropyLocationHeuristic: argmin (the first) of preference + count over the unsettled cells, inf for
  // the settled.
  size_t location() const {
    size_t best = 0;
    double best_weight = std::numeric_limits<double>::infinity();
    for (size_t cell = 0; cell < wave_.size(); ++cell) {
      const int count = std::popcount(wave_[cell]);
      const double weight =
          count > 1 ? preferences_[cell] + static_cast<double>(count) : std::numeric_limits<double>::infinity();
      if (weight < best_weight) best = cell, best_weight = weight;
    }
    return best;
  }

  // makeWeightedPatternHeuristic: p = weights * wave / (weights * wave).sum(), choice(n, p=p). The weights are
  // small integers, so the sum is exact in any order and p is NumPy's to the bit.
  int pattern(NumpyGenerator& rng, PatternSet cell) {
    p_.assign(static_cast<size_t>(catalog_.count), 0.0);
    double sum = 0.0;
    for (int i = 0; i < catalog_.count; ++i)
      if (cell >> i & 1) p_[i] = catalog_.weights[i], sum += catalog_.weights[i];
    for (double& value : p_) value /= sum;
    return static_cast<int>(rng.choice(p_));
  }

  // The cell beside `cell` in direction d (its wave's support there), wrapping when the output is periodic;
  // -1 outside a non-periodic output, where the reference pads with every pattern.
  long neighbour(size_t cell, int d, int sign) const {
    int r = static_cast<int>(cell) / cols_ + sign * kOffsetX[d],
        c = static_cast<int>(cell) % cols_ + sign * kOffsetY[d];
    if (catalog_.image->output_periodic) {
      r = (r + rows_) % rows_, c = (c + cols_) % cols_;
    } else if (r < 0 || c < 0 || r >= rows_ || c >= cols_) {
      return -1;
    }
    return static_cast<long>(r) * cols_ + c;
  }

  // supports[d] of one cell whose neighbour in direction d may hold `patterns`: the p that one of them allows.
  PatternSet support(int d, PatternSet patterns) const {
    PatternSet allowed = 0;
    for (; patterns != 0; patterns &= patterns - 1) allowed |= catalog_.supports[d][std::countr_zero(patterns)];
    return allowed;
  }

  // Keeps of `cell` what `allowed` allows; false if that empties it. A changed cell joins the queue.
  bool restrict(size_t cell, PatternSet allowed) {
    const PatternSet kept = wave_[cell] & allowed;
    if (kept == wave_[cell]) return true;
    wave_[cell] = kept;
    queue_.push_back(cell);
    return kept != 0;
  }

  // The first propagate(): the padding beyond a non-periodic edge supports what any pattern allows; then
  // every cell's neighbours are revised.
  bool propagate_all() {
    queue_.clear();
    for (size_t cell = 0; cell < wave_.size(); ++cell)
      for (int d = 0; d < kDirections; ++d)
        if (neighbour(cell, d, 1) < 0 && !restrict(cell, support(d, catalog_.all))) return false;
    queue_.clear();
    for (size_t cell = 0; cell < wave_.size(); ++cell) queue_.push_back(cell);
    return drain();
  }

  bool propagate_from(size_t cell) {
    queue_.assign(1, cell);
    return drain();
  }

  // Revises the cells beside each changed one: the cell whose neighbour in direction d is `changed`.
  bool drain() {
    while (!queue_.empty()) {
      const size_t changed = queue_.back();
      queue_.pop_back();
      for (int d = 0; d < kDirections; ++d) {
        const long beside = neighbour(changed, d, -1);
        if (beside >= 0 && !restrict(static_cast<size_t>(beside), support(d, wave_[changed]))) return false;
      }
    }
    return true;
  }

  const Catalog& catalog_;
  int rows_, cols_;
  std::vector<PatternSet> wave_;
  std::vector<double> preferences_, p_;
  std::vector<size_t> queue_;
};

}  // namespace torchpool::minigrid::wfc
