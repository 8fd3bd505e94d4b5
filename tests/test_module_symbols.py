"""Each built module binds only to what it was built with (CMakeLists.txt, cmake/module.map): it exports
PyInit_<name> alone, imports nothing C++ and no zlib from whatever else the process loaded, and needs no
shared libstdc++, libgcc or zlib. And a Pong pool runs the same after ale_py's extension (its own zlib) and
libtorch were loaded into the global scope, as on the CUDA machine where every Atari pool crashed."""

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import torchpool

PACKAGE = Path(torchpool.__file__).parent
MODULES = sorted(path for path in PACKAGE.glob("_*.so") if not path.name.startswith("_cpp_env"))
if not MODULES:  # an editable install keeps them beside the installed package
    from torchpool import _core

    MODULES = sorted(Path(_core.__file__).parent.glob("_*.so"))

pytestmark = pytest.mark.skipif(shutil.which("nm") is None or shutil.which("readelf") is None,
                                reason="needs binutils (nm, readelf)")

# Imports a module may have: the C library's (versioned), Python's C API, libmujoco's (the MuJoCo modules
# link the mujoco wheel's), and the weak hooks every GCC object names (transactional memory, gprof).
ALLOWED_IMPORT = re.compile(r"(.+@GLIBC_[\d.]+|_?Py\w+|mj[a-zA-Z]*_\w+|_ITM_\w+|__gmon_start__|_ZGTt\w+)$")
ALLOWED_NEEDED = re.compile(r"(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libmujoco)\.so")


def symbols(module: Path, kind: str) -> list[str]:
    done = subprocess.run(["nm", "-D", kind, module], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("module", MODULES, ids=[m.name.split(".")[0] for m in MODULES])
def test_a_module_exports_only_its_init_function(module):
    name = module.name.split(".")[0]
    assert symbols(module, "--defined-only") == [f"PyInit_{name}"]


@pytest.mark.parametrize("module", MODULES, ids=[m.name.split(".")[0] for m in MODULES])
def test_a_module_imports_no_cxx_or_zlib_symbol(module):
    stray = [symbol for symbol in symbols(module, "--undefined-only") if not ALLOWED_IMPORT.match(symbol)]
    assert not stray, f"{module.name} would bind these to another library's copy: {stray[:20]}"


@pytest.mark.parametrize("module", MODULES, ids=[m.name.split(".")[0] for m in MODULES])
def test_a_module_needs_no_shared_libstdcxx_or_zlib(module):
    dynamic = subprocess.run(["readelf", "-d", module], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)
    stray = [library for library in needed if not ALLOWED_NEEDED.match(library)]
    assert not stray, f"{module.name} needs {stray}"


_PONG = """
import hashlib, os, sys
if sys.argv[1] == "global":
    sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)
    import ale_py  # noqa: F401  (its extension, with a whole zlib, in the global scope)
    import torch  # libtorch and its std:: copies in the global scope
else:
    import torch
import torchpool
pool = torchpool.make("Pong-v5", num_envs=2, num_threads=2, seed=7, repeat_action_probability=0.25)
digest = hashlib.sha256(pool.reset()["observation"].numpy().tobytes())
generator = torch.Generator().manual_seed(1)
for _ in range(300):
    td = pool.step(torch.randint(0, pool.action_spec.n, (2,), generator=generator))
    digest.update(td["observation"].numpy().tobytes())
print(digest.hexdigest())
"""


def test_pong_runs_the_same_after_ale_py_and_libtorch_load_globally():
    if "Pong-v5" not in torchpool.list_envs():
        pytest.skip("the Atari family is not built")
    runs = {}
    for scope in ("local", "global"):
        done = subprocess.run([sys.executable, "-c", _PONG, scope], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{scope}: exit {done.returncode}\n{done.stderr[-3000:]}"
        runs[scope] = done.stdout.strip()
    assert runs["global"] == runs["local"], "Pong's frames differ once ale_py and libtorch load globally"
    assert len(runs["local"]) == len(hashlib.sha256().hexdigest())
