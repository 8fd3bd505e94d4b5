// numpy_random_draws.cpp — runs NumpyGenerator (csrc/core/numpy_random.h) on the calls it reads, one a line,
// and prints each result, for tests/test_numpy_random.py to compare with NumPy's own:
//   seed S | raw | random | integers LOW HIGH | uniform LOW HIGH | shuffle N   (doubles printed as C99 hex floats)
//   random_array N (random(N): its values on one line) | choice P0 P1 ... (choice(len(p), p=p), the p as hex
//   floats) | permutation N
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

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
    } else if (call == "shuffle") {
      size_t n = 0;
      words >> n;
      std::vector<int> items(n);
      for (size_t i = 0; i < n; ++i) items[i] = static_cast<int>(i);
      rng->shuffle(items);
      std::string out;
      for (int item : items) out += std::to_string(item) + ",";
      std::printf("%s\n", out.c_str());
    } else if (call == "random_array") {
      size_t n = 0;
      words >> n;
      std::string out;
      char value[64];
      for (size_t i = 0; i < n; ++i) {
        std::snprintf(value, sizeof(value), "%a,", rng->random());
        out += value;
      }
      std::printf("%s\n", out.c_str());
    } else if (call == "choice") {
      std::vector<double> p;
      std::string value;
      while (words >> value) p.push_back(std::strtod(value.c_str(), nullptr));  // hex floats: exact
      std::printf("%" PRId64 "\n", rng->choice(p));
    } else if (call == "permutation") {
      int64_t n = 0;
      words >> n;
      std::string out;
      for (int64_t item : rng->permutation(n)) out += std::to_string(item) + ",";
      std::printf("%s\n", out.c_str());
    } else if (call == "uniform") {
      double low = 0, high = 0;
      words >> low >> high;
      std::printf("%a\n", rng->uniform(low, high));
    }
  }
  return 0;
}
