"""Your own env in C++ (torchpool/cpp_env.py): one header, compiled on first use, cached, and then a family like any.

The example header is examples/cpp_env/my_cartpole.h, CartPole-v1 as a user
would write it. Builds go to a temporary cache; a wrapper compiler logs each
invocation, so the tests can tell a build from a cache hit.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import torchpool
from torchpool import cpp_env, registry

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cpp_env" / "my_cartpole.h"

pytestmark = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++").split()[0]) is None,
                                reason="no C++ compiler")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh cache and a compiler that logs its compiles (not its --version calls)."""
    root = tmp_path_factory.mktemp("cpp_envs")
    log = root / "compiles.log"
    wrapper = root / "logging-c++"
    real = shutil.which(os.environ.get("CXX", "c++").split()[0])
    # The preprocessor-only runs (-MM: which files a header includes) are not compiles.
    wrapper.write_text(f'#!/bin/sh\ncase " $* " in *" --version "*|*" -MM "*) ;; *) echo "$@" >> {log};; esac\n'
                       f'exec {real} "$@"\n')
    wrapper.chmod(0o755)
    saved = {key: os.environ.get(key) for key in ("TORCHPOOL_CACHE_DIR", "CXX")}
    os.environ.update(TORCHPOOL_CACHE_DIR=str(root / "cache"), CXX=str(wrapper))
    yield root
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def compiles(cache) -> int:
    log = cache / "compiles.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture(scope="module")
def my_cartpole(cache):
    torchpool.register_cpp_env("MyCartPole-v0", EXAMPLE, env_class="MyCartPole", overwrite=True)
    return "MyCartPole-v0"


def header(tmp_path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("#pragma once\n#include <torchpool/env.h>\n" + textwrap.dedent(body))
    return path


def run_python(code: str, cache) -> subprocess.CompletedProcess:
    env = dict(os.environ, TORCHPOOL_CACHE_DIR=str(cache / "cache"), CXX=str(cache / "logging-c++"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)


def test_my_cartpole_matches_cartpole_bit_for_bit(my_cartpole):
    ours = torchpool.make(my_cartpole, num_envs=8, obs_dtype=torch.float64, seed=5)
    builtin = torchpool.make("CartPole-v1", num_envs=8, obs_dtype=torch.float64, seed=5)
    assert torch.equal(ours.reset()["observation"], builtin.reset()["observation"])
    generator = torch.Generator().manual_seed(0)
    ended = 0
    for step in range(700):  # several whole episodes, the 500-step time limit included
        action = torch.randint(0, 2, (8,), generator=generator)
        a, b = ours.step(action), builtin.step(action)
        assert (a == b).all(), f"step {step}: MyCartPole-v0 and CartPole-v1 differ"
        ended += int(a["done"].sum())
    assert ended > 8
    ours.close()
    builtin.close()


def test_its_kwargs_are_checked_and_filled_as_a_builtin_ids(my_cartpole):
    assert registry.lookup(my_cartpole).kwargs["force_mag"].default == 10.0
    with torchpool.make(my_cartpole, num_envs=2, force_mag=30.0) as strong, torchpool.make(my_cartpole,
                                                                                             num_envs=2) as usual:
        strong.reset(), usual.reset()
        pushed = strong.step(torch.ones(2, dtype=torch.int64))["observation"][:, 1]
        assert (pushed > usual.step(torch.ones(2, dtype=torch.int64))["observation"][:, 1]).all()
    with pytest.raises(TypeError, match="unknown kwarg 'force_magnitude'. Did you mean 'force_mag'"):
        torchpool.make(my_cartpole, num_envs=2, force_magnitude=3.0)


def test_async_pools_and_every_autoreset_mode_work(my_cartpole):
    for autoreset in ("same_step", "next_step", "disabled"):
        with torchpool.make(my_cartpole, num_envs=6, batch_size=3, autoreset=autoreset) as pool:
            pool.async_reset()
            seen = set()
            for _ in range(20):
                td = pool.recv()
                seen.update(td["env_id"].tolist())
                if autoreset == "disabled" and bool(td["done"].any()):
                    break
                pool.send(torch.ones(3, dtype=torch.int64), td["env_id"])
            assert seen == set(range(6)) or autoreset == "disabled"


def test_a_second_process_loads_the_cache_without_compiling(my_cartpole, cache):
    before = compiles(cache)
    done = run_python(f"import torchpool, time\nt = time.perf_counter()\n"
                      f"torchpool.register_cpp_env('MyCartPole-v0', {str(EXAMPLE)!r}, env_class='MyCartPole')\n"
                      "print(time.perf_counter() - t)\n"
                      "print(torchpool.make('MyCartPole-v0', num_envs=2).reset()['observation'].shape)", cache)
    assert done.returncode == 0, done.stderr
    assert compiles(cache) == before, "the second process compiled the header again"
    assert "torch.Size([2, 4])" in done.stdout
    listed = subprocess.run([sys.executable, "-m", "torchpool", "list"], capture_output=True, text=True,
                            env=dict(os.environ), timeout=120)
    assert "MyCartPole-v0" in listed.stdout and "force_mag=10.0" in listed.stdout, listed.stdout[-500:]


def test_an_edited_header_builds_anew(cache, tmp_path):
    path = tmp_path / "my_cartpole.h"
    shutil.copy(EXAMPLE, path)
    torchpool.register_cpp_env("EditedCartPole-v0", path, env_class="MyCartPole")
    before = compiles(cache)
    path.write_text(path.read_text().replace('"10.0", "the push', '"20.0", "the push'))
    torchpool.register_cpp_env("EditedCartPole-v0", path, env_class="MyCartPole", overwrite=True)
    assert compiles(cache) == before + 1, "the edited header was not rebuilt"
    assert registry.lookup("EditedCartPole-v0").kwargs["force_mag"].default == 20.0


def test_concurrent_builds_of_one_header_make_one_build(cache, tmp_path):
    path = tmp_path / "concurrent_cartpole.h"
    shutil.copy(EXAMPLE, path)
    code = (f"import torchpool\ntorchpool.register_cpp_env('Concurrent-v0', {str(path)!r}, env_class='MyCartPole')\n"
            "print(torchpool.make('Concurrent-v0', num_envs=2).reset()['observation'].shape)")
    before = compiles(cache)
    env = dict(os.environ, TORCHPOOL_CACHE_DIR=str(cache / "cache"), CXX=str(cache / "logging-c++"))
    workers = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env) for _ in range(2)]
    results = [worker.communicate(timeout=300) for worker in workers]
    for worker, (out, err) in zip(workers, results):
        assert worker.returncode == 0, err
        assert "torch.Size([2, 4])" in out
    assert compiles(cache) == before + 1, "both processes compiled: the lock did not hold"


