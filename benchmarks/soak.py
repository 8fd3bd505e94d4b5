"""Soak: random calls, interrupts and env failures for N minutes, checking every row; then make/close cycles.

    python benchmarks/soak.py --minutes 30 --record # the recorded run: RESULTS.md section and soak.png
    python benchmarks/soak.py --seconds 45 --cycles 200   # tests/test_soak.py

Pools: CartPole-v1, Pong-v5, HalfCheetah-v5 and _Probe-v0 (random failures,
busy steps), each sync and async. Each round picks a pool and runs a random
run of calls on it — step / reset of random env subsets / step_into (sync),
send of random subsets of the idle envs / recv / reset (async) — while an
Interrupter delivers Ctrl-C inside random calls. Every row received is checked:

* no duplicate: a row arrives only for an env that was sent and not yet received;
* no loss: after every call, the envs in flight are exactly those sent and not received;
* monotonic: per env, ``episode_length`` is the last row's + 1 (0 after a reset,
  restarting after ``done``), and the probe's total-step counter goes up by
  exactly one per step; only where a call was discarded (an interrupted sync
  step or reset, NOTE [Interrupted calls]) may an env have stepped unseen, and
  then its next row must still move forward.

After the soak, RSS growth since warm-up; then ``--cycles`` make/close cycles,
with threads and file descriptors counted before and after. Prints a JSON
report (and writes it with ``--out``); exits 1 if an invariant broke.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time

import torch
from tqdm import tqdm

import torchpool
from torchpool.testing import Interrupter

POOLS = [
    # env, num_envs, batch_size, kwargs
    ("CartPole-v1", 8, None, {}),
    ("CartPole-v1", 8, 4, {}),
    ("Pong-v5", 4, None, {}),
    ("Pong-v5", 6, 3, {}),
    ("HalfCheetah-v5", 8, None, {"max_episode_steps": 50}),
    ("HalfCheetah-v5", 8, 4, {"max_episode_steps": 50}),
    ("_Probe-v0", 8, None, {"fail_probability": 0.02, "max_busy_us": 50.0, "episode_length": 7}),
    ("_Probe-v0", 8, 2, {"fail_probability": 0.02, "max_busy_us": 50.0, "episode_length": 7}),
]


class Broken(AssertionError):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Broken(message)


class Tracked:
    """A pool and what its envs' next rows must show."""

    def __init__(self, env_id: str, num_envs: int, batch_size: int | None, kwargs: dict, seed: int):
        self.pool = torchpool.make(env_id, num_envs=num_envs, batch_size=batch_size, seed=seed, **kwargs)
        self.probe = env_id == "_Probe-v0"
        self.length = [None] * num_envs     # episode_length of the env's last row; None: never reset
        self.total = [0] * num_envs         # probe: total steps
        self.unsure = [False] * num_envs    # the env may have stepped unseen (discarded call)
        self.reset_next = [False] * num_envs  # failed: its next step resets it
        self.sent: set[int] = set()
        self.rows = 0
        self.failures = 0
        self.out = torch.empty(self.pool.output_nbytes, dtype=torch.uint8) if not self.pool.is_async else None
        spec = self.pool.action_spec
        self.discrete = hasattr(spec, "n")
        self.spec = spec

    def actions(self, n: int) -> torch.Tensor:
        if self.discrete:
            return torch.randint(0, self.spec.n, (n,))
        return self.spec.low + (self.spec.high - self.spec.low) * torch.rand(n, *self.spec.shape)

    def idle(self) -> list[int]:
        return [i for i in range(self.pool.num_envs) if i not in self.sent]

    def rows_in(self, td, failed: list[int], reset: bool = False) -> None:
        ids = td["env_id"].tolist()
        lengths = td["episode_length"].tolist()
        dones = td["done"].tolist()
        totals = td["observation"][:, 3].tolist() if self.probe else None
        for row, env_id in enumerate(ids):
            self.rows += 1
            if not reset:
                check(env_id in self.sent, f"{self.pool}: a row for env {env_id}, which was not in flight")
                self.sent.discard(env_id)
            if reset:
                check(lengths[row] == 0, f"{self.pool}: env {env_id} reset row has length {lengths[row]}")
                if self.probe:  # a reset does not step: the total stays, unless a discarded step ran unseen
                    if self.unsure[env_id]:
                        check(totals[row] >= self.total[env_id], f"{self.pool}: env {env_id} total went back")
                    else:
                        check(totals[row] == self.total[env_id],
                              f"{self.pool}: env {env_id} total {self.total[env_id]} -> {totals[row]} in a reset")
                    self.total[env_id] = totals[row]
                self.length[env_id], self.unsure[env_id], self.reset_next[env_id] = 0, False, False
                continue
            if env_id in failed:
                self.failures += 1
                check(bool(td["truncated"][row]) and dones[row], f"{self.pool}: failed row of env {env_id} not done")
                self.reset_next[env_id] = True
                self.total[env_id] += 1
                continue
            last = self.length[env_id]
            if self.reset_next[env_id] and not self.unsure[env_id]:
                check(lengths[row] == 0,
                      f"{self.pool}: env {env_id} after a failure: length {lengths[row]}, not a reset")
            elif self.unsure[env_id] or last is None:
                pass  # a discarded step may have ended, failed or reset the episode unseen
            else:
                check(lengths[row] == last + 1, f"{self.pool}: env {env_id} length {last} -> {lengths[row]}")
            if self.probe:
                if self.unsure[env_id]:
                    check(totals[row] >= self.total[env_id], f"{self.pool}: env {env_id} total went back")
                elif not self.reset_next[env_id]:
                    check(totals[row] == self.total[env_id] + 1,
                          f"{self.pool}: env {env_id} total {self.total[env_id]} -> {totals[row]}")
                self.total[env_id] = totals[row]
            self.length[env_id] = 0 if dones[row] else lengths[row]
            self.unsure[env_id] = self.reset_next[env_id] = False

    def discarded(self, ids) -> None:
        for env_id in ids:
            self.unsure[env_id] = True
            self.sent.discard(env_id)

    def consistent(self) -> None:
        check(self.pool.in_flight == len(self.sent),
              f"{self.pool}: {self.pool.in_flight} envs in flight, {len(self.sent)} sent and not received")


