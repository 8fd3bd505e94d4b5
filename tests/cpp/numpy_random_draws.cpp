// numpy_random_draws.cpp — runs NumpyGenerator (csrc/core/numpy_random.h) on the calls it reads, one a line,
// and prints each result, for tests/test_numpy_random.py to compare with NumPy's own:
//   seed S | raw | random | integers LOW HIGH | uniform LOW HIGH   (doubles printed as C99 hex floats)
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "core/numpy_random.h"

int main() {
  std::unique_ptr<torchpool::NumpyGenerator> rng;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string call;
    words >> call;
    if (call == "seed") {
      uint64_t seed = 0;
      words >> seed;
      rng = std::make_unique<torchpool::NumpyGenerator>(seed);
    } else if (call == "raw") {
      std::printf("%" PRIu64 "\n", rng->next_uint64());
    } else if (call == "random") {
      std::printf("%a\n", rng->random());
    } else if (call == "integers") {
      int64_t low = 0, high = 0;
      words >> low >> high;
      std::printf("%" PRId64 "\n", rng->integers(low, high));
    } else if (call == "uniform") {
      double low = 0, high = 0;
      words >> low >> high;
      std::printf("%a\n", rng->uniform(low, high));
    }
  }
  return 0;
}