def test_a_header_that_does_not_compile_raises_the_compilers_diagnostics(cache, tmp_path):
    path = header(tmp_path, "broken.h", """
        struct Broken {
          int x = undefined_name;
        };
        """)
    with pytest.raises(torchpool.BuildError) as error:
        torchpool.register_cpp_env("Broken-v0", path, env_class="Broken")
    message = str(error.value)
    assert f"{path}:" in message and "undefined_name" in message, message
    assert not registry.is_registered("Broken-v0")


def test_a_class_that_is_not_an_env_is_named_with_the_concept(cache, tmp_path):
    path = header(tmp_path, "not_an_env.h", """
        struct NotAnEnv {
          struct Model { explicit Model(const torchpool::Config&) {} };
          explicit NotAnEnv(const Model&) {}
        };
        """)
    with pytest.raises(torchpool.BuildError, match="EnvConcept"):
        torchpool.register_cpp_env("NotAnEnv-v0", path, env_class="NotAnEnv")


def test_a_missing_compiler_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-c++"))
    with pytest.raises(torchpool.BuildError, match="no C\\+\\+ compiler: tried '.*no-such-c\\+\\+'"):
        torchpool.register_cpp_env("NoCompiler-v0", EXAMPLE, env_class="MyCartPole")


def test_an_exception_thrown_in_step_is_an_env_error(cache, tmp_path):
    path = header(tmp_path, "thrower.h", """
        #include <stdexcept>
        struct ThrowerModel {
          explicit ThrowerModel(const torchpool::Config&) {}
          torchpool::EnvSpec spec(torchpool::Dtype dtype) const {
            torchpool::EnvSpec spec;
            spec.observations = {{{1}, dtype, {}, {}}};
            spec.action.num_actions = 2;
            return spec;
          }
        };
        struct Thrower {
          using Model = ThrowerModel;
          int steps = 0;
          explicit Thrower(const Model&) {}
          void reset(torchpool::Rng&, torchpool::StepOutput& out) { out.set_observation({0.0}); }
          torchpool::StepResult step(const torchpool::Action&, torchpool::Rng&, torchpool::StepOutput& out) {
            if (++steps == 3) throw std::runtime_error("thrower gave up at step 3");
            out.set_observation({double(steps)});
            return {};
          }
        };
        """)
    torchpool.register_cpp_env("Thrower-v0", path, env_class="Thrower")
    with torchpool.make("Thrower-v0", num_envs=2) as pool:
        pool.reset()
        for _ in range(2):
            pool.step(torch.zeros(2, dtype=torch.int64))
        with pytest.raises(torchpool.EnvError, match="thrower gave up at step 3") as error:
            pool.step(torch.zeros(2, dtype=torch.int64))
        assert sorted(error.value.env_ids) == [0, 1]
        assert pool.step(torch.zeros(2, dtype=torch.int64))["observation"].shape == (2, 1), "the pool goes on"


