"""Pinned host buffers: pinned when CUDA is present, plain memory otherwise."""

import pytest
import torch

import torchpool


def test_buffers_are_pinned_exactly_when_cuda_is_available():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        td = pool.reset()
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].is_pinned() == torch.cuda.is_available()
        # The CPU fallback still moves to any device with the usual call.
        moved = td.to("cpu", non_blocking=True)
        assert torch.equal(moved["observation"], td["observation"])


@pytest.mark.cuda
def test_pinned_outputs_copy_to_the_gpu_without_blocking():
    with torchpool.make("Pendulum-v1", num_envs=64) as pool:
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
