"""Your own env in C++: one header, compiled on first use against the installed torchpool.

    torchpool.register_cpp_env("MyCartPole-v0", "my_cartpole.h", env_class="MyCartPole")
    pool = torchpool.make("MyCartPole-v0", num_envs=64, batch_size=32)

The header holds a family as torchpool's own are written (a ``Model`` built
once from the task kwargs, an env with ``reset``/``step``; see
``<torchpool/env.h>``, csrc/core/env.h, and examples/cpp_env/my_cartpole.h)
and includes ``<torchpool/env.h>``. ``register_cpp_env`` compiles it into an
extension module that exports the family through the same plug-in interface
as the built-in families (csrc/core/plugin.h), loads it, and registers the id,
with the task kwargs the Model declares (``static std::vector<TaskKwarg>
kwargs()``). The id then works wherever a built-in id does.

The build: the compiler in ``CXX`` or the system's ``c++``, the built-in
modules' flags, the headers in ``include_dir()`` and Python's. It is cached
under ``$TORCHPOOL_CACHE_DIR`` (default ``~/.cache/torchpool/cpp_envs``), keyed
by the header's content, every installed torchpool header, the module's
source template, torchpool's version, the compiler's ``--version`` and the flags, so a second process loads
it without compiling and an edited header builds anew. A lock file per key
lets concurrent builders of the same header wait for one build, which is
renamed into place only once complete.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from . import _family_modules, registry
from .errors import BuildError
from .pool import PLUGIN_ABI

# Beside the built-in modules' compile flags (csrc/module_flags.txt, installed with the headers: what the
# steps compute must not differ), the same linking: libstdc++ inside the module and only PyInit_* exported
# (cmake/module.map), so the module binds to nothing of another library's and only C crosses to the core.
_BUILD_FLAGS = ("-std=c++20", "-shared", "-fPIC", "-pthread", "-static-libstdc++", "-static-libgcc",
                "-Wl,--exclude-libs,ALL", "-Wl,-u,__cxa_pure_virtual")
_TYPES = {"float": float, "int": int, "bool": bool, "str": str}
# The spellings a bool default may take (docs/cpp_env.md): Python's literals, which TaskKwarg's default is
# written as, C++'s and 1/0. Any other ("yes", "TRUE", "on") is refused, not guessed at.
_BOOLS = {"True": True, "true": True, "1": True, "False": False, "false": False, "0": False}


def include_dir() -> str:
    """The folder holding ``torchpool/env.h`` and the core's headers, for ``-I``."""
    # Beside the extension modules, which an editable install keeps apart from these sources.
    return str(Path(importlib.util.find_spec(f"{__package__}._core").origin).parent / "include")


def flags() -> list[str]:
    """Every flag a header is compiled and linked with: the built-in modules' own, from one list."""
    installed = Path(include_dir()) / "torchpool"
    compile_flags = (installed / "module_flags.txt").read_text().split()
    return [*compile_flags, *_BUILD_FLAGS, f"-Wl,--version-script={installed / 'module.map'}"]


def cache_dir() -> Path:
    """Where built C++ envs are kept: ``$TORCHPOOL_CACHE_DIR``, else ``~/.cache/torchpool/cpp_envs``."""
    root = os.environ.get("TORCHPOOL_CACHE_DIR")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "torchpool" / "cpp_envs"


def register_cpp_env(env_id: str, header: str | os.PathLike, env_class: str, *, overwrite: bool = False) -> None:
    """Compiles ``header`` (if not cached) and registers ``env_id`` as its ``env_class`` family.

    Args:
        env_id: the id ``torchpool.make`` will take, e.g. ``"MyCartPole-v0"``.
        header: a C++ header implementing the Env concept (``<torchpool/env.h>``).
        env_class: the env's class, qualified as the header names it (``"MyCartPole"``,
            ``"mine::CartPole"``).
        overwrite: replace an id that is already registered (else ``ValueError``).

    Raises ``torchpool.BuildError`` with the compiler's diagnostics when the
    header does not compile or its class is not an env (the message names
    ``torchpool::EnvConcept``), and when no compiler can be run.
    """
    if not isinstance(env_id, str) or not env_id:
        raise TypeError(f"env_id must be a non-empty str, got {env_id!r}")
    if not isinstance(env_class, str) or not re.fullmatch(r"(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*", env_class):
        raise ValueError(f"env_class must be a C++ class name such as 'MyCartPole' or 'mine::CartPole', "
                         f"got {env_class!r}")
    path = Path(header).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no C++ header at {path}")
    if _registered(env_id) and not overwrite:
        raise ValueError(f"env id {env_id!r} is already registered; pass overwrite=True to replace it")
    module, key = _load(path, env_class)
    family = _family_name(env_class, key)
    kwargs = {}
    for name, kind, default, doc in module.kwargs[family]:
        try:
            value = _parse(name, kind, default)
        except ValueError as error:
            raise ValueError(f"{path}: {env_class}'s {error}") from None
        kwargs[name] = registry.Kwarg(_TYPES[kind], value, doc)
    _family_modules.add(family, module)
    registry.register(registry.EnvEntry(env_id, family, kwargs, reference=f"{path} ({env_class})"), replace=overwrite)
    _record(env_id, path, env_class, kwargs)
    if "torchpool.gym" in sys.modules:
        sys.modules["torchpool.gym"].register_env(env_id)


