// check.h — the C++ unit tests' assertion: prints where and why, and exits 1
// (tests/test_cpp_primitives.py reports the output).
#pragma once

#include <cstdio>
#include <cstdlib>

#define CHECK(condition, ...)                                     \
  do {                                                            \
    if (!(condition)) {                                           \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      std::exit(1);                                               \
    }                                                             \
  } while (0)
