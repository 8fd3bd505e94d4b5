// errors.h — what the core raises to Python, and how a wait lets Ctrl-C in.
//
// InputError is bad input, refused before anything is queued (bindings map it
// to ValueError). EnvFailure carries the envs that threw inside step or reset;
// it is raised by the call whose batch holds their rows (NOTE [Env failures]
// in episode.h), never on the thread that ran them. Neither leaves the module
// that throws it: the plug-in boundary passes a status and text (plugin.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace torchpool {

struct InputError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Called every few milliseconds while the caller sleeps; may throw (Ctrl-C).
using InterruptCheck = std::function<void()>;

// block: the ring block of the batch, or kResetBatch for reset().
struct EnvFailure : std::runtime_error {
  static constexpr size_t kResetBatch = static_cast<size_t>(-1);
  size_t block;
  size_t rows;  // rows of the batch
  std::vector<int64_t> env_ids;
  std::vector<std::string> messages;

  EnvFailure(size_t block_, size_t rows_, std::vector<int64_t> ids, std::vector<std::string> texts)
      : std::runtime_error(describe(ids, texts)),
        block(block_),
        rows(rows_),
        env_ids(std::move(ids)),
        messages(std::move(texts)) {}

  static std::string describe(const std::vector<int64_t>& ids, const std::vector<std::string>& texts) {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i)
      text += (i ? "\n" : "") + std::string("env ") + std::to_string(ids[i]) + ": " + texts[i];
    return text;
  }
};

// How many rows of each ring block, and of reset()'s batch (kResetBatch), hold
// a failure. Workers add to a count before they count the rows themselves and
// the caller reads it only after it saw every row (FillCounter's release and
// acquire), so relaxed order suffices.
class FailureCounts {
 public:
  explicit FailureCounts(size_t blocks) : counts_(blocks + 1) {}  // zeroed: atomics value-initialize (C++20)
  void add(size_t block, int32_t rows) {
    if (rows > 0) at(block).fetch_add(rows, std::memory_order_relaxed);
  }
  int32_t take(size_t block) { return at(block).exchange(0, std::memory_order_relaxed); }
  void set(size_t block, int32_t rows) { at(block).store(rows, std::memory_order_relaxed); }

 private:
  std::atomic<int32_t>& at(size_t block) { return block == EnvFailure::kResetBatch ? counts_.back() : counts_[block]; }
  std::vector<std::atomic<int32_t>> counts_;
};

}  // namespace torchpool
