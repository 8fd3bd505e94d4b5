// mujoco_env.h — what every Gymnasium MuJoCo task shares, v5 and v4
// (gymnasium/envs/mujoco/mujoco_env.py, class MujocoEnv; mirrors_v4() picks the reference).
//
// The model/data split: a task's Model derives from MujocoModel, which owns the
// one immutable mjModel of the pool (loaded once from the task's XML) and the
// kwargs every task has (xml_file, frame_skip). Each env owns one mjData
// through a Simulation, which mirrors MujocoEnv's reset/set_state/
// do_simulation call for call, so that the same MuJoCo library reproduces the
// reference's float64 state bit for bit. MujocoEnv (below) is the base of every
// task's env: state injection, the observation buffers, and what happens when
// the simulation goes unstable.
//
// Instability. MuJoCo's own checks (mj_checkPos/Vel/Acc, run inside mj_step)
// reset mjData to qpos0 when a value goes bad and count a warning; Gymnasium
// carries on from there unaware. Here a step in which MuJoCo counted such a
// warning, or that produced a non-finite state or observation, is reported as
// truncated with the extra `unstable` set, reward 0, and the last finite
// observation; the executor's autoreset then starts a new episode. No NaN
// reaches the batch.
//
// Nothing here allocates per step: buffers are sized once per env.
#pragma once

#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../core/env.h"

