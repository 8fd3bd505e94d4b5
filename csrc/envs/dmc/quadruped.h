// quadruped.h — the Control Suite's quadruped walk / run / fetch (dm_control/suite/quadruped.py).
//
// A four-legged body with 12 position-servo-like actuators (filtered, so the
// model has activations). Walk and run: move forward at 0.5 or 5 m/s, upright
// (on a floor of 10 or 100 m half-size). Escape: climb out of a bumpy bowl (a
// height field drawn each episode: 30 x 30 bumps smoothed by SciPy's cubic
// zoom to 201 x 201, spline_zoom.h) while staying within 20 degrees of
// upright. Fetch: bring a ball thrown at the start to a target in an arena
// with walls. make_model's edits (floor size; walls, ball and target removed
// unless fetch; terrain and rangefinders removed unless escape) are made on
// the mjSpec. Each episode starts at a random orientation (fetch: a random
// heading and place), lowered from z = 0 in 1 cm steps, each a whole reset,
// until nothing touches. Observation: egocentric_state (hinge angles,
// velocities, activations), torso_velocity, torso_upright, imu, force_torque;
// escape adds origin and rangefinder, fetch ball_state and target_position.
#pragma once

#include "dmc_env.h"
#include "spline_zoom.h"

namespace torchpool::dmc {

class QuadrupedModel : public DmcModel {
 public:
  explicit QuadrupedModel(const Config& config)
      : DmcModel(config, edit_model_file(config.string("task_name"))),
        desired_speed(speed_of(config.string("task_name"))),
        fetch(config.string("task_name") == "fetch"),
        escape(config.string("task_name") == "escape"),
        torso(object_id(mj(), mjOBJ_BODY, "torso")),
        root(object_id(mj(), mjOBJ_JOINT, "root")),
        floor(object_id(mj(), mjOBJ_GEOM, "floor")),
        workspace(object_id(mj(), mjOBJ_SITE, "workspace")),
        velocimeter(sensor_adr(mj(), "velocimeter")) {
    const mjModel& m = mj();
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_type[j] == mjJNT_HINGE) hinges.push_back(j);
    for (int s = 0; s < m.nsensor; ++s) {  // in sensor order, as np.isin(sensor_type, ...) finds them
      const int type = m.sensor_type[s];
      if (type == mjSENS_GYRO || type == mjSENS_ACCELEROMETER) imu.push_back(s);
      if (type == mjSENS_FORCE || type == mjSENS_TORQUE) force_torque.push_back(s);
      if (type == mjSENS_RANGEFINDER) rangefinders.push_back(s);
    }
    if (fetch) {
      ball = object_id(m, mjOBJ_BODY, "ball");
      ball_geom = object_id(m, mjOBJ_GEOM, "ball");
      ball_root = object_id(m, mjOBJ_JOINT, "ball_root");
      target = object_id(m, mjOBJ_SITE, "target");
    }
    std::vector<Field> fields = {{"egocentric_state", {2 * static_cast<int64_t>(hinges.size()) + m.na}},
                                 {"torso_velocity", {3}},
                                 {"torso_upright", {}},
                                 {"imu", {dims(imu)}},
                                 {"force_torque", {dims(force_torque)}}};
    if (fetch) fields.insert(fields.end(), {{"ball_state", {9}}, {"target_position", {3}}});
    if (escape) {
      if (m.nhfield < 1 || m.hfield_nrow[0] != m.hfield_ncol[0])
        throw std::invalid_argument("quadruped.xml: escape needs a square height field");
      fields.insert(fields.end(), {{"origin", {3}}, {"rangefinder", {dims(rangefinders)}}});
    }
    declare_fields(std::move(fields));
  }

  int64_t dims(const std::vector<int>& sensors) const {
    int64_t total = 0;
    for (int s : sensors) total += mj().sensor_dim[s];
    return total;
  }

