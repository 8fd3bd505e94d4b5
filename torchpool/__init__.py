"""torchpool: C++ vectorized RL environments that fill PyTorch tensors.

    pool = torchpool.make("CartPole-v1", num_envs=8)
    td = pool.reset()
    td = pool.step(torch.zeros(8, dtype=torch.int64))
"""

from . import gym as _gym  # noqa: F401  registers "torchpool/<EnvId>" with Gymnasium
from ._cpus import available_cpus
from .errors import EnvError
from .pool import InputError, Pool, make
from .registry import list_envs

# Eager: importing the submodule later would rebind `torchpool.stream` to it.
from .stream import stream

__version__ = "0.1.0"

__all__ = ["Pool", "make", "list_envs", "TorchPoolEnv", "stream", "EnvError", "InputError", "available_cpus",
           "__version__"]


def __getattr__(name: str):
    # Adapters import their frameworks (torchrl, …) only when first used.
    if name == "TorchPoolEnv":
        from .torchrl import TorchPoolEnv

        return TorchPoolEnv
    raise AttributeError(f"module 'torchpool' has no attribute {name!r}")
