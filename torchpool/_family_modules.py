"""The family modules: which extension module steps each env family, loaded when first needed.

Each family is stepped by an extension module (``csrc/envs/<family>/module.cpp``)
exporting a ``family_plugin`` capsule that ``torchpool._core`` makes pools
through (``csrc/core/plugin.h`` checks that both were built alike) and the
tuple ``families`` of the C++ families it holds. A family file
(``torchpool/families/<family>.py``) declares its module once
(``FamilyModule``) and registers its ids through it, so the module of every
family is known from the ids alone. A module is imported when an id of its
family is first made, so ``import torchpool`` loads neither libmujoco nor ALE.
Modules that need packages installed as extras (``torchpool[mujoco]``, ...)
name the extra when one is missing.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from . import registry


@dataclass
class FamilyModule:
    """One extension module, ``torchpool.<name>``, as a family file declares it.

    ``extra``: the extra that installs what the module needs at run time (named when importing it fails).
    ``before_import``: what must happen first (libmujoco loaded: the module links it by its soname); it
    raises ImportError when a package is missing. ``families``: the C++ families the file's ids use (and
    those it declares ahead of registering their ids, ``declare``); tests/test_registry.py checks they are
    the built module's own ``families``.
    """

    name: str
    extra: str | None = None
    before_import: Callable[[], None] | None = None
    families: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.name in _DECLARED:
            raise ValueError(f"the extension module {self.name!r} is declared twice")
        _DECLARED[self.name] = self

    def declare(self, *families: str) -> None:
        """Makes this the module of ``families``: those whose ids are registered later (Atari's)."""
        for family in families:
            owner = _BY_FAMILY.setdefault(family, self)
            if owner is not self:
                raise ValueError(f"the env family {family!r} is declared by both {owner.name} and {self.name}")
            self.families.add(family)

    def register(self, entry: registry.EnvEntry, replace: bool = False) -> None:
        """``registry.register(entry)``, its family stepped by this module."""
        self.declare(entry.family)
        registry.register(entry, replace)

    def built(self) -> bool:
        """Whether this torchpool was built with the module (found without importing it)."""
        return importlib.util.find_spec(f"{__package__}.{self.name}") is not None

    def load(self) -> ModuleType:
        if self.before_import is not None:
            try:
                self.before_import()
            except ImportError as error:
                raise ImportError(f"{error}. These families need torchpool's {self.extra} extra: "
                                  f"pip install 'torchpool[{self.extra}]'") from None
        return importlib.import_module(f"{__package__}.{self.name}")


_DECLARED: dict[str, FamilyModule] = {}  # module name -> its declaration
_BY_FAMILY: dict[str, FamilyModule] = {}

# Families whose module was loaded from elsewhere (torchpool.register_cpp_env).
_ADDED: dict[str, ModuleType] = {}


def declared() -> dict[str, FamilyModule]:
    """Every declared module by name, once every family file has run."""
    registry.load_families()
    return dict(_DECLARED)


def add(family: str, module: ModuleType) -> None:
    """Makes ``module`` (one exporting a ``family_plugin``) the module of ``family``."""
    _ADDED[family] = module


def _declaration(family: str) -> FamilyModule | None:
    registry.load_families()
    return _BY_FAMILY.get(family)


def built(family: str) -> bool:
    """Whether this torchpool was built with the module of ``family`` (found without importing it)."""
    if family in _ADDED:
        return True
    declaration = _declaration(family)
    return declaration is not None and declaration.built()


def module(family: str) -> ModuleType:
    """The extension module of ``family``, imported (and its libraries loaded) on first use."""
    if family in _ADDED:
        return _ADDED[family]
    declaration = _declaration(family)
    if declaration is None:
        raise ValueError(f"no module steps the env family {family!r}")
    return declaration.load()


def plugin(family: str) -> Any:
    """The ``family_plugin`` capsule that ``torchpool._core.make`` takes for ``family``."""
    return module(family).family_plugin
