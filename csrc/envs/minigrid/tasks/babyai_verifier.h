// babyai_verifier.h — BabyAI's instructions and their verifier (minigrid/envs/babyai/core/verifier.py):
// the object descriptions (ObjDesc: type, colour, location relative to the agent), the action
// instructions (open, go to, pick up, put next to) and the sequences built from them (and, before,
// after), each with its surface form and its verify() that says, step by step, whether the instruction
// succeeded, failed or goes on.
//
// minigrid tells objects apart by identity (`front_cell is door`, `env.carrying is obj`); here every
// object a level lays out carries a distinct tag (world.h), given once the layout is final
// (babyai_level.h), and a description remembers the tags it matched. Walls carry none: a description
// without a type ("the grey object") matches walls too, and those it remembers by position (walls never
// move). BABYAI_DONE_ACTIONS is taken as unset (minigrid's default).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../world_state.h"

namespace torchpool::minigrid::babyai {

inline constexpr uint8_t kAnyColor = 0xFF;                                                      // ObjDesc's color None
inline constexpr uint8_t kAnyType = kNone;                                                      // ObjDesc's type None
enum Loc : int8_t { kNoLoc = -1, kLocLeft = 0, kLocRight = 1, kLocFront = 2, kLocBehind = 3 };  // LOC_NAMES' order

enum class Status { kContinue, kSuccess, kFailure };

// What a description needs of the env: the grid, the agent, and the room it is in (locations only
// count there).
struct Scene {
  const WorldState& w;
  Pos room_top, room_size;
  bool in_agent_room(Pos pos) const {
    return pos.x >= room_top.x && pos.y >= room_top.y && pos.x < room_top.x + room_size.x &&
           pos.y < room_top.y + room_size.y;
  }
};

inline bool pos_next_to(Pos a, Pos b) { return std::abs(a.x - b.x) + std::abs(a.y - b.y) == 1; }

struct ObjDesc {
  uint8_t type = kAnyType;
  uint8_t color = kAnyColor;
  Loc loc = kNoLoc;

  // obj_set: a matched object is its tag, or (a wall) its position. obj_poss: where they are now.
  struct Match {
    uint8_t tag;
    Pos pos;  // a wall's (tag 0)
  };
  std::vector<Match> obj_set;
  std::vector<Pos> obj_poss;

  bool tracks(uint8_t tag) const {
    if (tag == 0) return false;
    for (const Match& match : obj_set)
      if (match.tag == tag) return true;
    return false;
  }

  // find_matching_objs: the grid column by column. Without use_location only the objects matched
  // before are looked for again (a drop moved one), whatever the location now says.
  void find_matching_objs(const Scene& scene, bool use_location = true) {
    const WorldState& w = scene.w;
    if (use_location) obj_set.clear();
    obj_poss.clear();
    for (int i = 0; i < w.grid.width(); ++i)
      for (int j = 0; j < w.grid.height(); ++j) {
        const Obj& cell = w.grid.get(i, j);
        if (cell.empty()) continue;
        if (!use_location && !tracked_cell(cell, {i, j})) continue;
        if (type != kAnyType && cell.type != type) continue;
        if (color != kAnyColor && cell.color != color) continue;
        if (use_location && loc != kNoLoc && !location_matches(scene, {i, j})) continue;
        if (use_location) obj_set.push_back({cell.tag, {i, j}});
        obj_poss.push_back({i, j});
      }
  }

  // surface(): "the"/"a" by how many objects match now.
  std::string surface(const Scene& scene) {
    find_matching_objs(scene);
    std::string s = type != kAnyType ? type_name(type) : "object";
    if (color != kAnyColor) s = std::string(color_name(color)) + " " + s;
    static const char* const locs[4] = {" on your left", " on your right", " in front of you", " behind you"};
    if (loc != kNoLoc) s += locs[loc];
    return (obj_set.size() > 1 ? "a " : "the ") + s;
  }

 private:
  bool tracked_cell(const Obj& cell, Pos pos) const {
    if (cell.type == kWall) {
      for (const Match& match : obj_set)
        if (match.tag == 0 && match.pos == pos) return true;
      return false;
    }
    return tracks(cell.tag);
  }

