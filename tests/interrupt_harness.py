"""Delivers SIGINT at random points of one kind of blocking call, and checks the pool after each.

Run as a script (``python interrupt_harness.py '<json list of cases>'``) by tests/test_interrupts.py,
so that a hang is a timeout and a KeyboardInterrupt never reaches pytest. The cases run one
after the other, each with a pool of its own.

``torchpool.testing.Interrupter`` sends SIGINT at random moments; it lands
only while armed, from just before a pool call until the statement after it.

Rows are checked with `_Probe-v0`, whose observation is [steps in the episode,
last action, resets, total steps]: per env, the total-steps counter of the
rows received must only go up (no stale or repeated row) and, where a call
cannot have been discarded (async recv), by exactly one per step (no lost row).
Prints one JSON line a case: its index, then calls, interrupts, worst interrupt latency and rows
checked, or the error that ended it.
"""

from __future__ import annotations

import json
import sys
import time
import traceback

import torch

import torchpool
from torchpool.testing import Interrupter


class Rows:
    """Per-env checks on probe rows (observation[:, 3] = the env's total steps)."""

    def __init__(self, num_envs: int):
        self.total = [None] * num_envs
        self.checked = 0

    def check(self, td, exact: bool, stepped: bool = True):
        ids = td["env_id"].tolist()
        totals = td["observation"][:, 3].tolist()
        assert len(set(ids)) == len(ids), f"an env appears twice in one batch: {ids}"
        for env_id, total in zip(ids, totals):
            last = self.total[env_id]
            if last is not None and stepped:
                if exact:
                    assert total == last + 1, f"env {env_id}: total steps {last} -> {total} (lost or stale row)"
                else:
                    assert total > last, f"env {env_id}: total steps {last} -> {total} (stale or repeated row)"
            self.total[env_id] = total
            self.checked += 1


def run(case: dict) -> dict:
    kind, env_id = case["call"], case["env"]
    seconds = case.get("seconds", 2.0)
    kwargs = dict(case.get("kwargs", {}))
    pool = torchpool.make(env_id, num_envs=case["num_envs"], batch_size=case.get("batch_size"),
                          num_threads=case.get("num_threads"), **kwargs)
    probe = env_id == "_Probe-v0"
    rows = Rows(pool.num_envs)
    interrupter = Interrupter(case.get("gap", 0.02), case.get("seed", 0))
    calls = 0
    deadline = None

    def running() -> bool:
        """True until `seconds` after the first call (a pool of slow-to-build envs must not eat the budget)."""
        nonlocal deadline
        if deadline is None:
            deadline = time.perf_counter() + seconds
        return time.perf_counter() < deadline

    spec = pool.action_spec

    def sample(n):
        if probe:
            return torch.ones(n, dtype=torch.int64)
        if hasattr(spec, "n"):
            return torch.randint(0, spec.n, (n,))
        return spec.low + (spec.high - spec.low) * torch.rand(n, *spec.shape)

    try:
        if kind in ("step", "reset", "step_into", "recv_into"):
            pool.reset()
            out = torch.empty(pool.output_nbytes, dtype=torch.uint8)
            while running():
                calls += 1
                action = sample(pool.num_envs)
                call = kind if kind != "reset" or calls % 2 else "step"
                try:
                    interrupter.armed = True
                    if call == "step":
                        td = pool.step(action)
                    elif call == "reset":
                        td = pool.reset()
                    elif call == "step_into":
                        pool.step_into(action, out)
                        td = None
                    else:
                        pool.send_into(action, out)
                        pool.recv_into()
                        td = None
                    interrupter.armed = False
                except KeyboardInterrupt:
                    interrupter.caught()
                    # A sync call interrupted leaves every env idle (NOTE [Interrupted calls]) ...
                    if call == "recv_into" and pool.in_flight:
                        pool.recv_into()  # ... but recv_into's send_into stays in flight, like recv()
                    assert pool.in_flight == 0, f"{call}: {pool.in_flight} envs left in flight"
                    continue
                if probe and td is not None and call == "step":
                    rows.check(td, exact=False)
            td = pool.step(sample(pool.num_envs))  # still works
            assert td.batch_size[0] == pool.num_envs
        elif kind == "recv":
            pool.async_reset()
            while running():
                calls += 1
                try:
                    interrupter.armed = True
                    td = pool.recv()
                    interrupter.armed = False
                except KeyboardInterrupt:
                    interrupter.caught()
                    continue  # the rows stay in flight: the next recv() gets them
                if probe:
                    rows.check(td, exact=True)
                ids = td["env_id"].clone()
                pool.send(sample(len(ids)), ids)
            assert pool.in_flight == pool.num_envs
        elif kind == "stream":
            policy = (lambda obs: torch.ones(obs.shape[0], dtype=torch.int64)) if probe else None
            if policy is None:
                n = pool.action_spec.n

                def policy(obs):
                    return torch.randint(0, n, (obs.shape[0],))
            stream = torchpool.stream(pool, policy, frames_per_batch=4 * pool.num_envs)
            while running():
                calls += 1
                try:
                    interrupter.armed = True
                    batch = next(iter(stream))
                    interrupter.armed = False
                except KeyboardInterrupt:
                    interrupter.caught()
                    assert pool.in_flight == 0, f"stream: {pool.in_flight} envs left in flight"
                    continue
                assert batch.batch_size[:2] == torch.Size([pool.num_envs, 4])
                if probe:
                    totals = batch["next", "observation"][:, :, 3]
                    assert bool((totals[:, 1:] > totals[:, :-1]).all()), "a stream batch repeats a step"
                    rows.checked += totals.numel()
        elif kind in ("torchrl_step", "torchrl_reset"):
            env = torchpool.TorchPoolEnv(env_id, pool.num_envs, _pool=pool)
            td = env.reset()
            while running():
                calls += 1
                call = "reset" if kind == "torchrl_reset" and calls % 2 else "step"
                try:
                    interrupter.armed = True
                    if call == "reset":
                        td = env.reset()
                    else:
                        td = env.rand_step(td)
                        td = td["next"].exclude("reward", "done", "terminated", "truncated")
                    interrupter.armed = False
                except KeyboardInterrupt:
                    interrupter.caught()
                    assert pool.in_flight == 0
                    td = env.reset()
                    continue
            env.rand_step(env.reset())
        else:
            raise ValueError(kind)
    finally:
        interrupter.stop()
    pool.close()
    return {"calls": calls, "interrupts": interrupter.landed, "rows": rows.checked,
            "worst_latency": interrupter.worst_latency}


if __name__ == "__main__":
    for case in json.loads(sys.argv[1]):
        try:
            report = run(case)
        except (Exception, KeyboardInterrupt):  # reported as this case's failure; the next case goes on
            report = {"error": traceback.format_exc()[-3000:]}
        print(json.dumps({"index": case["index"], **report}), flush=True)
