// wfc_graph.h — the graph steps of minigrid's WFCEnv._gen_grid (minigrid/envs/wfc/wfcenv.py,
// graphtransforms.py) on the solved layout: the navigable cells as a networkx grid graph, the largest
// connected component kept (_get_largest_component), and the order networkx then lists its nodes in, which
// _place_start_and_goal_random indexes with a permutation.
//
// That order is networkx's and CPython's, so it is reproduced here (networkx 3.x; CPython's sets and tuple
// hashes as 3.8 to 3.13 have them):
//   - the graph lists its navigable cells row by row (features_to_dense_graph adds sorted grid nodes), and a
//     cell's neighbours up, left, down, right (the order grid_2d_graph's edges reach it);
//   - connected_components yields each component as the set _plain_bfs fills, components in the order their
//     first cell comes; the largest (the first of equal size: sorted() is stable) with more than one cell wins;
//   - graph.subgraph(component) iterates, when the component holds fewer than half the graph's nodes, the set
//     of the nodes it was given (FilterAtlas.__iter__'s shortcut), else the graph's own order. The component
//     passes through two such subgraphs (the copy, then the subgraph of the copy), so in the first case the
//     order is that of a set filled from a set filled from the BFS set: PythonTupleSet below.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace torchpool::minigrid::wfc {

struct Node {
  int row = 0, col = 0;
  bool operator==(const Node& other) const { return row == other.row && col == other.col; }
};

// A CPython set (Objects/setobject.c, 3.8 to 3.13) of (int, int) tuples of small non-negative ints, for the order it
// iterates in: its table, from slot 0, after the same adds. No removals (none happen here).
class PythonTupleSet {
 public:
  // set_add_entry: the hash's slot and the 9 after it (where the table has them), then a perturbed jump; at
  // 3/5 full the table is rebuilt at the smallest power of two above 4 times its entries.
  void add(const Node& node) {
    const uint64_t hash = tuple_hash(node);
    uint64_t perturb = hash;
    size_t i = hash & mask_;
    while (true) {
      const size_t probes = i + kLinearProbes <= mask_ ? kLinearProbes : 0;
      for (size_t slot = i; slot <= i + probes; ++slot) {
        if (!used_[slot]) {
          place(slot, node, hash);
          if (++fill_ * 5 >= mask_ * 3) resize(fill_ * 4);
          return;
        }
        if (hashes_[slot] == hash && keys_[slot] == node) return;
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask_;
    }
  }

  // Iteration: the occupied slots in table order.
  std::vector<Node> order() const {
    std::vector<Node> nodes;
    for (size_t slot = 0; slot <= mask_; ++slot)
      if (used_[slot]) nodes.push_back(keys_[slot]);
    return nodes;
  }

  // tuplehash (Objects/tupleobject.c, xxHash's mixing); an int's hash is itself.
  static uint64_t tuple_hash(const Node& node) {
    constexpr uint64_t kPrime1 = 11400714785074694791ULL, kPrime2 = 14029467366897019727ULL,
                       kPrime5 = 2870177450012600261ULL;
    uint64_t acc = kPrime5;
    for (const int item : {node.row, node.col}) {
      acc += static_cast<uint64_t>(item) * kPrime2;
      acc = (acc << 31) | (acc >> 33);
      acc *= kPrime1;
    }
    acc += 2 ^ (kPrime5 ^ 3527539ULL);
    return acc == ~uint64_t{0} ? 1546275796 : acc;
  }

 private:
  static constexpr size_t kLinearProbes = 9, kPerturbShift = 5;

  void place(size_t slot, const Node& node, uint64_t hash) {
    used_[slot] = 1, keys_[slot] = node, hashes_[slot] = hash;
  }

  // set_table_resize: the smallest power of two above minused, the old slots reinserted in table order
  // (set_insert_clean).
  void resize(size_t minused) {
    size_t size = 8;
    while (size <= minused) size <<= 1;
    const std::vector<Node> keys = keys_;
    const std::vector<uint64_t> hashes = hashes_;
    const std::vector<uint8_t> used = used_;
    mask_ = size - 1;
    keys_.assign(size, Node{});
    hashes_.assign(size, 0);
    used_.assign(size, 0);
    for (size_t old = 0; old < used.size(); ++old)
      if (used[old]) insert_clean(keys[old], hashes[old]);
  }

  void insert_clean(const Node& node, uint64_t hash) {
    uint64_t perturb = hash;
    size_t i = hash & mask_;
    while (true) {
      const size_t probes = i + kLinearProbes <= mask_ ? kLinearProbes : 0;
      for (size_t slot = i; slot <= i + probes; ++slot)
        if (!used_[slot]) return place(slot, node, hash);
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask_;
    }
  }

  size_t mask_ = 7, fill_ = 0;
  std::vector<Node> keys_ = std::vector<Node>(8);
  std::vector<uint64_t> hashes_ = std::vector<uint64_t>(8);
  std::vector<uint8_t> used_ = std::vector<uint8_t>(8);
};

// A set filled, one add each, from `nodes` in order: set(iterable)'s, and set display's, path.
inline PythonTupleSet python_set(const std::vector<Node>& nodes) {
  PythonTupleSet set;
  for (const Node& node : nodes) set.add(node);
  return set;
}

// _get_largest_component's graph, its nodes in networkx's order; `navigable` is the rows x cols layout,
// row-major. Throws where the reference fails (no component of two cells: components[0] of an empty list).
inline std::vector<Node> largest_component(const std::vector<uint8_t>& navigable, int rows, int cols) {
  auto open = [&](int r, int c) {
    return r >= 0 && c >= 0 && r < rows && c < cols && navigable[static_cast<size_t>(r) * cols + c] != 0;
  };
  std::vector<uint8_t> seen(navigable.size(), 0);
  std::vector<Node> best;  // the BFS's insertion order
  size_t nodes = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (!open(r, c)) continue;
      ++nodes;
      if (seen[static_cast<size_t>(r) * cols + c]) continue;
      // _plain_bfs: level by level, each cell's neighbours in adjacency order.
      std::vector<Node> component = {{r, c}};
      seen[static_cast<size_t>(r) * cols + c] = 1;
      for (size_t next = 0; next < component.size(); ++next) {
        const Node at = component[next];
        const Node around[4] = {{at.row - 1, at.col}, {at.row, at.col - 1}, {at.row + 1, at.col}, {at.row, at.col + 1}};
        for (const Node& w : around) {
          if (!open(w.row, w.col) || seen[static_cast<size_t>(w.row) * cols + w.col]) continue;
          seen[static_cast<size_t>(w.row) * cols + w.col] = 1;
          component.push_back(w);
        }
      }
      if (component.size() > 1 && component.size() > best.size()) best = std::move(component);
    }
  if (best.empty()) throw std::runtime_error("minigrid WFC: the layout has no two connected navigable cells");
  if (2 * best.size() < nodes) return python_set(python_set(python_set(best).order()).order()).order();
  std::vector<uint8_t> kept(navigable.size(), 0);
  for (const Node& node : best) kept[static_cast<size_t>(node.row) * cols + node.col] = 1;
  std::vector<Node> sorted;  // the graph's order: row by row
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (kept[static_cast<size_t>(r) * cols + c]) sorted.push_back({r, c});
  return sorted;
}

}  // namespace torchpool::minigrid::wfc
