"""Python envs in worker processes (``torchpool.make(env_fn)``, ``torchpool.make("gymnasium:<id>")``).

``process_pool`` is the parent's ``ProcessPool``; ``argument_checks`` refuses
mistakes before any process starts; ``in_caller`` steps cheap envs in the
calling process instead; ``launch`` starts a worker and talks to it until it
serves; ``supervisor`` restarts dead workers and stops hung ones;
``interrupts`` hears Ctrl-C while the caller waits on workers; ``spaces``
maps Gymnasium spaces to the core's fields; ``worker`` is the script each
worker process runs. docs/python_envs.md is the user's guide.
"""

from typing import Any

GYMNASIUM_PREFIX = "gymnasium:"


def is_process_env(env: Any) -> bool:
    """Whether ``torchpool.make(env)`` makes a process pool: a callable, a list of them, or ``"gymnasium:<id>"``."""
    if isinstance(env, str):
        return env.startswith(GYMNASIUM_PREFIX)
    return callable(env) or (isinstance(env, (list, tuple)) and len(env) > 0
                             and all(callable(f) for f in env))


def refuse_env_instances(env: Any) -> None:
    """Raises ``TypeError`` for a ``gymnasium.Env`` instance (or a list of them) given to ``make()``."""
    from .argument_checks import refuse_instances

    refuse_instances(env)
