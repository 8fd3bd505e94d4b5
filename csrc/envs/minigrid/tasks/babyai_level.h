// babyai_level.h — the base of BabyAI's levels (minigrid/envs/babyai/core/roomgrid_level.py,
// RoomGridLevel) and its random-instruction generator (core/levelgen.py, LevelGen).
//
// A level lays out a room grid and draws its instruction (gen_mission); a layout the level rejects
// (RejectSampling) or that a bounded rejection sampler gives up on (RecursionError) is drawn again from
// scratch, the stream going on. Once the layout holds, every object gets its own tag (the identity the
// verifier, babyai_verifier.h, tells objects apart by), the mission is the instruction's surface, and
// each step is verified: success ends the episode with 1 - 0.9 * steps / max_steps, failure with 0.
//
// The step limit: minigrid's, when max_steps is given (then it is fixed, the pool's time limit);
// otherwise RoomGridLevel sets it per episode to num_navs * room_size² * rooms: max_steps=0 here, the
// level sets WorldState::max_steps at each reset and the env truncates itself (TaskShape::per_episode_limit).
// Levels whose instructions always need the same navigations get that number as a fixed limit instead
// (torchpool/families/babyai.py computes it): the same episodes, and the pool reports its limit.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "babyai_verifier.h"
#include "room_grid.h"

namespace torchpool::minigrid::babyai {

// RoomGridLevel's RejectSampling and the RecursionError of its samplers (rand_obj's).
struct RejectSampling : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BabyAILevel : public RoomGridTask {
 public:
  using RoomGridTask::RoomGridTask;

  // _gen_grid: lay out and draw the instruction until both hold.
  void gen_grid(WorldState& w) override {
    while (true) {
      w.grid.clear();
      RoomGridTask::gen_grid(w);
      try {
        gen_mission(w);
        tag_objects(w);
        validate_instrs(w, *instrs_);
      } catch (const std::runtime_error&) {  // RejectSampling, and place_obj's / connect_all's RecursionError
        continue;
      }
      break;
    }
    w.mission = instrs_->surface(scene(w));
    instrs_->reset_verifier(scene(w));
    carried_cur_pos_ = {-1, -1};
    if (w.max_steps == 0) w.max_steps = dynamic_max_steps();  // max_steps=None: RoomGridLevel.reset's limit
  }

  StepOutcome step(WorldState& w, int action) override {
    const bool held_nothing = w.carrying.empty();
    StepOutcome outcome = w.base_step(action);
    if (action == kPickup && held_nothing && !w.carrying.empty()) carried_cur_pos_ = {-1, -1};
    if (action == kDrop) instrs_->update_objs_poss(scene(w));
    const Status status = instrs_->verify({w, action, carried_cur_pos_});
    if (status == Status::kSuccess) {
      outcome.terminated = true;
      outcome.reward = w.success_reward();
    } else if (status == Status::kFailure) {
      outcome.terminated = true;
      outcome.reward = 0.0;
    }
    return outcome;
  }

  // The step limit RoomGridLevel gives this episode when max_steps is not fixed.
  int dynamic_max_steps() const { return instrs_->num_navs() * room_size() * room_size() * num_rows() * num_cols(); }

 protected:
  // gen_mission: the level's layout and its instruction (instrs_).
  virtual void gen_mission(WorldState& w) = 0;

  std::unique_ptr<Instr> instrs_;
  bool unblocking_ = false;      // LevelGen's `unblocking` (other levels have none)
  Pos carried_cur_pos_{-1, -1};  // the carried object's cur_pos, as minigrid last set it

  Scene scene(const WorldState& w) {
    const Room& room = room_from_pos(w.agent);
    return {w, room.top, room.size};
  }

  static ObjDesc desc(uint8_t type, uint8_t color = kAnyColor, Loc loc = kNoLoc) {
    ObjDesc d;
    d.type = type, d.color = color, d.loc = loc;
    return d;
  }
  static ObjDesc desc_of(const Obj& obj) { return desc(obj.type, obj.color); }

  // open_all_doors.
  void open_all_doors(WorldState& w) {
    for (Room& room : rooms())
      for (int k = 0; k < 4; ++k)
        if (room.doors[k] == Wall::kDoor) w.grid.at(room.door_pos[k].x, room.door_pos[k].y).state = kOpen;
  }

