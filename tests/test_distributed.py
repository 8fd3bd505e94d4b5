"""torchrl's distributed collectors over TorchPoolEnv: RayCollector on a local two-node cluster, DistributedCollector.

One Ray cluster (a head and a worker node, one CPU each, so two
collectors that ask one CPU each must land on different nodes) is started
once for the file and shut down at its end. Every collector here is a
torchrl collector around a ``TorchPoolEnv``: these tests prove that the
pieces fit (every frame delivered, seeds apart, weights reach each pool,
nothing left behind) and pin down what happens when a node is lost.
docs/distributed.md is the user's side of the same facts.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import textwrap
import time

import pytest
import slurm_cluster
import torch
from distributed_script import run_watched
from python_envs import alive
from side_venv import unavailable
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn

torchrl = pytest.importorskip("torchrl")
from torchrl.modules import ProbabilisticActor  # noqa: E402

from torchpool import Pool, TorchPoolEnv  # noqa: E402

try:
    import ray
    from ray.cluster_utils import Cluster
    from torchrl.collectors.distributed import RayCollector
except ImportError:  # Ray is an optional extra; without it only the torch.distributed test runs
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason="needs ray (pip install 'torchpool[ray]')")

NUM_ENVS = 4
# torchrl's default asks 2 GiB of memory per collector, which a small box cannot schedule;
# num_cpus=1 on nodes of one CPU each puts the two collectors on different nodes.
REMOTE_CONFIG = {"num_cpus": 1, "memory": 256 * 1024**2}
OBJECT_STORE = 80 * 1024**2  # Ray's minimum is 75 MiB


def make_env(seed: int | None = None) -> TorchPoolEnv:
    return TorchPoolEnv("CartPole-v1", NUM_ENVS, num_threads=1, seed=seed)


def make_actor() -> ProbabilisticActor:
    torch.manual_seed(0)
    return ProbabilisticActor(
        TensorDictModule(nn.Linear(4, 2), in_keys=["observation"], out_keys=["logits"]),
        in_keys=["logits"], distribution_class=torch.distributions.Categorical)


def linear(actor: ProbabilisticActor) -> nn.Linear:
    return actor.module[0].module


def tag_actor_id(batch: TensorDictBase, actor_id: int) -> None:
    """A collector's ``post_collect_hook``: stamps the batch, in the remote collector, with who collected it."""
    batch.set("actor_id", torch.full(batch.shape, actor_id, dtype=torch.int64))


def tagged_kwargs(num_collectors: int) -> list[dict]:
    # torchrl's own policy version (a PolicyVersion transform, bumped by every update_policy_weights_)
    # plus our actor id: each batch then says which weights and which collector produced it.
    return [{"track_policy_version": True, "post_collect_hook": functools.partial(tag_actor_id, actor_id=i)}
            for i in range(num_collectors)]


def assert_continues(previous: TensorDictBase | None, batch: TensorDictBase) -> None:
    """Asserts ``batch`` ``[N, T]`` picks up where ``previous`` (the same collector's last batch) left off.

    Within a batch each root observation is the previous step's ("next",
    "observation") unless that step ended an episode; across batches the same
    holds from the last step of one to the first of the next. A dropped or
    repeated frame breaks the chain.
    """
    if previous is not None:
        batch = torch.cat([previous[:, -1:], batch], dim=1)
    done = batch["next", "done"][:, :-1, 0]
    same = ~done
    assert torch.equal(batch["observation"][:, 1:][same], batch["next", "observation"][:, :-1][same]), \
        "a collector's frames must follow on from one batch to the next"
    length = batch["episode_length"][..., 0]
    assert torch.equal(batch["next", "episode_length"][..., 0], length + 1)


def actor_pids(collector) -> list[int]:
    return ray.get([remote.__ray_call__.remote(lambda self: os.getpid()) for remote in collector.remote_collectors])


