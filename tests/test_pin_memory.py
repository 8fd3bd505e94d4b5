"""Pinned memory is opt-in: a CPU-only pool never touches CUDA, even where CUDA is available."""

import subprocess
import sys
import textwrap

import pytest
import torch

import torchpool


def test_a_cpu_pool_allocates_no_pinned_memory_even_when_cuda_is_available():
    # CUDA made to look available: the old default pinned every buffer then
    # (which initialises CUDA; on this CPU build it raises).
    code = textwrap.dedent("""
        import torch
        torch.cuda.is_available = lambda: True
        import torchpool
        pool = torchpool.make("CartPole-v1", num_envs=4)
        td = pool.reset()
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert not pool.pin_memory
        for _ in torchpool.stream("CartPole-v1", lambda obs: torch.zeros(obs.shape[0], dtype=torch.int64),
                                  num_envs=4, frames_per_batch=8, total_frames=16):
            pass
        print(torch.cuda.is_initialized())
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "False"


def test_pin_memory_true_without_cuda_falls_back_to_plain_memory():
    with torchpool.make("CartPole-v1", num_envs=2, pin_memory=True) as pool:
        assert pool.pin_memory == torch.cuda.is_available()
        pool.reset()


def test_pin_memory_must_be_a_bool():
    with pytest.raises(TypeError, match="pin_memory"):
        torchpool.make("CartPole-v1", num_envs=2, pin_memory="yes")


@pytest.mark.cuda
def test_cuda_stream_pools_are_pinned():
    stream = torchpool.stream("CartPole-v1",
                              lambda obs: torch.zeros(obs.shape[0], dtype=torch.int64, device=obs.device),
                              num_envs=4, frames_per_batch=8, total_frames=8, device="cuda")
    for batch in stream:
        assert batch.device.type == "cuda"
    with torchpool.make("CartPole-v1", num_envs=4, pin_memory=True) as pool:
        assert torchpool.Pool.output_bytes(pool.reset()).is_pinned()


SPAWNED_CHILD = textwrap.dedent("""
    import multiprocessing as mp

    def child(queue):
        import torch
        torch.cuda.is_available = lambda: True  # as on a GPU machine (harmless on one)
        import torchpool
        pool = torchpool.make("CartPole-v1", num_envs=4)
        pool.reset()
        queue.put((pool.pin_memory, torch.cuda.is_initialized()))

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        process = ctx.Process(target=child, args=(queue,))
        process.start()
        print(queue.get(timeout=60))
        process.join()
""")


def test_a_spawned_cpu_pool_creates_no_cuda_context(tmp_path):
    # The child is a file: a spawned process re-imports the parent's main module to find
    # `child`, which code given with `python -c` has no file to import from.
    script = tmp_path / "spawned_cpu_pool.py"
    script.write_text(SPAWNED_CHILD)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"the spawned child failed:\n{result.stderr[-2000:]}"
    assert result.stdout.strip() == "(False, False)", \
        f"a spawned CPU pool reported (pin_memory, cuda initialised) = {result.stdout.strip()}, not (False, False)"
