// module.cpp — torchpool._mujoco, Gymnasium's MuJoCo tasks. Links libmujoco,
// which Python loads first (torchpool/_mujoco_lib.py).
#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/humanoidstandup.h"
#include "envs/mujoco/inverted_double_pendulum.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/pusher.h"
#include "envs/mujoco/reacher.h"
#include "envs/mujoco/swimmer.h"
#include "envs/mujoco/walker2d.h"
#include "family_module.h"

PYBIND11_MODULE(_mujoco, m) {
  using namespace torchpool;
  export_families(m, {family<mujoco::Ant>("Ant"), family<mujoco::HalfCheetah>("HalfCheetah"),
                      family<mujoco::Hopper>("Hopper"), family<mujoco::Walker2d>("Walker2d"),
                      family<mujoco::Humanoid>("Humanoid"), family<mujoco::HumanoidStandup>("HumanoidStandup"),
                      family<mujoco::Swimmer>("Swimmer"), family<mujoco::Reacher>("Reacher"),
                      family<mujoco::Pusher>("Pusher"), family<mujoco::InvertedPendulum>("InvertedPendulum"),
                      family<mujoco::InvertedDoublePendulum>("InvertedDoublePendulum")});
}
