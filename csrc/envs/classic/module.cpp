// module.cpp — torchpool._classic, the classic-control family module.
#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/mountain_car_continuous.h"
#include "envs/classic/pendulum.h"
#include "family_module.h"

TORCHPOOL_FAMILY_MODULE(_classic, torchpool::family<torchpool::classic::CartPole>("CartPole"),
                        torchpool::family<torchpool::classic::Pendulum>("Pendulum"),
                        torchpool::family<torchpool::classic::MountainCar>("MountainCar"),
                        torchpool::family<torchpool::classic::MountainCarContinuous>("MountainCarContinuous"),
                        torchpool::family<torchpool::classic::Acrobot>("Acrobot"))
