"""torchpool under Ray: 1 vs 2 collectors on a local two-node cluster, and what shipping a batch costs.

Question: what does torchrl's RayCollector over TorchPoolEnv deliver next to
the same pools in one process, and how long does one [N, T] batch take
through Ray's object store, against its size? From that, how many frames/s
would 4, 16 and 64 nodes of 16 cores give (a projection, not a measurement)?

    python benchmarks/distributed.py            # full run; writes its section of RESULTS.md
    python benchmarks/distributed.py --quick    # smoke test; prints only

Method. One process: a torchrl ``Collector`` per pool (CartPole-v1,
``--num-envs`` envs, ``--steps`` steps a batch, one thread each), stepped
in turn, with a random policy. Ray: a ``ray.cluster_utils.Cluster`` with a
head and one worker node of one CPU each, a sync ``RayCollector`` with 1 or
2 remote collectors (one per node), the same pools. Frames/s over
``--batches`` batches after one warm-up batch. Shipping: an actor holds a
CartPole-layout batch (what TorchPoolEnv's collector yields) of N x T
frames and returns it on each call; the time per ``ray.get`` less an empty
call's round trip is the cost of moving it through the object store.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import harness


def make_env(num_envs: int):
    from torchpool import TorchPoolEnv
    return TorchPoolEnv("CartPole-v1", num_envs, num_threads=1)


def local_rate(pools: int, num_envs: int, steps: int, batches: int) -> float:
    from torchrl.collectors import Collector
    collectors = [Collector(make_env(num_envs), None, frames_per_batch=num_envs * steps, total_frames=-1)
                  for _ in range(pools)]
    iterators = [iter(c) for c in collectors]
    for it in iterators:
        next(it)
    start = time.perf_counter()
    for _ in range(batches):
        for it in iterators:
            next(it)
    elapsed = time.perf_counter() - start
    for c in collectors:
        c.shutdown()
    return pools * num_envs * steps * batches / elapsed


def ray_rate(collectors: int, num_envs: int, steps: int, batches: int) -> float:
    import functools

    from torchrl.collectors.distributed import RayCollector
    fpb = collectors * num_envs * steps
    collector = RayCollector([functools.partial(make_env, num_envs)] * collectors, None, frames_per_batch=fpb,
                             total_frames=fpb * (batches + 1), sync=True,
                             remote_configs={"num_cpus": 1, "memory": 256 * 1024**2})
    iterator = iter(collector)
    next(iterator)
    start = time.perf_counter()
    frames = sum(batch.numel() for batch in iterator)
    elapsed = time.perf_counter() - start
    collector.shutdown()
    return frames / elapsed


def shipping(sizes: list[tuple[int, int]], repeats: int) -> list[tuple[int, int, int, float, float]]:
    """(N, T, bytes, ms per batch, ms of an empty round trip) for each size."""
    import ray

    @ray.remote(num_cpus=1)
    class Holder:
        def __init__(self, num_envs: int, steps: int):
            env = make_env(num_envs)
            self.batch = env.rollout(steps, break_when_any_done=False)
            env.close()

        def get(self):
            return self.batch

        def nbytes(self):
            return sum(t.numel() * t.element_size() for t in self.batch.values(True, True))

        def ping(self):
            return None

    rows = []
    for num_envs, steps in sizes:
        holder = Holder.remote(num_envs, steps)
        nbytes = ray.get(holder.nbytes.remote())
        ray.get(holder.get.remote())
        empty, full = [], []
        for _ in range(repeats):
            tick = time.perf_counter()
            ray.get(holder.ping.remote())
            empty.append(time.perf_counter() - tick)
            tick = time.perf_counter()
            ray.get(holder.get.remote())
            full.append(time.perf_counter() - tick)
        rows.append((num_envs, steps, nbytes, 1e3 * statistics.median(full), 1e3 * statistics.median(empty)))
        ray.kill(holder)
    return rows


def draw_plot(local: dict[int, float], remote: dict[int, float], ship: list, path) -> None:
    """Left: frames/s of 1 and 2 collectors in one process and on the two-node cluster. Right: ms to ship a
    batch through Ray's object store against its size, beside an empty round trip."""
    figure, (rates, costs) = harness.panels(2, (6.0, 4.5))
    harness.grouped_bars(rates, ["1 collector", "2 collectors"],
                         {"one process": [local[1], local[2]], "Ray, 2 nodes": [remote[1], remote[2]]})
    rates.set(ylabel="frames/s", title="CartPole-v1, 16 envs x 64 steps a batch")
    frames = [n * t for n, t, *_ in ship]
    costs.plot(frames, [ms for *_, ms, _ in ship], marker="o", label="ship a batch (ray.get)")
    costs.plot(frames, [empty for *_, empty in ship], marker="s", linestyle="--", label="empty round trip")
    costs.set(xscale="log", yscale="log", xlabel="frames a batch", ylabel="ms", title="Ray's object store")
    costs.legend(fontsize=8)
    costs.grid(True, which="both", alpha=0.3)
    harness.save(figure, path, title="torchpool under Ray (local two-node cluster)", info=harness.machine())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    if args.quick:
        args.batches = 3
    import ray
    from ray.cluster_utils import Cluster

    local = {pools: local_rate(pools, args.num_envs, args.steps, args.batches) for pools in (1, 2)}
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 200 * 1024**2})
    cluster.add_node(num_cpus=1, object_store_memory=200 * 1024**2)
    cluster.wait_for_nodes()
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # this script's functions, on every worker
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        remote = {n: ray_rate(n, args.num_envs, args.steps, args.batches) for n in (1, 2)}
        sizes = [(16, 64), (64, 128), (256, 256)] if not args.quick else [(16, 64)]
        ship = shipping(sizes, repeats=5 if args.quick else 20)
    finally:
        ray.shutdown()
        cluster.shutdown()

    fpb = args.num_envs * args.steps
    body = ["| where | collectors (pools) | frames/s |", "|---|---:|---:|"]
    body += [f"| one process | {n} | {rate:,.0f} |" for n, rate in local.items()]
    body += [f"| Ray, 2 nodes | {n} | {rate:,.0f} |" for n, rate in remote.items()]
    body += ["", "| batch N x T | frames | MiB | ms per batch (get) | empty round trip ms | us per frame | "
             "share of collecting it at the one-pool rate |", "|---|---:|---:|---:|---:|---:|---:|"]
    for num_envs, steps, nbytes, ms, empty in ship:
        frames = num_envs * steps
        collect_ms = 1e3 * frames / local[1]
        body.append(f"| {num_envs} x {steps} | {frames:,} | {nbytes / 2**20:.2f} | {ms:.2f} | {empty:.2f} | "
                    f"{1e3 * (ms - empty) / frames:.3f} | {100 * ms / collect_ms:.1f}% |")
    print("\n".join(body))
    if not args.quick:
        draw_plot(local, remote, ship, harness.OUTPUT / "distributed.png")
        body += ["", "![RayCollector frames/s and the cost of shipping a batch](distributed.png)"]
        harness.record_section(
            "distributed", "torchpool under Ray: RayCollector vs one process, and shipping batches",
            question="What does torchrl's RayCollector over TorchPoolEnv deliver on a local two-node Ray cluster "
                     "next to the same pools in one process, and what does one batch cost through Ray's object "
                     "store? (Projection to 4/16/64 nodes: docs/distributed.md.)",
            settings=[f"- Settings: CartPole-v1, {args.num_envs} envs x {args.steps} steps a batch ({fpb} frames), "
                      "one thread a pool, random policy; Ray: `ray.cluster_utils.Cluster`, head + 1 worker node, "
                      "1 CPU each, on this one machine (loopback), sync RayCollector; shipping: an actor returns "
                      "a held TorchPoolEnv rollout TensorDict, median of 20 gets"],
            body=body, packages=("torch", "torchrl", "ray"))


if __name__ == "__main__":
    main()
