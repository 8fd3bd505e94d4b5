"""Python envs in worker processes (``torchpool.make(env_fn)``, ``torchpool.make("gymnasium:<id>")``).

``process_pool`` is the parent's ``ProcessPool``; ``argument_checks`` refuses
mistakes before any process starts; ``in_caller`` steps cheap envs in the
calling process instead; ``launch`` starts a worker and talks to it until it
serves; ``supervisor`` restarts dead workers and stops hung ones;
``interrupts`` hears Ctrl-C while the caller waits on workers; ``spaces``
maps Gymnasium spaces to the core's fields; ``worker`` is the script each
worker process runs. docs/python_envs.md is the user's guide.
"""

# Which env arguments make a process pool is an argument check of make()'s (torchpool/_arguments.py); the
# adapters ask it here.
from .._arguments import GYMNASIUM_PREFIX, is_process_env, refuse_env_instances

__all__ = ["GYMNASIUM_PREFIX", "is_process_env", "refuse_env_instances"]
