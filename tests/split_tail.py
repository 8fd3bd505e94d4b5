"""NOTE [Split tail] (csrc/core/split_tail.h): a sync pool on 2+ threads runs the last envs of a step one
physics step at a time on whichever thread is free. Every output must be bit-identical to a one-thread pool's,
where each step runs whole; the MuJoCo and Control Suite tests check that with this helper."""

import numpy as np
import torch

import torchpool


def assert_split_steps_equal_one_thread(env_id: str, num_envs: int, steps: int, **make_kwargs) -> dict:
    """Steps a pool on one thread, then on two with step() and with send()/recv(), under the same seeded
    actions; asserts every output equal and returns the one-thread outputs, [steps, num_envs, ...] per key."""

    def run(num_threads: int, send_recv: bool) -> dict[str, torch.Tensor]:
        with torchpool.make(env_id, num_envs=num_envs, num_threads=num_threads, seed=5, obs_dtype=torch.float64,
                            **make_kwargs) as pool:
            shape = (num_envs, *pool.action_spec.shape)
            actions = torch.from_numpy(np.random.default_rng(4).uniform(-1, 1, size=(steps, *shape)))
            pool.reset()
            rows = []
            for action in actions:
                if send_recv:  # the caller leaves the whole step to the worker until recv()
                    pool.send(action)
                    rows.append(pool.recv().clone())
                else:
                    rows.append(pool.step(action).clone())
            return {key: torch.stack([row[key] for row in rows]) for key in rows[0].keys()}

    one = run(1, send_recv=False)
    for send_recv in (False, True):
        split = run(2, send_recv)
        for key, expected in one.items():
            assert torch.equal(split[key], expected), f"{key} differs from one thread (send_recv={send_recv})"
    return one