def still_listed(list_left, timeout_s: float) -> list:
    """What ``list_left()`` still lists once it lists nothing or ``timeout_s`` has passed."""
    deadline, left = time.monotonic() + timeout_s, list_left()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = list_left()
    return left


def wait_gone(pids: list[int], timeout: float = 20.0) -> list[int]:
    """The processes of ``pids`` still running (zombies count as gone) after up to ``timeout`` s."""
    return still_listed(lambda: [pid for pid in pids if alive(pid)], timeout)


def shm() -> set[str]:
    return set(os.listdir("/dev/shm"))


@pytest.fixture(scope="module")
def cluster():
    """A head and one worker node on this machine, one CPU each; the driver (this process) connects to it."""
    c = Cluster(initialize_head=True, head_node_args={
"num_cpus": 1, "object_store_memory": OBJECT_STORE})
    c.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
    c.wait_for_nodes()
    # The factories and hooks below live in this test module, which Ray's workers cannot import (tests/
    # is not a package on their path): pickle them by value. A user's script shares the concern: see
    # docs/distributed.md, "What every node needs".
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def alive_nodes() -> list[dict]:
    return [node for node in ray.nodes() if node["Alive"]]


@needs_ray
def test_ray_collector_sync_exact_frames_weights_and_clean_shutdown(cluster):
    """Sync RayCollector, 2 collectors on 2 nodes: every frame arrives once, weights reach both pools, nothing stays.

    Proves: the batches sum to ``total_frames`` exactly, each collector's
    frames chain from batch to batch (none dropped or repeated), the two
    collectors ran on different nodes, after ``update_policy_weights_()``
    both remote pools' logits equal the learner's new weights applied to
    their observations and ``policy_version`` went up, and ``shutdown()``
    ends both actor processes and leaves no new /dev/shm entry.
    """
    assert len(alive_nodes()) == 2
    shm_before = shm()
    actor = make_actor()
    collector = RayCollector([make_env, make_env], actor, frames_per_batch=2 * NUM_ENVS * 8,
                             total_frames=2 * NUM_ENVS * 8 * 6, sync=True, remote_configs=REMOTE_CONFIG,
                             collector_kwargs=tagged_kwargs(2))
    pids = actor_pids(collector)
    nodes = ray.get([remote.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id())
                     for remote in collector.remote_collectors])
    assert len(set(nodes)) == 2, "one CPU per node must put the two collectors on different nodes"
    collector.update_policy_weights_()
    frames, previous, versions = 0, [None, None], []
    for batch in collector:
        assert batch.shape == (2, NUM_ENVS, 8)  # [collector, env, time]
        frames += batch.numel()
        assert torch.equal(batch["actor_id"][:, 0, 0], torch.tensor([0, 1]))
        for k in range(2):
            assert_continues(previous[k], batch[k])
            previous[k] = batch[k]
        with torch.no_grad():
            # The logits each remote pool computed are the learner's current weights on its observations.
            assert torch.allclose(batch["logits"], linear(actor)(batch["observation"]), atol=1e-5)
        # ("next", "policy_version") is the version the step was taken with; the root entry at t = 0 is the
        # previous batch's last stamp (torchrl's PolicyVersion stamps each step's output, and root t = next t-1).
        versions.append(batch["next", "policy_version"].unique().tolist())
        with torch.no_grad():
            linear(actor).weight.add_(0.5)
        collector.update_policy_weights_()
    assert frames == collector.total_frames == 2 * NUM_ENVS * 8 * 6
    assert all(len(v) == 1 for v in versions) and [v[0] for v in versions] == sorted({v[0] for v in versions}), \
        f"each sync batch is one policy version, one more per update: {versions}"
    # The sync iterator shuts its collectors down when total_frames is reached; shutdown() again is harmless.
    collector.shutdown()
    assert wait_gone(pids) == [], "shutdown() must end every remote collector's process"
    assert shm() - shm_before == set(), "no /dev/shm segment may outlive the collector"


