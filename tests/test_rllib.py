"""RLlib's PPO (new API stack, Ray 2.60.0) on torchpool.rllib.VectorEnv, in RLlib's own environment.

``ray[rllib]==2.60.0`` pins ``gymnasium==1.2.2``: installed beside the test extra it would downgrade
Gymnasium, so RLlib runs in a venv of its own, ``.venv-rllib`` (made on first use, as the Control Suite's
reference is: tests/test_dmc_parity.py), or the Python named by TORCHPOOL_RLLIB_PYTHON. That venv holds
torch, ``ray[rllib]==2.60.0`` and torchpool's run-time dependencies (not the test extra), and imports the
torchpool under test, not a copy: a ``.pth`` file there loads the editable install's redirect (or links
the installed package), so the child runs the same Python files and the same built modules.

The child (tests/rllib_run.py) trains PPO for three iterations with 2 env runners of 4 CartPole-v1 envs
each (one pool per runner) and reports what the pools stepped and what RLlib saw; the tests check that
RLlib's episodes and its per-iteration metrics are exactly the pools' episodes, that each runner's envs have
seeds of their own, that Gymnasium 1.2.2 (RLlib's pin) is what torchpool ran with there, and that no Ray
process outlives ``ray.shutdown()``. About 30 s on 2 cores once the venv exists (1.5 min to make it).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from python_envs import alive
from side_venv import side_python

import torchpool
import torchpool._core

ROOT = Path(__file__).resolve().parent.parent
RLLIB_VENV = ROOT / ".venv-rllib"
# torch's CPU build (what the suite tests with) and RLlib with its own pins; torchpool's run-time
# dependencies are added from its installed metadata (_runtime_requirements).
RLLIB_PACKAGES = ["torch==2.13.0", "ray[rllib]==2.60.0"]
GYMNASIUM_PINNED_BY_RLLIB = "1.2.2"
ITERATIONS, NUM_ENV_RUNNERS, NUM_ENVS, SEED = 3, 2, 4, 0

# torch 2.13's CPU wheel, which keeps the venv small, is built for CPython 3.11 only among the Pythons
# this project tests (the others would pull the CUDA build, gigabytes); Ray 2.60 has wheels for 3.10-3.13.
pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="the RLlib venv takes torch 2.13's CPU wheel, made for CPython 3.11 only")


def _runtime_requirements() -> list[str]:
    """torchpool's own dependencies (no extra), as the installed torchpool declares them."""
    kept = []
    for line in metadata.requires("torchpool") or []:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            kept.append(str(requirement))
    return kept


def _torchpool_pth() -> str:
    """One ``.pth`` line that makes another Python import this torchpool: the same files, the same build.

    An editable install (scikit-build-core) finds its modules through a redirect, ``_editable_skbc_torchpool``,
    loaded by a ``.pth`` file in the test venv; the line loads that same file (its paths are relative to where
    it lies, so it is run from there, not copied). A normal install is one folder, linked beside the venv.
    """
    redirect = sys.modules.get("_editable_skbc_torchpool")
    if redirect is not None and getattr(redirect, "__file__", None):
        return ("import importlib.util as u, sys; s = u.spec_from_file_location('_editable_skbc_torchpool', "
                f"{redirect.__file__!r}); m = u.module_from_spec(s); sys.modules[s.name] = m; "
                "s.loader.exec_module(m)\n")
    package = Path(torchpool.__file__).resolve().parent
    if Path(torchpool._core.__file__).resolve().parent != package:
        raise RuntimeError(f"torchpool ({package}) and its built modules ({torchpool._core.__file__}) lie apart, "
                           "and not through scikit-build-core's editable redirect: cannot import it elsewhere")
    linked = RLLIB_VENV / "torchpool-under-test"
    linked.mkdir(parents=True, exist_ok=True)
    link = linked / "torchpool"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(package, target_is_directory=True)
    return f"{linked}\n"


def _rllib_python() -> str:
    named = os.environ.get("TORCHPOOL_RLLIB_PYTHON")
    if named:
        return named  # used as it is: it must import this torchpool itself (test_rllib_runs_the_torchpool_under_test)
    python = side_python(RLLIB_VENV, [*RLLIB_PACKAGES, *_runtime_requirements()], "import ray.rllib, torch, gymnasium",
                         "no RLlib environment")
    # Every time: the venv follows the torchpool under test (another checkout, a rebuilt install).
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_torchpool_under_test.pth").write_text(_torchpool_pth())
    return python


def test_runtime_requirements_leave_out_the_extras():
    names = [Requirement(line).name for line in _runtime_requirements()]
    assert {"torch", "numpy", "gymnasium"} <= set(names), names
    assert not {"pytest", "ray", "torchrl", "mujoco"} & set(names), f"an extra reached the RLlib venv: {names}"


