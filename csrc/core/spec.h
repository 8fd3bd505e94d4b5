// spec.h — what an env family declares about its data, shared with Python.
//
// Contract: an EnvSpec says the observation's shape, dtype and bounds, the
// action's kind (discrete with n choices, or a box of doubles with bounds),
// the family's extra per-step fields, its default time limit and a rough cost
// of one step. Nothing here allocates per step; specs are built once per pool
// and are const afterwards.
#pragma once

#include <cstdint>
#include <limits>
#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace torchpool {

// Codes match torchpool/pool.py's _DTYPES table; keep the two in step.
enum class Dtype : int32_t { Bool = 0, UInt8 = 1, Int32 = 2, Int64 = 3, Float32 = 4, Float64 = 5 };

inline size_t dtype_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
    case Dtype::UInt8:
      return 1;
    case Dtype::Int32:
    case Dtype::Float32:
      return 4;
    case Dtype::Int64:
    case Dtype::Float64:
      return 8;
  }
  return 0;
}

inline const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
      return "bool";
    case Dtype::UInt8:
      return "uint8";
    case Dtype::Int32:
      return "int32";
    case Dtype::Int64:
      return "int64";
    case Dtype::Float32:
      return "float32";
    case Dtype::Float64:
      return "float64";
  }
  return "?";
}

struct FieldSpec {
  std::string name;
  Dtype dtype;
  std::vector<int64_t> shape;  // per env, without the batch dimension

  size_t element_count() const {
    size_t count = 1;
    for (int64_t extent : shape) count *= static_cast<size_t>(extent);
    return count;
  }
  size_t row_bytes() const { return element_count() * dtype_size(dtype); }
};

// The Dtype of a C++ element type.
template <class T>
constexpr Dtype dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return Dtype::Bool;
  if constexpr (std::is_same_v<T, uint8_t>) return Dtype::UInt8;
  if constexpr (std::is_same_v<T, int32_t>) return Dtype::Int32;
  if constexpr (std::is_same_v<T, int64_t>) return Dtype::Int64;
  if constexpr (std::is_same_v<T, float>) return Dtype::Float32;
  if constexpr (std::is_same_v<T, double>) return Dtype::Float64;
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, int64_t> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                "no Dtype for this type");
}

// A typed handle to one of a family's extra fields (StepOutput::extra): its
// place in the declared extras and its elements per env, taken once from the
// declaration with extra_field(), which checks the element type, so a step
// can never write a field as another type than it was declared with.
template <class T>
struct ExtraField {
  size_t index = 0;
  size_t count = 0;
};

// The handle to extras[index] (or to the extra named `name`), checked against its declared dtype.
template <class T>
ExtraField<T> extra_field(const std::vector<FieldSpec>& extras, size_t index) {
  if (index >= extras.size())
    throw std::logic_error("extra field " + std::to_string(index) + " is not declared (" +
                           std::to_string(extras.size()) + " extras)");
  const FieldSpec& field = extras[index];
  if (field.dtype != dtype_of<T>())
    throw std::logic_error("extra field '" + field.name + "' is declared as " + dtype_name(field.dtype) +
                           ", not as the handle's " + dtype_name(dtype_of<T>()));
  return {index, field.element_count()};
}
template <class T>
ExtraField<T> extra_field(const std::vector<FieldSpec>& extras, const std::string& name) {
  for (size_t i = 0; i < extras.size(); ++i)
    if (extras[i].name == name) return extra_field<T>(extras, i);
  throw std::logic_error("no extra field named '" + name + "' is declared");
}

// One field of the observation. A family with one observation declares one
// unnamed field (Python's td["observation"] is then a tensor); with several,
// each is named (td["observation", name], a TensorDict of them), in the
// family's order, as EnvPool's obs:<name> state keys are.
struct ObservationSpec {
  std::vector<int64_t> shape;
  Dtype dtype;                    // the pool's output dtype (obs_dtype applied to continuous fields)
  std::vector<double> low, high;  // one per element, or empty for unbounded
  std::string name = {};          // "" for a family's one unnamed observation

  size_t row_bytes() const {
    size_t count = 1;
    for (int64_t extent : shape) count *= static_cast<size_t>(extent);
    return count * dtype_size(dtype);
  }
};

struct ActionSpec {
  bool discrete = true;
  int64_t num_actions = 0;        // discrete: valid actions are [0, num_actions)
  std::vector<int64_t> shape;     // continuous: the action's shape
  std::vector<double> low, high;  // continuous: one bound per element

  size_t element_count() const {
    if (discrete) return 1;
    size_t count = 1;
    for (int64_t extent : shape) count *= static_cast<size_t>(extent);
    return count;
  }
};

