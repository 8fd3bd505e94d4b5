/* plugin_abi.h — the C interface between torchpool._core and every family module.
 *
 * Contract: a family module (torchpool._classic, _mujoco, _atari, _dmc,
 * _testing, _process, and every header built by register_cpp_env) exports one
 * TorchpoolPlugin through a capsule named TORCHPOOL_PLUGIN_CAPSULE. Only what
 * this file declares crosses between the modules: plain structs, C function
 * pointers, integers, doubles and NUL-terminated UTF-8. No C++ type and no
 * exception crosses, so the core and a plug-in may be built by different
 * compilers and standard libraries (a wheel's g++ and a user's clang), each
 * module carrying its own libstdc++ (CMakeLists.txt links it statically).
 *
 * Lifetimes. A plugin table lives as long as the process (modules are never
 * unloaded). An executor is made by make() and freed by destroy(). Pointers
 * an executor hands out (spec, layouts, field names) stay valid until
 * destroy(); those in a TorchpoolError until the next call on the same thread.
 *
 * Errors. Every call that can fail returns a TorchpoolStatus; when it is not
 * TORCHPOOL_OK, last_error() (same thread) says why. TORCHPOOL_INTERRUPTED
 * means the caller's TorchpoolCheck returned nonzero: the call undid or kept
 * its work as NOTE [Interrupted calls] (executor.h) says, and the caller
 * raises what its check saw.
 *
 * Versions. abi_version changes whenever anything here changes; the core
 * refuses a plugin of another version, naming both. struct_size guards
 * against a table read past its end.
 */
#ifndef TORCHPOOL_PLUGIN_ABI_H
#define TORCHPOOL_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TORCHPOOL_PLUGIN_ABI_VERSION 5u
#define TORCHPOOL_PLUGIN_CAPSULE "torchpool.family_plugin"

typedef enum {
  TORCHPOOL_OK = 0,
  TORCHPOOL_INPUT_ERROR = 1,   /* bad input, refused before anything was queued (Python: InputError) */
  TORCHPOOL_VALUE_ERROR = 2,   /* a bad task kwarg or option (ValueError) */
  TORCHPOOL_ENV_FAILURE = 3,   /* envs threw; the batch holds their rows (EnvError) */
  TORCHPOOL_INTERRUPTED = 4,   /* the caller's check returned nonzero */
  TORCHPOOL_RUNTIME_ERROR = 5, /* anything else (RuntimeError) */
  TORCHPOOL_MEMORY_ERROR = 6   /* allocation failed (MemoryError) */
} TorchpoolStatus;

/* Why the last call on this thread failed. */
typedef struct {
  int32_t status;      /* a TorchpoolStatus */
  const char* message; /* never NULL */
  /* TORCHPOOL_ENV_FAILURE only: */
  uint64_t block;         /* the ring block of the batch, or TORCHPOOL_RESET_BATCH */
  uint64_t rows;          /* rows of that batch */
  uint64_t failure_count; /* envs that failed */
  const int64_t* env_ids;
  const char* const* failure_messages;
} TorchpoolError;

#define TORCHPOOL_RESET_BATCH UINT64_MAX

/* Polled every few milliseconds while a call waits; nonzero stops the wait. */
typedef int32_t (*TorchpoolCheck)(void* context);

/* Dtype codes, as spec.h's Dtype. */
typedef struct {
  const char* name; /* "" for a family's one unnamed observation */
  int32_t dtype;
  uint32_t ndim;
  const int64_t* shape;
  uint64_t bound_count; /* 0: unbounded; else one low and high per element */
  const double* low;
  const double* high;
} TorchpoolObservationField;

typedef struct {
  uint64_t observation_count;
  const TorchpoolObservationField* observations;
  int32_t action_discrete;
  int64_t num_actions; /* discrete: [0, num_actions) */
  uint32_t action_ndim;
  const int64_t* action_shape;
  uint64_t action_bound_count;
  const double* action_low;
  const double* action_high;
  int64_t max_episode_steps;
  double step_cost_ns;
  int32_t has_state; /* get_state/set_state work */
  int32_t renders;   /* render works */
} TorchpoolSpec;

/* One column of an output block: field `name` of row r at base + offset + r * row_bytes. */
typedef struct {
  const char* name;
  int32_t dtype;
  uint32_t ndim;
  const int64_t* shape;
  uint64_t offset;
} TorchpoolField;

typedef struct {
  uint64_t field_count;
  const TorchpoolField* fields;
  uint64_t bytes;
} TorchpoolLayout;

/* The plan the executor runs (schedule.h); times in nanoseconds. */
typedef struct {
  const char* mode;
  uint64_t worker_threads;
  uint64_t envs_per_item; /* in a push of every env */
  int32_t caller_runs_items;
  int32_t caller_spin_polls;
  double caller_last_items_spin_ns;
  int32_t split_substeps;
  uint64_t build_threads;
  double step_cost_ns;
} TorchpoolSchedule;

typedef struct {
  uint64_t rows_sent;
  uint64_t rows_received;
  uint64_t in_flight;
  uint64_t next_block;
} TorchpoolCounters;

typedef struct {
  uint64_t num_envs;
  uint64_t batch_size;
  uint64_t num_blocks;
  uint64_t num_threads;
  int64_t thread_affinity_offset; /* < 0: no pinning */
  uint64_t seed;
  int32_t autoreset; /* episode.h's Autoreset */
  int32_t obs_dtype;
  int64_t max_episode_steps; /* < 0: the family's; 0: none */
  int32_t spin_polls;
  uint32_t schedule_off;
} TorchpoolOptions;

