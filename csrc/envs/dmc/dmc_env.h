// dmc_env.h — what every DeepMind Control Suite domain shares: dm_control's
// control.Environment and mujoco.Physics (dm_control/rl/control.py,
// dm_control/mujoco/engine.py), driven call for call.
//
// Contract. A domain's Model derives from DmcModel (the pool's mjModel read
// from dm_control's own XML, a copy of it with actuation disabled, the
// observation's named fields, the task's frame skip); its env derives from
// DmcEnv and implements initialize_episode (Task.initialize_episode),
// write_observation (get_observation, fields in dm_control's order, flat) and
// reward (get_reward); terminated() is Task.get_termination (only lqr ends
// episodes). The executor's time limit is the suite's: 1000 control steps for
// every id (EnvPool's max_episode_steps), which is dm_control's
// time_limit / control_timestep at the default frame skip.
//
// One step (Physics.step with legacy_step, the suite's default): ctrl =
// action as given (MuJoCo clamps it inside the step; a control cost sees it
// unclipped), then mj_step2 + (n - 1) mj_step + mj_step1 (RK4 models: n
// mj_step + mj_step1), so positions, velocities and their sensors are current
// when the observation is read, while acceleration-stage sensors (touch)
// come from the last substep.
//
// One reset (Environment.reset -> Physics.reset_context): mj_resetData, a
// forward with actuation disabled, the task's initialize_episode, then
// after_reset: another forward with actuation disabled. MuJoCo reads the
// disable flags from the model, which the pool's envs share across threads,
// so the model keeps an actuation-disabled copy for those forwards.
//
// A task that edits the model per episode (reacher's target, point_mass's
// gains) gets a model of its own per env (own_model()), as dm_control has a
// model per environment; the edits persist across episodes, as there.
//
// NOTE [Shallow model copies]: such a model is a copy of the mjModel struct
// whose pointers still point into the pool's arrays, but for the few arrays
// the task edits, which it owns. A deep copy (mj_copyModel) would cost every
// env the suite's ~12 MB skybox texture and ~7 ms; the actuation-disabled
// models are shallow copies too. MuJoCo only reads an mjModel it steps (its
// functions take `const mjModel*`), and these copies are never handed to
// mj_deleteModel. The copy is sound while an mjModel is values (sizes, flags,
// options, statistics, signature) and arrays in its one `buffer`, every one
// named in MuJoCo's own X-macro lists (mjxmacro.h): then a struct copy shares
// every array and owns nothing. That layout is pinned where it is used:
// static_asserts below fail the build of this family on a MuJoCo whose
// mjModel holds any other field (a new array or size in the X-macros passes;
// a cache, an owned resource or a new kind of field does not), and
// DmcModel checks once per pool that every array lies inside `buffer`.
// If they fail, re-read mjmodel.h before widening them.
//
// Divergence: where dm_control raises PhysicsError (MuJoCo counted a warning
// during the step), the step is truncated with the extra `unstable` set and
// the last finite observation, as the mujoco family does (mujoco_env.h).
#pragma once

#include <mujoco/mjxmacro.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../../core/env.h"
#include "../mujoco/mujoco_env.h"
#include "rewards.h"

namespace torchpool::dmc {

using mujoco::MjDataPtr;
using mujoco::MjModelPtr;
using mujoco::numpy_sum;
using mujoco::standard_normal;

// One named observation field: dm_control's key and shape ({} for a scalar).
struct Field {
  std::string name;
  std::vector<int64_t> shape;