namespace torchpool::mujoco {

struct MjModelDeleter {
  void operator()(mjModel* model) const { mj_deleteModel(model); }
};
struct MjDataDeleter {
  void operator()(mjData* data) const { mj_deleteData(data); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// MuJoCo's default error handler prints and exits the process. A fatal error
// inside a worker (e.g. the constraint solver running out of stack in a
// diverging simulation) must become an exception the executor reports with
// the env id instead. Installed only when nobody else has one.
[[noreturn]] inline void throw_mujoco_error(const char* message) {
  throw std::runtime_error(std::string("MuJoCo error: ") + message);
}

// Loads an MJCF file. Runs on the thread that builds the pool (the executor
// starts its workers after the Model exists), so setting the handler races
// with no MuJoCo call of ours.
inline MjModelPtr load_model(const std::string& path) {
  // The extension is linked against the wheel's libmujoco.so.<version>; a
  // different library under that name would break the struct layouts.
  if (mj_version() != mjVERSION_HEADER)
    throw std::runtime_error("torchpool was built against MuJoCo " + std::to_string(mjVERSION_HEADER) +
                             " but loaded MuJoCo " + mj_versionString() +
                             "; reinstall torchpool against the installed mujoco package");
  if (mju_user_error == nullptr) mju_user_error = throw_mujoco_error;
  char error[1024] = "";
  mjModel* model = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (model == nullptr) throw std::invalid_argument("cannot load the MuJoCo model '" + path + "': " + error);
  return MjModelPtr(model);
}

// ---- NumPy numerics the references rely on ---------------------------------

// np.sum of a float64 array: NumPy's pairwise summation
// (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum): fewer than 8
// values add up in order from -0.0; up to 128 use 8 interleaved accumulators;
// longer arrays split in halves at a multiple of 8. Matching it keeps rewards
// such as Ant's contact cost (84 squared forces) bit for bit equal.
template <class Transform>
double numpy_sum(const double* values, size_t count, Transform transform) {
  if (count < 8) {
    double sum = -0.0;
    for (size_t i = 0; i < count; ++i) sum += transform(values[i]);
    return sum;
  }
  if (count <= 128) {
    double partial[8];
    for (size_t k = 0; k < 8; ++k) partial[k] = transform(values[k]);
    size_t i = 8;
    for (; i < count - count % 8; i += 8)
      for (size_t k = 0; k < 8; ++k) partial[k] += transform(values[i + k]);
    double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                 ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (; i < count; ++i) sum += transform(values[i]);
    return sum;
  }
  size_t half = count / 2;
  half -= half % 8;
  return numpy_sum(values, half, transform) + numpy_sum(values + half, count - half, transform);
}

// np.sum(np.square(values)).
inline double sum_of_squares(const double* values, size_t count) {
  return numpy_sum(values, count, [](double x) { return x * x; });
}

// np.clip(x, low, high) for one value (NaN passes through, as in NumPy).
inline double clip(double x, double low, double high) { return x < low ? low : (x > high ? high : x); }

// np.linalg.norm(v[0:2]): sqrt(dot(v, v)), not hypot.
inline double norm2(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1]); }

// np.linalg.norm of a 3-vector difference a - b.
inline double distance3(const double* a, const double* b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// ---- reset noise ------------------------------------------------------------

// np_random.uniform(low, high): uniform in [low, high).
inline double uniform(Rng& rng, double low, double high) { return rng.uniform(low, high); }

// np_random.standard_normal(): the distribution, not NumPy's numbers (the
// Box–Muller transform on the env's own Rng; 1 - u keeps the log finite).
inline double standard_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform(0.0, 1.0);  // (0, 1]
  const double u2 = rng.uniform(0.0, 1.0);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// ---- the shared Model ---------------------------------------------------------

// (low, high) from a 2-tuple kwarg such as healthy_z_range.
struct Range {
  double low, high;
};

inline Range range_kwarg(const Config& config, const std::string& key) {
  const std::vector<double>& values = config.sequence(key);
  if (values.size() != 2) throw std::invalid_argument(key + " must be a (low, high) pair");
  return {values[0], values[1]};
}

inline bool flag_kwarg(const Config& config, const std::string& key) { return config.flag(key); }

// Whether a task mirrors Gymnasium's v4 reference (gymnasium/envs/mujoco/*_v4.py) instead of v5's: the
// registry's -v4 ids set `gymnasium_version` = 4 (the id chooses it; users do not pass it). v4 differs in
// its observation (Ant's and Humanoid's), its info keys, its empty reset info and its healthy reward; what
// v4 hard-codes (the XML where it takes none, frame_skip, Ant's torso) the registry passes as kwargs.
inline bool mirrors_v4(const Config& config) {
  const int64_t version = config.integer("gymnasium_version");
  if (version != 4 && version != 5)
    throw std::invalid_argument("gymnasium_version must be 4 or 5, got " + std::to_string(version));
  return version == 4;
}

// A step's healthy reward. v5's healthy_reward property is is_healthy * healthy_reward; v4's is
// float(is_healthy or terminate_when_unhealthy) * healthy_reward, which also pays the step that
// terminates for being unhealthy (ant_v4.py, hopper_v4.py, walker2d_v4.py, humanoid_v4.py).
inline double healthy_reward_of(bool v4, bool healthy, bool terminate_when_unhealthy, double healthy_reward) {
  return (healthy || (v4 && terminate_when_unhealthy)) ? healthy_reward : 0.0;
}

// The immutable part every task shares: the mjModel and MujocoEnv.__init__'s
// derived constants.
class MujocoModel {
 public:
  // settle_steps: mj_steps (zero control) before timing the step cost, so that a model that starts in
  // the air (the Control Suite's, from qpos0) is timed with the contacts it will mostly have. built: the
  // model, where the family builds it itself (else xml_file is loaded).
  explicit MujocoModel(const Config& config, int settle_steps = 0, MjModelPtr built = nullptr)
      : model_(built ? std::move(built) : load_model(config.string("xml_file"))),
        frame_skip(static_cast<int>(config.integer("frame_skip"))),
        // MujocoEnv.dt: model.opt.timestep * frame_skip.
        dt(model_->opt.timestep * frame_skip),
        // MujocoEnv.__init__: init_qpos/init_qvel are a fresh MjData's qpos (= qpos0) and qvel (= 0).
        init_qpos(model_->qpos0, model_->qpos0 + model_->nq),
        init_qvel(model_->nv, 0.0) {
    if (frame_skip < 1) throw std::invalid_argument("frame_skip must be at least 1");
    step_cost_ns_ = measure_step_cost_ns(settle_steps);
  }

  const mjModel& mj() const { return *model_; }
  int nq() const { return model_->nq; }
  int nv() const { return model_->nv; }
  int nu() const { return model_->nu; }
  int nbody() const { return model_->nbody; }
  double step_cost_ns() const { return step_cost_ns_; }

  // A body's id by name; throws when the XML has no such body.
  int body_id(const std::string& name) const {
    const int id = mj_name2id(model_.get(), mjOBJ_BODY, name.c_str());
    if (id < 0) throw std::invalid_argument("the MuJoCo model has no body named '" + name + "'");
    return id;
  }

  // What every task's spec shares. Observations are unbounded float64 boxes
  // in the reference; actions are MujocoEnv._set_action_space's float32 box
  // from actuator_ctrlrange. Extras: the task's info values as float64, like
  // Gymnasium's info dict, then `unstable` (see the file comment).
  EnvSpec base_spec(Dtype obs_dtype, size_t observation_size, int64_t max_episode_steps,
                    const std::vector<FieldSpec>& info_extras) const {
    EnvSpec spec;
    spec.observations = {{{static_cast<int64_t>(observation_size)}, obs_dtype, {}, {}}};
    spec.action.discrete = false;
    spec.action.shape = {model_->nu};
    for (int i = 0; i < model_->nu; ++i) {
      spec.action.low.push_back(static_cast<float>(model_->actuator_ctrlrange[2 * i]));
      spec.action.high.push_back(static_cast<float>(model_->actuator_ctrlrange[2 * i + 1]));
    }
    spec.extras = with_unstable(info_extras);
    spec.max_episode_steps = max_episode_steps;
    spec.step_cost_ns = step_cost_ns_;
    return spec;
  }

  // The task's extras: its info values, then `unstable`. `unstable` goes
  // last: the executor packs the extras of a same_step autoreset back to back
  // in a scratch row, where a 1-byte bool first would leave the float64
  // extras after it misaligned.
  static std::vector<FieldSpec> with_unstable(std::vector<FieldSpec> info_extras) {
    info_extras.push_back({"unstable", Dtype::Bool, {}});
    return info_extras;
  }

  // A float64 scalar info extra.
  static FieldSpec info(const std::string& name) { return {name, Dtype::Float64, {}}; }

 private:
  // What one env step costs on this model (its frame_skip mj_steps, which
  // dominate), timed on a scratch mjData from qpos0: the fastest of a few
  // short trials, so a preemption during one does not inflate it.
  double measure_step_cost_ns(int settle_steps) const {
    MjDataPtr data(mj_makeData(model_.get()));
    if (!data) throw std::runtime_error("mj_makeData failed");
    mj_forward(model_.get(), data.get());
    for (int i = 0; i < settle_steps; ++i) mj_step(model_.get(), data.get());
    mj_step(model_.get(), data.get());  // warm the caches
    constexpr int kTrials = 5, kEnvStepsPerTrial = 2;
    double fastest = std::numeric_limits<double>::infinity();
    for (int trial = 0; trial < kTrials; ++trial) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kEnvStepsPerTrial * frame_skip; ++i) mj_step(model_.get(), data.get());
      const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
      fastest = std::min(fastest, elapsed.count() / kEnvStepsPerTrial);
    }
    return fastest;
  }