@needs_ray
def test_ray_collector_async_every_batch_says_its_actor_and_version(cluster):
    """Async RayCollector: batches arrive as either collector finishes, each tagged with its actor and policy version.

    Proves: the frames sum to ``total_frames``; grouped by ``actor_id``
    each collector's batches chain (no frame lost); both collectors
    delivered; a batch's logits match the learner's weights of the
    version it carries (the lag is at most the one batch already in
    flight when the update was sent).
    """
    actor = make_actor()
    fpb, batches = NUM_ENVS * 8, 8
    collector = RayCollector([make_env, make_env], actor, frames_per_batch=fpb, total_frames=fpb * batches,
                             sync=False, remote_configs=REMOTE_CONFIG, collector_kwargs=tagged_kwargs(2))
    pids = actor_pids(collector)
    collector.update_policy_weights_()
    # (actor, version) -> the learner's weights that collector received as that version; the remote
    # collector tells its version (torchrl's get_policy_version) right after each update.
    sent = {(a, v): linear(actor).weight.detach().clone() for a, v in enumerate(collector.map_fn("get_policy_version"))}
    frames, previous, seen = 0, {}, []
    try:
        for batch in collector:
            assert batch.shape == (NUM_ENVS, 8)
            frames += batch.numel()
            actor_id = int(batch["actor_id"][0, 0])
            version = int(batch["next", "policy_version"][0, 0])
            assert (batch["actor_id"] == actor_id).all() and (batch["next", "policy_version"] == version).all()
            assert_continues(previous.get(actor_id), batch)
            previous[actor_id] = batch
            seen.append((actor_id, version))
            with torch.no_grad():
                expected = nn.functional.linear(batch["observation"], sent[actor_id, version], linear(actor).bias)
                assert torch.allclose(batch["logits"], expected, atol=1e-5), f"batch of version {version}"
                linear(actor).weight.add_(0.5)
            # Async: only the collector that delivered gets the new weights; its next batch carries them.
            collector.update_policy_weights_(worker_ids=actor_id)
            if frames < fpb * batches:  # the iterator shuts the collectors down after the last batch
                version = ray.get(collector.remote_collectors[actor_id].get_policy_version.remote())
                sent[actor_id, version] = linear(actor).weight.detach().clone()
    finally:
        collector.shutdown()
    assert frames == fpb * batches
    assert {a for a, _ in seen} == {0, 1}, f"both collectors must deliver: {seen}"
    for actor_id in (0, 1):
        own = [v for a, v in seen if a == actor_id]
        assert own == sorted(own) and own[-1] > own[0], f"collector {actor_id}'s versions must rise: {own}"
    assert wait_gone(pids) == []


@needs_ray
def test_ray_collector_seeds_collectors_apart_independent_of_nodes(cluster):
    """Seeds by collector index, not by node: both recipes give distinct, repeatable pools wherever Ray puts them.

    Proves: (a) factory k seeded ``base + k * num_envs`` starts collector k
    where a local ``Pool(seed=base + k * num_envs)`` starts; (b)
    ``collector.set_seed(s)`` followed by ``map_fn("reset")`` starts
    collector 0 at ``Pool(seed=s)``, collector 1 elsewhere (torchrl chains
    the seed from one collector to the next), and a second RayCollector
    seeded the same way collects the same first observations. Without the
    reset, RayCollector's single ``Collector`` keeps the observation it
    reset to when it was built, so the first frame would not be seeded.
    """
    def first_batch(make_envs, seed):
        collector = RayCollector(make_envs, make_actor(), frames_per_batch=2 * NUM_ENVS * 4,
                                 total_frames=2 * NUM_ENVS * 4, sync=True, remote_configs=REMOTE_CONFIG)
        try:
            collector.update_policy_weights_()
            if seed is not None:
                collector.set_seed(seed)
                collector.map_fn("reset")  # the collector's first observation must be the seeded reset's
            return next(iter(collector)).clone()
        finally:
            collector.shutdown()

    explicit = first_batch([functools.partial(make_env, 1000 + k * NUM_ENVS) for k in range(2)], seed=None)
    for k in range(2):
        with Pool("CartPole-v1", num_envs=NUM_ENVS, seed=1000 + k * NUM_ENVS) as pool:
            assert torch.equal(explicit["observation"][k, :, 0], pool.reset()["observation"])

    runs = [first_batch([make_env, make_env], seed=7) for _ in range(2)]
    assert torch.equal(runs[0]["observation"][:, :, 0], runs[1]["observation"][:, :, 0])
    assert not torch.equal(runs[0]["observation"][0, :, 0], runs[0]["observation"][1, :, 0])
    with Pool("CartPole-v1", num_envs=NUM_ENVS, seed=7) as pool:
        assert torch.equal(runs[0]["observation"][0, :, 0], pool.reset()["observation"])