/* A task kwarg's value, typed as the registry checked it. */
typedef enum {
  TORCHPOOL_KWARG_INT = 0,
  TORCHPOOL_KWARG_FLOAT = 1,
  TORCHPOOL_KWARG_BOOL = 2,
  TORCHPOOL_KWARG_STR = 3,
  TORCHPOOL_KWARG_FLOATS = 4 /* a tuple or list of numbers */
} TorchpoolKwargType;

typedef struct {
  const char* name;
  int32_t type;        /* a TorchpoolKwargType */
  int64_t integer;     /* INT, BOOL (0 or 1) */
  double real;         /* FLOAT */
  const char* text;    /* STR */
  const double* reals; /* FLOATS */
  uint64_t count;      /* FLOATS */
} TorchpoolKwarg;

/* A task kwarg a family declares (TaskKwarg in spec.h): type is "int", "float", "bool" or "str". */
typedef struct {
  const char* name;
  const char* type;
  const char* default_value; /* as Python writes it: "10.0", "3", "True", "area" */
  const char* doc;
} TorchpoolKwargDeclaration;

typedef struct {
  const char* name;
  uint64_t kwarg_count;
  const TorchpoolKwargDeclaration* kwargs;
} TorchpoolFamily;

typedef struct TorchpoolExecutor TorchpoolExecutor;

typedef struct TorchpoolPlugin {
  uint32_t abi_version;   /* TORCHPOOL_PLUGIN_ABI_VERSION */
  uint32_t struct_size;   /* sizeof(TorchpoolPlugin) */
  const char* built_with; /* the compiler, for messages only */
  uint64_t family_count;
  const TorchpoolFamily* families;
  void* context; /* the module's own, opaque to the core */

  const TorchpoolError* (*last_error)(void);

  /* NULL on failure (last_error() says why; TORCHPOOL_INTERRUPTED: `check` stopped the envs' build, version 5). */
  TorchpoolExecutor* (*make)(const struct TorchpoolPlugin* self, const char* family, const TorchpoolKwarg* kwargs,
                             uint64_t kwarg_count, const TorchpoolOptions* options, TorchpoolCheck check,
                             void* check_context);
  void (*destroy)(TorchpoolExecutor* executor); /* closes it first */

  const TorchpoolSpec* (*spec)(const TorchpoolExecutor* executor);
  const TorchpoolLayout* (*block_layout)(const TorchpoolExecutor* executor);
  const TorchpoolLayout* (*reset_layout)(const TorchpoolExecutor* executor);
  /* Version 5: these four, undo_recv and forget_threads return a status too (nothing of theirs may unwind
   * across this interface); their answers go to the last argument. */
  int32_t (*schedule)(const TorchpoolExecutor* executor, TorchpoolSchedule* out);
  int32_t (*counters)(const TorchpoolExecutor* executor, TorchpoolCounters* out);
  int32_t (*wakes_workers)(const TorchpoolExecutor* executor, uint64_t count, int32_t* wakes);
  int32_t (*must_settle)(const TorchpoolExecutor* executor, int32_t* must);

  int32_t (*set_block)(TorchpoolExecutor* executor, uint64_t block, uint8_t* base);
  /* targets: int64 [fields][2] of (address, row stride in bytes), in block_layout order; sync pools only. */
  int32_t (*set_block_targets)(TorchpoolExecutor* executor, uint64_t block, const int64_t* targets);
  int32_t (*set_reset_buffer)(TorchpoolExecutor* executor, uint8_t* base);

  /* ids == NULL: every env, in order. */
  int32_t (*send)(TorchpoolExecutor* executor, const void* actions, int32_t dtype, const int64_t* ids, uint64_t count);
  int32_t (*async_reset)(TorchpoolExecutor* executor, const int64_t* ids, uint64_t count);
  int32_t (*step)(TorchpoolExecutor* executor, const void* actions, int32_t dtype, void* record, TorchpoolCheck check,
                  void* check_context, uint64_t* block);
  int32_t (*recv)(TorchpoolExecutor* executor, TorchpoolCheck check, void* check_context, uint64_t* block);
  int32_t (*reset)(TorchpoolExecutor* executor, const int64_t* ids, uint64_t count, const uint64_t* seeds,
                   TorchpoolCheck check, void* check_context);
  int32_t (*settle)(TorchpoolExecutor* executor, TorchpoolCheck check, void* check_context);
  int32_t (*undo_recv)(TorchpoolExecutor* executor, int32_t* undone); /* *undone = 1: the last recv() undone */
  int32_t (*forget_threads)(TorchpoolExecutor* executor);
  int32_t (*close)(TorchpoolExecutor* executor);

  /* State injection (spec->has_state): *size is set to the state's length; values are written if it fits. */
  int32_t (*get_state)(TorchpoolExecutor* executor, uint64_t env_id, double* values, uint64_t capacity, uint64_t* size);
  int32_t (*set_state)(TorchpoolExecutor* executor, uint64_t env_id, const double* values, uint64_t count);
  /* spec->renders: the screen of an idle env, RGB; *pixels valid until the next call on the executor. */
  int32_t (*render)(TorchpoolExecutor* executor, uint64_t env_id, const uint8_t** pixels, int64_t shape[3]);
  /* A sync step of some envs into the reset buffer, in ids order (version 4). */
  int32_t (*step_some)(TorchpoolExecutor* executor, const void* actions, int32_t dtype, const int64_t* ids,
                       uint64_t count, TorchpoolCheck check, void* check_context);
} TorchpoolPlugin;

#ifdef __cplusplus
}
#endif

#endif /* TORCHPOOL_PLUGIN_ABI_H */
