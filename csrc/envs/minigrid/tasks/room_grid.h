// room_grid.h — RoomGridTask, minigrid's RoomGrid (minigrid/core/roomgrid.py): a grid of equal square
// rooms sharing their walls, each wall between two rooms with a door position drawn at the start of every
// layout, and the helpers the room-based classes lay themselves out with (add_door, add_object,
// remove_wall, place_agent in a room, connect_all, add_distractors), each drawing from np_random exactly
// as the reference does. The classes built on it are in room_grid_tasks.h (and BabyAI's, later).
//
// Rooms are values too: a room's doors are remembered as what its wall has (nothing, a door, an opening)
// and where; the door itself lives in the grid at that position.
#pragma once

#include <cstdlib>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../task.h"

namespace torchpool::minigrid {

class RoomGridTask : public Task {
 public:
  // Room.doors[k]: None, a Door, or True (the wall between the rooms removed).
  enum class Wall : uint8_t { kSolid, kDoor, kOpening };

  // An object a room holds, where it was placed (obj.cur_pos at placement).
  struct Placed {
    Obj obj;
    Pos pos;
  };

  struct Room {
    Pos top, size;
    // Right, down, left, up (the direction indices).
    Wall doors[4] = {Wall::kSolid, Wall::kSolid, Wall::kSolid, Wall::kSolid};
    Pos door_pos[4];                      // {-1, -1}: none (no neighbour that way)
    int neighbors[4] = {-1, -1, -1, -1};  // indices into rooms(); -1: none
    bool locked = false;                  // behind a locked door (as add_door last set it)
    std::vector<Placed> objs;

    bool has_door(int k) const { return doors[k] != Wall::kSolid; }
    Pos rand_pos(WorldState& w) const {
      return w.rand_pos(top.x + 1, top.x + size.x - 1, top.y + 1, top.y + size.y - 1);
    }
    bool pos_inside(Pos pos) const {
      return pos.x >= top.x && pos.y >= top.y && pos.x < top.x + size.x && pos.y < top.y + size.y;
    }
  };

  // add_door's result: the door as placed, and where.
  struct PlacedDoor {
    Obj door;
    Pos pos;
  };

  RoomGridTask(int room_size, int num_rows, int num_cols)
      : room_size_(room_size), num_rows_(num_rows), num_cols_(num_cols) {
    if (room_size < 3 || num_rows < 1 || num_cols < 1)
      throw std::invalid_argument("a room grid needs room_size >= 3 and at least one row and column, got room_size " +
                                  std::to_string(room_size) + ", " + std::to_string(num_rows) + " rows, " +
                                  std::to_string(num_cols) + " columns");
  }

  // The grid's side for `count` rooms of `room_size` a side: neighbours share a wall.
  static int grid_side(int room_size, int count) { return (room_size - 1) * count + 1; }

  // _gen_grid: the rooms' walls, then each room's door positions (right and down drawn, left and up
  // shared with the neighbour's), row by row; the agent in the middle room's centre, facing right.
  void gen_grid(WorldState& w) override {
    rooms_.clear();
    for (int j = 0; j < num_rows_; ++j)
      for (int i = 0; i < num_cols_; ++i) {
        Room room;
        room.top = {i * (room_size_ - 1), j * (room_size_ - 1)};
        room.size = {room_size_, room_size_};
        w.grid.wall_rect(room.top.x, room.top.y, room.size.x, room.size.y);
        rooms_.push_back(std::move(room));
      }
    for (int j = 0; j < num_rows_; ++j)
      for (int i = 0; i < num_cols_; ++i) {
        Room& room = get_room(i, j);
        const int x_l = room.top.x + 1, y_l = room.top.y + 1;
        const int x_m = room.top.x + room.size.x - 1, y_m = room.top.y + room.size.y - 1;
        if (i < num_cols_ - 1) {
          room.neighbors[0] = index(i + 1, j);
          room.door_pos[0] = {x_m, w.rand_int(y_l, y_m)};
        }
        if (j < num_rows_ - 1) {
          room.neighbors[1] = index(i, j + 1);
          room.door_pos[1] = {w.rand_int(x_l, x_m), y_m};
        }
        if (i > 0) {
          room.neighbors[2] = index(i - 1, j);
          room.door_pos[2] = rooms_[room.neighbors[2]].door_pos[0];
        }
        if (j > 0) {
          room.neighbors[3] = index(i, j - 1);
          room.door_pos[3] = rooms_[room.neighbors[3]].door_pos[1];
        }
      }
    w.agent = {(num_cols_ / 2) * (room_size_ - 1) + room_size_ / 2,
               (num_rows_ / 2) * (room_size_ - 1) + room_size_ / 2};
    w.dir = 0;
  }

 protected:
  int room_size() const { return room_size_; }
  int num_rows() const { return num_rows_; }
  int num_cols() const { return num_cols_; }
  std::vector<Room>& rooms() { return rooms_; }