  MjModelPtr model_;
  double step_cost_ns_ = 0.0;

 public:
  const int frame_skip;
  const double dt;
  const std::vector<double> init_qpos;
  const std::vector<double> init_qvel;
};

// ---- one env's simulation ----------------------------------------------------

// One mjData over the pool's shared mjModel, driven as MujocoEnv drives it.
class Simulation {
 public:
  explicit Simulation(const MujocoModel& model) : model_(&model.mj()), data_(mj_makeData(model_)) {
    if (!data_) throw std::runtime_error("mj_makeData failed");
  }

  const mjModel& model() const { return *model_; }
  mjData& data() { return *data_; }
  const mjData& data() const { return *data_; }

  // MujocoEnv.reset: mj_resetData, then reset_model's set_state(qpos, qvel).
  void reset(const double* qpos, const double* qvel) {
    mj_resetData(model_, data_.get());
    set_state(qpos, qvel);
  }

  // MujocoEnv.set_state: copy qpos and qvel, then mj_forward. (Its
  // `data.act[:] = None` when na == 0 touches an empty array.)
  void set_state(const double* qpos, const double* qvel) {
    std::copy(qpos, qpos + model_->nq, data_->qpos);
    std::copy(qvel, qvel + model_->nv, data_->qvel);
    mj_forward(model_, data_.get());
  }