  size_t size() const {
    size_t count = 1;
    for (int64_t extent : shape) count *= static_cast<size_t>(extent);
    return count;
  }
};

// The suite's episode length at the default frame skip (EnvPool keeps it for any frame skip).
inline constexpr int64_t kEpisodeSteps = 1000;

// The layout NOTE [Shallow model copies] relies on, checked where this family compiles: mjModel is its size
// fields, three flags, the options and statistics, `buffer`, one pointer per array of the X-macros, then
// `signature`, and nothing else.
namespace model_layout {
#define X(name) +1
inline constexpr size_t kSizes = 0 MJMODEL_SIZES;
#undef X
#define X(type, name, rows, cols) +1
#define XNV X
inline constexpr size_t kArrays = 0 MJMODEL_POINTERS;
#undef XNV
#undef X
constexpr size_t after(size_t offset, size_t size, size_t align) { return (offset + size + align - 1) / align * align; }
static_assert(offsetof(mjModel, flg_gravcomp) == kSizes * sizeof(mjtSize),
              "mjModel: fields besides the sizes before its flags");
static_assert(offsetof(mjModel, opt) == after(offsetof(mjModel, flg_adhesion), sizeof(mjtBool), alignof(mjOption)),
              "mjModel: fields besides its three flags before opt");
static_assert(offsetof(mjModel, vis) == after(offsetof(mjModel, opt), sizeof(mjOption), alignof(mjVisual)) &&
                  offsetof(mjModel, stat) == after(offsetof(mjModel, vis), sizeof(mjVisual), alignof(mjStatistic)) &&
                  offsetof(mjModel, buffer) == after(offsetof(mjModel, stat), sizeof(mjStatistic), alignof(void*)),
              "mjModel: fields between opt, vis, stat and buffer");
static_assert(offsetof(mjModel, signature) == offsetof(mjModel, buffer) + (1 + kArrays) * sizeof(void*) &&
                  sizeof(mjModel) == offsetof(mjModel, signature) + sizeof(uint64_t),
              "mjModel: fields after buffer besides the X-macros' arrays and signature");
}  // namespace model_layout

// Throws unless every array of `model` lies inside its buffer (NOTE [Shallow model copies]).
inline void check_arrays_in_buffer(const mjModel& model) {
  const char* begin = static_cast<const char*>(model.buffer);
  const char* end = begin + model.nbuffer;
  auto check = [&](const void* array, const char* name) {
    const char* first = static_cast<const char*>(array);
    if (first != nullptr && (first < begin || first > end))
      throw std::logic_error(std::string("mjModel.") + name +
                             " lies outside the model's buffer, which "
                             "NOTE [Shallow model copies] (csrc/envs/dmc/dmc_env.h) assumes it does not");
  };
#define X(type, name, rows, cols) check(model.name, #name);
#define XNV X
  MJMODEL_POINTERS
#undef XNV
#undef X
}

// A shallow copy of `model` with actuation disabled (Physics.reset/after_reset's
// `model.disable('actuation')`); NOTE [Shallow model copies].
inline mjModel without_actuation(const mjModel& model) {
  mjModel copy = model;
  copy.opt.disableflags |= mjDSBL_ACTUATION;
  return copy;
}

// dm_control's Python-side edits of a domain's XML (cartpole's extra poles, swimmer's links), made on the
// file's mjSpec before it compiles: mj_parseXML resolves the ./common/ includes from the file's folder,
// as mj_loadXML does, and a spec without edits compiles to what mj_loadXML gives.
using SpecEdit = std::function<void(mjSpec&)>;

inline MjModelPtr build_model(const std::string& path, const SpecEdit& edit) {
  char error[1024] = "";
  std::unique_ptr<mjSpec, void (*)(mjSpec*)> spec(mj_parseXML(path.c_str(), nullptr, error, sizeof error),
                                                  mj_deleteSpec);
  if (!spec) throw std::invalid_argument("cannot load the MuJoCo model '" + path + "': " + error);
  edit(*spec);
  mjModel* model = mj_compile(spec.get(), nullptr);
  if (model == nullptr)
    throw std::runtime_error("cannot compile the edited model of '" + path + "': " + mjs_getError(spec.get()));
  return MjModelPtr(model);
}

// A default class of a spec by name; throws when the XML defines none.
inline mjsDefault* spec_default(mjSpec& spec, const char* name) {
  mjsDefault* found = mjs_findDefault(&spec, name);
  if (found == nullptr) throw std::invalid_argument(std::string("the model has no default class '") + name + "'");
  return found;
}

// An mjModel array a task edits per episode, and its length (mjtNum arrays, or float ones: hfield_data).
struct EditedArray {
  mjtNum* mjModel::* field;
  size_t count;
};
struct EditedFloatArray {
  float* mjModel::* field;
  size_t count;
};

// A named object's id; throws when the model has none.
inline int object_id(const mjModel& model, mjtObj type, const std::string& name) {
  const int id = mj_name2id(&model, type, name.c_str());
  if (id < 0) throw std::invalid_argument("the Control Suite model has no object named '" + name + "'");
  return id;
}

// A one-task domain's check of the task it is asked for (NOTE [Every kwarg is read]: it reads task_name).
inline void expect_task(const Config& config, const std::string& domain, const std::string& task) {
  const std::string& asked = config.string("task_name");
  if (asked != task) throw std::invalid_argument(domain + " has no task '" + asked + "' (" + task + ")");
}

// The address of a named sensor's first value in sensordata.
inline int sensor_adr(const mjModel& model, const std::string& name) {
  return model.sensor_adr[object_id(model, mjOBJ_SENSOR, name)];
}

// (a - b) as a row vector times a 3x3 frame (row-major): NumPy's `(a - b).dot(frame)`, how the suite puts
// a vector between two points into a body's or geom's frame (humanoid's extremities, fish's and
// swimmer's targets).
inline void in_frame(const double* a, const double* b, const double* frame, double* out) {
  const double v[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  for (int j = 0; j < 3; ++j) out[j] = v[0] * frame[j] + v[1] * frame[3 + j] + v[2] * frame[6 + j];
}

// xmat components by dm_control's names (row-major 3x3).
enum Axis { kXX = 0, kXY = 1, kXZ = 2, kYX = 3, kYY = 4, kYZ = 5, kZX = 6, kZY = 7, kZZ = 8 };

class DmcModel : public mujoco::MujocoModel {
 public:
  // The suite's models start in the air at qpos0; a second of falling puts them on the floor, where
  // their steps cost what they will mostly cost (contacts), before the step cost is timed.
  static constexpr int kSettleSteps = 300;

  // `frame_skip` (the registry's default is the suite's control_timestep / timestep) and `flatten_obs`
  // come from the config; the domain's constructor then declares its observation fields.
  explicit DmcModel(const Config& config, const SpecEdit& edit = {})
      : MujocoModel(config, kSettleSteps, edit ? build_model(config.string("xml_file"), edit) : nullptr),
        flatten(config.flag("flatten_obs")),
        noact_(without_actuation(mj())) {
    check_arrays_in_buffer(mj());
  }

  // The suite's one extra, for the spec and for the envs' handle to it (see the file comment).
  static std::vector<FieldSpec> extras() { return {{"unstable", Dtype::Bool, {}}}; }

  const mjModel& mj_noact() const { return noact_; }

  // Named float fields (or one flat vector), unbounded as dm_control's specs.Array; the action box is
  // mujoco.action_spec's: ctrlrange where ctrllimited, else +-mjMAXVAL.
  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    if (flatten) {
      spec.observations = {{{static_cast<int64_t>(observation_size)}, obs_dtype, {}, {}}};
    } else {
      for (const Field& field : fields) spec.observations.push_back({field.shape, obs_dtype, {}, {}, field.name});
    }
    const mjModel& model = mj();
    spec.action.discrete = false;
    spec.action.shape = {model.nu};
    for (int i = 0; i < model.nu; ++i) {
      const bool limited = model.actuator_ctrllimited[i] != 0;
      spec.action.low.push_back(limited ? model.actuator_ctrlrange[2 * i] : -mjMAXVAL);
      spec.action.high.push_back(limited ? model.actuator_ctrlrange[2 * i + 1] : mjMAXVAL);
    }
    spec.extras = extras();
    spec.max_episode_steps = kEpisodeSteps;
    spec.step_cost_ns = step_cost_ns();  // the model's frame_skip mj_steps, timed at make() (MujocoModel)
    return spec;
  }

  const bool flatten;
  std::vector<Field> fields;    // the task's observation keys in dm_control's order
  size_t observation_size = 0;  // all fields' values

 protected:
  void declare_fields(std::vector<Field> declared) {
    fields = std::move(declared);
    observation_size = 0;
    for (const Field& field : fields) observation_size += field.size();
  }

 private:
  mjModel noact_;  // shallow: shares the arrays of mj()
};

// The base of every domain's env: the Physics (one mjData, the model pair),
// Environment.reset/step, the observation buffers.
class DmcEnv {
 public:
  virtual ~DmcEnv() = default;