  Room& get_room(int i, int j) { return rooms_[index(i, j)]; }
  Room& room_from_pos(Pos pos) {
    if (pos.x < 0 || pos.y < 0) throw std::logic_error("minigrid: room_from_pos of a cell outside the grid");
    return get_room(pos.x / (room_size_ - 1), pos.y / (room_size_ - 1));
  }

  // place_in_room: anywhere in the room (its walls are never empty) but not next to the agent, or
  // PlacementFailed after 1000 tries, as the reference's RecursionError.
  Pos place_in_room(WorldState& w, int i, int j, const Obj& obj) {
    Room& room = get_room(i, j);
    const Pos pos = w.place_obj(obj, room.top, room.size, [&w](Pos p) { return next_to_agent(w, p); }, 1000);
    room.objs.push_back({obj, pos});
    return pos;
  }

  // add_object: a key, ball or box (kind drawn when not given, then the colour). `tag` is this port's
  // stand-in for the object's identity (world.h): the mark a task recognises it by later.
  Placed add_object(WorldState& w, int i, int j, std::optional<uint8_t> kind = std::nullopt,
                    std::optional<uint8_t> color = std::nullopt, uint8_t tag = 0) {
    if (!kind) {
      static const std::vector<uint8_t> kinds = {kKey, kBall, kBox};
      kind = w.rand_elem(kinds);
    }
    if (!color) color = w.rand_color();
    if (*kind != kKey && *kind != kBall && *kind != kBox)
      throw std::logic_error(std::string("minigrid: add_object of a ") + type_name(*kind));
    Obj obj = Obj::make(*kind, *color);
    obj.tag = tag;
    const Pos pos = place_in_room(w, i, j, obj);
    return {obj, pos};
  }

  // add_door: on wall door_idx (drawn among the walls with a neighbour and no door yet when not given),
  // of `color` (drawn), locked or not (drawn). The room, not its neighbour, counts as locked.
  PlacedDoor add_door(WorldState& w, int i, int j, std::optional<int> door_idx = std::nullopt,
                      std::optional<uint8_t> color = std::nullopt, std::optional<bool> locked = std::nullopt) {
    Room& room = get_room(i, j);
    if (!door_idx) {
      do {
        door_idx = w.rand_int(0, 4);
      } while (room.neighbors[*door_idx] < 0 || room.has_door(*door_idx));
    }
    if (!color) color = w.rand_color();
    if (!locked) locked = w.rand_bool();
    const int k = *door_idx;
    if (room.has_door(k)) throw std::logic_error("minigrid: add_door: door already exists");
    if (room.neighbors[k] < 0) throw std::logic_error("minigrid: add_door on a wall with no neighbour");
    room.locked = *locked;
    const Obj door = Obj::door(*color, *locked);
    const Pos pos = room.door_pos[k];
    w.grid.set(pos.x, pos.y, door);
    room.doors[k] = Wall::kDoor;
    rooms_[room.neighbors[k]].doors[(k + 2) % 4] = Wall::kDoor;
    return {door, pos};
  }

  // remove_wall: the wall's inside cells emptied (its corners stay); the rooms count as connected.
  void remove_wall(WorldState& w, int i, int j, int wall_idx) {
    Room& room = get_room(i, j);
    if (wall_idx < 0 || wall_idx > 3 || room.neighbors[wall_idx] < 0)
      throw std::logic_error("minigrid: remove_wall: invalid wall");
    if (room.has_door(wall_idx)) throw std::logic_error("minigrid: remove_wall: door exists on this wall");
    const int tx = room.top.x, ty = room.top.y, width = room.size.x, height = room.size.y;
    switch (wall_idx) {
      case 0:
        for (int k = 1; k < height - 1; ++k) w.grid.remove(tx + width - 1, ty + k);
        break;
      case 1:
        for (int k = 1; k < width - 1; ++k) w.grid.remove(tx + k, ty + height - 1);
        break;
      case 2:
        for (int k = 1; k < height - 1; ++k) w.grid.remove(tx, ty + k);
        break;
      default:
        for (int k = 1; k < width - 1; ++k) w.grid.remove(tx + k, ty);
        break;
    }
    room.doors[wall_idx] = Wall::kOpening;
    rooms_[room.neighbors[wall_idx]].doors[(wall_idx + 2) % 4] = Wall::kOpening;
  }

  // place_agent in room (i, j) (column, then row, drawn when not given): placed again until it does not
  // face an object, so its first step is never blocked by one (a wall is fine).
  Pos place_agent(WorldState& w, std::optional<int> i = std::nullopt, std::optional<int> j = std::nullopt,
                  bool rand_dir = true) {
    if (!i) i = w.rand_int(0, num_cols_);
    if (!j) j = w.rand_int(0, num_rows_);
    const Room& room = get_room(*i, *j);
    while (true) {
      w.place_agent(room.top, room.size, rand_dir, 1000);
      const Pos front = w.front();
      const Obj& cell = w.grid.get(front.x, front.y);
      if (cell.empty() || cell.type == kWall) break;
    }
    return w.agent;
  }