  // Left/right/front/behind of the agent as it stands, in its room only.
  bool location_matches(const Scene& scene, Pos pos) const {
    if (!scene.in_agent_room(pos)) return false;
    const int vx = pos.x - scene.w.agent.x, vy = pos.y - scene.w.agent.y;
    const int d1x = kDirX[scene.w.dir], d1y = kDirY[scene.w.dir];
    const int d2x = -d1y, d2y = d1x;
    switch (loc) {
      case kLocLeft:
        return vx * d2x + vy * d2y < 0;
      case kLocRight:
        return vx * d2x + vy * d2y > 0;
      case kLocFront:
        return vx * d1x + vy * d1y > 0;
      default:
        return vx * d1x + vy * d1y < 0;
    }
  }
};

// What verify() sees after a step: the scene, the action, and where the object carried before the step
// now is (cur_pos: the cell it was dropped on, or, still carried, where minigrid last set it).
struct StepView {
  const WorldState& w;
  int action;
  Pos carried_cur_pos;
};

// One instruction: an action on one or two descriptions, or two instructions in sequence. (Its Kind
// kPickup hides the action's: the actions are named Actions::k... inside.)
struct Instr {
  enum Kind { kOpen, kGoTo, kPickup, kPutNext, kAnd, kBefore, kAfter };
  Kind kind;
  ObjDesc desc, desc_fixed;  // desc: the object (put next: the one moved)
  bool strict = false;
  std::unique_ptr<Instr> a, b;

  // Verifier state (reset_verifier): what was carried at the last step verified, the parts' status.
  Obj pre_carrying;
  Status a_done = Status::kContinue, b_done = Status::kContinue;

  static std::unique_ptr<Instr> action(Kind kind, ObjDesc desc, bool strict = false) {
    auto instr = std::make_unique<Instr>();
    instr->kind = kind, instr->desc = std::move(desc), instr->strict = strict;
    return instr;
  }
  static std::unique_ptr<Instr> put_next(ObjDesc move, ObjDesc fixed, bool strict = false) {
    auto instr = action(kPutNext, std::move(move), strict);
    instr->desc_fixed = std::move(fixed);
    return instr;
  }
  static std::unique_ptr<Instr> seq(Kind kind, std::unique_ptr<Instr> a, std::unique_ptr<Instr> b) {
    auto instr = std::make_unique<Instr>();
    instr->kind = kind, instr->a = std::move(a), instr->b = std::move(b);
    return instr;
  }

  bool is_action() const { return kind <= kPutNext; }

  std::string surface(const Scene& scene) {
    switch (kind) {
      case kOpen:
        return "open " + desc.surface(scene);
      case kGoTo:
        return "go to " + desc.surface(scene);
      case kPickup:
        return "pick up " + desc.surface(scene);
      case kPutNext: {
        std::string move = desc.surface(scene);
        return "put " + move + " next to " + desc_fixed.surface(scene);
      }
      case kAnd: {
        std::string first = a->surface(scene);
        return first + " and " + b->surface(scene);
      }
      case kBefore: {
        std::string first = a->surface(scene);
        return first + ", then " + b->surface(scene);
      }
      default: {
        std::string first = a->surface(scene);
        return first + " after you " + b->surface(scene);
      }
    }
  }

  void reset_verifier(const Scene& scene) {
    pre_carrying = Obj{};
    a_done = b_done = Status::kContinue;
    if (is_action()) {
      desc.find_matching_objs(scene);
      if (kind == kPutNext) desc_fixed.find_matching_objs(scene);
    } else {
      a->reset_verifier(scene);
      b->reset_verifier(scene);
    }
  }

  // update_objs_poss, after a drop: where the matched objects are now.
  void update_objs_poss(const Scene& scene) {
    if (!is_action()) {
      a->update_objs_poss(scene);
      b->update_objs_poss(scene);
      return;
    }
    desc.find_matching_objs(scene, false);
    if (kind == kPutNext) desc_fixed.find_matching_objs(scene, false);
  }

  // num_navs_needed: what the episode's step limit counts.
  int num_navs() const {
    if (kind == kPutNext) return 2;
    if (is_action()) return 1;
    return a->num_navs() + b->num_navs();
  }

