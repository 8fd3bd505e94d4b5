// module.cpp — torchpool._dmc, the DeepMind Control Suite's domains. Links
// libmujoco, which Python loads first (torchpool/_mujoco_lib.py); the models
// are dm_control's own XML files, read from the installed package.
#include "envs/dmc/acrobot.h"
#include "envs/dmc/ball_in_cup.h"
#include "envs/dmc/cartpole.h"
#include "envs/dmc/cheetah.h"
#include "envs/dmc/dog.h"
#include "envs/dmc/finger.h"
#include "envs/dmc/fish.h"
#include "envs/dmc/hopper.h"
#include "envs/dmc/humanoid.h"
#include "envs/dmc/lqr.h"
#include "envs/dmc/manipulator.h"
#include "envs/dmc/pendulum.h"
#include "envs/dmc/point_mass.h"
#include "envs/dmc/quadruped.h"
#include "envs/dmc/reacher.h"
#include "envs/dmc/spline_zoom.h"
#include "envs/dmc/stacker.h"
#include "envs/dmc/swimmer.h"
#include "envs/dmc/walker.h"
#include "family_module.h"

#include <pybind11/stl.h>

#include <map>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

// rewards.h's tolerance by dm_control's sigmoid names, for tests/test_dmc.py to compare with
// dm_control.utils.rewards.tolerance.
double tolerance_by_name(double x, double lower, double upper, double margin, const std::string& sigmoid,
                         double value_at_margin) {
  using torchpool::dmc::Sigmoid;
  static const std::map<std::string, Sigmoid> kinds = {
      {"gaussian", Sigmoid::Gaussian},     {"hyperbolic", Sigmoid::Hyperbolic},   {"long_tail", Sigmoid::LongTail},
      {"reciprocal", Sigmoid::Reciprocal}, {"cosine", Sigmoid::Cosine},           {"linear", Sigmoid::Linear},
      {"quadratic", Sigmoid::Quadratic},   {"tanh_squared", Sigmoid::TanhSquared}};
  const auto kind = kinds.find(sigmoid);
  if (kind == kinds.end()) throw std::invalid_argument("Unknown sigmoid type '" + sigmoid + "'");
  return torchpool::dmc::tolerance(x, {lower, upper}, margin, kind->second, value_at_margin);
}

}  // namespace

PYBIND11_MODULE(_dmc, m) {
  using namespace torchpool;
  m.def("tolerance", &tolerance_by_name, "dm_control's rewards.tolerance of one value (tests only)");
  m.def("spline_zoom", &dmc::spline_zoom,
        "scipy.ndimage.zoom(image, factor) of a rows x cols image, row-major (tests only)");
  if (export_families(
          m.ptr(),
          {family<dmc::Acrobot>("DmcAcrobot"), family<dmc::BallInCup>("DmcBallInCup"),
           family<dmc::Cartpole>("DmcCartpole"), family<dmc::Cheetah>("DmcCheetah"), family<dmc::Dog>("DmcDog"),
           family<dmc::Finger>("DmcFinger"), family<dmc::Fish>("DmcFish"), family<dmc::Hopper>("DmcHopper"),
           family<dmc::Humanoid>("DmcHumanoid"), family<dmc::Humanoid>("DmcHumanoidCMU"), family<dmc::Lqr>("DmcLqr"),
           family<dmc::Manipulator>("DmcManipulator"), family<dmc::Pendulum>("DmcPendulum"),
           family<dmc::PointMass>("DmcPointMass"), family<dmc::Quadruped>("DmcQuadruped"),
           family<dmc::Reacher>("DmcReacher"), family<dmc::Stacker>("DmcStacker"), family<dmc::Swimmer>("DmcSwimmer"),
           family<dmc::Walker>("DmcWalker")}) < 0)
    throw py::error_already_set();
}
