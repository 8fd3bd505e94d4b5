"""The exceptions torchpool raises beyond Python's own.

* ``InputError`` (a ``ValueError``): bad input, raised before anything is queued.
* ``EnvError`` (a ``RuntimeError``): envs raised inside step or reset. It is
  raised by the ``step()``/``recv()``/``reset()`` whose batch holds those envs'
  rows, and carries the whole batch, so no other env's result is lost.
* ``BuildError`` (a ``RuntimeError``): a C++ env header that did not compile
  (``register_cpp_env``); the message is the compiler's diagnostics.
"""

from __future__ import annotations

from typing import Any


class EnvError(RuntimeError):
    """One or more envs raised inside their step or reset.

    Attributes:
        env_ids: the ids of the envs that failed, in batch order.
        messages: ``{env_id: message}``.
        batch: the batch the call would have returned. Every row is there:
            the other envs' results as usual, and each failed env's row with
            a zeroed observation, reward 0, ``truncated`` and ``done`` set
            (its episode ends there).

    The pool stays usable: a failed env is reset by its next step (its action
    is ignored, as with ``next_step`` autoreset), or, with autoreset
    ``"disabled"``, must be ``reset(env_ids=...)`` first.
    """

    def __init__(self, env_ids: list[int], messages: list[str], batch: Any = None):
        self.env_ids = list(env_ids)
        self.messages = dict(zip(self.env_ids, messages))
        self.batch = batch
        super().__init__("\n".join(f"env {env_id}: {message}" for env_id, message in self.messages.items()))

    def __reduce__(self):  # picklable across processes, without the batch
        return (EnvError, (self.env_ids, list(self.messages.values())))


def _from_core(env_ids: list[int], messages: list[str], owner: Any, rows: int, reset: bool) -> EnvError:
    """Called by the extension: the EnvError of a failed batch held by ``owner``."""
    batch = getattr(owner, "tensordict", owner)
    if reset and batch is not None and batch.batch_size[0] != rows:
        batch = batch[:rows]
    return EnvError(env_ids, messages, batch)


class BuildError(RuntimeError):
    """A C++ env (``torchpool.register_cpp_env``) could not be built: the message is the compiler's diagnostics."""