@needs_ray
def test_ray_collector_when_a_node_dies_mid_run(cluster):
    """Losing the worker node mid-run: the RayCollector's iterator raises Ray's actor-death error, it does not hang.

    Proves (what docs/distributed.md states): killing the node that hosts
    one collector makes the next ``next(iterator)`` raise
    ``ray.exceptions.RayActorError`` (``ActorDiedError``/``ActorUnavailableError``)
    within a bounded time — torchrl does not restart the collector nor carry
    on with the survivor; ``shutdown()`` afterwards still ends the surviving
    actor. The node is replaced afterwards so the cluster is whole again.
    """
    collector = RayCollector([make_env, make_env], make_actor(), frames_per_batch=NUM_ENVS * 8, total_frames=10**9,
                             sync=False, remote_configs=REMOTE_CONFIG)
    pids = actor_pids(collector)
    worker = next(node for node in cluster.worker_nodes)
    iterator = iter(collector)
    next(iterator)
    cluster.remove_node(worker, allow_graceful=False)
    # The hang bound: a thread-free timeout via SIGALRM, since ray.wait in torchrl's iterator has none.
    def overran(signum, frame):
        raise TimeoutError("the collector hung after the node died")

    old = signal.signal(signal.SIGALRM, overran)
    signal.alarm(60)
    started = time.monotonic()
    try:
        with pytest.raises(ray.exceptions.RayActorError):
            for _ in range(10**6):
                next(iterator)
        elapsed = time.monotonic() - started
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        collector.shutdown()
        cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE)
        cluster.wait_for_nodes()
    print(f"node lost: the collector raised after {elapsed:.1f} s")
    assert wait_gone(pids) == []
    assert len(alive_nodes()) == 2


DISTRIBUTED_SCRIPT = textwrap.dedent("""
    import functools, sys, torch
    from torch import nn
    from tensordict.nn import TensorDictModule
    from torchrl.collectors.distributed import DistributedCollector
    from torchrl.modules import ProbabilisticActor
    from torchpool import TorchPoolEnv

    if __name__ == "__main__":
        port, out, launcher = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        # submitit: each collector an sbatch job of one CPU on the test's partition (tests/slurm_cluster.py);
        # submitit's folder, "log_test", lands in the current folder (the test's).
        slurm = {"slurm_partition": "test", "slurm_cpus_per_task": 1, "timeout_min": 5}
        torch.manual_seed(0)
        actor = ProbabilisticActor(
            TensorDictModule(nn.Linear(4, 2), in_keys=["observation"], out_keys=["logits"]),
            in_keys=["logits"], distribution_class=torch.distributions.Categorical)
        # Seeds apart by collector index, not by node: collector k's envs are 100 + 4k ... 100 + 4k + 3.
        makes = [functools.partial(TorchPoolEnv, "CartPole-v1", 4, seed=100 + 4 * k, num_threads=1) for k in range(2)]
        collector = DistributedCollector(makes, actor, frames_per_batch=2 * 4 * 8, total_frames=2 * 4 * 8 * 4,
                                         launcher=launcher, backend="gloo", tcp_port=port, sync=True,
                                         slurm_kwargs=slurm)
        batches, weights = [], []
        for batch in collector:
            batches.append(batch.clone())
            weights.append(actor.module[0].module.weight.detach().clone())
            with torch.no_grad():
                actor.module[0].module.weight.add_(0.5)
            collector.update_policy_weights_()
        collector.shutdown()
        torch.save({"batches": torch.stack(batches), "weights": torch.stack(weights),
                    "bias": actor.module[0].module.bias.detach(),
                    "jobs": [str(getattr(job, "job_id", "")) for job in collector.jobs]}, out)
        print("collected", len(batches), "batches", flush=True)
""")