struct EnvSpec {
  std::vector<ObservationSpec> observations;  // one unnamed field, or named ones
  ActionSpec action;
  std::vector<FieldSpec> extras;  // family fields written every step (e.g. lives)
  int64_t max_episode_steps = 0;  // 0: no time limit
  // Nanoseconds one step costs, roughly; the executor sizes work chunks from it
  // so cheap envs run as tight loops (see docs/design.md, "The rules the core keeps").
  double step_cost_ns = 1000.0;

  // The pool's time limit: steps < 0 keeps the family's default, 0 means none.
  EnvSpec with_time_limit(int64_t steps) const {
    EnvSpec spec = *this;
    if (steps >= 0) spec.max_episode_steps = steps;
    return spec;
  }
};

// A task kwarg that a family outside torchpool declares for the registry
// (torchpool.register_cpp_env): a Model's optional
// `static std::vector<TaskKwarg> kwargs()`. The built-in families' kwargs are
// declared in torchpool/registry.py instead.
struct TaskKwarg {
  std::string name;
  std::string type;           // "float", "int", "bool" or "str"
  std::string default_value;  // as Python writes it: "10.0", "3", "True", "area"
  std::string doc;
};

// Task kwargs, already validated and completed with defaults by the family's
// registration file (torchpool/families/<family>.py: the one place the
// built-in families' defaults are declared; a family outside torchpool declares
// its own as TaskKwargs), typed as Python checked them: ints stay ints, bools
// bools. A tuple or list of numbers (MuJoCo's healthy_z_range) is a sequence of
// doubles. Reading a kwarg as another type, or one that is missing, throws
// std::invalid_argument naming it (the plug-in boundary turns that into a
// ValueError).
//
// NOTE [Every kwarg is read]: the Config remembers which kwargs the family read
// (or declared ignored on purpose, ignore()); the plug-in refuses a pool whose
// family never read one it was given (unread()), so a kwarg renamed on one side
// of the Python/C++ seam fails loudly instead of being dropped.
class Config {
 public:
  std::map<std::string, int64_t> integers;
  std::map<std::string, double> reals;
  std::map<std::string, bool> flags;
  std::map<std::string, std::string> strings;
  std::map<std::string, std::vector<double>> sequences;

  // A float kwarg. An int given where a float is read widens, as in Python.
  double real(const std::string& key) const {
    read_.insert(key);
    if (auto it = reals.find(key); it != reals.end()) return it->second;
    if (auto it = integers.find(key); it != integers.end()) return static_cast<double>(it->second);
    throw missing_or_mistyped(key, "a float");
  }
  double number(const std::string& key) const { return real(key); }  // the name headers before typed kwargs used
  int64_t integer(const std::string& key) const {
    read_.insert(key);
    if (auto it = integers.find(key); it != integers.end()) return it->second;
    throw missing_or_mistyped(key, "an int");
  }
  bool flag(const std::string& key) const {
    read_.insert(key);
    if (auto it = flags.find(key); it != flags.end()) return it->second;
    throw missing_or_mistyped(key, "a bool");
  }
  const std::string& string(const std::string& key) const {
    read_.insert(key);
    if (auto it = strings.find(key); it != strings.end()) return it->second;
    throw missing_or_mistyped(key, "a str");
  }
  bool has_string(const std::string& key) const { return strings.count(key) != 0; }
  const std::vector<double>& sequence(const std::string& key) const {
    read_.insert(key);
    if (auto it = sequences.find(key); it != sequences.end()) return it->second;
    throw missing_or_mistyped(key, "a sequence of numbers");
  }

  // A kwarg the family takes and deliberately does not use (as its reference
  // does not: HumanoidStandup-v5's uph_cost_weight); given or not.
  void ignore(const std::string& key) const { read_.insert(key); }

  // The kwargs given that the family neither read nor ignored, sorted.
  std::vector<std::string> unread() const {
    std::vector<std::string> names;
    auto add = [&](const auto& values) {
      for (const auto& [key, value] : values)
        if (!read_.count(key)) names.push_back(key);
    };
    add(integers), add(reals), add(flags), add(strings), add(sequences);
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::invalid_argument missing_or_mistyped(const std::string& key, const char* wanted) const {
    const char* given = integers.count(key)    ? "an int"
                        : reals.count(key)     ? "a float"
                        : flags.count(key)     ? "a bool"
                        : strings.count(key)   ? "a str"
                        : sequences.count(key) ? "a sequence"
                                               : nullptr;
    if (given == nullptr) return std::invalid_argument("missing task kwarg '" + key + "'");
    return std::invalid_argument("task kwarg '" + key + "' is " + given + ", but the family reads it as " + wanted);
  }

  // Only the thread that builds the pool reads a Config (its family's Model constructor).
  mutable std::set<std::string> read_;
};

}  // namespace torchpool
