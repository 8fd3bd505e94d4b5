// lqr.h — the Control Suite's lqr_2_1 / lqr_6_2 (dm_control/suite/lqr.py).
//
// A chain of n point masses on springs (slide joints, no constraints), the
// first m actuated by unbounded motors; the reward is the LQR cost's
// complement, 1 - (|q|^2 / 2 + 0.1 |u|^2 / 2), and an episode terminates
// (discount 0) once the state's norm falls below 1e-6. Each env's springs
// have random stiffnesses in [15, 25), drawn with its model, as
// dm_control's _make_model draws them from the task's RandomState: here
// from the env's Rng at the first reset after each seed (an edit of the
// model; EnvPool also draws them once per env). The chain is built on
// lqr.xml's mjSpec as _make_model builds it in Python. The time limit is
// EnvPool's 1000 steps (30 s); dm_control's is none. Observation: position,
// velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class LqrModel : public DmcModel {
 public:
  explicit LqrModel(const Config& config)
      : DmcModel(config, make_chain(sizes_of(config.string("task_name")))),
        bodies(sizes_of(config.string("task_name")).first) {
    declare_fields({{"position", {nq()}}, {"velocity", {nv()}}});
  }

  const int bodies;

 private:
  static std::pair<int, int> sizes_of(const std::string& task) {
    if (task == "lqr_2_1") return {2, 1};
    if (task == "lqr_6_2") return {6, 2};
    throw std::invalid_argument("lqr has no task '" + task + "' (lqr_2_1, lqr_6_2)");
  }

  // lqr._make_model(n_bodies, n_actuators): body_i (pos .25 0 0; the first .25 0 .1) with a slide joint_i, a
  // geom_i and a site_i, chained; motor_i on the first m joints; a spatial tendon_i from site_i to
  // site_{i+1}. Stiffness here is a placeholder each env overwrites; damping is uniform(0, 0) = 0.
  static SpecEdit make_chain(std::pair<int, int> sizes) {
    return [sizes](mjSpec& spec) {
      const auto [bodies, actuators] = sizes;
      mjsDefault* main = spec_default(spec, "main");  // lqr.xml's defaults: slide joints, spheres
      mjsBody* parent = mjs_findBody(&spec, "world");
      for (int body = 0; body < bodies; ++body) {
        const std::string i = std::to_string(body);
        mjsBody* child = mjs_addBody(parent, main);
        mjs_setName(child->element, ("body_" + i).c_str());
        child->pos[0] = 0.25, child->pos[1] = 0, child->pos[2] = body == 0 ? 0.1 : 0.0;
        mjsJoint* joint = mjs_addJoint(child, main);
        mjs_setName(joint->element, ("joint_" + i).c_str());
        joint->stiffness[0] = 20.0, joint->damping[0] = 0.0;
        mjs_setName(mjs_addGeom(child, main)->element, ("geom_" + i).c_str());
        mjs_setName(mjs_addSite(child, main)->element, ("site_" + i).c_str());
        if (body < actuators) {
          mjsActuator* motor = mjs_addActuator(&spec, main);
          mjs_setName(motor->element, ("motor_" + i).c_str());
          motor->trntype = mjTRN_JOINT;
          mjs_setString(motor->target, ("joint_" + i).c_str());
        }
        if (body < bodies - 1) {
          mjsTendon* tendon = mjs_addTendon(&spec, main);
          mjs_setName(tendon->element, ("tendon_" + i).c_str());
          mjs_wrapSite(tendon, ("site_" + i).c_str());
          mjs_wrapSite(tendon, ("site_" + std::to_string(body + 1)).c_str());
        }
        parent = child;
      }
    };
  }
};

class Lqr : public DmcEnv {
 public:
  using Model = LqrModel;
  explicit Lqr(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::jnt_stiffness, static_cast<size_t>(model.mj().njnt)}});
  }

  // Every seed the env's Rng is given: its next reset draws the springs anew, so a seed names the model
  // as dm_control's `random` does.
  void reseed(uint64_t) { draw_springs_ = true; }

 private:
  void initialize_episode(Rng& rng) override {
    if (draw_springs_) {
      draw_springs_ = false;
      std::vector<double> stiffness(task_.bodies);
      for (double& value : stiffness) {
        value = rng.uniform(15.0, 25.0);
        rng.uniform(0.0, 0.0);  // the damping's draw, uniform(0, 0)
      }
      set_springs(stiffness.data());
    }
    // LQRLevel.initialize_episode: a random direction of norm sqrt(2).
    const int n = model_->nq;
    std::vector<double>& unit = unit_;
    double squares = 0.0;
    for (int i = 0; i < n; ++i) squares += (unit[i] = standard_normal(rng)) * unit[i];
    const double norm = std::sqrt(squares);
    for (int i = 0; i < n; ++i) data_->qpos[i] = std::sqrt(2.0) * unit[i] / norm;
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos, model_->nq, obs);
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    double position = 0.0, control = 0.0;
    for (int i = 0; i < model_->nq; ++i) position += data_->qpos[i] * data_->qpos[i];
    for (int i = 0; i < model_->nu; ++i) control += data_->ctrl[i] * data_->ctrl[i];
    return 1 - (0.5 * position + 0.5 * control * 0.1);
  }

  // get_termination: the norm of physics.state() (qpos, qvel, act) below 1e-6.
  bool terminated() const override {
    double squares = 0.0;
    for (int i = 0; i < model_->nq; ++i) squares += data_->qpos[i] * data_->qpos[i];
    for (int i = 0; i < model_->nv; ++i) squares += data_->qvel[i] * data_->qvel[i];
    for (int i = 0; i < model_->na; ++i) squares += data_->act[i] * data_->act[i];
    return std::sqrt(squares) < 1e-6;
  }

  // The springs' stiffness: jnt_stiffness.
  size_t task_parameter_count() const override { return static_cast<size_t>(model_->njnt); }
  void get_task_parameters(double* out) const override { std::copy_n(model_->jnt_stiffness, model_->njnt, out); }
  void set_task_parameters(const double* in) override {
    set_springs(in);
    draw_springs_ = false;
  }

  void set_springs(const double* stiffness) {
    edit_model([&](mjModel& m) { std::copy_n(stiffness, m.njnt, m.jnt_stiffness); });
  }

  const Model& task_;
  bool draw_springs_ = true;
  std::vector<double> unit_ = std::vector<double>(static_cast<size_t>(task_.bodies));
};

}  // namespace torchpool::dmc