  // MujocoEnv.do_simulation -> _step_mujoco_simulation: ctrl = action (no
  // clipping: MuJoCo clamps ctrl to ctrlrange inside the step, while the
  // reward's control cost sees the action as given), mj_step frame_skip
  // times, then mj_rnePostConstraint so cfrc_ext and friends are current.
  // `done`: how many of the mj_steps advance() already ran, with the same ctrl.
  void do_simulation(const double* ctrl, int frame_skip, int done = 0) {
    std::copy(ctrl, ctrl + model_->nu, data_->ctrl);
    for (int i = done; i < frame_skip; ++i) mj_step(model_, data_.get());
    mj_rnePostConstraint(model_, data_.get());
  }

  // One mj_step of do_simulation ahead of it (NOTE [Split tail] in core/split_tail.h).
  void advance(const double* ctrl) {
    std::copy(ctrl, ctrl + model_->nu, data_->ctrl);
    mj_step(model_, data_.get());
  }

  // Whether MuJoCo reset a bad state during this episode (warnings are
  // cleared by mj_resetData at every reset), or the state is not finite.
  bool diverged() const {
    if (data_->warning[mjWARN_BADQPOS].number > 0 || data_->warning[mjWARN_BADQVEL].number > 0 ||
        data_->warning[mjWARN_BADQACC].number > 0)
      return true;
    for (int i = 0; i < model_->nq; ++i)
      if (!std::isfinite(data_->qpos[i])) return true;
    for (int i = 0; i < model_->nv; ++i)
      if (!std::isfinite(data_->qvel[i])) return true;
    return false;
  }

  // State injection for parity tests: (qpos, qvel), all of the physics state
  // these tasks have (na == 0; the solver's warm start is reset with the
  // episode and evolves identically in the reference).
  size_t state_size() const { return static_cast<size_t>(model_->nq + model_->nv); }
  void get_state(double* out) const {
    std::copy(data_->qpos, data_->qpos + model_->nq, out);
    std::copy(data_->qvel, data_->qvel + model_->nv, out + model_->nq);
  }
  void set_state(const double* state) { set_state(state, state + model_->nq); }

 private:
  const mjModel* model_;
  MjDataPtr data_;
};

// ---- the base of every task's env ----------------------------------------------

// Holds the Simulation, the observation buffers and the reset scratch. A
// task implements write_observation() (its _get_obs, written into
// next_observation()). Its step() calls simulate() or step_forward() (which
// run do_simulation, write_observation and publish): false means the step
// diverged (the `unstable` row is written), and the task returns
// unstable_step(). Its reset() fills qpos_/qvel_ and calls begin_episode(),
// or calls reset_with_noise() when reset_model is the usual init + noise.
class MujocoEnv {
 public:
  virtual ~MujocoEnv() = default;

  size_t state_size() const { return sim_.state_size(); }
  void get_state(double* out) const { sim_.get_state(out); }
  void set_state(const double* state) { sim_.set_state(state); }

  // A step is frame_skip mj_steps; advance() runs the next of them ahead of
  // step(), which runs the rest (NOTE [Split tail] in core/split_tail.h). The
  // first one records the position a velocity reward starts from, as step()
  // would have before its do_simulation.
  int substeps() const { return model_base_.frame_skip; }
  void advance(const Action& action) {
    if (advanced_ == 0) forward_position(position_before_);
    // Zero while the mj_step runs: after an error (mju_error raised) the
    // env's next step starts afresh, as after an error in an unsplit step.
    const int advanced = std::exchange(advanced_, 0);
    sim_.advance(action.values);
    advanced_ = advanced + 1;
  }

