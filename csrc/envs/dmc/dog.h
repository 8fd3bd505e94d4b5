// dog.h — the Control Suite's dog stand / walk / trot / run / fetch (dm_control/suite/dog.py).
//
// A musculoskeletal dog: 73 hinges, 38 filtered actuators (so 38
// activations), meshes read from the suite's dog_assets/. make_model's edits
// are made on the mjSpec: the floor's half-size (speed * 15 s: 15, 45, 135 m;
// fetch 10 m) and, unless fetch, the ball, the target, their cameras and the
// walls removed. Each episode: a fresh reset, a random heading, random root
// velocities (x, y, yaw: 2 * N(0, 1)) and every activation uniform in its
// control range; fetch throws the ball from 3/4 of the floor's half-size
// towards the dog. Reward: the product of standing factors (torso and pelvis
// at 90% of their reset heights, skull/torso/pelvis within 30 degrees of
// upright, feet carrying the body's weight), times a speed factor (walk,
// trot, run: between 1x and 2x the speed) or reaching and fetching factors.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class DogModel : public DmcModel {
 public:
  explicit DogModel(const Config& config)
      : DmcModel(config, edit_model_file(config.string("task_name"))),
        move_speed(speed_of(config.string("task_name"))),
        fetch(config.string("task_name") == "fetch"),
        torso(object_id(mj(), mjOBJ_BODY, "torso")),
        pelvis(object_id(mj(), mjOBJ_BODY, "pelvis")),
        skull(object_id(mj(), mjOBJ_BODY, "skull")),
        head(object_id(mj(), mjOBJ_SITE, "head")),
        root(object_id(mj(), mjOBJ_JOINT, "root")),
        floor(object_id(mj(), mjOBJ_GEOM, "floor")),
        torso_linvel(sensor_adr(mj(), "torso_linvel")) {
    const mjModel& m = mj();
    if (m.nu != m.na) throw std::invalid_argument("dog.xml: every actuator should have an activation");
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_type[j] == mjJNT_HINGE) hinges.push_back(j);
    for (const char* name : {"accelerometer", "velocimeter", "gyro"}) inertial.push_back(sensor_adr(m, name));
    for (const char* name : {"foot_L", "foot_R", "hand_L", "hand_R"}) feet.push_back(sensor_adr(m, name));
    for (const char* name : {"palm_L", "palm_R", "sole_L", "sole_R"}) touch.push_back(sensor_adr(m, name));
    const auto hinge_count = static_cast<int64_t>(hinges.size());
    // "joint_velocites" is dm_control's spelling.
    std::vector<Field> fields = {{"joint_angles", {hinge_count}}, {"joint_velocites", {hinge_count}},
                                 {"torso_pelvis_height", {2}},    {"z_projection", {9}},
                                 {"torso_com_velocity", {3}},     {"inertial_sensors", {9}},
                                 {"foot_forces", {12}},           {"touch_sensors", {4}},
                                 {"actuator_state", {m.na}}};
    if (fetch) {
      ball = object_id(m, mjOBJ_GEOM, "ball");
      ball_root = object_id(m, mjOBJ_JOINT, "ball_root");
      target = object_id(m, mjOBJ_GEOM, "target");
      upper_bite = object_id(m, mjOBJ_SITE, "upper_bite");
      lower_bite = object_id(m, mjOBJ_SITE, "lower_bite");
      fields.insert(fields.end(), {{"ball_state", {6}}, {"target_position", {3}}});
    }
    declare_fields(std::move(fields));
  }

  const double move_speed;  // _WALK_SPEED, _TROT_SPEED, _RUN_SPEED; 0 for stand and fetch
  const bool fetch;
  const int torso, pelvis, skull, head, root, floor, torso_linvel;
  int ball = -1, ball_root = -1, target = -1, upper_bite = -1, lower_bite = -1;
  std::vector<int> hinges, inertial, feet, touch;  // sensor addresses for the last three

 private:
  static double speed_of(const std::string& task) {
    if (task == "stand" || task == "fetch") return 0.0;
    if (task == "walk") return 1.0;
    if (task == "trot") return 3.0;
    if (task == "run") return 9.0;
    throw std::invalid_argument("dog has no task '" + task + "' (stand, walk, trot, run, fetch)");
  }

  // make_model(floor_size, remove_ball): floor_size = speed * _DEFAULT_TIME_LIMIT (stand: the walk's), 10 for
  // fetch, which alone keeps the ball, the target, their cameras and the walls.
  static SpecEdit edit_model_file(const std::string& task) {
    const bool fetch = task == "fetch";
    const double floor_size = fetch ? 10.0 : 15.0 * std::max(1.0, speed_of(task));
    return [fetch, floor_size](mjSpec& spec) {
      mjsGeom* floor = mjs_asGeom(mjs_findElement(&spec, mjOBJ_GEOM, "floor"));
      if (floor == nullptr) throw std::invalid_argument("dog.xml has no floor");
      floor->size[0] = floor->size[1] = floor_size;
      floor->size[2] = 0.1;
      if (fetch) return;
      auto remove = [&](mjtObj type, const char* name) {
        mjsElement* element = mjs_findElement(&spec, type, name);
        if (element == nullptr || mjs_delete(&spec, element) != 0)
          throw std::invalid_argument(std::string("dog.xml: cannot remove ") + name);
      };
      remove(mjOBJ_BODY, "ball");
      remove(mjOBJ_GEOM, "target");
      remove(mjOBJ_CAMERA, "ball");
      remove(mjOBJ_CAMERA, "head");
      for (const char* wall : {"wall_px", "wall_nx", "wall_py", "wall_ny"}) remove(mjOBJ_GEOM, wall);
    };
  }
};

