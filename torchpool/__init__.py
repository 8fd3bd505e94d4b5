"""torchpool: C++ vectorized RL environments that fill PyTorch tensors.

    pool = torchpool.make("CartPole-v1", num_envs=8)
    td = pool.reset()
    td = pool.step(torch.zeros(8, dtype=torch.int64))
"""

import importlib.util
import os as _os

try:
    from . import pool as _pool  # noqa: F401  the first import of the compiled extension, torchpool._core
except ImportError:
    # `from . import _core` in pool.py reports a missing extension as "cannot
    # import name '_core'", so ask whether it exists rather than parse that.
    if importlib.util.find_spec(f"{__name__}._core") is not None:
        raise  # built, and something else is missing or broken: that error says what
    # A source tree without its build: Python found the checkout's torchpool/
    # (the current directory comes first on sys.path) rather than an install.
    raise ImportError(
        f"torchpool is not built; run from outside the checkout or `pip install -e .` "
        f"({__path__[0]} is a source tree without the compiled extension torchpool._core)",
        name=__name__, path=__file__) from None

from . import families as _families  # noqa: F401  each family registers its ids
from . import gym as _gym  # noqa: F401  registers "torchpool/<EnvId>" with Gymnasium
from ._cpus import available_cpus
from .cpp_env import include_dir, register_cpp_env
from .errors import BuildError, EnvError
from .pool import InputError, Pool, make
from .registry import list_envs

# Eager: importing the submodule later would rebind `torchpool.stream` to it.
from .stream import stream

_crash_report = _os.environ.get("TORCHPOOL_CRASH_REPORT")  # 1 or a path: torchpool.testing.crash_report
if _crash_report is not None:
    _pool.install_crash_report("" if _crash_report in ("", "1") else _crash_report)

__version__ = "0.1.0"

__all__ = ["Pool", "make", "list_envs", "TorchPoolEnv", "stream", "EnvError", "InputError", "BuildError",
           "register_cpp_env", "include_dir", "available_cpus", "__version__"]


def __getattr__(name: str):
    # Adapters import their frameworks (torchrl, …) only when first used.
    if name == "TorchPoolEnv":
        from .torchrl import TorchPoolEnv

        return TorchPoolEnv
    raise AttributeError(f"module 'torchpool' has no attribute {name!r}")