  void reset(Rng& rng, StepOutput& out) {
    // Physics.reset_context: reset (its PhysicsError is swallowed), the task, after_reset.
    mj_resetData(model_, data_.get());
    mj_forward(noact_, data_.get());
    initialize_episode(rng);
    after_reset();
    write_observation(next_.data());
    publish(out);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    // Task.before_step: physics.set_control(action); Physics.step(n_sub_steps), less what advance() ran.
    const int advanced = std::exchange(advanced_, 0);
    if (advanced == 0) std::copy(action.values, action.values + model_->nu, data_->ctrl);
    physics_step(base_.frame_skip, advanced);
    StepResult result;
    write_observation(next_.data());
    if (!publish(out)) {
      result.truncated = true;
      return result;
    }
    result.reward = reward();
    result.terminated = terminated();
    return result;
  }

  // A step is frame_skip physics steps; advance() runs the next of them ahead of step(), which runs the
  // rest (NOTE [Split tail] in core/split_tail.h): the same MuJoCo calls in the same order.
  int substeps() const { return base_.frame_skip; }
  void advance(const Action& action) {
    if (advanced_ == 0) std::copy(action.values, action.values + model_->nu, data_->ctrl);
    physics_substep(advanced_++);
  }

  // State injection for parity tests: time, qpos, qvel, act, qacc_warmstart,
  // then the task's per-episode parameters (task_parameters()). set_state
  // ends as after_reset does, with a forward with actuation disabled.
  size_t state_size() const { return 1 + model_->nq + model_->nv + model_->na + model_->nv + task_parameter_count(); }
  void get_state(double* out) const {
    *out++ = data_->time;
    out = std::copy_n(data_->qpos, model_->nq, out);
    out = std::copy_n(data_->qvel, model_->nv, out);
    out = std::copy_n(data_->act, model_->na, out);
    out = std::copy_n(data_->qacc_warmstart, model_->nv, out);
    get_task_parameters(out);
  }
  void set_state(const double* state) {
    data_->time = *state++;
    state = copy_in(state, data_->qpos, model_->nq);
    state = copy_in(state, data_->qvel, model_->nv);
    state = copy_in(state, data_->act, model_->na);
    state = copy_in(state, data_->qacc_warmstart, model_->nv);
    set_task_parameters(state);
    after_reset();
  }

