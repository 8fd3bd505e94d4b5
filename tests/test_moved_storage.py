"""The engine never writes into memory it no longer owns (NOTE [Moved storage], NOTE [Output ring reuse]).

A user may move the memory behind an output (``share_memory_()``, which a
``torch.multiprocessing`` queue or a ``DataLoader`` worker calls, or
``resize_()``), and may keep any output while the pool goes on. Each test
checks that the outputs stay exactly what an untouched run gives, and that
what the user moved or kept is never written again.
"""

import multiprocessing

import pytest
import torch
from tensordict import TensorDict

import torchpool


def lean_right(observation: torch.Tensor) -> torch.Tensor:
    return (observation[:, 2] > 0).long()


def pool_outputs(touch, steps: int = 40) -> list[TensorDict]:
    """Clones of ``steps`` outputs of a CartPole pool; ``touch(td)`` is done to each output first."""
    outputs = []
    with torchpool.make("CartPole-v1", num_envs=4, seed=1) as pool:
        observation = pool.reset()["observation"]
        for _ in range(steps):
            td = pool.step(lean_right(observation))
            observation = td["observation"].clone()
            outputs.append(td.clone())
            touch(td)
            del td
    return outputs


@pytest.mark.parametrize("touch", ["share_memory_", "resize_to_zero"])
def test_pool_outputs_whose_memory_moved_are_replaced(touch):
    def move(td):
        if touch == "share_memory_":
            td.share_memory_()
        else:
            td["env_id"].untyped_storage().resize_(0)

    expected = pool_outputs(lambda td: None)
    got = pool_outputs(move)
    for step, (a, b) in enumerate(zip(expected, got)):
        assert (a == b).all(), f"step {step}: outputs differ once the user moved the previous outputs' memory"


def test_shared_pool_outputs_are_never_written_again():
    with torchpool.make("CartPole-v1", num_envs=4, seed=1) as pool:
        pool.reset()
        kept = []
        for _ in range(20):
            td = pool.step(torch.ones(4, dtype=torch.int64))
            td.share_memory_()
            kept.append((td, td.clone()))
            del td
        kept = [(shared, copy) for shared, copy in kept[::3]]  # let most of them go
        for _ in range(20):
            pool.step(torch.zeros(4, dtype=torch.int64))
        for index, (shared, copy) in enumerate(kept):
            assert (shared == copy).all(), f"shared output {index} was written after it was shared"


def stream_batches(touch, batches: int = 12) -> list[TensorDict]:
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=64,
                              total_frames=64 * batches, seed=2)
    out = []
    for batch in stream:
        out.append(batch.clone())
        touch(batch)
    return out


def test_stream_batches_shared_by_the_consumer_are_replaced():
    expected = stream_batches(lambda b: None)
    shared = []
    got = stream_batches(lambda b: shared.append((b.share_memory_(), b.clone())) if len(shared) < 3 else
                         b.share_memory_())
    for index, (a, b) in enumerate(zip(expected, got)):
        assert (a == b).all(), f"batch {index} differs once earlier batches were shared"
    for index, (batch, copy) in enumerate(shared):
        assert (batch == copy).all(), f"shared batch {index} was written after it was shared"


def _sum_observations(queue_in, queue_out):
    while (batch := queue_in.get()) is not None:
        queue_out.put(float(batch["next", "observation"].double().sum()))
        del batch


def test_stream_batches_sent_through_a_torch_multiprocessing_queue():
    context = torch.multiprocessing.get_context("spawn")
    queue_in, queue_out = context.Queue(), context.Queue()
    child = context.Process(target=_sum_observations, args=(queue_in, queue_out), daemon=True)
    child.start()
    try:
        stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=64,
                                  total_frames=64 * 8, seed=2)
        local = []
        for batch in stream:
            local.append(float(batch["next", "observation"].double().sum()))
            queue_in.put(batch)  # the queue moves the batch's storage into shared memory
        remote = [queue_out.get(timeout=60) for _ in local]
        queue_in.put(None)
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    assert remote == local, "the child process received other data than the stream handed out"
    assert local == [float(b["next", "observation"].double().sum()) for b in stream_batches(lambda b: None, 8)]


def _identity(batch):
    return batch


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_stream_runs_in_a_forked_dataloader_worker():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=64, total_frames=64 * 6,
                              seed=2)
    loader = torch.utils.data.DataLoader(stream, batch_size=None, num_workers=1, collate_fn=_identity,
                                         multiprocessing_context="fork")
    got = [batch.clone() for batch in loader]
    expected = stream_batches(lambda b: None, 6)
    assert len(got) == len(expected)
    for index, (a, b) in enumerate(zip(expected, got)):
        assert (a == b).all(), f"batch {index} from the DataLoader worker differs from the stream's own"


def test_output_targets_whose_memory_moved_are_refused():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        tensors = {key: torch.zeros(4, *shape, dtype=dtype) for key, (dtype, shape) in pool.output_spec.items()}
        targets = pool.output_targets(tensors)
        pool.step_into(torch.zeros(4, dtype=torch.int64), targets)
        tensors["reward"].share_memory_()
        with pytest.raises(ValueError, match="output target 'reward' has moved"):
            pool.step_into(torch.zeros(4, dtype=torch.int64), targets)
        pool.step(torch.zeros(4, dtype=torch.int64))  # the pool is still usable


def test_a_refused_recv_marks_no_block_handed_out():
    """A recv() refused for too few envs in flight leaves the ring's books as they were.

    Marked handed out, the block the rows in flight land in would be
    re-pointed by the next send() while those rows are being written.
    """
    with torchpool.make("_Probe-v0", num_envs=4, batch_size=2, episode_length=1000) as pool:
        pool.async_reset()
        for _ in range(2):
            td = pool.recv()
        pool.send(torch.ones(1, dtype=torch.int64), td["env_id"][:1])
        before = list(pool._handed_out)
        with pytest.raises(RuntimeError, match="needs batch_size=2 envs in flight, but 1 are"):
            pool.recv()
        assert pool._handed_out == before, "the refused recv() marked a block handed out"
        pool.send(torch.ones(1, dtype=torch.int64), td["env_id"][1:])
        batch = pool.recv()
        assert sorted(batch["env_id"].tolist()) == sorted(td["env_id"].tolist())
        assert (batch["observation"][:, 1] == 1).all(), "a row of the batch was lost"


def test_the_core_refuses_to_repoint_a_block_that_rows_in_flight_land_in():
    with torchpool.make("_Probe-v0", num_envs=4, batch_size=2, episode_length=1000) as pool:
        pool.async_reset()
        core = pool._core
        busy = core.next_block
        owner = core.owner(busy)
        with pytest.raises(ValueError, match=f"block {busy} cannot be pointed at other memory: rows in flight"):
            core.set_block(busy, owner.data.data_ptr(), owner)
        free = (busy + 2) % len(pool._home)  # rows 0..3 fill blocks busy and busy + 1 only
        core.set_block(free, core.owner(free).data.data_ptr(), core.owner(free))
        assert pool.recv().batch_size[0] == 2
