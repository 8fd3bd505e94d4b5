"""Pinned host buffers: opt-in (pin_memory=True), and only where CUDA is present."""

import pytest
import torch

import torchpool


@pytest.mark.parametrize("pin_memory", [None, False, True])
def test_buffers_are_pinned_only_when_asked_and_cuda_is_available(pin_memory):
    with torchpool.make("CartPole-v1", num_envs=4, pin_memory=pin_memory) as pool:
        td = pool.reset()
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].is_pinned() == (bool(pin_memory) and torch.cuda.is_available())
        # The CPU fallback still moves to any device with the usual call.
        moved = td.to("cpu", non_blocking=True)
        assert torch.equal(moved["observation"], td["observation"])


@pytest.mark.cuda
def test_pinned_outputs_copy_to_the_gpu_without_blocking():
    with torchpool.make("Pendulum-v1", num_envs=64, pin_memory=True) as pool:
        pool.reset()
        td = pool.step(torch.zeros(64, 1))
        assert td["observation"].is_pinned()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            on_gpu = td.to("cuda", non_blocking=True)
        stream.synchronize()
        assert torch.equal(on_gpu["observation"].cpu(), td["observation"])


@pytest.mark.cuda
def test_actions_on_the_gpu_are_accepted():
    with torchpool.make("CartPole-v1", num_envs=8) as pool:
        pool.reset()
        td = pool.step(torch.ones(8, dtype=torch.int64, device="cuda"))
        assert td["observation"].shape == (8, 4)


@pytest.mark.cuda
def test_a_pinned_output_dropped_after_a_non_blocking_copy_is_not_rewritten_before_the_copy():
    """NOTE [Pinned copies]: the copy is queued behind slow GPU work, the output dropped, the pool stepped on."""
    with torchpool.make("Pendulum-v1", num_envs=64, pin_memory=True) as pool:
        pool.reset()
        copies, expected = [], []
        for _ in range(12):
            td = pool.step(torch.rand(64, 1) * 4 - 2)
            expected.append(td["observation"].clone())
            torch.cuda._sleep(20_000_000)  # keeps the stream busy, so the copy runs late
            copies.append(td["observation"].to("cuda", non_blocking=True))
            del td
        torch.cuda.synchronize()
        for step, (copy, want) in enumerate(zip(copies, expected)):
            assert torch.equal(copy.cpu(), want), f"step {step}: the GPU received a rewritten pinned buffer"