 protected:
  explicit DmcEnv(const DmcModel& model)
      : base_(model),
        model_(&model.mj()),
        noact_(&model.mj_noact()),
        data_(mj_makeData(model_)),
        observation_(model.observation_size, 0.0),
        next_(model.observation_size, 0.0) {
    if (!data_) throw std::runtime_error("mj_makeData failed");
    unstable_ = extra_field<bool>(DmcModel::extras(), 0);
  }

  // The task's hooks (see the file comment).
  virtual void initialize_episode(Rng& rng) = 0;
  virtual void write_observation(double* obs) const = 0;
  virtual double reward() const = 0;
  virtual bool terminated() const { return false; }
  // Per-episode model edits (or other task state) the parity tests copy into dm_control.
  virtual size_t task_parameter_count() const { return 0; }
  virtual void get_task_parameters(double*) const {}
  virtual void set_task_parameters(const double*) {}

  // Gives this env a model of its own whose `edited` arrays are private (NOTE [Shallow model copies]).
  void own_model(std::initializer_list<EditedArray> edited, std::initializer_list<EditedFloatArray> floats = {}) {
    own_ = std::make_unique<mjModel>(*model_);
    for (const EditedArray& array : edited) own_array(owned_arrays_, array.field, array.count);
    for (const EditedFloatArray& array : floats) own_array(owned_floats_, array.field, array.count);
    own_noact_ = std::make_unique<mjModel>(without_actuation(*own_));  // shares the private arrays too
    model_ = own_.get();
    noact_ = own_noact_.get();
  }
  // Points own_'s `field` at a private copy of its `count` values, kept in `store`.
  template <class T>
  void own_array(std::deque<std::vector<T>>& store, T* mjModel::* field, size_t count) {
    std::vector<T>& copy = store.emplace_back(own_.get()->*field, own_.get()->*field + count);
    own_.get()->*field = copy.data();
  }
  // Applies an edit to this env's model (after own_model(); only its private arrays may change).
  template <class Edit>
  void edit_model(Edit edit) {
    if (!own_) throw std::logic_error("edit_model() before own_model()");
    edit(*own_);
  }

  // Physics.after_reset: a forward with actuation disabled.
  void after_reset() { mj_forward(noact_, data_.get()); }

  // Physics._step_with_up_to_date_position_velocity (legacy_step): mj_step2 (the position and velocity
  // stages are current), n - 1 mj_steps, then mj_step1 (RK4: n mj_steps, then mj_step1). `done`: how many
  // of its substeps already ran.
  void physics_step(int n, int done = 0) {
    for (int i = done; i < n; ++i) physics_substep(i);
    mj_step1(model_, data_.get());
  }
  void physics_substep(int i) {
    if (i == 0 && model_->opt.integrator != mjINT_RK4)
      mj_step2(model_, data_.get());
    else
      mj_step(model_, data_.get());
  }