  // connect_all: unlocked doors of colours drawn from door_colors, on random walls, until every room is
  // reachable from the agent's (through doors of any state and openings). Rooms counted as locked get
  // no new door. The reference gives up after max_itrs tries with a RecursionError.
  std::vector<PlacedDoor> connect_all(WorldState& w, const std::vector<uint8_t>& door_colors = color_names(),
                                      int max_itrs = 5000) {
    const int start = index_of(room_from_pos(w.agent));
    std::vector<PlacedDoor> added;
    for (int num_itrs = 0;; ++num_itrs) {
      if (num_itrs > max_itrs) throw std::runtime_error("minigrid: connect_all failed");
      if (reachable_from(start) == static_cast<int>(rooms_.size())) break;
      const int i = w.rand_int(0, num_cols_);
      const int j = w.rand_int(0, num_rows_);
      const int k = w.rand_int(0, 4);
      const Room& room = get_room(i, j);
      if (room.neighbors[k] < 0 || room.has_door(k)) continue;
      if (room.locked || rooms_[room.neighbors[k]].locked) continue;
      const uint8_t color = w.rand_elem(door_colors);
      added.push_back(add_door(w, i, j, k, color, false));
    }
    return added;
  }

  // add_distractors: random keys, balls and boxes (colour drawn, then kind), in room (i, j) or a drawn
  // one (column, then row); with all_unique, none the same kind and colour as an object already in a room.
  std::vector<Placed> add_distractors(WorldState& w, std::optional<int> i = std::nullopt,
                                      std::optional<int> j = std::nullopt, int num_distractors = 10,
                                      bool all_unique = true) {
    std::vector<Obj> objs;
    for (const Room& room : rooms_)
      for (const Placed& placed : room.objs) objs.push_back(placed.obj);
    std::vector<Placed> dists;
    static const std::vector<uint8_t> kinds = {kKey, kBall, kBox};
    while (static_cast<int>(dists.size()) < num_distractors) {
      const uint8_t color = w.rand_color();
      const uint8_t kind = w.rand_elem(kinds);
      const Obj obj = Obj::make(kind, color);
      if (all_unique && contains_same(objs, obj)) continue;
      const int room_i = i ? *i : w.rand_int(0, num_cols_);
      const int room_j = j ? *j : w.rand_int(0, num_rows_);
      dists.push_back(add_object(w, room_i, room_j, kind, color));
      objs.push_back(obj);
    }
    return dists;
  }

  // The tag of the one object a layout asks for (the object `self.obj` is, in the reference).
  static constexpr uint8_t kTargetTag = 1;

  // The pickup rule of the classes that ask for an object: a pickup while holding it (picked up now or
  // before) wins.
  static StepOutcome pick_up_target_step(WorldState& w, int action) {
    StepOutcome outcome = w.base_step(action);
    if (action == kPickup && w.carrying.tag == kTargetTag) {
      outcome.reward = w.success_reward();
      outcome.terminated = true;
    }
    return outcome;
  }

 private:
  int index(int i, int j) const {
    if (i < 0 || j < 0 || i >= num_cols_ || j >= num_rows_)
      throw std::logic_error("minigrid: room (" + std::to_string(i) + ", " + std::to_string(j) + ") outside a " +
                             std::to_string(num_cols_) + "x" + std::to_string(num_rows_) + " room grid");
    return j * num_cols_ + i;
  }
  int index_of(const Room& room) const { return static_cast<int>(&room - rooms_.data()); }

  // reject_next_to: the agent's cell and the four around it.
  static bool next_to_agent(const WorldState& w, Pos pos) {
    return std::abs(w.agent.x - pos.x) + std::abs(w.agent.y - pos.y) < 2;
  }

  static bool contains_same(const std::vector<Obj>& objs, const Obj& obj) {
    for (const Obj& other : objs)
      if (other.same(obj)) return true;
    return false;
  }

  // connect_all's find_reach: how many rooms the agent's room reaches through walls with a door or opening.
  int reachable_from(int start) const {
    std::vector<char> reached(rooms_.size(), 0);
    std::vector<int> stack = {start};
    int count = 0;
    while (!stack.empty()) {
      const int room = stack.back();
      stack.pop_back();
      if (reached[room]) continue;
      reached[room] = 1;
      ++count;
      for (int k = 0; k < 4; ++k)
        if (rooms_[room].has_door(k)) stack.push_back(rooms_[room].neighbors[k]);
    }
    return count;
  }

  int room_size_, num_rows_, num_cols_;
  std::vector<Room> rooms_;  // row by row: room (i, j) at j * num_cols + i
};

}  // namespace torchpool::minigrid