def call(interrupter: Interrupter, tracked: Tracked, function):
    """(result, failed env ids, interrupted)."""
    try:
        interrupter.armed = True
        result = function()
        interrupter.armed = False
        return result, [], False
    except KeyboardInterrupt:
        interrupter.caught()
        return None, [], True
    except torchpool.EnvError as error:
        interrupter.armed = False
        return error.batch, error.env_ids, False


def reset_round(interrupter: Interrupter, t: Tracked, ids: list[int]) -> None:
    td, failed, interrupted = call(interrupter, t, lambda: t.pool.reset(env_ids=ids))
    if interrupted:
        t.discarded(ids)  # dropped whole: some of them may have been reset
    else:
        t.rows_in(td, failed, reset=True)


def sync_round(rng: random.Random, interrupter: Interrupter, t: Tracked) -> None:
    pool, n = t.pool, t.pool.num_envs
    choice = rng.random()
    if choice < 0.1 or t.length[0] is None:
        reset_round(interrupter, t,
                    sorted(rng.sample(range(n), rng.randint(1, n))) if t.length[0] is not None else list(range(n)))
        return
    t.sent.update(range(n))
    action = t.actions(n)
    if choice < 0.25:
        out, failed, interrupted = call(interrupter, t, lambda: pool.step_into(action, t.out))
        td = None if interrupted else _view(pool, out)
    else:
        td, failed, interrupted = call(interrupter, t, lambda: pool.step(action))
    if interrupted:
        t.discarded(range(n))
    else:
        t.rows_in(td, failed)