def test_an_id_already_registered_needs_overwrite(my_cartpole):
    with pytest.raises(ValueError, match="'CartPole-v1' is already registered; pass overwrite=True"):
        torchpool.register_cpp_env("CartPole-v1", EXAMPLE, env_class="MyCartPole")


def test_every_adapter_takes_it(my_cartpole):
    import gymnasium

    import torchpool.envpool_compat as envpool

    env = gymnasium.make_vec(f"torchpool/{my_cartpole}", num_envs=3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 4)
    env.step(env.action_space.sample())
    env.close()
    envs = envpool.make(my_cartpole, env_type="gymnasium", num_envs=2)
    assert envs.reset()[0].shape == (2, 4)
    envs.close()
    stream = torchpool.stream(my_cartpole, lambda obs: (obs[:, 2] > 0).long(), num_envs=4, frames_per_batch=64,
                              total_frames=128)
    assert [batch["next", "reward"].sum().item() for batch in stream] == [64.0, 64.0]
    pytest.importorskip("torchrl")
    rollout = torchpool.TorchPoolEnv(my_cartpole, num_envs=2).rollout(10, break_when_any_done=False)
    assert rollout.batch_size == (2, 10)
    pytest.importorskip("rl_games")
    from torchpool.rl_games import RlGamesVecEnv

    vec = RlGamesVecEnv("mine", 2, my_cartpole, device="cpu")
    assert vec.reset().shape == (2, 4)


def test_an_edited_include_builds_anew(cache, tmp_path):
    """The cache key covers what the header includes, as the compiler lists it: no stale build."""
    (tmp_path / "force.h").write_text("#pragma once\n#define MY_FORCE_DEFAULT \"10.0\"\n")
    path = tmp_path / "including_cartpole.h"
    text = EXAMPLE.read_text().replace('"10.0", "the push', 'MY_FORCE_DEFAULT, "the push')
    assert text != EXAMPLE.read_text(), "the example's force_mag default moved: update this test"
    path.write_text('#include "force.h"\n' + text)
    torchpool.register_cpp_env("IncludingCartPole-v0", path, env_class="MyCartPole")
    assert registry.lookup("IncludingCartPole-v0").kwargs["force_mag"].default == 10.0
    before = compiles(cache)
    (tmp_path / "force.h").write_text("#pragma once\n#define MY_FORCE_DEFAULT \"30.0\"\n")
    torchpool.register_cpp_env("IncludingCartPole-v0", path, env_class="MyCartPole", overwrite=True)
    assert compiles(cache) == before + 1, "an edited include did not rebuild the module"
    assert registry.lookup("IncludingCartPole-v0").kwargs["force_mag"].default == 30.0


def test_a_header_is_built_with_the_modules_flags(cache, my_cartpole):
    """One list of flags (csrc/module_flags.txt) for the built-in modules and a user's header: Release's -DNDEBUG
    too, and the same linking (libstdc++ inside, only PyInit_ exported)."""
    listed = (ROOT / "csrc" / "module_flags.txt").read_text().split()
    assert "-DNDEBUG" in listed
    builds = [line.split() for line in (cache / "compiles.log").read_text().splitlines() if "-shared" in line]
    assert builds, "no build was logged"
    for flag in [*listed, "-static-libstdc++", "-Wl,--exclude-libs,ALL"]:
        assert flag in builds[-1], f"{flag} is missing from the build: {' '.join(builds[-1])}"
    assert any(part.startswith("-Wl,--version-script=") for part in builds[-1])


CLANG = shutil.which("clang++")


