// module.cpp — torchpool._classic, the classic-control family module.
#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/mountain_car_continuous.h"
#include "envs/classic/pendulum.h"
#include "family_module.h"

PYBIND11_MODULE(_classic, m) {
  using namespace torchpool;
  export_families(
      m, {family<classic::CartPole>("CartPole"), family<classic::Pendulum>("Pendulum"),
          family<classic::MountainCar>("MountainCar"), family<classic::MountainCarContinuous>("MountainCarContinuous"),
          family<classic::Acrobot>("Acrobot")});
}
