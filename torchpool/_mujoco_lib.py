"""Loads libmujoco from the installed ``mujoco`` package, wherever it lives, before the extension.

The extension links libmujoco by its soname. The installed extension's rpath
only looks beside it (``$ORIGIN/../mujoco``), which fails when torchpool and
mujoco sit in different ``sys.path`` entries (a user site, a ``--target``
folder, layered venvs). Loading the library first, found through the package
without importing it, satisfies that soname from anywhere.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.metadata
import importlib.util
import os
import sys

# The version the extension is built against: pyproject.toml's mujoco pin for this Python (build time and
# extras). mujoco 4.0.0 needs Python 3.11; 3.17.0 is the newest for 3.10, so 3.10 builds against it.
MUJOCO_VERSION = "4.0.0" if sys.version_info >= (3, 11) else "3.17.0"


def load() -> None:
    spec = importlib.util.find_spec("mujoco")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"torchpool needs the mujoco package, version {MUJOCO_VERSION}, for its MuJoCo tasks: "
                          f"pip install mujoco=={MUJOCO_VERSION}")
    try:
        version = importlib.metadata.version("mujoco")
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is not None and version != MUJOCO_VERSION:
        raise ImportError(f"torchpool was built against mujoco {MUJOCO_VERSION}, but mujoco {version} is installed: "
                          f"pip install mujoco=={MUJOCO_VERSION}, or rebuild torchpool against {version}")
    folder = spec.submodule_search_locations[0]
    libraries = sorted(glob.glob(os.path.join(folder, "libmujoco.so.*")) +
                       glob.glob(os.path.join(folder, "libmujoco.*.dylib")))
    if not libraries:
        raise ImportError(f"the mujoco package in {folder} holds no libmujoco: reinstall mujoco=={MUJOCO_VERSION}")
    ctypes.CDLL(libraries[0])  # the extension's soname dependency is then met by this copy
