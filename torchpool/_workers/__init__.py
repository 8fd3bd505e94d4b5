"""Python envs in worker processes (``torchpool.make(env_fn)``, ``torchpool.make("gymnasium:<id>")``).

``process_pool`` is the parent's ``ProcessPool``; ``launch`` starts a worker
and talks to it until it serves; ``supervisor`` restarts dead workers;
``spaces`` maps Gymnasium spaces to the core's fields; ``worker`` is the
script each worker process runs.
"""
