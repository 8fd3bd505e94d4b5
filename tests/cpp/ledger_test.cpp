// ledger_test.cpp — the caller's books (csrc/core/ledger.h) and the failure
// counts (errors.h): which ids a call is refused for, and that a refused call
// marks nothing.
#include "core/ledger.h"

#include <cstdint>
#include <string>

#include "check.h"
#include "core/errors.h"

using torchpool::EnvFailure;
using torchpool::FailureCounts;
using torchpool::InputError;
using torchpool::Ledger;

// The message check_ids throws for `ids`, or "" when it accepts them.
static std::string refusal(Ledger& books, std::initializer_list<int64_t> ids) {
  try {
    books.check_ids(ids.begin(), ids.size());
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

int main() {
  Ledger books(4);
  CHECK(refusal(books, {0, 1, 2, 3}).empty(), "every idle id in range is accepted");
  CHECK(refusal(books, {}) == "no env ids given", "an empty call is refused");
  CHECK(refusal(books, {4}) == "env id 4 is out of range [0, 4)", "got '%s'", refusal(books, {4}).c_str());
  CHECK(refusal(books, {-1}) == "env id -1 is out of range [0, 4)", "negative ids are out of range");
  CHECK(refusal(books, {1, 2, 1}) == "env id 1 appears twice in one call", "got '%s'",
        refusal(books, {1, 2, 1}).c_str());
  // A refused duplicate leaves no mark behind: the same ids, once each, pass.
  for (int64_t id = 0; id < 4; ++id) CHECK(!books.in_flight(id), "env %lld left marked", static_cast<long long>(id));
  CHECK(refusal(books, {1, 2}).empty(), "ids refused for a duplicate are accepted alone");

  const int64_t sent[] = {2, 0};
  books.mark(sent, 2, 1);
  CHECK(books.in_flight(0) && books.in_flight(2) && !books.in_flight(1), "mark sets exactly the given envs");
  CHECK(refusal(books, {1, 2}) == "env 2 already has an action in flight; recv() its result first", "got '%s'",
        refusal(books, {1, 2}).c_str());
  // The first id in flight is named, whatever comes before it.
  CHECK(refusal(books, {3, 0}).find("env 0 already has an action in flight") == 0, "in-flight check");
  CHECK(books.idle(1) == 1, "an idle env's state may be read");
  try {
    books.idle(2);
    CHECK(false, "idle() let an env in flight through");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) == "env 2 is in flight", "got '%s'", error.what());
  }
  try {
    books.idle(4);
    CHECK(false, "idle() let an id out of range through");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) == "env id 4 is out of range", "got '%s'", error.what());
  }
  books.mark(sent, 2, 0);
  CHECK(refusal(books, {0, 1, 2, 3}).empty(), "envs marked idle are accepted again");

  FailureCounts failures(3);
  failures.add(1, 2);
  failures.add(1, 0);
  failures.add(EnvFailure::kResetBatch, 1);
  CHECK(failures.take(0) == 0, "block 0 has no failures");
  CHECK(failures.take(1) == 2, "block 1 counted 2");
  CHECK(failures.take(1) == 0, "take() clears the count");
  CHECK(failures.take(EnvFailure::kResetBatch) == 1, "reset()'s batch has a count of its own");
  failures.set(2, 5);
  CHECK(failures.take(2) == 5, "set() restores a count (undo_recv)");
  return 0;
}
