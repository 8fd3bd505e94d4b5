"""The stream's helpers (``torchpool.stream`` is the public module): ``rollout_batch`` lays out a
batch and transposes steps into it, ``policy_call`` calls a policy and reads its action,
``prefetch`` collects the next batch on a background thread."""
