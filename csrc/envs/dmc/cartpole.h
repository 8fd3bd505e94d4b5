// cartpole.h — the Control Suite's cartpole balance / balance_sparse /
// swingup / swingup_sparse (one pole) and two_poles / three_poles (a chain of
// poles, swung up; dm_control/suite/cartpole.py).
//
// Swing-up starts the pole hanging, balance near upright. Smooth reward:
// uprightness x small control x small angular velocity x centred cart;
// sparse: 1 while the cart is within +-0.25 and the pole within cos 0.995.
// Observation: position (cart x, then each pole's zz, xz), velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class CartpoleModel : public DmcModel {
 public:
  explicit CartpoleModel(const Config& config)
      : DmcModel(config, add_poles(poles_of(config.string("task_name")))),
        swing_up(starts_hanging(config.string("task_name"))),
        sparse(config.string("task_name").ends_with("_sparse")),
        slider_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "slider")]),
        hinge_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "hinge_1")]) {
    declare_fields({{"position", {1 + 2 * (nbody() - 2)}}, {"velocity", {nv()}}});
  }

  const bool swing_up, sparse;
  const int slider_qpos, hinge_qpos;

 private:
  static bool starts_hanging(const std::string& task) {
    if (task == "balance" || task == "balance_sparse") return false;
    if (task == "swingup" || task == "swingup_sparse" || task == "two_poles" || task == "three_poles") return true;
    throw std::invalid_argument("cartpole has no task '" + task +
                                "' (balance, balance_sparse, swingup, swingup_sparse, two_poles, three_poles)");
  }

  static int poles_of(const std::string& task) { return task == "two_poles" ? 2 : task == "three_poles" ? 3 : 1; }

  // cartpole._make_model(n_poles): a chain of bodies pole_2 ... pole_n (pos 0 0 1, childclass pole; a
  // hinge_i and a geom pole_i each) under pole_1, the floor lowered to 1 - n - 0.05, the two cameras
  // moved back. One pole: the file as it is.
  static SpecEdit add_poles(int poles) {
    if (poles == 1) return {};
    return [poles](mjSpec& spec) {
      mjsDefault* pole = spec_default(spec, "pole");
      mjsBody* parent = mjs_findBody(&spec, "pole_1");
      if (parent == nullptr) throw std::invalid_argument("cartpole.xml has no body pole_1");
      for (int index = 2; index <= poles; ++index) {
        const std::string name = "pole_" + std::to_string(index);
        mjsBody* child = mjs_addBody(parent, pole);
        mjs_setName(child->element, name.c_str());
        mjs_setString(child->childclass, "pole");
        child->pos[0] = 0, child->pos[1] = 0, child->pos[2] = 1;
        mjs_setName(mjs_addJoint(child, pole)->element, ("hinge_" + std::to_string(index)).c_str());
        mjs_setName(mjs_addGeom(child, pole)->element, name.c_str());
        parent = child;
      }
      mjsGeom* floor = mjs_asGeom(mjs_findElement(&spec, mjOBJ_GEOM, "floor"));
      floor->pos[2] = 1 - poles - 0.05;
      mjsCamera* fixed = mjs_asCamera(mjs_findElement(&spec, mjOBJ_CAMERA, "fixed"));
      fixed->pos[1] = -1 - 2 * poles, fixed->pos[2] = 1;
      mjsCamera* lookatcart = mjs_asCamera(mjs_findElement(&spec, mjOBJ_CAMERA, "lookatcart"));
      lookatcart->pos[1] = -2 * poles, lookatcart->pos[2] = 2;
    };
  }
};

class Cartpole : public DmcEnv {
 public:
  using Model = CartpoleModel;
  explicit Cartpole(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  // Balance.initialize_episode; draws in the reference's order (qpos, then qvel).
  void initialize_episode(Rng& rng) override {
    const int nv = model_->nv;
    double* qpos = data_->qpos;
    if (task_.swing_up) {
      qpos[task_.slider_qpos] = 0.01 * standard_normal(rng);
      qpos[task_.hinge_qpos] = M_PI + 0.01 * standard_normal(rng);
      for (int i = 2; i < nv; ++i) qpos[i] = 0.1 * standard_normal(rng);
    } else {
      qpos[task_.slider_qpos] = rng.uniform(-0.1, 0.1);
      for (int i = 1; i < nv; ++i) qpos[i] = rng.uniform(-0.034, 0.034);
    }
    for (int i = 0; i < nv; ++i) data_->qvel[i] = 0.01 * standard_normal(rng);
  }

  void write_observation(double* obs) const override {
    *obs++ = cart_position();
    for (int body = 2; body < model_->nbody; ++body) {
      *obs++ = xmat(body, kZZ);
      *obs++ = xmat(body, kXZ);
    }
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    if (task_.sparse) {
      double angle_in_bounds = 1.0;  // .prod() of each pole's term
      for (int body = 2; body < model_->nbody; ++body) angle_in_bounds *= tolerance(xmat(body, kZZ), {0.995, 1.0});
      return tolerance(cart_position(), {-0.25, 0.25}) * angle_in_bounds;
    }
    double upright[8];
    const int poles = model_->nbody - 2;
    for (int k = 0; k < poles; ++k) upright[k] = (xmat(2 + k, kZZ) + 1) / 2;
    const double centered = (1 + tolerance(cart_position(), {}, 2.0)) / 2;
    const double small_control = (4 + tolerance(data_->ctrl[0], {}, 1.0, Sigmoid::Quadratic, 0.0)) / 5;
    double small_velocity = INFINITY;  // .min() over the poles' angular velocities
    for (int i = 1; i < model_->nv; ++i) small_velocity = std::min(small_velocity, tolerance(data_->qvel[i], {}, 5.0));
    small_velocity = (1 + small_velocity) / 2;
    const double upright_mean = numpy_sum(upright, poles, [](double x) { return x; }) / poles;
    return upright_mean * small_control * small_velocity * centered;
  }

  double cart_position() const { return data_->qpos[task_.slider_qpos]; }

  const Model& task_;
};

}  // namespace torchpool::dmc
