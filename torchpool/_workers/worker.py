"""A worker process of a process pool: builds its slice of the envs and steps them.

Run as a script (``python worker.py <socket fd> <path of torchpool._process> <parent pid> <0|1>``,
the last: whether to ask for SIGKILL when the starting thread ends)
by ``torchpool/_workers/launch.py``, never imported by the parent: it must
start without torch, so it imports nothing of the ``torchpool`` package and
loads the compiled ``torchpool._process`` from the path it is given.

The control socket carries only the start: the parent's ``sys.path`` (and a
probe seed: reset an extra env built like the first, to report its
``info``), the pickled env constructors and the parent's registrations, and
then the shared region (a memfd, passed as a file
descriptor) with its layout. From then on every request and answer
goes through the region (csrc/envs/process/shared_region.h): this loop asks
``WorkerChannel.take()`` for requests, writes each answer into NumPy views of
the region and publishes it with ``finish()`` (or ``fail()`` with the
traceback). It exits when the pool shuts down or its parent process dies
(NOTE [Workers die with their parent]).
"""

import importlib.util
import mmap
import os
import pickle
import re
import signal
import socket
import struct
import sys
import traceback


def send_message(sock: socket.socket, message: object) -> None:
    try:
        data = pickle.dumps(message)
    except (pickle.PicklingError, TypeError, AttributeError):
        # What pickle cannot name here (a space or value of a class that came by value, as cloudpickle sends
        # what __main__ or a by-value module defines), pickled by value as it came; plain pickle loads it.
        import cloudpickle

        data = cloudpickle.dumps(message)
    sock.sendall(struct.pack("<Q", len(data)) + data)


def receive_message(sock: socket.socket, with_fds: bool = False):
    """The next message (and the file descriptors sent with its first bytes, if asked)."""
    fds: list[int] = []
    if with_fds:
        header, fds, _, _ = socket.recv_fds(sock, 8, 1)
    else:
        header = b""
    while len(header) < 8:
        chunk = sock.recv(8 - len(header))
        if not chunk:
            raise EOFError("the pool closed the control socket")
        header += chunk
    (size,) = struct.unpack("<Q", header)
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            raise EOFError("the pool closed the control socket")
        data += chunk
    message = pickle.loads(bytes(data))
    return (message, fds) if with_fds else message


def register_parents_ids(registrations: dict, wanted: str) -> bool:
    """Enters the parent's registrations matching ``wanted`` that this worker lacks; True if any.

    NOTE [Registrations]. A worker is a fresh interpreter: it knows
    Gymnasium's own ids, not those the parent registered (by importing a
    package such as minigrid, or its own ``gymnasium.register``). The parent
    sends its other registrations (``{id: pickled EnvSpec}``, each pickled
    alone); those whose id contains ``wanted`` (the id, or the name in
    Gymnasium's NameNotFound message) are entered when an id is not found,
    so that a worker imports nothing it does not need. For an id whose entry
    point is a module path the worker first imports that package, whose own
    registrations then come first (entering the spec first would make its
    import warn "Overriding environment"). True when anything was entered.
    """
    import gymnasium

    missing = {env_id: data for env_id, data in registrations.items()
               if wanted in env_id and env_id not in gymnasium.registry}
    for data in missing.values():
        spec = pickle.loads(data)
        if isinstance(spec.entry_point, str) and spec.id not in gymnasium.registry:
            try:
                importlib.import_module(spec.entry_point.split(":")[0].split(".")[0])
            except Exception:
                pass
        gymnasium.registry.setdefault(spec.id, spec)
    return bool(missing)