class Dog : public DmcEnv {
 public:
  using Model = DogModel;
  explicit Dog(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  void initialize_episode(Rng& rng) override {
    // Stand: physics.reset() (again), then the standing targets from the reset pose.
    mj_resetData(model_, data_.get());
    mj_forward(noact_, data_.get());
    stand_height_[0] = data_->xpos[3 * task_.torso + 2] * 0.9;  // _STAND_HEIGHT_FRACTION
    stand_height_[1] = data_->xpos[3 * task_.pelvis + 2] * 0.9;
    body_weight_ = -model_->opt.gravity[2] * model_->body_subtreemass[task_.torso];
    const double azimuth = rng.uniform(0.0, 2 * M_PI);
    double* root = data_->qpos + model_->jnt_qposadr[task_.root];
    root[3] = std::cos(azimuth / 2), root[4] = 0, root[5] = 0, root[6] = std::sin(azimuth / 2);
    data_->qvel[0] = 2 * standard_normal(rng);
    data_->qvel[1] = 2 * standard_normal(rng);
    data_->qvel[5] = 2 * standard_normal(rng);
    for (int i = 0; i < model_->nu; ++i)
      data_->act[i] = rng.uniform(model_->actuator_ctrlrange[2 * i], model_->actuator_ctrlrange[2 * i + 1]);
    if (!task_.fetch) return;
    // Fetch: the ball from 3/4 of the floor's half-size, thrown up to 3 m high at up to 5 m/s, towards the dog.
    const double radius = 0.75 * model_->geom_size[3 * task_.floor];
    const double ball_azimuth = rng.uniform(0.0, 2 * M_PI);
    double* ball_qpos = data_->qpos + model_->jnt_qposadr[task_.ball_root];
    ball_qpos[0] = radius * std::sin(ball_azimuth);
    ball_qpos[1] = radius * std::cos(ball_azimuth);
    ball_qpos[2] = 0.05;
    const double vertical_height = rng.uniform(0.0, 3.0);
    const double vertical_velocity = std::sqrt(2 * -model_->opt.gravity[2] * vertical_height);
    const double horizontal_speed = rng.uniform(0.0, 5.0);
    const double direction_x = -std::sin(ball_azimuth) + 0.05 * standard_normal(rng);
    const double direction_y = -std::cos(ball_azimuth) + 0.05 * standard_normal(rng);
    double* ball_qvel = data_->qvel + model_->jnt_dofadr[task_.ball_root];
    ball_qvel[0] = horizontal_speed * direction_x;
    ball_qvel[1] = horizontal_speed * direction_y;
    ball_qvel[2] = vertical_velocity;
  }

  void write_observation(double* obs) const override {
    for (int j : task_.hinges) *obs++ = data_->qpos[model_->jnt_qposadr[j]];
    for (int j : task_.hinges) *obs++ = data_->qvel[model_->jnt_dofadr[j]];
    *obs++ = data_->xpos[3 * task_.torso + 2];
    *obs++ = data_->xpos[3 * task_.pelvis + 2];
    for (int body : {task_.skull, task_.torso, task_.pelvis})
      for (Axis axis : {kZX, kZY, kZZ}) *obs++ = xmat(body, axis);
    const double zero[3] = {0, 0, 0};
    in_frame(data_->sensordata + task_.torso_linvel, zero, data_->xmat + 9 * task_.torso, obs);
    obs += 3;
    for (int adr : task_.inertial) obs = std::copy_n(data_->sensordata + adr, 3, obs);
    for (int adr : task_.feet) obs = std::copy_n(data_->sensordata + adr, 3, obs);
    for (int adr : task_.touch) *obs++ = data_->sensordata[adr];
    obs = std::copy_n(data_->act, model_->na, obs);
    if (!task_.fetch) return;
    // ball_state: the ball's position and linear velocity relative to the head, in the head site's frame
    // (mj_objectVelocity's world-frame linear halves); target_position likewise.
    const double* head_frame = data_->site_xmat + 9 * task_.head;
    const double* head_pos = data_->site_xpos + 3 * task_.head;
    mjtNum head_velocity[6], ball_velocity[6];
    mj_objectVelocity(model_, data_.get(), mjOBJ_SITE, task_.head, head_velocity, 0);
    mj_objectVelocity(model_, data_.get(), mjOBJ_GEOM, task_.ball, ball_velocity, 0);
    in_frame(data_->geom_xpos + 3 * task_.ball, head_pos, head_frame, obs);
    in_frame(ball_velocity + 3, head_velocity + 3, head_frame, obs + 3);
    in_frame(data_->geom_xpos + 3 * task_.target, head_pos, head_frame, obs + 6);
  }

  double reward() const override {
    // Stand.get_reward_factors, multiplied in their order (np.prod).
    double reward = tolerance(data_->xpos[3 * task_.torso + 2], {stand_height_[0], kInf}, stand_height_[0]);
    reward *= tolerance(data_->xpos[3 * task_.pelvis + 2], {stand_height_[1], kInf}, stand_height_[1]);
    const double min_upright = std::cos(30 * (M_PI / 180.0));  // _MAX_UPRIGHT_ANGLE
    for (int body : {task_.skull, task_.torso, task_.pelvis})
      reward *= tolerance(xmat(body, kZZ), {min_upright, kInf}, min_upright + 1, Sigmoid::Linear, 0.0);
    double touch = 0.0;
    for (int adr : task_.touch) touch += data_->sensordata[adr];
    reward *= tolerance(touch, {body_weight_, kInf}, body_weight_, Sigmoid::Linear, 0.9);
    if (task_.move_speed > 0) {  // Move
      const double speed = task_.move_speed;
      const double* frame = data_->xmat + 9 * task_.torso;
      const double* v = data_->sensordata + task_.torso_linvel;
      const double forward_velocity = v[0] * frame[0] + v[1] * frame[3] + v[2] * frame[6];
      const double forward =
          tolerance(forward_velocity, {speed, 2 * speed}, std::max(1.0, speed), Sigmoid::Linear, 0.0);
      return reward * ((4 * forward + 1) / 5);
    }
    if (!task_.fetch) return reward;
    const double* ball = data_->geom_xpos + 3 * task_.ball;
    const double mouth = 0.5 * (distance(ball, data_->site_xpos + 3 * task_.upper_bite) +
                                distance(ball, data_->site_xpos + 3 * task_.lower_bite));
    double reach_ball = tolerance(mouth, {0.0, model_->site_size[3 * task_.upper_bite]}, 2.0, Sigmoid::Reciprocal);
    reach_ball = (6 * reach_ball + 1) / 7;
    const double target_radius = model_->geom_size[3 * task_.target];
    const double to_target = distance(ball, data_->geom_xpos + 3 * task_.target);
    const double near_target =
        tolerance(to_target, {0.0, target_radius}, model_->geom_size[3 * task_.floor], Sigmoid::Reciprocal);
    const double fetch_ball = (near_target + 1) / 2;
    if (to_target < 2 * target_radius) reach_ball = 1;
    return reward * reach_ball * fetch_ball;
  }

  static double distance(const double* a, const double* b) {
    const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  }

  const Model& task_;
  double stand_height_[2] = {0, 0};
  double body_weight_ = 0;
};

}  // namespace torchpool::dmc