 protected:
  // The task's float64 info extras (`info_extras`, as passed to
  // MujocoModel::base_spec) come first, then `unstable`.
  MujocoEnv(const MujocoModel& model, size_t observation_size, const std::vector<FieldSpec>& info_extras)
      : sim_(model),
        model_base_(model),
        qpos_(model.nq()),
        qvel_(model.nv()),
        observation_(observation_size, 0.0),
        next_observation_(observation_size, 0.0) {
    const std::vector<FieldSpec> extras = MujocoModel::with_unstable(info_extras);
    for (size_t i = 0; i < info_extras.size(); ++i) info_fields_.push_back(extra_field<double>(extras, i));
    unstable_field_ = extra_field<bool>(extras, "unstable");
    for (const FieldSpec& extra : info_extras) {
      if (extra.name == "tendon_length") tendon_length_field_ = extra_field<double>(extras, extra.name);
      if (extra.name == "tendon_velocity") tendon_velocity_field_ = extra_field<double>(extras, extra.name);
      scalar_info_fields_ += extra.shape.empty();
    }
  }

  // Every task's Model has observation_size and info_extras.
  template <class TaskModel>
  explicit MujocoEnv(const TaskModel& model) : MujocoEnv(model, model.observation_size, model.info_extras) {}

  // The task's _get_obs, written into next_observation().
  virtual void write_observation() = 0;

  double* next_observation() { return next_observation_.data(); }

  // The head of most tasks' _get_obs: qpos[skipped:] (the excluded x, or x
  // and y, slides), then qvel, np.clip(-10, 10)'d where `clipped` (Hopper,
  // Walker2d). Writes into next_observation(); returns where the rest goes.
  double* write_qpos_qvel(int skipped, bool clipped = false) {
    const mjData& data = sim_.data();
    double* obs = std::copy(data.qpos + skipped, data.qpos + model_base_.nq(), next_observation());
    if (!clipped) return std::copy(data.qvel, data.qvel + model_base_.nv(), obs);
    for (int i = 0; i < model_base_.nv(); ++i) *obs++ = clip(data.qvel[i], -10.0, 10.0);
    return obs;
  }

  // How reset_model draws the qvel noise: np_random.uniform(-scale, scale)
  // or scale * np_random.standard_normal().
  enum class Noise { Uniform, Normal };

  // The reset_model most tasks share: qpos = init_qpos + uniform(-scale,
  // scale), then qvel = init_qvel + noise, drawn in that order (all qpos
  // draws, then all qvel draws, as the reference consumes np_random), then
  // begin_episode().
  void reset_with_noise(Rng& rng, double scale, Noise qvel_noise, StepOutput& out) {
    for (int i = 0; i < model_base_.nq(); ++i) qpos_[i] = model_base_.init_qpos[i] + uniform(rng, -scale, scale);
    for (int i = 0; i < model_base_.nv(); ++i)
      qvel_[i] = model_base_.init_qvel[i] +
                 (qvel_noise == Noise::Uniform ? uniform(rng, -scale, scale) : scale * standard_normal(rng));
    begin_episode(out);
  }

  // MujocoEnv.reset with the state in qpos_/qvel_: mj_resetData +
  // set_state, then the first observation.
  void begin_episode(StepOutput& out) {
    advanced_ = 0;
    sim_.reset(qpos_.data(), qvel_.data());
    write_observation();
    publish(out);
  }

  // The step prologue: do_simulation(action, frame_skip), the candidate
  // observation, publish(). False when the step diverged.
  bool simulate(const Action& action, StepOutput& out) {
    do_simulation(action);
    write_observation();
    return publish(out);
  }

  // simulate() for tasks rewarded by a velocity: forward_position() read
  // before and after do_simulation; velocity[k] = (after[k] - before[k]) /
  // dt for its first N coordinates, as every task's step computes it.
  template <size_t N>
  bool step_forward(const Action& action, StepOutput& out, double (&velocity)[N]) {
    static_assert(N <= kPositionSize);
    if (advanced_ == 0) forward_position(position_before_);  // else advance() read it before its first mj_step
    double after[kPositionSize];
    do_simulation(action);
    forward_position(after);
    for (size_t k = 0; k < N; ++k) velocity[k] = (after[k] - position_before_[k]) / model_base_.dt;
    write_observation();
    return publish(out);
  }