def make_env(env_fn, kwargs: dict, registrations: dict):
    """One env: ``env_fn(**kwargs)``, or ``gymnasium.make(<id>, **kwargs)`` for ``("gymnasium", <id>, kwargs)``.

    An id is sent as data, not as a function of torchpool's: unpickling one
    would import the ``torchpool`` package, and with it torch.
    """
    import gymnasium

    def make():
        if isinstance(env_fn, tuple) and env_fn[0] == "gymnasium":
            return gymnasium.make(env_fn[1], **env_fn[2], **kwargs)
        return env_fn(**kwargs)

    try:
        return make()
    except gymnasium.error.UnregisteredEnv as error:
        missing = error
    if isinstance(env_fn, tuple):
        wanted = env_fn[1].split(":")[-1]
    else:  # Gymnasium's message names what it did not find: "Environment `MiniGrid-Empty-8x8` doesn't exist.",
        # "Namespace MyEnvs not found."
        named = re.search(r"`([^`]+)`|Namespace (\S+) not found", str(missing))
        wanted = next((group for group in named.groups() if group), "") if named else ""
    if wanted and register_parents_ids(registrations, wanted):
        try:
            return make()
        except gymnasium.error.UnregisteredEnv as error:
            missing = error
    raise type(missing)(
        f"{missing} (in a worker process, which knows Gymnasium's own ids and those registered in the parent "
        "process when the pool was made: import the module that registers the id before torchpool.make(), "
        "or name it in the id, 'gymnasium:<module>:<id>', which imports <module> first)") from None


def gymnasium_env_class() -> type:
    import gymnasium

    return gymnasium.Env


def build_envs(payload: dict) -> list:
    import gymnasium

    envs = []
    for index, (env_fn, kwargs) in enumerate(zip(payload["env_fns"], payload["env_kwargs"])):
        env_id = payload["first_env"] + index
        env = make_env(env_fn, kwargs, payload["registrations"])
        if not isinstance(env, gymnasium.Env):
            raise TypeError(f"env_fn of env {env_id} returned a {type(env).__module__}.{type(env).__qualname__}, "
                            "not a gymnasium.Env")
        same = next((payload["first_env"] + other for other, built in enumerate(envs) if built is env), None)
        if same is not None:  # one object stepped as two envs would mix their episodes
            raise ValueError(f"the constructors of envs {same} and {env_id} returned the same env object; each "
                             "env needs its own: return a new env at each call (not one made beforehand)")
        envs.append(env)
    return envs


def describe(envs: list, payload: dict, probe_seed) -> dict:
    """The spaces of the first env (all must agree) and, if asked, the info of a seeded reset.

    The reset is made on an extra env built like the first and then closed:
    the pool's own envs see no reset the user did not ask for, so their
    episodes match Gymnasium's vector envs with the same seeds.
    """
    first = envs[0]
    for index, env in enumerate(envs[1:], 1):
        if env.action_space != first.action_space:
            raise ValueError(f"env {index} of this worker has another action space than its first env "
                             f"({env.action_space} vs {first.action_space}): every env of a pool must have the "
                             "same spaces")
    # each env's: the pool checks them (spaces.check_observation_spaces)
    report = {"observation_space": first.observation_space, "action_space": first.action_space, "info": None,
              "observation_spaces": [env.observation_space for env in envs]}
    if probe_seed is not None:
        probe = make_env(payload["env_fns"][0], payload["env_kwargs"][0], payload["registrations"])
        try:
            _, info = probe.reset(seed=probe_seed)
        finally:
            probe.close()
        report["info"] = info
    return report


def error_text(text: str, limit: int) -> bytes:
    """A traceback as the UTF-8 bytes an env's error area holds: its end (the exception) kept when too long,
    cut between characters, and undecodable characters escaped rather than lost."""
    data = text.encode("utf-8", "backslashreplace")
    if len(data) <= limit:
        return data
    marker = b"[... the start of this traceback was cut]\n"
    tail = data[len(data) - (limit - len(marker)):]
    while tail and (tail[0] & 0xC0) == 0x80:  # a UTF-8 continuation byte: start at the next character
        tail = tail[1:]
    return marker + tail


