// errors.h — what the core raises to Python, and how a wait lets Ctrl-C in.
//
// InputError is bad input, refused before anything is queued (bindings map it
// to ValueError). EnvFailure carries the envs that threw inside step or reset;
// it is raised by the call whose batch holds their rows (NOTE [Env failures]
// in episode.h), never on the thread that ran them.
#pragma once

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

}  // namespace torchpool