def session_processes(sid: int) -> dict[int, str]:
    """Live processes of session ``sid`` (the collector's subprocess started one): pid -> command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":  # fields: state, ppid, pgrp, session
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    found[int(entry)] = cmdline.read().replace(b"\0", b" ").decode()[:200]
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A one-node SLURM cluster (tests/slurm_cluster.py) for the file's submitit test; its SLURM_CONF."""
    absent = slurm_cluster.missing()
    if absent:  # CI installs them: there the SLURM recipe must be tested
        unavailable(f"no SLURM here ({', '.join(absent)} missing: apt install slurmctld slurmd slurm-client munge)")
    with slurm_cluster.slurm_cluster(tmp_path_factory.mktemp("slurm")) as environment:
        yield environment


def wait_until_empty(list_left, what: str, timeout_s: float = 15) -> None:
    """Fails naming what ``list_left()`` still lists after ``timeout_s``."""
    left = still_listed(list_left, timeout_s)
    assert not left, f"{what}: {left}"


@pytest.mark.parametrize("launcher", ["mp", "submitit"])
def test_distributed_collector_two_collectors_over_gloo(tmp_path, request, launcher):
    """DistributedCollector (gloo), 2 collectors: every frame, seeds apart, weights reach both; launched by
    torchrl's mp launcher, and by submitit as two SLURM jobs on a one-node SLURM cluster (the SLURM recipe of
    docs/distributed.md).

    Proves: 4 sync batches of [2 collectors, 4 envs, 8] = total_frames; each collector's frames chain;
    collector k's first observations are a local ``Pool(seed=100 + 4k)``'s;
    each batch's logits are the weights the learner held when it asked for
    that batch; and the launcher leaves no child process (mp) or no job queued or running (SLURM).
    """
    environment = request.getfixturevalue("slurm") if launcher == "submitit" else {}
    out = tmp_path / "out.pt"
    process = run_watched(DISTRIBUTED_SCRIPT, out, launcher, env=environment)
    try:
        # The launcher's children exit after the main process: give them a few seconds, then name any left.
        wait_until_empty(lambda: session_processes(process.pid), f"the {launcher} launcher left processes behind")
    finally:
        if session_processes(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    saved = torch.load(out, weights_only=False)
    if launcher == "submitit":
        assert len(saved["jobs"]) == 2 and all(job.isdigit() for job in saved["jobs"]), saved["jobs"]
        wait_until_empty(lambda: slurm_cluster.jobs(environment), "SLURM jobs left after shutdown()")
    batches = saved["batches"]
    assert batches.numel() == 2 * 4 * 8 * 4
    # DistributedCollector's sync batch stacks the collectors: [collector, env, T].
    assert batches.shape == (4, 2, 4, 8), batches.shape
    for k in range(2):
        with Pool("CartPole-v1", num_envs=4, seed=100 + 4 * k) as pool:
            assert torch.equal(batches[0, k, :, 0]["observation"], pool.reset()["observation"])
        previous = None
        for batch in batches[:, k]:
            assert_continues(previous, batch)
            previous = batch
    for batch, weight in zip(batches, saved["weights"]):
        expected = nn.functional.linear(batch["observation"], weight, saved["bias"])
        assert torch.allclose(batch["logits"], expected, atol=1e-5)
