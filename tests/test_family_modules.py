"""Families as plug-ins (torchpool/_family_modules.py, csrc/core/plugin.h): each family is its own module,
imported when an id of it is first made; missing run-time packages name the extra that installs them."""

import subprocess
import sys

import pytest

import torchpool
from torchpool import _core, _family_modules, _mujoco_lib


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_torchpool_loads_no_family_module_no_libmujoco_and_reads_no_rom():
    done = run_python(
        "import sys, torchpool, gymnasium\n"
        "from torchpool import registry\n"
        "extensions = (name for name, module in list(sys.modules.items()) if name.startswith('torchpool.')\n"
        "              and str(getattr(module, '__file__', '')).endswith('.so'))\n"
        "loaded = sorted(name for name in extensions if name != 'torchpool._core')  # compiled: a family module\n"
        "maps = open('/proc/self/maps').read()\n"
        "hashed = 'Pong-v5' in registry._REGISTRY  # Atari's ids are registered once its ROMs are hashed\n"
        "print(loaded, 'libmujoco' in maps, hashed, 'torchpool/Pong-v5' in gymnasium.registry)\n"
        "torchpool.make('CartPole-v1', num_envs=2).close()\n"
        "families = ('torchpool._classic', 'torchpool._mujoco', 'torchpool._atari')\n"
        "print(sorted(name for name in sys.modules if name in families))\n")
    assert done.returncode == 0, done.stderr
    imported, made = done.stdout.splitlines()
    assert imported == "[] False False True", (
        f"import torchpool loaded [family modules], libmujoco, hashed ROMs, registered Pong: {imported}")
    assert made == "['torchpool._classic']", f"making CartPole imported {made}"


def test_a_capsule_that_is_no_family_plugin_is_refused():
    import ctypes

    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype, capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    fake = capsule(ctypes.addressof(ctypes.c_int(0)), b"something.else", None)
    with pytest.raises(ValueError, match="not a torchpool family plugin"):
        _core.make(fake, "CartPole", {}, 1, 1, 3, 1, -1, 0, 0, 4, -1, 2000)


def test_a_plugin_of_another_abi_version_is_refused_naming_both():
    """A module built against another plug-in interface (csrc/core/plugin_abi.h) is never called into."""
    import ctypes

    class Table(ctypes.Structure):  # the first fields of TorchpoolPlugin, all a refusal may read
        _fields_ = [("abi_version", ctypes.c_uint32), ("struct_size", ctypes.c_uint32), ("built_with", ctypes.c_char_p)]

    table = Table(_core.ABI - 1, 8, b"an older g++")
    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype, capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = _core.PLUGIN_CAPSULE.encode()  # the capsule keeps a pointer to it
    old = capsule(ctypes.addressof(table), name, None)
    with pytest.raises(ValueError, match=rf"speaks torchpool plug-in ABI {_core.ABI - 1} .*this core speaks ABI "
                                         rf"{_core.ABI}: rebuild it"):
        _core.make(old, "CartPole", {}, 1, 1, 3, 1, -1, 0, 0, 4, -1, 2000)


def test_a_family_its_module_does_not_export_is_refused():
    with pytest.raises(ValueError, match="unknown env family 'Ant'"):
        _core.make(_family_modules.plugin("CartPole"), "Ant", {}, 1, 1, 3, 1, -1, 0, 0, 4, -1, 2000)


def test_mujoco_missing_names_the_extra(monkeypatch):
    real = _mujoco_lib.importlib.util.find_spec
    monkeypatch.setattr(_mujoco_lib.importlib.util, "find_spec", lambda name, *a: None if name == "mujoco" else
                        real(name, *a))
    with pytest.raises(ImportError, match=r"pip install 'torchpool\[mujoco\]'"):
        torchpool.make("Ant-v5", num_envs=1)


def test_ale_py_missing_names_the_extra():
    done = run_python(
        "import importlib.util as u\n"
        "real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'ale_py' else real(name, *a)\n"
        "import torchpool\n"
        "torchpool.make('Pong-v5', num_envs=1)\n")
    assert done.returncode != 0
    assert "pip install 'torchpool[atari]'" in done.stderr.splitlines()[-1], done.stderr[-2000:]


def test_only_pool_py_imports_the_core():
    # docs/design.md, the layers: pool.py is the Python side of the boundary; every other module goes through it.
    import ast
    from pathlib import Path

    package = Path(torchpool.__file__).parent
    importers = []
    for source in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [alias.name for alias in node.names]
            module = getattr(node, "module", None) or ""
            if (isinstance(node, ast.ImportFrom) and ("_core" in names or module.endswith("_core"))) or (
                    isinstance(node, ast.Import) and any(name.endswith("._core") for name in names)):
                importers.append(str(source.relative_to(package)))
    assert importers == ["pool.py"], f"modules importing torchpool._core: {importers}"
