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

TORCHPOOL_FAMILY_MODULE(_mujoco, torchpool::family<torchpool::mujoco::Ant>("Ant"),
                        torchpool::family<torchpool::mujoco::HalfCheetah>("HalfCheetah"),
                        torchpool::family<torchpool::mujoco::Hopper>("Hopper"),
                        torchpool::family<torchpool::mujoco::Walker2d>("Walker2d"),
                        torchpool::family<torchpool::mujoco::Humanoid>("Humanoid"),
                        torchpool::family<torchpool::mujoco::HumanoidStandup>("HumanoidStandup"),
                        torchpool::family<torchpool::mujoco::Swimmer>("Swimmer"),
                        torchpool::family<torchpool::mujoco::Reacher>("Reacher"),
                        torchpool::family<torchpool::mujoco::Pusher>("Pusher"),
                        torchpool::family<torchpool::mujoco::InvertedPendulum>("InvertedPendulum"),
                        torchpool::family<torchpool::mujoco::InvertedDoublePendulum>("InvertedDoublePendulum"))