def _imported_through(pth: str, tmp_path: Path) -> list[str]:
    """``torchpool.__file__`` and ``torchpool._core.__file__`` in a Python whose only site folder holds ``pth``
    as a ``.pth`` file (this one's site-packages come after it, unprocessed, for numpy and torch)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "_torchpool_under_test.pth").write_text(pth)
    code = (f"import site, sys; site.addsitedir({str(site)!r}); sys.path += {sysconfig.get_paths()['purelib']!r}, ;"
            "import torchpool, torchpool._core; print(torchpool.__file__); print(torchpool._core.__file__)")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_pth_line_imports_this_torchpool(tmp_path):
    """The line written into the RLlib venv imports the same files and built modules as this process."""
    paths = _imported_through(_torchpool_pth(), tmp_path)
    assert [os.path.realpath(p) for p in paths] == [os.path.realpath(torchpool.__file__),
                                                    os.path.realpath(torchpool._core.__file__)]


def test_the_pth_line_links_a_normal_install(monkeypatch, tmp_path):
    """A normal (non-editable) install, one folder with its built modules, is linked beside the venv."""
    package = tmp_path / "installed" / "torchpool"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_core.py").write_text("")  # stands for the built module, in the same folder
    monkeypatch.delitem(sys.modules, "_editable_skbc_torchpool", raising=False)
    monkeypatch.setattr(torchpool, "__file__", str(package / "__init__.py"))
    monkeypatch.setattr(torchpool._core, "__file__", str(package / "_core.py"))
    monkeypatch.setattr(sys.modules[__name__], "RLLIB_VENV", tmp_path / "venv")
    paths = _imported_through(_torchpool_pth(), tmp_path)
    assert [os.path.realpath(p) for p in paths] == [str(package / "__init__.py"), str(package / "_core.py")]


@pytest.fixture(scope="module")
def run() -> dict:
    """The child's report (tests/rllib_run.py); it runs once for the module."""
    python = _rllib_python()
    child = subprocess.run(
        [python, str(ROOT / "tests" / "rllib_run.py"), "--iterations", str(ITERATIONS),
         "--num-env-runners", str(NUM_ENV_RUNNERS), "--num-envs", str(NUM_ENVS), "--seed", str(SEED)],
        capture_output=True, text=True, timeout=400, cwd=ROOT)
    assert child.returncode == 0, f"RLlib's run failed ({child.returncode}):\n{child.stderr[-4000:]}"
    report = json.loads(child.stdout.strip().splitlines()[-1])
    report["stderr"] = child.stderr
    return report


def test_rllib_runs_the_torchpool_under_test_with_rllibs_gymnasium(run):
    """The claimed range (gymnasium>=1.0) covers RLlib's pin: torchpool ran on Gymnasium 1.2.2 there."""
    assert run["gymnasium"] == GYMNASIUM_PINNED_BY_RLLIB, f"the RLlib venv has Gymnasium {run['gymnasium']}"
    assert run["ray"] == "2.60.0"
    assert os.path.realpath(run["core"]) == os.path.realpath(torchpool._core.__file__), (
        f"the RLlib venv imported another build: {run['core']}, not {torchpool._core.__file__}")
    assert os.path.realpath(run["torchpool"]) == os.path.realpath(torchpool.__file__)
    for runner in run["runners"]:
        assert runner["gymnasium"] == GYMNASIUM_PINNED_BY_RLLIB, f"env runner {runner['worker_index']}"
        assert "torchpool.rllib.VectorEnv" in runner["vector_env"], runner["vector_env"]


def test_rllib_episodes_are_the_episodes_the_pools_stepped(run):
    """Every episode RLlib logged into its metrics, runner by runner, is one the runner's pool stepped, with
    the same return and length, in the same order, none missing and none extra."""
    assert sorted(r["worker_index"] for r in run["runners"]) == list(range(1, NUM_ENV_RUNNERS + 1))
    for runner in run["runners"]:
        stepped = [tuple(e) for e in runner["episodes"]]
        logged = [tuple(e) for e in runner["logged"]]
        assert len(stepped) > 10, f"env runner {runner['worker_index']}: only {len(stepped)} episodes"
        assert logged == stepped, (
            f"env runner {runner['worker_index']}: RLlib logged {len(logged)} episodes (return, length), its "
            f"pool stepped {len(stepped)}; first difference at "
            f"{next((i for i, (a, b) in enumerate(zip(logged, stepped)) if a != b), min(len(logged), len(stepped)))}")