  const double desired_speed;  // _WALK_SPEED, _RUN_SPEED; 0 for fetch
  const bool fetch, escape;
  const int torso, root, floor, workspace, velocimeter;
  int ball = -1, ball_geom = -1, ball_root = -1, target = -1;
  std::vector<int> hinges, imu, force_torque, rangefinders;

 private:
  static double speed_of(const std::string& task) {
    if (task == "walk") return 0.5;
    if (task == "run") return 5.0;
    if (task == "fetch" || task == "escape") return 0.0;
    throw std::invalid_argument("quadruped has no task '" + task + "' (walk, run, escape, fetch)");
  }

  // make_model(floor_size=_DEFAULT_TIME_LIMIT * speed) for walk and run, make_model(floor_size=40,
  // terrain=True, rangefinders=True) for escape, make_model(walls_and_ball=True) for fetch.
  static SpecEdit edit_model_file(const std::string& task) {
    const double floor_size = task == "escape" ? 40.0 : 20 * speed_of(task);
    const bool escape = task == "escape";
    return [floor_size, escape](mjSpec& spec) {
      auto remove = [&](mjtObj type, const char* name) {
        mjsElement* element = mjs_findElement(&spec, type, name);
        if (element == nullptr || mjs_delete(&spec, element) != 0)
          throw std::invalid_argument(std::string("quadruped.xml: cannot remove ") + name);
      };
      if (floor_size > 0) {
        mjsGeom* floor = mjs_asGeom(mjs_findElement(&spec, mjOBJ_GEOM, "floor"));
        floor->size[0] = floor->size[1] = floor_size;
        for (const char* wall : {"wall_px", "wall_py", "wall_nx", "wall_ny"}) remove(mjOBJ_GEOM, wall);
        remove(mjOBJ_BODY, "ball");
        remove(mjOBJ_SITE, "target");
      }
      if (escape) return;
      remove(mjOBJ_GEOM, "terrain");
      std::vector<mjsElement*> rangefinders;
      for (mjsElement* e = mjs_firstElement(&spec, mjOBJ_SENSOR); e != nullptr; e = mjs_nextElement(&spec, e))
        if (mjs_asSensor(e)->type == mjSENS_RANGEFINDER) rangefinders.push_back(e);
      for (mjsElement* e : rangefinders)
        if (mjs_delete(&spec, e) != 0) throw std::runtime_error(mjs_getError(&spec));
    };
  }
};

class Quadruped : public DmcEnv {
 public:
  using Model = QuadrupedModel;
  explicit Quadruped(const Model& model) : DmcEnv(model), task_(model) {
    if (task_.escape) own_model({}, {{&mjModel::hfield_data, static_cast<size_t>(model.mj().nhfielddata)}});
  }

 private:
  // Escape's terrain: `_TERRAIN_BUMP_SCALE` = 2 m bumps over the height field's 2 * 30 m.
  int bump_resolution() const { return static_cast<int>(2 * model_->hfield_size[0] / 2.0); }

  void initialize_episode(Rng& rng) override {
    double orientation[4];
    double x = 0.0, y = 0.0;
    if (task_.escape) {  // the bumps (row-major, U(_TERRAIN_SMOOTHNESS, 1)), then a random orientation
      const int n = bump_resolution();
      bumps_.resize(static_cast<size_t>(n) * n);
      for (double& bump : bumps_) bump = rng.uniform(0.15, 1.0);
      write_terrain();
    }
    if (!task_.fetch) {  // Move, Escape
      normalised_into(orientation, [&] { return standard_normal(rng); });
      find_non_contacting_height(orientation, x, y);
      return;
    }
    // Fetch: a heading, a place within 0.9 of the floor, the ball dropped from 2 m and thrown sideways.
    const double azimuth = rng.uniform(0.0, 2 * M_PI);
    orientation[0] = std::cos(azimuth / 2), orientation[1] = 0, orientation[2] = 0,
    orientation[3] = std::sin(azimuth / 2);
    const double spawn_radius = 0.9 * model_->geom_size[3 * task_.floor];
    x = rng.uniform(-spawn_radius, spawn_radius), y = rng.uniform(-spawn_radius, spawn_radius);
    find_non_contacting_height(orientation, x, y);
    double* ball_qpos = data_->qpos + model_->jnt_qposadr[task_.ball_root];
    ball_qpos[0] = rng.uniform(-spawn_radius, spawn_radius);
    ball_qpos[1] = rng.uniform(-spawn_radius, spawn_radius);
    ball_qpos[2] = 2;
    double* ball_qvel = data_->qvel + model_->jnt_dofadr[task_.ball_root];
    ball_qvel[0] = 5 * standard_normal(rng);
    ball_qvel[1] = 5 * standard_normal(rng);
  }