def _view(pool, out: torch.Tensor):
    """The TensorDict of a step_into() byte buffer."""
    from tensordict import TensorDict

    columns = {}
    for name, dtype, shape, offset in pool.output_layout():
        nbytes = pool.num_envs * int(torch.Size(shape).numel()) * dtype.itemsize
        columns[name] = out[offset:offset + nbytes].view(dtype).view(pool.num_envs, *shape)
    return TensorDict(columns, batch_size=[pool.num_envs])


def async_round(rng: random.Random, interrupter: Interrupter, t: Tracked) -> None:
    pool = t.pool
    if t.length[0] is None:
        reset_round(interrupter, t, list(range(pool.num_envs)))
        return
    idle = t.idle()
    choice = rng.random()
    if idle and choice < 0.1:
        reset_round(interrupter, t, sorted(rng.sample(idle, rng.randint(1, len(idle)))))
        return
    if idle and (choice < 0.55 or pool.in_flight < pool.batch_size):
        ids = rng.sample(idle, rng.randint(1, len(idle)))
        if pool.in_flight + len(ids) < pool.batch_size:
            ids = idle
        pool.send(t.actions(len(ids)), torch.tensor(ids))  # does not block: no interrupt needed
        t.sent.update(ids)
        return
    if pool.in_flight >= pool.batch_size:
        td, failed, interrupted = call(interrupter, t, pool.recv)
        if not interrupted:  # an interrupted recv() keeps its rows in flight
            t.rows_in(td, failed)


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def threads_and_fds() -> tuple[int, int]:
    return len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))


def cycles(count: int, seed: int, progress: bool) -> dict:
    gc.collect()
    time.sleep(0.2)  # the soak's joined threads leave /proc a moment after join() returns, as after the cycles
    before = threads_and_fds()
    rng = random.Random(seed)
    for i in tqdm(range(count), desc="make/close", leave=False, disable=not progress):
        # Pong is left out: building its ALE objects takes ~0.1 s an env.
        env_id, num_envs, batch_size, kwargs = rng.choice([p for p in POOLS if p[0] != "Pong-v5"])
        pool = torchpool.make(env_id, num_envs=num_envs, batch_size=batch_size, **kwargs)
        if pool.is_async:
            pool.async_reset()  # close with work in flight
        elif i % 2:
            pool.reset()
        if i % 3:
            pool.close()
        else:
            del pool  # garbage collection closes it
    gc.collect()
    time.sleep(0.2)
    after = threads_and_fds()
    return {"cycles": count, "threads_before": before[0], "threads_after": after[0],
            "fds_before": before[1], "fds_after": after[1]}


def soak(seconds: float, seed: int, progress: bool) -> dict:
    rng = random.Random(seed)
    pools = [Tracked(env, n, b, kwargs, seed + i) for i, (env, n, b, kwargs) in enumerate(POOLS)]
    interrupter = Interrupter(gap=0.05, seed=seed)
    start = time.perf_counter()
    warm_rss = None
    rounds = 0
    samples = [(0.0, rss_mib())]  # (seconds, RSS MiB) every 10 s, for the plot
    bar = tqdm(total=int(seconds), unit="s", desc="soak", disable=not progress)
    try:
        while (elapsed := time.perf_counter() - start) < seconds:
            if warm_rss is None and elapsed > min(60.0, 0.1 * seconds):
                gc.collect()
                warm_rss = rss_mib()
            if elapsed - samples[-1][0] >= 10.0:
                samples.append((elapsed, rss_mib()))
            tracked = rng.choice(pools)
            for _ in range(rng.randint(1, 30)):
                (async_round if tracked.pool.is_async else sync_round)(rng, interrupter, tracked)
                tracked.consistent()
                rounds += 1
            bar.n = int(elapsed)
            bar.refresh()
    finally:
        interrupter.stop()
        bar.close()
    gc.collect()
    end_rss = rss_mib()
    for tracked in pools:
        tracked.pool.close()
    return {"seconds": round(time.perf_counter() - start, 1), "calls": rounds,
            "rows_checked": sum(t.rows for t in pools), "env_failures": sum(t.failures for t in pools),
            "interrupts": interrupter.landed, "worst_interrupt_latency_s": round(interrupter.worst_latency, 4),
            "rss_warm_mib": round(warm_rss or end_rss, 1), "rss_end_mib": round(end_rss, 1),
            "rss_growth_mib": round(end_rss - (warm_rss or end_rss), 1),
            "warm_up_s": round(min(60.0, 0.1 * seconds), 1),
            "rss_samples": [(round(t, 1), round(m, 1)) for t, m in samples]}