@pytest.mark.skipif(CLANG is None, reason="no clang++ (CI installs Debian's clang)")
def test_a_header_built_by_another_compiler_matches_cartpole(tmp_path, monkeypatch):
    """Only C crosses between the core and a plug-in (csrc/core/plugin_abi.h): a header compiled by clang++
    loads into a core g++ built, and steps as torchpool's CartPole does, bit for bit."""
    monkeypatch.setenv("TORCHPOOL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CXX", CLANG)
    torchpool.register_cpp_env("ClangCartPole-v0", EXAMPLE, env_class="MyCartPole", overwrite=True)
    built = next((tmp_path / "cache").glob("_cpp_env_*.so"))
    assert b"clang" in built.read_bytes(), "the module was not built by clang"
    ours = torchpool.make("CartPole-v1", num_envs=8, seed=3)
    theirs = torchpool.make("ClangCartPole-v0", num_envs=8, seed=3)
    torch.testing.assert_close(theirs.reset()["observation"], ours.reset()["observation"], rtol=0, atol=0)
    generator = torch.Generator().manual_seed(0)
    for _ in range(600):
        action = torch.randint(0, 2, (8,), generator=generator)
        mine, reference = theirs.step(action), ours.step(action)
        for key in ("observation", "reward", "terminated", "truncated"):
            torch.testing.assert_close(mine[key], reference[key], rtol=0, atol=0, msg=key)
    ours.close(), theirs.close()


@pytest.mark.parametrize("kind, text, value", [
    ("bool", "True", True), ("bool", "true", True), ("bool", "1", True),
    ("bool", "False", False), ("bool", "false", False), ("bool", "0", False),
    ("int", "3", 3), ("int", "-12", -12), ("float", "10.0", 10.0), ("float", "1e-3", 1e-3), ("float", "4", 4.0),
    ("str", "area", "area"),
])
def test_a_declared_default_is_read_as_its_type(kind, text, value):
    parsed = cpp_env._parse("knob", kind, text)
    assert parsed == value and type(parsed) is type(value), f"{kind} {text!r} read as {parsed!r}"


@pytest.mark.parametrize("kind, text, message", [
    ("bool", "yes", "kwarg 'knob' is a bool with default 'yes'; write True or False"),
    ("bool", "TRUE", "kwarg 'knob' is a bool with default 'TRUE'; write True or False"),
    ("bool", "", "kwarg 'knob' is a bool with default ''"),
    ("int", "3.0", "kwarg 'knob' is an int with default '3.0'; write a whole number"),
    ("int", "three", "kwarg 'knob' is an int with default 'three'"),
    ("float", "ten", "kwarg 'knob' is a float with default 'ten'; write a number"),
    ("double", "1.0", "kwarg 'knob' has type 'double'; TaskKwarg types are"),
])
def test_a_default_not_of_its_type_is_refused_naming_the_kwarg(kind, text, message):
    """A bool written "yes" or "TRUE" once became False without a word, an int written "3.0" a bare
    ValueError from int()."""
    with pytest.raises(ValueError, match=re.escape(message)):
        cpp_env._parse("knob", kind, text)


def test_the_cache_key_holds_torchpools_version(monkeypatch):
    """A torchpool of another version builds anew: its version is read from the package, not typed again."""
    compiler = cpp_env._compiler()
    before = cpp_env._base_key(EXAMPLE, "MyCartPole", compiler)
    monkeypatch.setattr(torchpool, "__version__", torchpool.__version__ + ".post1")
    assert cpp_env._base_key(EXAMPLE, "MyCartPole", compiler) != before, "the key ignores torchpool's version"


@pytest.mark.skipif(importlib.util.find_spec("torchpool._atari") is None or importlib.util.find_spec("ale_py") is None,
                    reason="needs the Atari family and ale-py's ROMs")
def test_registering_a_new_id_does_not_register_the_atari_ids(tmp_path):
    """Whether an id is taken is found without importing the Atari module and hashing every ROM (a second)."""
    code = ("import sys, torchpool\n"
            "try:\n"
            f"    torchpool.register_cpp_env('Fresh-v0', {str(EXAMPLE)!r}, env_class='MyCartPole')\n"
            "except torchpool.BuildError:\n"
            "    pass\n"  # the compiler is missing on purpose: the check for the id comes before the build
            "print('torchpool._atari' in sys.modules)\n")
    env = dict(os.environ, TORCHPOOL_CACHE_DIR=str(tmp_path), CXX=str(tmp_path / "no-such-c++"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"], "registering a new id imported the Atari module (to hash its ROMs)"