def _registered(env_id: str) -> bool:
    """Whether ``env_id`` is registered, asked without the registrations made on first need (Atari's
    imports its module and hashes every ROM: a second) unless the id is one they would register.

    A hidden (test-only) id is not seen here: ``registry.register`` refuses it after the build.
    """
    if env_id not in registry.list_envs_unchecked():  # the listed ids, and the lazy ones as named cheaply
        return False
    # Registered up front, it is found at once; named by a lazy family, asking registers that family's ids
    # first, so an overwrite replaces its entry instead of meeting it again when the family registers.
    return registry.is_registered(env_id)


def registered_elsewhere() -> list[dict[str, Any]]:
    """The C++ envs this cache has built, as recorded at registration (``python -m torchpool list``)."""
    records = []
    for record in sorted(cache_dir().glob("*.json")):
        with contextlib.suppress(OSError, ValueError):
            records.append(json.loads(record.read_text()))
    return records


# ---- building -----------------------------------------------------------------


def _compiler() -> list[str]:
    command = shlex.split(os.environ.get("CXX", "")) or ["c++"]
    if shutil.which(command[0]) is None:
        raise BuildError(f"no C++ compiler: tried {command[0]!r} (from CXX, else the system's c++); "
                         "install one (Debian/Ubuntu: apt install g++) or set CXX")
    return command


def _base_key(path: Path, env_class: str, compiler: list[str]) -> str:
    """What the built module depends on besides the files the header includes."""
    digest = hashlib.sha256()
    digest.update(path.read_bytes())
    identity = subprocess.run([*compiler, "--version"], capture_output=True, text=True).stdout
    for part in (env_class, _version(), identity, " ".join(flags()), sysconfig.get_config_var("EXT_SUFFIX"),
                 str(path), _MODULE_SOURCE):
        digest.update(part.encode())
    return digest.hexdigest()[:24]


def _key(base: str) -> str:
    """The cache key: the base key and every file the header includes, as the compiler listed them
    (``<base>.deps``, refreshed before each build): an edited include builds anew, as an edited header
    does. With no list recorded yet the key matches no build."""
    digest = hashlib.sha256(base.encode())
    deps = cache_dir() / f"{base}.deps"
    if not deps.exists():
        digest.update(b"<no dependency list>")
    for included in _dependencies(deps):
        digest.update(str(included).encode())
        try:
            digest.update(included.read_bytes())
        except OSError:
            digest.update(b"<missing>")  # a vanished include: a new key, and the build names what is missing
    return digest.hexdigest()[:24]


def _dependencies(deps: Path) -> list[Path]:
    """The files a make-style dependency list (``-MM -MF``) names after its target."""
    try:
        text = deps.read_text()
    except OSError:
        return []
    _, _, listed = text.replace("\\\n", " ").partition(":")
    return [Path(name) for name in listed.split()[1:]]  # the first is the generated source, in a scratch folder


