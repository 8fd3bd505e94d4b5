// module.cpp — torchpool._dmc, the DeepMind Control Suite's domains. Links
// libmujoco, which Python loads first (torchpool/_mujoco_lib.py); the models
// are dm_control's own XML files, read from the installed package.
#include "envs/dmc/acrobot.h"
#include "envs/dmc/ball_in_cup.h"
#include "envs/dmc/cartpole.h"
#include "envs/dmc/cheetah.h"
#include "envs/dmc/finger.h"
#include "envs/dmc/fish.h"
#include "envs/dmc/hopper.h"
#include "envs/dmc/humanoid.h"
#include "envs/dmc/pendulum.h"
#include "envs/dmc/point_mass.h"
#include "envs/dmc/reacher.h"
#include "envs/dmc/walker.h"
#include "family_module.h"

PYBIND11_MODULE(_dmc, m) {
  using namespace torchpool;
  export_families(m, {family<dmc::Acrobot>("DmcAcrobot"), family<dmc::BallInCup>("DmcBallInCup"),
                      family<dmc::Cartpole>("DmcCartpole"), family<dmc::Cheetah>("DmcCheetah"),
                      family<dmc::Finger>("DmcFinger"), family<dmc::Fish>("DmcFish"), family<dmc::Hopper>("DmcHopper"),
                      family<dmc::Humanoid>("DmcHumanoid"), family<dmc::Humanoid>("DmcHumanoidCMU"),
                      family<dmc::Pendulum>("DmcPendulum"), family<dmc::PointMass>("DmcPointMass"),
                      family<dmc::Reacher>("DmcReacher"), family<dmc::Walker>("DmcWalker")});
}