  // Escape.initialize_episode's terrain: dm_control's "bowl", .5 - cos(2 pi radius) / 2 (0 at the centre
  // and from the rim out, 1 halfway), times the bumps smoothed to the height field's resolution, as float32.
  void write_terrain() {
    const int res = model_->hfield_nrow[0], n = bump_resolution();
    const std::vector<double> smooth = spline_zoom(bumps_, n, n, res / static_cast<double>(n));
    const double step = 2.0 / static_cast<double>(res - 1);  // np.ogrid[-1:1:res*1j]
    edit_model([&](mjModel& m) {
      float* terrain = m.hfield_data + m.hfield_adr[0];
      for (int i = 0; i < res; ++i) {
        const double row = static_cast<double>(i) * step + -1.0;
        for (int j = 0; j < res; ++j) {
          const double col = static_cast<double>(j) * step + -1.0;
          const double radius = std::clamp(std::sqrt(col * col + row * row), 0.04, 1.0);
          const double bowl = 0.5 - std::cos(2 * M_PI * radius) / 2;
          terrain[i * res + j] = static_cast<float>(bowl * smooth[static_cast<size_t>(i) * res + j]);
        }
      }
    });
  }

  // The bumps are escape's task parameters: the parity tests hand them to dm_control, which smooths them
  // itself (so its terrain checks this one).
  size_t task_parameter_count() const override { return task_.escape ? bumps_.size() : 0; }
  void get_task_parameters(double* out) const override { std::copy(bumps_.begin(), bumps_.end(), out); }
  void set_task_parameters(const double* in) override {
    if (!task_.escape) return;
    std::copy_n(in, bumps_.size(), bumps_.begin());
    write_terrain();
  }

  // _find_non_contacting_height: z from 0 in steps of 0.01, each try inside a whole reset_context.
  void find_non_contacting_height(const double* orientation, double x, double y) {
    double z = 0.0;
    for (int attempt = 1;; ++attempt) {
      mj_resetData(model_, data_.get());
      mj_forward(noact_, data_.get());
      double* root = data_->qpos + model_->jnt_qposadr[task_.root];
      root[0] = x, root[1] = y, root[2] = z;
      std::copy_n(orientation, 4, root + 3);
      after_reset();
      if (data_->ncon == 0) return;
      z += 0.01;
      if (attempt > 10000) throw std::runtime_error("quadruped: failed to find a non-contacting configuration");
    }
  }