def _record_dependencies(path: Path, env_class: str, compiler: list[str], base: str) -> None:
    """Asks the compiler which files the header includes now (``-MM``: the preprocessor only)."""
    with tempfile.TemporaryDirectory(dir=cache_dir()) as scratch:
        cpp = Path(scratch) / "module.cpp"
        cpp.write_text(_source(path, env_class, "_deps", "deps"))
        command = [*compiler, "-std=c++20", "-MM", "-MF", str(cache_dir() / f"{base}.deps"), "-I", include_dir(),
                   "-I", sysconfig.get_paths()["include"], str(cpp)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(_diagnostics(done.stderr or done.stdout, path))


def _family_name(env_class: str, key: str) -> str:
    return f"cpp:{env_class}:{key[:12]}"


def _load(path: Path, env_class: str) -> tuple[ModuleType, str]:
    """The module built from ``path`` (built now unless cached), and its cache key."""
    compiler = _compiler()
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    base = _base_key(path, env_class, compiler)
    key = _key(base)
    built = directory / f"_cpp_env_{key}{sysconfig.get_config_var('EXT_SUFFIX')}"
    if not built.exists():
        with _locked(directory / f"{base}.lock"):
            _record_dependencies(path, env_class, compiler, base)
            key = _key(base)
            built = directory / f"_cpp_env_{key}{sysconfig.get_config_var('EXT_SUFFIX')}"
            if not built.exists():  # another process may have built it while we waited
                _build(path, env_class, compiler, f"_cpp_env_{key}", _family_name(env_class, key), built)
    name = f"_cpp_env_{key}"
    spec = importlib.util.spec_from_file_location(f"torchpool.{name}", built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if module.abi != PLUGIN_ABI:
        raise BuildError(f"{built} speaks torchpool plug-in ABI {module.abi}, this core ABI {PLUGIN_ABI}: "
                         f"delete it to build it anew")
    return module, key


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(path: Path, env_class: str, compiler: list[str], name: str, family: str, built: Path) -> None:
    source = _source(path, env_class, name, family)
    with tempfile.TemporaryDirectory(dir=built.parent) as scratch:
        cpp, so = Path(scratch) / f"{name}.cpp", Path(scratch) / built.name
        cpp.write_text(source)
        command = [*compiler, *flags(), "-I", include_dir(), "-I", sysconfig.get_paths()["include"],
                   str(cpp), "-o", str(so)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(_diagnostics(done.stderr or done.stdout, path))
        os.replace(so, built)  # complete before it is visible: a concurrent loader never sees half a file


def _source(path: Path, env_class: str, name: str, family: str) -> str:
    return _MODULE_SOURCE.format(header=json.dumps(str(path)), env_class=env_class, family=json.dumps(family),
                                 name=name)


def _diagnostics(output: str, header: Path) -> str:
    """The compiler's own diagnostics about the user's code: its lines, the generated module's left out."""
    lines = [line for line in output.splitlines() if line.strip()]
    return "\n".join(lines) if lines else f"the compiler failed on {header} and printed nothing"


def _version() -> str:
    """torchpool's version, part of the cache key (read when building: this module is imported by the
    package's ``__init__`` before it sets ``__version__``)."""
    return sys.modules[__package__].__version__


def _parse(name: str, kind: str, text: str) -> Any:
    """A TaskKwarg's default, declared in C++ as text, as a value of its declared type.

    Raises ``ValueError`` naming the kwarg and the text where the text is not one: a bool is one of
    ``_BOOLS``' spellings, an int a whole number (``"3"``, not ``"3.0"``), a float any number ``float()``
    reads (``"10.0"``, ``"1e-3"``, ``"4"``).
    """
    if kind not in _TYPES:
        raise ValueError(f"kwarg {name!r} has type {kind!r}; TaskKwarg types are {sorted(_TYPES)}")
    if kind == "bool":
        if text not in _BOOLS:
            raise ValueError(f"kwarg {name!r} is a bool with default {text!r}; write True or False "
                             "(true/false and 1/0 are accepted too)")
        return _BOOLS[text]
    if kind == "str":
        return text
    try:
        return _TYPES[kind](text)
    except ValueError:
        example = "a whole number such as '3'" if kind == "int" else "a number such as '10.0'"
        raise ValueError(f"kwarg {name!r} is {'an' if kind == 'int' else 'a'} {kind} with default {text!r}; "
                         f"write {example}") from None


def _record(env_id: str, path: Path, env_class: str, kwargs: dict[str, registry.Kwarg]) -> None:
    record = {"env_id": env_id, "header": str(path), "env_class": env_class,
              "kwargs": {name: kwarg.default for name, kwarg in kwargs.items()}}
    with contextlib.suppress(OSError):
        (cache_dir() / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', env_id)}.json").write_text(json.dumps(record))


# The module a header becomes: the family through the C plug-in interface
# (csrc/core/plugin_abi.h), with the plain CPython API (no pybind11 needed).
_MODULE_SOURCE = r"""
#include <torchpool/family_module.h>

#include {header}

static_assert(torchpool::EnvConcept<{env_class}>,
              "{env_class} does not satisfy torchpool::EnvConcept (<torchpool/env.h>): it needs a Model type "
              "constructible from a Config with spec(Dtype), a constructor from const Model&, "
              "reset(Rng&, StepOutput&) and step(const Action&, Rng&, StepOutput&) returning a StepResult");

TORCHPOOL_FAMILY_MODULE({name}, torchpool::family<{env_class}>({family}))
"""