  // What a step reads before its do_simulation: the coordinates a task's velocity is taken of (e.g. a
  // body's xpos, the mass centre), by default the leading qpos (the free x, or x and y, slides); or the
  // distances a v4 reward is taken of (simulate_reading_before).
  static constexpr size_t kPositionSize = 2;
  virtual void forward_position(double* p) const {
    const mjData& data = sim_.data();
    for (size_t k = 0; k < kPositionSize; ++k) p[k] = static_cast<int>(k) < model_base_.nq() ? data.qpos[k] : 0.0;
  }

  // simulate() for the tasks whose reward reads the state before do_simulation (Reacher-v4, Pusher-v4):
  // their forward_position() gives those values, read here or, in a split step, by advance() before its
  // first mj_step, and `before` receives them.
  bool simulate_reading_before(const Action& action, StepOutput& out, double (&before)[kPositionSize]) {
    if (advanced_ == 0) forward_position(position_before_);
    std::copy_n(position_before_, kPositionSize, before);
    return simulate(action, out);
  }

  void do_simulation(const Action& action) {
    sim_.do_simulation(action.values, model_base_.frame_skip, std::exchange(advanced_, 0));
  }

  // Writes next_observation() if the step kept the simulation sane; otherwise
  // writes the last good observation and the unstable flag, and returns false.
  bool publish(StepOutput& out) {
    bool finite = !sim_.diverged();
    for (size_t i = 0; finite && i < next_observation_.size(); ++i) finite = std::isfinite(next_observation_[i]);
    if (!finite) {
      out.set_observation(observation_.data(), observation_.size());
      *out.extra(unstable_field_) = true;
      write_zero_info(out);
      return false;
    }
    std::swap(observation_, next_observation_);  // swaps buffers, allocates nothing
    out.set_observation(observation_.data(), observation_.size());
    *out.extra(unstable_field_) = false;
    return true;
  }

  // The result of a diverged step: truncated, reward 0 (see the file comment).
  static StepResult unstable_step() {
    StepResult result;
    result.truncated = true;
    return result;
  }

  // Every info extra 0: the reset row of a task whose reference has no reset info (the v4 tasks; those whose
  // info is only step values), or an unstable step's.
  void write_zero_info(StepOutput& out) const {
    for (const ExtraField<double>& field : info_fields_) std::fill_n(out.extra(field), field.count, 0.0);
  }

  // Writes the task's scalar float64 info extras 0, 1, ... in order.
  void write_info(StepOutput& out, std::initializer_list<double> values) const {
    // A task variant with fewer fields (the v4 ones) writing the list of another would write past them.
    if (values.size() != scalar_info_fields_)
      throw std::logic_error("a MuJoCo task wrote " + std::to_string(values.size()) + " info values for its " +
                             std::to_string(scalar_info_fields_) + " scalar info fields");
    size_t i = 0;
    for (double value : values) *out.extra(info_fields_[i++]) = value;
  }

  // Humanoid's and HumanoidStandup's v5 info: every tendon's length and velocity.
  void write_tendons(StepOutput& out) const {
    const mjData& data = sim_.data();
    const int count = sim_.model().ntendon;
    std::copy(data.ten_length, data.ten_length + count, out.extra(tendon_length_field_));
    std::copy(data.ten_velocity, data.ten_velocity + count, out.extra(tendon_velocity_field_));
  }

  Simulation sim_;

 private:
  const MujocoModel& model_base_;

 protected:
  std::vector<double> qpos_, qvel_;  // reset scratch: the state begin_episode() starts from

 private:
  std::vector<double> observation_;              // the last published (finite) observation
  std::vector<double> next_observation_;         // the candidate of the step in progress
  std::vector<ExtraField<double>> info_fields_;  // the task's info extras, in order
  size_t scalar_info_fields_ = 0;                // those write_info() fills: the leading scalars
  ExtraField<bool> unstable_field_;
  ExtraField<double> tendon_length_field_, tendon_velocity_field_;  // v5 humanoids only
  int advanced_ = 0;                                                // mj_steps of the coming step advance() ran
  double position_before_[kPositionSize] = {};
};

}  // namespace torchpool::mujoco
