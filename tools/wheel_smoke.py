"""Smoke test of an installed torchpool wheel (tools/build_wheels.sh, docs/wheels.md).

Run it with the venv's Python, from outside the checkout, with no compiler on
PATH; give ``--cxx`` the system's compiler, which only ``register_cpp_env`` uses:

    PATH=/tmp/venv/bin /tmp/venv/bin/python tools/wheel_smoke.py --cxx /usr/bin/g++

Checks, each printed on one line with its time: torchpool is the installed
wheel (not a source tree) and no compiler is on PATH (the compiler's
directory joins PATH for the C++ env's build alone); make/reset/step for
every family (classic control, MuJoCo, the Control Suite, Atari, MiniGrid
and BabyAI, the probe env, a Gymnasium env in worker processes), and an
exception in a C++ step; the stream; ``TorchPoolEnv``; the Gymnasium vector
env; and a C++ env (examples/cpp_env/my_cartpole.h) built by ``--cxx``
through ``register_cpp_env``, stepping exactly like the built-in
CartPole-v1. Exits 1 at the first failure, naming it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

COMPILERS = ("c++", "g++", "gcc", "cc", "clang", "clang++")
HEADER = Path(__file__).resolve().parent.parent / "examples" / "cpp_env" / "my_cartpole.h"


def check(name: str, test: Callable[[], str | None]) -> None:
    started = time.perf_counter()
    try:
        detail = test()
    except Exception as error:  # noqa: BLE001  any failure is reported the same way: which check, what went wrong
        print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
        raise SystemExit(1) from error
    print(f"ok   {name} ({time.perf_counter() - started:.1f} s){': ' + detail if detail else ''}", flush=True)


def installed_wheel() -> str:
    import torchpool

    location = Path(torchpool.__file__).resolve().parent
    assert "site-packages" in location.parts, f"torchpool imported from {location}, not an installed wheel"
    extension = next(location.glob("_core.*.so"))
    return f"{location} ({extension.name})"


def no_compiler_on_path() -> str:
    found = {name: shutil.which(name) for name in COMPILERS if shutil.which(name)}
    assert not found, f"a compiler is on PATH ({found}): run with PATH=<venv>/bin"
    assert "CXX" not in os.environ, f"CXX is set ({os.environ['CXX']!r}): unset it"
    return f"PATH={os.environ.get('PATH', '')}"


def random_actions(pool, count: int):
    import torch

    from torchpool.specs import DiscreteSpec

    spec = pool.action_spec
    if isinstance(spec, DiscreteSpec):
        return torch.randint(0, spec.n, (count, *spec.shape), dtype=spec.dtype)
    low, high = spec.low.expand(count, *spec.shape), spec.high.expand(count, *spec.shape)
    return (low + (high - low) * torch.rand(count, *spec.shape)).to(spec.dtype)


def make_reset_step(env_id: str, steps: int = 20, **kwargs) -> Callable[[], str]:
    def test() -> str:
        import torchpool

        with torchpool.make(env_id, num_envs=4, seed=1, **kwargs) as pool:
            td = pool.reset()
            observation = td["observation"] if "observation" in td.keys() else td
            for _ in range(steps):
                td = pool.step(random_actions(pool, 4))
            assert td["reward"].shape[0] == 4, f"reward has shape {tuple(td['reward'].shape)}"
            shape = tuple(observation.shape) if hasattr(observation, "shape") else "dict"
            return f"observation {shape}, {steps} steps"

    return test


def env_error() -> str:
    """An exception thrown in a C++ step (the probe's fail_at_step) reaches Python as EnvError:
    unwinding through the wheel's static libgcc (docs/wheels.md)."""
    import torch

    import torchpool

    with torchpool.make("_Probe-v0", num_envs=2, fail_at_step=2) as pool:
        pool.reset()
        try:
            for _ in range(4):
                pool.step(torch.zeros(2, dtype=torch.int64))
        except torchpool.EnvError as error:
            return f"EnvError: {str(error).splitlines()[0][:80]}"
    raise AssertionError("the probe's fail_at_step=2 raised nothing")


def stream() -> str:
    import torch

    import torchpool

    batches = list(torchpool.stream("CartPole-v1", lambda obs: torch.zeros(obs.shape[0], dtype=torch.int64),
                                    num_envs=4, frames_per_batch=64, total_frames=256))
    assert len(batches) == 4 and batches[0].batch_size == torch.Size([4, 16]), f"{len(batches)} batches"
    return f"{len(batches)} batches of {tuple(batches[0].batch_size)}"


def torchrl_env() -> str:
    import torchpool

    env = torchpool.TorchPoolEnv("CartPole-v1", num_envs=4, seed=0)
    rollout = env.rollout(10, break_when_any_done=False)
    env.close()
    assert rollout.batch_size[0] == 4 and rollout.batch_size[1] == 10, f"rollout of {rollout.batch_size}"
    return f"rollout {tuple(rollout.batch_size)}"


def gymnasium_vector_env() -> str:
    import gymnasium

    envs = gymnasium.make_vec("torchpool/CartPole-v1", num_envs=4)
    observation, _ = envs.reset(seed=0)
    for _ in range(10):
        observation, reward, terminated, truncated, _ = envs.step(envs.action_space.sample())
    envs.close()
    assert observation.shape == (4, 4), f"observation {observation.shape}"
    return f"{type(envs).__name__}, observation {observation.shape}"


def cpp_env(cxx: str, header: Path) -> Callable[[], str]:
    def test() -> str:
        import torch

        import torchpool

        # A fresh cache, so the header is compiled now by `cxx` rather than loaded from an earlier build;
        # the compiler's directory joins PATH for this build alone (g++ runs `as` and `ld` from there).
        os.environ["TORCHPOOL_CACHE_DIR"] = tempfile.mkdtemp(prefix="torchpool-smoke-cpp-")
        path = os.environ.get("PATH", "")
        os.environ["CXX"] = cxx
        os.environ["PATH"] = os.pathsep.join([path, str(Path(cxx).parent)])
        try:
            torchpool.register_cpp_env("SmokeCartPole-v0", header, env_class="MyCartPole")
        finally:
            del os.environ["CXX"]
            os.environ["PATH"] = path
        with torchpool.make("SmokeCartPole-v0", num_envs=8, seed=3) as mine, \
                torchpool.make("CartPole-v1", num_envs=8, seed=3) as builtin:
            ours, theirs = mine.reset(), builtin.reset()
            for step in range(200):
                assert torch.equal(ours["observation"], theirs["observation"]), f"observations differ at step {step}"
                action = torch.randint(0, 2, (8,))
                ours, theirs = mine.step(action), builtin.step(action)
        return f"{header.name} built by {cxx}, 200 steps equal to CartPole-v1"

    return test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cxx", required=True, help="the system's C++ compiler, for register_cpp_env alone")
    parser.add_argument("--header", type=Path, default=HEADER, help="the C++ env register_cpp_env builds")
    parser.add_argument("--allow-compiler-on-path", action="store_true",
                        help="skip the no-compiler check (a quick run in a dev shell)")
    args = parser.parse_args()

    check("torchpool is the installed wheel", installed_wheel)
    if not args.allow_compiler_on_path:
        check("no compiler on PATH", no_compiler_on_path)
    check("classic control: CartPole-v1", make_reset_step("CartPole-v1"))
    check("classic control: Pendulum-v1", make_reset_step("Pendulum-v1"))
    check("MuJoCo: Hopper-v5", make_reset_step("Hopper-v5"))
    check("Control Suite: CheetahRun-v1", make_reset_step("CheetahRun-v1"))
    check("Atari: Pong-v5", make_reset_step("Pong-v5", steps=10))
    check("MiniGrid: MiniGrid-DoorKey-8x8-v0", make_reset_step("MiniGrid-DoorKey-8x8-v0"))
    check("MiniGrid, pixels: BabyAI-GoTo-v0", make_reset_step("BabyAI-GoTo-v0", observation="rgb"))
    check("probe env: _Probe-v0", make_reset_step("_Probe-v0"))
    check("a C++ exception in step is an EnvError", env_error)
    check("Python env in worker processes: gymnasium:CartPole-v1",
          make_reset_step("gymnasium:CartPole-v1", num_workers=2))
    check("torchpool.stream", stream)
    check("torchpool.TorchPoolEnv (torchrl)", torchrl_env)
    check("Gymnasium vector env", gymnasium_vector_env)
    check("register_cpp_env with the system compiler", cpp_env(args.cxx, args.header))
    print("wheel smoke test: all passed", flush=True)


if __name__ == "__main__":
    sys.exit(main())