def test_rllib_metrics_are_the_pools_episodes_iteration_by_iteration(run):
    """``algo.train()``'s env_runners metrics, each iteration, from the pools' own episodes and steps.

    RLlib's ``episode_return_mean`` is the mean over env runners of each runner's mean (its MeanStats merge,
    documented in ray/rllib/utils/metrics/stats/mean.py), not the mean over all episodes; so computed here."""
    assert len(run["results"]) == ITERATIONS
    before = [{"episodes": 0, "steps": 0} for _ in run["runners"]]
    lifetime_episodes = lifetime_steps = 0
    for iteration, (result, counts) in enumerate(zip(run["results"], run["counts"])):
        where = f"iteration {iteration + 1}"
        new = [runner["episodes"][start["episodes"]:now["episodes"]]
               for runner, start, now in zip(run["runners"], before, counts)]
        steps = sum(now["steps"] - start["steps"] for start, now in zip(before, counts))
        for now in counts:
            assert now["logged"] == now["episodes"], f"{where}: RLlib logged {now['logged']} of {now['episodes']}"
        lifetime_episodes += sum(map(len, new))
        lifetime_steps += steps
        assert result["num_episodes"] == sum(map(len, new)), where
        assert result["num_episodes_lifetime"] == lifetime_episodes, where
        assert result["num_env_steps_sampled"] == steps, where
        assert result["num_env_steps_sampled_lifetime"] == lifetime_steps, where
        returns = [[e[0] for e in episodes] for episodes in new if episodes]
        lengths = [[e[1] for e in episodes] for episodes in new if episodes]
        assert result["episode_return_min"] == min(map(min, returns)), where
        assert result["episode_return_max"] == max(map(max, returns)), where
        mean_of_means = statistics.fmean(statistics.fmean(r) for r in returns)
        assert result["episode_return_mean"] == pytest.approx(mean_of_means, rel=1e-6), where
        assert result["episode_len_mean"] == pytest.approx(statistics.fmean(map(statistics.fmean, lengths)),
                                                           rel=1e-9), where
        before = counts


def test_rllib_env_runners_seed_their_pools_apart(run):
    """RLlib seeds runner k with seed + k; torchpool.rllib.VectorEnv gives its env i (seed + k) * num_envs + i,
    so no env of one runner shares a seed with another's (Gymnasium's seed + i would overlap)."""
    seen = {}
    for runner in run["runners"]:
        k = runner["worker_index"]
        assert runner["reset_seeds"] == [SEED + k], f"env runner {k} was reset with seeds {runner['reset_seeds']}"
        assert runner["env_seeds"] == [(SEED + k) * NUM_ENVS + i for i in range(NUM_ENVS)], runner["env_seeds"]
        for seed in runner["env_seeds"]:
            assert seed not in seen, f"env runners {seen.get(seed)} and {k} share the seed {seed}"
            seen[seed] = k
    first, second = ([tuple(e) for e in r["episodes"]] for r in run["runners"][:2])
    assert first != second, "two env runners stepped the same episodes"


def test_no_ray_process_outlives_shutdown(run):
    """After ``algo.stop()`` and ``ray.shutdown()`` every process Ray started (GCS, raylet, the env runners'
    workers...) is gone, and none is left once the child has exited."""
    assert len(run["pids"]) >= NUM_ENV_RUNNERS, f"Ray's processes were not found: {run['pids']}"
    assert run["alive"] == [], f"alive 30 s after ray.shutdown(): {run['alive']}"
    left = [pid for pid in run["pids"] if alive(pid)]
    assert left == [], f"Ray processes still running after the child exited: {left}"


def test_outputs_are_arrays_of_their_own_with_the_pools_values():
    """RLlib keeps each observation row in its episode: torchpool.rllib.VectorEnv hands it copies (arrays that
    own their data), not views of the pool's output ring, with the values torchpool.gym.VectorEnv gives for
    the same seeds (env i of reset(seed=s): s * num_envs + i) and actions; the config's keywords reach the pool."""
    import numpy as np

    import torchpool.gym
    import torchpool.rllib

    num_envs, seed = 4, 3
    env = torchpool.rllib.VectorEnv({"env_id": "CartPole-v1", "num_envs": num_envs, "max_episode_steps": 20})
    reference = torchpool.gym.VectorEnv("CartPole-v1", num_envs=num_envs, max_episode_steps=20)
    rng = np.random.default_rng(0)
    try:
        observation, _ = env.reset(seed=seed)
        expected, _ = reference.reset(seed=[seed * num_envs + i for i in range(num_envs)])
        kept, truncations = [(observation, expected.copy())], 0
        for _ in range(100):
            actions = rng.integers(0, 2, num_envs)
            outputs, wanted = env.step(actions), reference.step(actions)
            for got, want in zip(outputs[:4], wanted[:4]):
                assert got.flags.owndata, "an output is a view of the pool's buffers"
                assert np.array_equal(got, want)
            kept.append((outputs[0], wanted[0].copy()))
            truncations += int(outputs[3].sum())
        assert truncations > 0, "max_episode_steps=20 never truncated: the config's keyword did not reach the pool"
        for got, want in kept:  # as stepped, however many steps later
            assert np.array_equal(got, want)
    finally:
        env.close()
        reference.close()


def test_a_config_without_env_id_or_with_a_view_setting_is_refused():
    import torchpool.rllib

    with pytest.raises(ValueError, match="env_config=\\{'env_id': ...\\}"):
        torchpool.rllib.VectorEnv({"num_envs": 2})
    with pytest.raises(ValueError, match="autoreset_mode= cannot be set"):
        torchpool.rllib.VectorEnv({"env_id": "CartPole-v1", "num_envs": 2, "autoreset_mode": "same_step"})