def load_process_module(path: str):
    spec = importlib.util.spec_from_file_location("torchpool._process", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ObjectSlots:
    """NOTE [Python objects] (spaces.py): per env, three slots of the region's object area, each a length
    (uint64; 0: nothing) and that many bytes of pickle. ``ACTION`` is written by the parent before a step;
    ``RESET`` and ``STEP`` hold the last reset's and the last step's answer, written where the env steps:
    ``(object leaves of the observation, the info or None when the extras columns hold it as it is, the
    observation at an episode's end or None)``. The parent may mark a ``RESET`` slot ``UNSEEDED`` before a
    reset: that reset passes ``seed=None`` to ``env.reset``, even where it is the env's first (which the
    pool otherwise seeds with its ``seed + i``), as Gymnasium's vector envs do for ``reset(seed=None)``.

    The lengths are one small array at the start of the area (a step writes and the parent checks them,
    a few cache lines), the slots' bytes follow."""

    ACTION, RESET, STEP = 0, 1, 2
    UNSEEDED = 2**64 - 1

    @staticmethod
    def area_bytes(num_envs: int, slot_bytes: int) -> int:
        return ObjectSlots._header_bytes(num_envs) + num_envs * 3 * slot_bytes

    @staticmethod
    def _header_bytes(num_envs: int) -> int:
        return -(-num_envs * 3 * 8 // 4096) * 4096

    def __init__(self, region, offset: int, num_envs: int, slot_bytes: int):
        import numpy as np

        self.lengths = np.ndarray((num_envs, 3), dtype=np.uint64, buffer=region, offset=offset)
        self.data = np.ndarray((num_envs, 3, slot_bytes), dtype=np.uint8, buffer=region,
                               offset=offset + self._header_bytes(num_envs))
        self.capacity = slot_bytes

    def write(self, env: int, slot: int, value: object) -> None:
        import numpy as np

        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > self.capacity:
            raise ValueError(f"this answer's Python objects (observation parts that cannot batch, an info torchpool "
                             f"cannot batch as it is, or an action) pickle to {len(data)} bytes, more than the "
                             f"{self.capacity} of an object slot")
        self.data[env, slot, :len(data)] = np.frombuffer(data, dtype=np.uint8)
        self.lengths[env, slot] = len(data)

    def clear(self, env: int, slot: int) -> None:
        self.lengths[env, slot] = 0

    def read(self, env: int, slot: int):
        """The value written, or None if the slot is empty."""
        length = int(self.lengths[env, slot])
        return pickle.loads(self.data[env, slot, :length].tobytes()) if length else None


def picklable_info(info: dict) -> dict:
    """``info`` without the values that do not pickle (they cannot leave this process)."""
    kept = {}
    for key, value in info.items():
        try:
            pickle.dumps(value)
        except Exception:
            continue
        kept[key] = value
    return kept


def action_reader(action: tuple, actions, slots: ObjectSlots | None):
    """``read(env)``: env's action from the region, as its space holds it (spaces.action_plan's kinds but
    "discrete", which EnvAnswers reads inline)."""
    import numpy as np

    kind, dtype, shape = action
    if kind == "box":
        return lambda env: actions[env].astype(dtype).reshape(shape)
    if kind == "object":
        return lambda env: slots.read(env, ObjectSlots.ACTION)

    def build(recipe, row):
        if recipe[0] == "dict":
            return {key: build(item, row) for key, item in recipe[1]}
        if recipe[0] == "tuple":
            return tuple(build(item, row) for item in recipe[1])
        _, offset, numbers, leaf_dtype, leaf_shape, scalar = recipe
        if scalar:
            return np.dtype(leaf_dtype).type(row[offset])
        return row[offset:offset + numbers].astype(leaf_dtype).reshape(leaf_shape)

    return lambda env: build(dtype, actions[env])


class EnvAnswers:
    """Runs an env's request and writes its observation and info extras into the region's columns (the
    reward and flags are returned): the body of serve()'s loop, and of the parent's answers for envs that
    step in the calling process (in_caller.py, NOTE [Answers in the caller] in shared_region.h)."""

    def __init__(self, region: memoryview, plan: dict, envs: list | None, build_error: str | None,
                 first_env: int, op_step: int):
        import numpy as np

        def column(offset: int, dtype, shape) -> np.ndarray:
            return np.ndarray((plan["num_envs"], *shape), dtype=dtype, buffer=region, offset=offset)

        offsets = plan["offsets"]
        self.actions = column(offsets["actions"], np.float64, (max(plan["action_size"], 1),))
        # (column, path into the observation) per observation field, then (column, info key) per extra.
        self.fields = [(column(offset, dtype, shape), path)
                       for offset, (path, dtype, shape) in zip(offsets["columns"], plan["fields"])]
        self.extras = [(column(offset, dtype, shape), key)
                       for offset, (key, dtype, shape) in zip(offsets["columns"][len(self.fields):], plan["extras"])]
        kind, self.action_dtype, self.action_shape = plan["action"]
        self.discrete = kind == "discrete"
        self.single = self.fields[0][0] if len(self.fields) == 1 and self.fields[0][1] == () else None
        self.fields = [(target, path) for target, path in self.fields if path is not None]  # not a placeholder
        objects = plan.get("objects")  # NOTE [Python objects] (spaces.py)
        self.slots = None if objects is None else ObjectSlots(region, offsets["objects"], plan["num_envs"],
                                                                objects["slot_bytes"])
        self.object_paths = () if objects is None else tuple(objects["paths"])
        self.same_step = objects is not None and objects.get("same_step", True)
        self.read_action = action_reader(plan["action"], self.actions, self.slots)
        self.by_id = [None] * first_env + (envs or [])  # envs[env], by the pool's env id
        self.envs, self.build_error, self.op_step = envs, build_error, op_step
        self.started = set()  # envs reset by this process: a restarted worker's envs must reset before they step
        self.reset_options: dict[int, dict] = {}  # env -> the options of its next reset (NOTE [Env requests])
        self.run = self._runner()

    def _runner(self):
        """``run(env, op, seed, action_index) -> (reward, terminated, truncated)``: a closure over locals,
        since it runs once per env step and attribute lookups would cost a good part of a cheap env's step."""
        import numpy as np

        if self.envs is None:
            build_error = self.build_error

            def cannot_run(env: int, op: int, seed: int, index: int):
                raise RuntimeError(f"env {env}'s worker process could not build its envs:\n{build_error}")
            return cannot_run
        by_id, started, op_step, single, fields, extras = (self.by_id, self.started, self.op_step, self.single,
                                                           self.fields, self.extras)
        reset_options = self.reset_options
        discrete, read_action = self.discrete, self.read_action
        # A Discrete action as a NumPy integer (int64 unless the space says otherwise), as Gymnasium's
        # vector envs pass it: Discrete.contains() (the env checker's) takes a slower path for a Python int.
        int64 = np.dtype(self.action_dtype).type if discrete else None
        slots, object_paths = self.slots, self.object_paths
        extra_keys = {key for _, key in extras}
        reset_slot, step_slot, unseeded = ObjectSlots.RESET, ObjectSlots.STEP, ObjectSlots.UNSEEDED
        same_step = self.same_step
        # a flat view of the lengths: an item set costs a third of a 2-D ndarray's
        lengths = None if slots is None else memoryview(slots.lengths.reshape(-1))

        def run(env: int, op: int, seed: int, index: int) -> tuple[float, bool, bool]:
            if op == op_step:
                if env not in started:
                    raise RuntimeError(f"env {env}'s worker process was restarted since its last reset; "
                                       "the env starts a new episode")
                action = int64(index) if discrete else read_action(env)
                observation, reward, term, trunc, info = by_id[env].step(action)
            else:
                if slots is not None and slots.lengths[env, reset_slot] == unseeded:  # NOTE [Python objects]
                    seed = -1
                if reset_options and env in reset_options:  # asked for (NOTE [Env requests]); else as before
                    observation, info = by_id[env].reset(seed=None if seed < 0 else seed,
                                                         options=reset_options.pop(env))
                else:
                    observation, info = by_id[env].reset(seed=None if seed < 0 else seed)
                reward, term, trunc = 0.0, False, False
                started.add(env)
            if single is not None:
                single[env] = observation
            else:
                for target, path in fields:
                    value = observation
                    for key in path:
                        value = value[key]
                    target[env] = value
            plain = True
            for target, key in extras:
                try:
                    target[env] = info.get(key, 0)
                except (TypeError, ValueError):  # not a number of the extra's shape this time: the info carries it
                    target[env] = 0
                    plain = False
            if slots is not None:  # NOTE [Python objects]
                # SAME_STEP: an episode's last answer is kept whole (its extras are overwritten by the reset's,
                # its observation is final_obs) and so is every reset's (the extras keep the step's)
                kept = same_step and (op != op_step or term or trunc)
                slot = step_slot if op == op_step else reset_slot
                if kept or not plain or object_paths or info.keys() != extra_keys:
                    write_objects(env, slot, observation, info, kept and op == op_step, kept, plain)
                else:
                    lengths[env * 3 + slot] = 0
            return reward, term, trunc

        def write_objects(env: int, slot: int, observation, info: dict, ended: bool, keep_info: bool,
                          plain: bool = True) -> None:
            # (object leaves, the info unless the extras hold it as it is, the observation as the env
            # returned it at an episode's end: the final observation Gymnasium's vector envs hand back)
            leaves = []
            for path in object_paths:
                value = observation
                for key in path:
                    value = value[key]
                leaves.append(value)
            info = None if info.keys() == extra_keys and not keep_info and plain else info
            try:
                slots.write(env, slot, (tuple(leaves), info, observation if ended else None))
                return
            except (pickle.PicklingError, TypeError, AttributeError, ValueError):
                if info is None and not keep_info:
                    raise
            # without what does not pickle or does not fit: values of the info, the final observation
            slots.write(env, slot, (tuple(leaves), None if info is None else picklable_info(info), None))
        return run


def answer_env_request(answers: EnvAnswers, request: tuple) -> tuple:
    """``("ok", [a result per env])`` or ``("error", exception, traceback)`` for a request about env objects.

    NOTE [Env requests]. ``ProcessPool.get_attr``/``set_attr``/``call``/``is_wrapped``/``set_reset_options``
    reach the Python objects of envs: ``(op, env ids, *arguments)``, sent over a worker's control socket
    (idle after the start) and answered there by its watching thread while the loop waits in take(), or
    answered in the calling process for envs stepped there. The pool sends one only when no step is under
    way, so the env is never in two threads at once. Ops: ``"get"`` (``env.get_wrapper_attr(name)``:
    through the wrappers, as SB3's and Gymnasium's vector envs read attributes), ``"set"``
    (``setattr`` on the env the constructor returned, as SB3's ``set_attr``), ``"call"``
    (``env.get_wrapper_attr(name)(*args, **kwargs)``), ``"is_wrapped"`` (a wrapper of that class in the
    env's chain of wrappers, as SB3's ``env_is_wrapped``) and ``"reset_options"`` (the ``options`` of
    the env's next reset, which the step loop passes to ``env.reset``).
    """
    import gymnasium

    try:
        if answers.envs is None:
            raise RuntimeError(f"this worker process could not build its envs:\n{answers.build_error}")
        op, env_ids, *arguments = request
        envs = [answers.by_id[env] for env in env_ids]
        if op == "get":
            results = [env.get_wrapper_attr(arguments[0]) for env in envs]
        elif op == "set":
            results = [setattr(env, arguments[0], arguments[1]) for env in envs]
        elif op == "call":
            name, args, kwargs = arguments
            results = [env.get_wrapper_attr(name)(*args, **kwargs) for env in envs]
        elif op == "is_wrapped":
            results = []
            for env in envs:
                while isinstance(env, gymnasium.Wrapper) and not isinstance(env, arguments[0]):
                    env = env.env
                results.append(isinstance(env, arguments[0]))
        elif op == "reset_options":
            for env, options in zip(env_ids, arguments[0]):
                answers.reset_options[env] = options
            results = [None] * len(env_ids)
        else:
            raise ValueError(f"unknown env request {op!r}")
        return "ok", results
    except Exception as error:
        return "error", error, traceback.format_exc()


def serve(process, channel, region: memoryview, plan: dict, envs: list | None, build_error: str | None,
          answers: EnvAnswers | None = None) -> None:
    """Answers requests until take() says to exit. The hot loop of the process pool."""
    import numpy as np

    run = (answers or EnvAnswers(region, plan, envs, build_error, channel.first_env, process.OP_STEP)).run
    requests = np.zeros((max(channel.env_count, 1), 4), dtype=np.int64)
    address = requests.ctypes.data
    take, finish, fail = channel.take, channel.finish, channel.fail
    error_limit = plan["layout"][4]
    while True:
        count = take(address)
        if count < 0:
            return
        for env, op, seed, index in requests[:count].tolist():
            try:
                reward, term, trunc = run(env, op, seed, index)
                finish(env, reward, term, trunc)
            except Exception:
                fail(env, error_text(traceback.format_exc(), error_limit))


def die_with_parent(parent: int, by_signal: bool) -> None:
    """Makes this process end with its parent.

    NOTE [Workers die with their parent]. However the parent ends (SIGKILL
    included) and whatever this process is doing (stuck in an env's step
    included), it ends too: the kernel sends SIGKILL when the thread that
    started it exits (PR_SET_PDEATHSIG; asked for only where that thread lives
    as long as the pool: the parent's main thread or the pool's supervisor),
    and a thread here exits when the control socket reports the parent's end
    (every parent, any thread; it needs the GIL, which an env stuck in C may
    hold). The sleeping loop also checks getppid() (worker_channel.h)."""
    if by_signal:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(1)


def exit_when_parent_ends(sock: socket.socket, answers: EnvAnswers | None = None) -> None:
    """The socket half of NOTE [Workers die with their parent]: after the start the parent writes to the
    control socket only requests about env objects (NOTE [Env requests]), answered here, so a read
    returns nothing only when the parent closed it or ended."""
    import threading

    def watch() -> None:
        try:
            while True:
                try:
                    request = receive_message(sock)
                except (EOFError, OSError):
                    break
                except Exception as error:  # a request that does not unpickle here; the stream stays whole
                    send_message(sock, ("error", RuntimeError(f"the env request did not unpickle in the worker: "
                                                              f"{error!r}"), traceback.format_exc()))
                    continue
                answer = answer_env_request(answers, request)
                try:
                    send_message(sock, answer)
                except Exception as error:  # an answer not even cloudpickle takes (a lock, a file...)
                    send_message(sock, ("error", RuntimeError(f"the answer does not pickle: {error!r}"), ""))
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, name="torchpool-parent-watch", daemon=True).start()


def main() -> None:
    # Ctrl-C is the parent's to handle (README, Guarantees): a worker never stops half-way through a step.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getpgrp() != os.getpid():  # Python < 3.11 cannot start it in a group of its own (launch.py)
        os.setpgid(0, 0)
    die_with_parent(int(sys.argv[3]), sys.argv[4] == "1")
    sock = socket.socket(fileno=int(sys.argv[1]))
    process = load_process_module(sys.argv[2])
    setup = receive_message(sock)
    sys.path[:] = setup["sys_path"]
    envs, build_error = None, None
    try:
        payload = receive_message(sock)
        envs = build_envs(payload)
        report = describe(envs, payload, setup["probe_seed"])
        try:
            pickle.dumps(report["info"])  # the spaces go as send_message can (by value, if they came so)
        except Exception:  # an info value that does not pickle: its keys are all the parent needs
            report["info"] = {key: None for key in report["info"]}
        send_message(sock, ("built", report))
    except BaseException:
        build_error = traceback.format_exc()
        send_message(sock, ("error", build_error))
        envs = None
    try:
        message, fds = receive_message(sock, with_fds=True)
    except (EOFError, ConnectionError):  # the pool gave up on starting (another worker failed)
        return
    plan = message[1]
    region_map = mmap.mmap(fds[0], plan["offsets"]["total"])
    os.close(fds[0])
    region = memoryview(region_map)
    import numpy as np

    base = np.frombuffer(region, dtype=np.uint8).ctypes.data
    channel = process.WorkerChannel(base, plan["layout"], plan["worker"], plan["spin_polls"])
    answers = EnvAnswers(region, plan, envs, build_error, channel.first_env, process.OP_STEP)
    send_message(sock, ("ready", None))
    exit_when_parent_ends(sock, answers)
    serve(process, channel, region, plan, envs, build_error, answers)


if __name__ == "__main__":
    main()
