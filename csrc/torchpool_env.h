// torchpool_env.h — installed as <torchpool/env.h>: what a C++ env outside
// torchpool includes (torchpool.register_cpp_env). The Env concept and the
// types it uses are core/env.h's; a family is one header of a Model and an
// Env, as csrc/envs/classic/cartpole.h and examples/cpp_env/my_cartpole.h.
#pragma once

#include "core/env.h"  // installed as <torchpool/core/env.h>