  // check_objs_reachable: every object reachable from the agent through empty cells and doors (of any
  // state), none moved. Raises RejectSampling, or answers, as the reference.
  bool check_objs_reachable(const WorldState& w, bool raise = true) const {
    const int width = w.grid.width(), height = w.grid.height();
    std::vector<char> reachable(static_cast<size_t>(width) * height, 0);
    std::vector<Pos> stack = {w.agent};
    while (!stack.empty()) {
      const Pos pos = stack.back();
      stack.pop_back();
      if (!w.grid.inside(pos.x, pos.y)) continue;
      char& seen = reachable[static_cast<size_t>(pos.y) * width + pos.x];
      if (seen) continue;
      seen = 1;
      const Obj& cell = w.grid.get(pos.x, pos.y);
      if (!cell.empty() && cell.type != kDoor) continue;
      stack.push_back({pos.x + 1, pos.y});
      stack.push_back({pos.x - 1, pos.y});
      stack.push_back({pos.x, pos.y + 1});
      stack.push_back({pos.x, pos.y - 1});
    }
    for (int i = 0; i < width; ++i)
      for (int j = 0; j < height; ++j) {
        const Obj& cell = w.grid.get(i, j);
        if (cell.empty() || cell.type == kWall) continue;
        if (!reachable[static_cast<size_t>(j) * width + i]) {
          if (!raise) return false;
          throw RejectSampling("unreachable object");
        }
      }
    return true;
  }

 private:
  // Each object its own tag, column by column (walls none): minigrid's identities.
  static void tag_objects(WorldState& w) {
    int tag = 0;
    for (int i = 0; i < w.grid.width(); ++i)
      for (int j = 0; j < w.grid.height(); ++j) {
        Obj& cell = w.grid.at(i, j);
        if (cell.empty() || cell.type == kWall) continue;
        if (++tag > 255) throw std::logic_error("minigrid: more than 255 objects to tell apart");
        cell.tag = static_cast<uint8_t>(tag);
      }
  }

  std::vector<uint8_t> colors_of_locked_doors(const WorldState& w) {
    std::vector<uint8_t> colors;
    for (int i = 0; i < num_cols(); ++i)
      for (int j = 0; j < num_rows(); ++j) {
        const Room& room = get_room(i, j);
        for (int k = 0; k < 4; ++k) {
          if (room.doors[k] != Wall::kDoor) continue;
          const Obj& door = w.grid.get(room.door_pos[k].x, room.door_pos[k].y);
          if (door.type == kDoor && door.state == kLocked) colors.push_back(door.color);
        }
      }
    return colors;
  }

  // validate_instrs.
  void validate_instrs(const WorldState& w, Instr& instr) {
    if (instr.kind == Instr::kPutNext) {
      instr.reset_verifier(scene(w));
      for (const ObjDesc::Match& moved : instr.desc.obj_set)
        if (instr.desc_fixed.tracks(moved.tag)) throw RejectSampling("objects match both sides of PutNext");
      if (instr.objs_next()) throw RejectSampling("objs already next to each other");
    }
    if (instr.is_action()) {
      if (!unblocking_) return;
      const std::vector<uint8_t> locked = colors_of_locked_doors(w);
      auto opens_a_door = [&locked](const ObjDesc& d) {
        if (d.type != kKey) return false;
        for (uint8_t color : locked)
          if (color == d.color) return true;
        return false;
      };
      if (opens_a_door(instr.desc) || (instr.kind == Instr::kPutNext && opens_a_door(instr.desc_fixed)))
        throw RejectSampling("cannot do anything with/to a key that can be used to open a door");
      return;
    }
    validate_instrs(w, *instr.a);
    validate_instrs(w, *instr.b);
  }
};

// LevelGen: a locked room now and then, doors to connect all rooms, distractors, the agent outside the
// locked room, and a random instruction over what lies there.
class LevelGen : public BabyAILevel {
 public:
  enum Action { kGoToAction, kPickupAction, kOpenAction, kPutNextAction };
  enum InstrKind { kActionKind, kAndKind, kSeqKind };

  struct Options {
    int room_size = 8, num_rows = 3, num_cols = 3, num_dists = 18;
    double locked_room_prob = 0.5;
    bool locations = true, unblocking = true, implicit_unlock = true;
    std::vector<Action> action_kinds = {kGoToAction, kPickupAction, kOpenAction, kPutNextAction};
    std::vector<InstrKind> instr_kinds = {kActionKind, kAndKind, kSeqKind};
  };

  explicit LevelGen(Options options)
      : BabyAILevel(options.room_size, options.num_rows, options.num_cols), options_(std::move(options)) {
    unblocking_ = options_.unblocking;
  }