def record(report: dict) -> None:
    """Writes soak.png (RSS over the run) and the soak section of RESULTS.md (benchmarks/harness)."""
    import harness

    figure, (axis,) = harness.panels(1, (7, 3.5))
    axis.plot([t / 60 for t, _ in report["rss_samples"]], [m for _, m in report["rss_samples"]], marker=".")
    axis.axvline(report["warm_up_s"] / 60, color="grey", linestyle="--", label="end of warm-up")
    axis.set_xlabel("minutes")
    axis.set_ylabel("RSS (MiB)")
    axis.legend()
    harness.save(figure, harness.OUTPUT / "soak.png",
                 title=f"soak: {report['rows_checked']:,} rows checked, {report['interrupts']:,} interrupts, "
                       f"{report['env_failures']:,} env failures")
    ok = "every invariant held" if report["ok"] else f"BROKEN: {report['broken']}"
    harness.record_section(
        "soak", "Soak: random calls, interrupts and env failures (`benchmarks/soak.py`)",
        question="Does a pool stay exact and leak nothing under a long run of random sync/async calls, env-id "
        "subsets, resets, Ctrl-C at random points and injected env failures (CartPole-v1, Pong-v5, "
        "HalfCheetah-v5, _Probe-v0; every row checked for loss, duplication and per-env monotonic "
        "counters)? Targets: RSS growth after warm-up <= 5 MiB; threads and file descriptors after the "
        "make/close cycles back to where they started.",
        body=[
            "| measure | value |",
            "|---|---:|",
            f"| soak length | {report['seconds'] / 60:.1f} min |",
            f"| calls | {report['calls']:,} |",
            f"| rows checked | {report['rows_checked']:,} |",
            f"| env failures injected (and raised as EnvError) | {report['env_failures']:,} |",
            f"| Ctrl-C delivered inside calls | {report['interrupts']:,} |",
            f"| worst interrupt latency | {report['worst_interrupt_latency_s'] * 1000:.0f} ms |",
            f"| RSS after warm-up ({report['warm_up_s']:.0f} s) -> end | {report['rss_warm_mib']:.1f} -> "
            f"{report['rss_end_mib']:.1f} MiB ({report['rss_growth_mib']:+.1f} MiB) |",
            f"| make/close cycles | {report['cycles']:,} |",
            f"| threads before -> after | {report['threads_before']} -> {report['threads_after']} |",
            f"| file descriptors before -> after | {report['fds_before']} -> {report['fds_after']} |",
            f"| result | {ok} |",
            "",
            "![RSS over the soak](soak.png)",
        ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None, help="soak length in minutes (default 1)")
    parser.add_argument("--seconds", type=float, default=None, help="soak length in seconds (overrides --minutes)")
    parser.add_argument("--cycles", type=int, default=1000, help="make/close cycles after the soak")
    parser.add_argument("--seed", type=int, default=0, help="seeds the calls, the interrupts and the pools")
    parser.add_argument("--out", default=None, help="also write the JSON report here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and soak.png")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else 60.0 * (args.minutes if args.minutes is not None else 1.0)
    report = {"torch_threads": torch.get_num_threads(), "cpus": torchpool.available_cpus()}
    try:
        report.update(soak(seconds, args.seed, not args.no_progress))
        report.update(cycles(args.cycles, args.seed, not args.no_progress))
        report["ok"] = True
    except Broken as error:
        report.update(ok=False, broken=str(error))
    text = json.dumps({k: v for k, v in report.items() if k != "rss_samples"}, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as file:
            file.write(text + "\n")
    if args.record and "rows_checked" in report:
        record(report)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
