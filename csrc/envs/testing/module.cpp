// module.cpp — torchpool._testing, the probe env the tests drive.
#include "envs/testing/probe.h"
#include "family_module.h"

TORCHPOOL_FAMILY_MODULE(_testing, torchpool::family<torchpool::testing::Probe>("Probe"))
