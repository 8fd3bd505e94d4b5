// module.cpp — torchpool._testing, the probe env the tests drive.
#include "envs/testing/probe.h"
#include "family_module.h"

PYBIND11_MODULE(_testing, m) { torchpool::export_families(m, {torchpool::family<torchpool::testing::Probe>("Probe")}); }