 protected:
  void gen_mission(WorldState& w) override {
    locked_room_ = -1;
    if (w.rng.uniform(0.0, 1.0) < options_.locked_room_prob) add_locked_room(w);
    connect_all(w);
    add_distractors(w, std::nullopt, std::nullopt, options_.num_dists, false);
    while (true) {  // not in the locked room
      place_agent(w);
      if (room_index(room_from_pos(w.agent)) != locked_room_) break;
    }
    if (!options_.unblocking) check_objs_reachable(w);
    instrs_ = rand_instr(w, options_.instr_kinds);
  }

 private:
  int room_index(const Room& room) { return static_cast<int>(&room - rooms().data()); }

  void add_locked_room(WorldState& w) {
    PlacedDoor door;
    while (true) {
      const int i = w.rand_int(0, num_cols()), j = w.rand_int(0, num_rows());
      const int door_idx = w.rand_int(0, 4);
      locked_room_ = room_index(get_room(i, j));
      if (get_room(i, j).neighbors[door_idx] < 0) continue;
      door = add_door(w, i, j, door_idx, std::nullopt, true);
      break;
    }
    while (true) {
      const int i = w.rand_int(0, num_cols()), j = w.rand_int(0, num_rows());
      if (room_index(get_room(i, j)) == locked_room_) continue;
      add_object(w, i, j, kKey, door.door.color);
      break;
    }
  }

  // rand_obj: a description (colour or none, type, maybe a location) that matches some object, not
  // only ones in the locked room when unlocking is not implicit; RecursionError after max_tries.
  ObjDesc rand_obj(WorldState& w, const std::vector<uint8_t>& types, int max_tries = 100) {
    static const std::vector<uint8_t> colors = {kAnyColor, kBlue, kGreen, kGrey, kPurple, kRed, kYellow};
    static const std::vector<int> locs = {kLocLeft, kLocRight, kLocFront, kLocBehind};
    for (int num_tries = 0;; ++num_tries) {
      if (num_tries > max_tries) throw RejectSampling("failed to find suitable object");
      const uint8_t color = w.rand_elem(colors);
      const uint8_t type = w.rand_elem(types);
      Loc loc = kNoLoc;
      if (options_.locations && w.rand_bool()) loc = static_cast<Loc>(w.rand_elem(locs));
      ObjDesc d = desc(type, color, loc);
      d.find_matching_objs(scene(w));
      if (d.obj_set.empty()) continue;
      if (!options_.implicit_unlock && locked_room_ >= 0) {
        const Room& locked = rooms()[static_cast<size_t>(locked_room_)];
        bool outside = false;
        for (Pos pos : d.obj_poss) outside = outside || !locked.pos_inside(pos);
        if (!outside) continue;
      }
      return d;
    }
  }

  std::unique_ptr<Instr> rand_action(WorldState& w) {
    static const std::vector<uint8_t> all = {kBox, kBall, kKey, kDoor}, not_door = {kBox, kBall, kKey}, door = {kDoor};
    switch (w.rand_elem(options_.action_kinds)) {
      case kGoToAction:
        return Instr::action(Instr::kGoTo, rand_obj(w, all));
      case kPickupAction:
        return Instr::action(Instr::kPickup, rand_obj(w, not_door));
      case kOpenAction:
        return Instr::action(Instr::kOpen, rand_obj(w, door));
      default: {
        ObjDesc move = rand_obj(w, not_door);
        return Instr::put_next(std::move(move), rand_obj(w, all));
      }
    }
  }

  std::unique_ptr<Instr> rand_instr(WorldState& w, const std::vector<InstrKind>& kinds) {
    switch (w.rand_elem(kinds)) {
      case kActionKind:
        return rand_action(w);
      case kAndKind: {
        auto a = rand_instr(w, {kActionKind});
        return Instr::seq(Instr::kAnd, std::move(a), rand_instr(w, {kActionKind}));
      }
      default: {
        auto a = rand_instr(w, {kActionKind, kAndKind});
        auto b = rand_instr(w, {kActionKind, kAndKind});
        const Instr::Kind order = w.rand_bool() ? Instr::kBefore : Instr::kAfter;
        return Instr::seq(order, std::move(a), std::move(b));
      }
    }
  }

  Options options_;
  int locked_room_ = -1;  // index in rooms(); -1: none this layout
};

}  // namespace torchpool::minigrid::babyai
