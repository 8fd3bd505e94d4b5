"""libmujoco is found through the installed mujoco package wherever it lives, with its version checked."""

import glob
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest
from packaging.requirements import Requirement

import torchpool
from torchpool import _core, _mujoco_lib


def test_torchpool_loads_with_mujoco_in_another_sys_path_entry(tmp_path):
    # A copy of torchpool (sources and extension) alone in its own folder: the
    # extension's rpath ($ORIGIN/../mujoco) finds nothing there, mujoco lives
    # in site-packages, and -S keeps the editable install's finder out.
    package = tmp_path / "torchpool"
    shutil.copytree(os.path.dirname(torchpool.__file__), package, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for module in glob.glob(os.path.join(os.path.dirname(_core.__file__), "_*.so")):  # _core and the family modules
        shutil.copy(module, package)
    assert not (tmp_path / "mujoco").exists()
    site = sysconfig.get_paths()["purelib"]
    code = (f"import torchpool, torch; assert torchpool.__file__.startswith({str(tmp_path)!r}); "
            "pool = torchpool.make('HalfCheetah-v5', num_envs=2); pool.reset(); "
            "print(pool.step(torch.zeros(2, 6))['observation'].shape)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), site]))
    result = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, timeout=120,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "torch.Size([2, 17])" in result.stdout


def test_the_pin_in_the_loader_is_the_one_in_pyproject():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml")) as file:
        text = file.read()
    # Each pin with its marker: "mujoco==4.0.0; python_version >= '3.11'". Those that apply to this Python
    # (build time and every extra) name the loader's version; each Python from 3.10 gets exactly one.
    pins = [Requirement(spec) for spec in re.findall(r'"(mujoco==[^"]+)"', text)]
    assert len(pins) >= 4, pins
    for minor in (10, 11, 12, 13):
        versions = {str(pin.specifier) for pin in pins if pin.marker.evaluate({"python_version": f"3.{minor}"})}
        assert len(versions) == 1, (minor, versions)
    here = [str(pin.specifier) for pin in pins if pin.marker.evaluate()]
    assert len(here) >= 2 and set(here) == {f"=={_mujoco_lib.MUJOCO_VERSION}"}, here  # build time and the extras
    assert importlib.metadata.version("mujoco") == _mujoco_lib.MUJOCO_VERSION


def test_another_mujoco_version_is_a_clear_import_error(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "3.1.0")
    pinned = re.escape(_mujoco_lib.MUJOCO_VERSION)
    expected = rf"built against mujoco {pinned}, but mujoco 3\.1\.0 is installed.*pip install"
    with pytest.raises(ImportError, match=expected):
        _mujoco_lib.load()


def test_a_missing_mujoco_is_a_clear_import_error(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    pinned = re.escape(_mujoco_lib.MUJOCO_VERSION)
    with pytest.raises(ImportError, match=rf"needs the mujoco package.*pip install mujoco=={pinned}"):
        _mujoco_lib.load()


def test_the_library_loaded_is_the_packages():
    import importlib.util

    torchpool.make("Ant-v5", num_envs=1).close()  # the family's module is loaded by then, whichever test ran before
    folder = importlib.util.find_spec("mujoco").submodule_search_locations[0]
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "libmujoco" in line}
    assert mapped and all(os.path.realpath(path).startswith(os.path.realpath(folder)) for path in mapped), mapped
    assert glob.glob(os.path.join(folder, "libmujoco.so.*"))