  // PutNextInstr.objs_next (rejection sampling): a moved object already next to a fixed one. At layout
  // time an object's cur_pos is where it lies.
  bool objs_next() const {
    for (const ObjDesc::Match& moved : desc.obj_set)
      for (Pos fixed : desc_fixed.obj_poss)
        if (pos_next_to(moved.pos, fixed)) return true;
    return false;
  }

  Status verify(const StepView& step) {
    switch (kind) {
      case kOpen:
        return verify_open(step);
      case kGoTo:
        return verify_goto(step);
      case kPickup:
        return verify_pickup(step);
      case kPutNext:
        return verify_put_next(step);
      case kAnd:
        return verify_and(step);
      case kBefore:
        return verify_before(step);
      default:
        return verify_after(step);
    }
  }

 private:
  Status verify_open(const StepView& step) const {
    if (step.action != Actions::kToggle) return Status::kContinue;
    const Pos front = step.w.front();
    const Obj& cell = step.w.grid.get(front.x, front.y);
    if (desc.tracks(cell.tag) && cell.type == kDoor && cell.state == kOpen) return Status::kSuccess;
    if (strict && cell.type == kDoor) return Status::kFailure;
    return Status::kContinue;
  }

  Status verify_goto(const StepView& step) const {
    const Pos front = step.w.front();
    for (Pos pos : desc.obj_poss)
      if (pos == front) return Status::kSuccess;
    return Status::kContinue;
  }

  Status verify_pickup(const StepView& step) {
    const Obj before = pre_carrying;
    pre_carrying = step.w.carrying;
    if (step.action != Actions::kPickup) return Status::kContinue;
    if (before.empty() && desc.tracks(step.w.carrying.tag)) return Status::kSuccess;
    if (strict && !step.w.carrying.empty()) return Status::kFailure;
    return Status::kContinue;
  }

  Status verify_put_next(const StepView& step) {
    const Obj before = pre_carrying;
    pre_carrying = step.w.carrying;
    if (strict && step.action == Actions::kPickup && !step.w.carrying.empty()) return Status::kFailure;
    if (step.action != Actions::kDrop) return Status::kContinue;
    // The object carried before this drop: dropped in front now, or still carried.
    if (!desc.tracks(before.tag)) return Status::kContinue;
    const Pos pos_a = step.w.carrying.tag == before.tag ? step.carried_cur_pos : step.w.front();
    for (Pos fixed : desc_fixed.obj_poss)
      if (pos_next_to(pos_a, fixed)) return Status::kSuccess;
    return Status::kContinue;
  }

  Status verify_and(const StepView& step) {
    if (a_done != Status::kSuccess) a_done = a->verify(step);
    if (b_done != Status::kSuccess) b_done = b->verify(step);
    return a_done == Status::kSuccess && b_done == Status::kSuccess ? Status::kSuccess : Status::kContinue;
  }

  // BeforeInstr.verify: once the first part succeeds, the second is verified on the same step.
  Status verify_before(const StepView& step) {
    if (a_done == Status::kSuccess) {
      b_done = b->verify(step);
      if (b_done == Status::kFailure) return Status::kFailure;
      if (b_done == Status::kSuccess) return Status::kSuccess;
    } else {
      a_done = a->verify(step);
      if (a_done == Status::kFailure) return Status::kFailure;
      if (a_done == Status::kSuccess) return verify_before(step);
      if (strict && b->verify(step) == Status::kSuccess) return Status::kFailure;
    }
    return Status::kContinue;
  }

  Status verify_after(const StepView& step) {
    if (b_done == Status::kSuccess) {
      a_done = a->verify(step);
      if (a_done == Status::kSuccess) return Status::kSuccess;
      if (a_done == Status::kFailure) return Status::kFailure;
    } else {
      b_done = b->verify(step);
      if (b_done == Status::kFailure) return Status::kFailure;
      if (b_done == Status::kSuccess) return verify_after(step);
      if (strict && a->verify(step) == Status::kSuccess) return Status::kFailure;
    }
    return Status::kContinue;
  }
};

}  // namespace torchpool::minigrid::babyai
