"""torchpool.stream's batch labels: ``actor_id`` and ``policy_version`` (NOTE [Where a batch comes from]).

A learner that gathers batches from many actors bounds or corrects their lag
(IMPALA's V-trace, Sebulba) only if each batch says which actor collected it
and with which weights. The policy here reports its own weight as an extra,
so every test checks the label against the weights that actually acted.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchpool


class VersionedPolicy(nn.Module):
    """CartPole's policy whose one weight is the version the learner last set: its extra ``w`` tells who acted."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(()))

    def forward(self, observation: torch.Tensor):
        action = (observation[:, 2] > 0).long()
        return action, {"w": self.w.detach().expand(observation.shape[0]).clone()}


def learn(stream, policy: VersionedPolicy, batches: int) -> list:
    """The learner's loop: after each batch, one "update" (the weight becomes the next version) and its bump."""
    held = []
    for batch in stream:
        held.append(batch)
        with torch.no_grad():
            policy.w.add_(1.0)
        stream.policy_version += 1
        if len(held) == batches:
            break
    return held


def test_unlabelled_by_default():
    """Without ``actor_id``/``policy_version`` a batch has neither key: the default path is unchanged."""
    stream = torchpool.stream("CartPole-v1", VersionedPolicy(), num_envs=4, frames_per_batch=16, total_frames=32)
    for batch in stream:
        assert "actor_id" not in batch.keys() and "policy_version" not in batch.keys()


@pytest.mark.parametrize("prefetch", [False, True])
def test_each_batch_names_its_actor_and_the_weights_that_acted(prefetch):
    """Every frame's ``policy_version`` is the version of the weights that chose its action; ``actor_id`` is ours.

    Proves: labels are int64 ``[num_envs, T]``; without prefetch batch k
    carries version k (the learner's bump after batch k - 1 is seen); with
    prefetch batch k + 1 carries the version as batch k was handed out
    (0, 0, 1, 2, ...: one behind, as the snapshot that acted); and the
    batches a consumer holds keep their labels while later ones are made.
    """
    policy = VersionedPolicy()
    stream = torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=16, actor_id=3,
                              policy_version=0, prefetch=prefetch)
    held = learn(stream, policy, batches=5)
    versions = [int(batch["policy_version"][0, 0]) for batch in held]
    assert versions == ([0, 0, 1, 2, 3] if prefetch else [0, 1, 2, 3, 4])
    for batch in held:
        assert batch["actor_id"].shape == batch["policy_version"].shape == (4, 4)
        assert batch["actor_id"].dtype == batch["policy_version"].dtype == torch.int64
        assert bool((batch["actor_id"] == 3).all())
        assert torch.equal(batch["policy_version"].float(), batch["w"]), "the label must name the weights that acted"


def test_split_envs_labels_a_batch_with_its_start():
    """With two env groups the label is the version at the batch's start; only group 0's first action may lag."""
    policy = VersionedPolicy()
    stream = torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=16, split_envs=True,
                              policy_version=0)
    held = learn(stream, policy, batches=3)
    for k, batch in enumerate(held):
        assert bool((batch["policy_version"] == k).all())
        acted = batch["w"]
        assert bool((acted[:, 1:] == k).all()) and bool((acted[2:, :] == k).all())
        assert bool((acted[:2, 0] >= k - 1).all())


def test_labels_must_be_ints():
    with pytest.raises(TypeError, match="actor_id"):
        torchpool.stream("CartPole-v1", VersionedPolicy(), num_envs=4, frames_per_batch=16, actor_id="a")
    with pytest.raises(TypeError, match="policy_version"):
        torchpool.stream("CartPole-v1", VersionedPolicy(), num_envs=4, frames_per_batch=16, policy_version=True)