  void write_observation(double* obs) const override {
    for (int j : task_.hinges) *obs++ = data_->qpos[model_->jnt_qposadr[j]];
    for (int j : task_.hinges) *obs++ = data_->qvel[model_->jnt_dofadr[j]];
    obs = std::copy_n(data_->act, model_->na, obs);
    obs = std::copy_n(data_->sensordata + task_.velocimeter, 3, obs);
    *obs++ = xmat(task_.torso, kZZ);
    for (int s : task_.imu) obs = std::copy_n(data_->sensordata + model_->sensor_adr[s], model_->sensor_dim[s], obs);
    for (int s : task_.force_torque)
      for (int k = 0; k < model_->sensor_dim[s]; ++k) *obs++ = std::asinh(data_->sensordata[model_->sensor_adr[s] + k]);
    if (task_.escape) {
      // origin: -torso_pos.dot(torso_frame); rangefinder: 1 where the ray hits nothing (-1), else tanh.
      const double zero[3] = {0, 0, 0};
      in_frame(zero, data_->xpos + 3 * task_.torso, data_->xmat + 9 * task_.torso, obs);
      obs += 3;
      for (int s : task_.rangefinders)
        for (int k = 0; k < model_->sensor_dim[s]; ++k) {
          const double reading = data_->sensordata[model_->sensor_adr[s] + k];
          *obs++ = reading == -1.0 ? 1.0 : std::tanh(reading);
        }
      return;
    }
    if (!task_.fetch) return;
    // ball_state: (ball - torso position, ball - root linear velocity, ball angular velocity), each in the
    // torso's frame.
    const double* frame = data_->xmat + 9 * task_.torso;
    const double* ball_qvel = data_->qvel + model_->jnt_dofadr[task_.ball_root];
    const double* root_qvel = data_->qvel + model_->jnt_dofadr[task_.root];
    const double zero[3] = {0, 0, 0};
    in_frame(data_->xpos + 3 * task_.ball, data_->xpos + 3 * task_.torso, frame, obs);
    in_frame(ball_qvel, root_qvel, frame, obs + 3);
    in_frame(ball_qvel + 3, zero, frame, obs + 6);
    in_frame(data_->site_xpos + 3 * task_.target, data_->xpos + 3 * task_.torso, frame, obs + 9);
  }

  double reward() const override {
    if (task_.escape) {
      // _upright_reward(deviation_angle=20) times reaching the terrain's edge (its half-size) from the origin.
      const double deviation = std::cos(20 * (M_PI / 180.0));
      const double upright =
          tolerance(xmat(task_.torso, kZZ), {deviation, kInf}, 1.0 + deviation, Sigmoid::Linear, 0.0);
      const double terrain_size = model_->hfield_size[0];
      const double* workspace = data_->site_xpos + 3 * task_.workspace;
      const double distance =
          std::sqrt(workspace[0] * workspace[0] + workspace[1] * workspace[1] + workspace[2] * workspace[2]);
      return upright * tolerance(distance, {terrain_size, kInf}, terrain_size, Sigmoid::Linear, 0.0);
    }
    // _upright_reward(deviation_angle=0): cos(deg2rad(0)) = 1.
    const double upright = tolerance(xmat(task_.torso, kZZ), {1.0, kInf}, 1.0 + 1.0, Sigmoid::Linear, 0.0);
    if (!task_.fetch) {
      const double speed = task_.desired_speed;
      return upright * tolerance(data_->sensordata[task_.velocimeter], {speed, kInf}, speed, Sigmoid::Linear, 0.5);
    }
    const double arena_radius = model_->geom_size[3 * task_.floor] * std::sqrt(2.0);
    const double workspace_radius = model_->site_size[3 * task_.workspace];
    const double ball_radius = model_->geom_size[3 * task_.ball_geom];
    const double* ball = data_->xpos + 3 * task_.ball;
    const double reach = tolerance(planar_distance(data_->site_xpos + 3 * task_.workspace, ball),
                                   {0.0, workspace_radius + ball_radius}, arena_radius, Sigmoid::Linear, 0.0);
    const double target_radius = model_->site_size[3 * task_.target];
    const double fetch = tolerance(planar_distance(data_->site_xpos + 3 * task_.target, ball), {0.0, target_radius},
                                   arena_radius, Sigmoid::Linear, 0.0);
    return upright * (reach * (0.5 + 0.5 * fetch));
  }

  static double planar_distance(const double* a, const double* b) {
    const double dx = a[0] - b[0], dy = a[1] - b[1];
    return std::sqrt(dx * dx + dy * dy);
  }

  const Model& task_;
  std::vector<double> bumps_;  // escape's, this episode
};

}  // namespace torchpool::dmc
