// ledger.h — the caller's books: which envs have a result pending, how many
// rows were sent and received, and what an interrupted or undoable call left.
//
// Only the caller thread touches a Ledger (one caller per pool, see
// executor_api.h), so nothing here is atomic. The books live in C++, not in
// Python, so that each call is all-or-nothing even when KeyboardInterrupt
// lands between two of Python's own statements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "errors.h"

namespace torchpool {

class Ledger {
 public:
  explicit Ledger(size_t num_envs) : in_flight_(num_envs, 0) {}

  // Throws InputError naming the first id of a call that is out of range, has
  // a result pending, or appears twice in the call. Marks nothing.
  void check_ids(const int64_t* ids, size_t count) {
    if (count == 0) throw InputError("no env ids given");
    const auto num_envs = static_cast<int64_t>(in_flight_.size());
    for (size_t i = 0; i < count; ++i) {
      const int64_t id = ids[i];
      if (id < 0 || id >= num_envs)
        throw InputError("env id " + std::to_string(id) + " is out of range [0, " + std::to_string(num_envs) + ")");
      if (in_flight_[id])
        throw InputError("env " + std::to_string(id) + " already has an action in flight; recv() its result first");
    }
    // Duplicates: mark each id, then clear every mark before reporting.
    std::string problem;
    for (size_t i = 0; i < count; ++i) {
      if (in_flight_[ids[i]] && problem.empty())
        problem = "env id " + std::to_string(ids[i]) + " appears twice in one call";
      in_flight_[ids[i]] = 1;
    }
    mark(ids, count, 0);
    if (!problem.empty()) throw InputError(problem);
  }

  // `id`, if it is in range and idle (state injection); else InputError.
  size_t idle(size_t id) const {
    if (id >= in_flight_.size()) throw InputError("env id " + std::to_string(id) + " is out of range");
    if (in_flight_[id]) throw InputError("env " + std::to_string(id) + " is in flight");
    return id;
  }

  // 1 while an env's result is not yet received, 0 once it is.
  bool in_flight(int64_t id) const { return in_flight_[id] != 0; }
  void mark(const int64_t* ids, size_t count, uint8_t value) {
    for (size_t i = 0; i < count; ++i) in_flight_[ids[i]] = value;
  }

  uint64_t sent = 0, received = 0;  // rows

  // NOTE [Interrupted calls] (executor.h): the sync step() or reset() whose
  // wait a second Ctrl-C cut short; the next call settles it first.
  struct Abandoned {
    enum Kind { kNone = 0, kBlock = 1, kReset = 2 };
    int kind = kNone;
    size_t block = 0;
    std::vector<int64_t> ids;
  } abandoned;

  // What undo_recv() puts back: the block the last recv() handed out (-1:
  // none) and the failures that block raised.
  struct Undo {
    int64_t block = -1;
    std::vector<int64_t> env_ids;
    std::vector<std::string> messages;
  } undo;

 private:
  std::vector<uint8_t> in_flight_;
};

}  // namespace torchpool