  // randomizers.randomize_limited_and_rotational_joints: each joint in model
  // order; limited hinges and slides uniform in their range, limited balls a
  // random axis turned by up to range_max, unlimited hinges uniform in
  // [-pi, pi), unlimited balls a uniform quaternion, free joints rand(4)
  // normalised (dm_control's own quirk, kept "for benchmark results").
  void randomize_limited_and_rotational_joints(Rng& rng) {
    for (int j = 0; j < model_->njnt; ++j) {
      double* qpos = data_->qpos + model_->jnt_qposadr[j];
      const int type = model_->jnt_type[j];
      const double range_min = model_->jnt_range[2 * j], range_max = model_->jnt_range[2 * j + 1];
      if (model_->jnt_limited[j]) {
        if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
          qpos[0] = rng.uniform(range_min, range_max);
        } else if (type == mjJNT_BALL) {
          double axis[3] = {standard_normal(rng), standard_normal(rng), standard_normal(rng)};
          const double norm = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
          for (double& a : axis) a /= norm;
          mju_axisAngle2Quat(qpos, axis, rng.uniform(0.0, 1.0) * range_max);
        }
      } else if (type == mjJNT_HINGE) {
        qpos[0] = rng.uniform(-M_PI, M_PI);
      } else if (type == mjJNT_BALL) {
        normalised_into(qpos, [&] { return standard_normal(rng); });
      } else if (type == mjJNT_FREE) {
        normalised_into(qpos + 3, [&] { return rng.uniform(0.0, 1.0); });
      }
    }
  }

  // Reads one xmat component of a body.
  double xmat(int body, Axis axis) const { return data_->xmat[9 * body + axis]; }

  // rewards.tolerance(x, margin=1, value_at_margin=0, sigmoid='quadratic') of each control, averaged as
  // NumPy's mean (pairwise sum / n): the suite's "small control" term.
  double mean_small_control() const {
    return numpy_sum(data_->ctrl, model_->nu, [](double u) { return tolerance(u, {}, 1.0, Sigmoid::Quadratic, 0.0); }) /
           model_->nu;
  }

  const DmcModel& base_;
  const mjModel* model_;  // the pool's model, or this env's own copy
  const mjModel* noact_;  // the same with actuation disabled
  MjDataPtr data_;

  // Four draws, normalised into quat (a random orientation: the suite's randn(4) / norm, or rand(4) / norm).
  template <class Draw>
  static void normalised_into(double* quat, Draw draw) {
    double q[4];
    for (double& value : q) value = draw();
    const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; ++k) quat[k] = q[k] / norm;
  }

 private:
  static const double* copy_in(const double* from, double* to, int count) {
    std::copy_n(from, count, to);
    return from + count;
  }

  // Writes the candidate observation if the physics is sane; else the last good one and `unstable`.
  bool publish(StepOutput& out) {
    bool sane = data_->warning[mjWARN_BADQPOS].number == 0 && data_->warning[mjWARN_BADQVEL].number == 0 &&
                data_->warning[mjWARN_BADQACC].number == 0;
    for (size_t i = 0; sane && i < next_.size(); ++i) sane = std::isfinite(next_[i]);
    if (sane) std::swap(observation_, next_);
    *out.extra(unstable_) = !sane;
    if (base_.flatten) {
      out.set_observation(0, observation_.data(), observation_.size());
      return sane;
    }
    size_t offset = 0;
    for (size_t i = 0; i < base_.fields.size(); ++i) {
      const size_t count = base_.fields[i].size();
      out.set_observation(i, observation_.data() + offset, count);
      offset += count;
    }
    return sane;
  }

  std::unique_ptr<mjModel> own_, own_noact_;      // shallow copies (never mj_deleteModel'd)
  std::deque<std::vector<mjtNum>> owned_arrays_;  // their private arrays (a deque: stable addresses)
  std::deque<std::vector<float>> owned_floats_;
  std::vector<double> observation_;  // the last published (finite) observation, flat
  std::vector<double> next_;         // the candidate of the step in progress
  ExtraField<bool> unstable_;
  int advanced_ = 0;  // substeps advance() ran of the step in progress
};

}  // namespace torchpool::dmc
