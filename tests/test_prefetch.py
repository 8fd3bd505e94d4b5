"""torchpool.stream(prefetch=True): every transition exactly once, the acting policy's log-probs, stopping."""

import threading

import pytest
import torch
from threads import started_since, torchpool_threads
from torch import nn

import torchpool
from torchpool._stream.prefetch import snapshot_policy


class Versioned(nn.Module):
    """A CartPole policy whose one weight counts the consumer's updates.

    ``act`` pushes towards the pole's lean (deterministic, so trajectories do not
    depend on the weight) and records the weight it acted with; ``sample`` draws
    from logits ``[version, 0]`` and records the draw's log-prob.
    """

    def __init__(self):
        super().__init__()
        self.version = nn.Parameter(torch.zeros(()))

    def act(self, observation):
        action = (observation[:, 2] > 0).long()
        return action, {"version": self.version.expand(observation.shape[0]).clone()}

    def sample(self, observation):
        logits = torch.stack([self.version.expand(observation.shape[0]), torch.zeros(observation.shape[0])], -1)
        distribution = torch.distributions.Categorical(logits=logits)
        action = distribution.sample()
        return action, {"sample_log_prob": distribution.log_prob(action),
                        "version": self.version.expand(observation.shape[0]).clone()}


def run(prefetch: bool, method: str, batches: int = 6, num_envs: int = 4, steps: int = 50, **kwargs):
    policy = Versioned()
    stream = torchpool.stream("CartPole-v1", getattr(policy, method), num_envs=num_envs, seed=5,
                              frames_per_batch=num_envs * steps, total_frames=num_envs * steps * batches,
                              prefetch=prefetch, **kwargs)
    collected = []
    for batch in stream:
        collected.append(batch.clone())
        with torch.no_grad():
            policy.version += 1.0  # the consumer's update, in place as an optimizer's
    return collected


@pytest.mark.parametrize("split_envs", [False, True])
def test_prefetch_keeps_every_transition_exactly_once(split_envs):
    plain = run(False, "act", split_envs=split_envs)
    ahead = run(True, "act", split_envs=split_envs)
    assert len(plain) == len(ahead) == 6
    for k, (expected, got) in enumerate(zip(plain, ahead)):
        for key in [("observation",), ("action",), ("next", "observation"), ("next", "reward"),
                    ("next", "done"), ("next", "terminated"), ("next", "episode_return"), ("env_id",)]:
            assert torch.equal(expected[key], got[key]), f"batch {k}, {key}"
    assert torch.cat([b["next", "done"] for b in ahead], 1).any(), "the rollout crosses episode ends"


def test_prefetch_acts_one_update_behind_and_says_so_in_the_batch():
    plain = run(False, "act")
    ahead = run(True, "act")
    for k, batch in enumerate(plain):
        assert torch.all(batch["version"] == k), f"without prefetch batch {k} is collected after update {k}"
    for k, batch in enumerate(ahead):
        assert torch.all(batch["version"] == max(k - 1, 0)), f"with prefetch batch {k} lags one update"


def test_prefetch_log_probs_are_those_of_the_policy_that_acted():
    torch.manual_seed(0)
    for k, batch in enumerate(run(True, "sample", batches=5)):
        version = max(k - 1, 0)
        logits = torch.tensor([float(version), 0.0])
        expected = torch.log_softmax(logits, 0)[batch["action"]]
        assert torch.all(batch["version"] == version)
        torch.testing.assert_close(batch["sample_log_prob"], expected)


class Normalized(nn.Module):
    """A CartPole policy with a running mean that the consumer reassigns (``self.mean = new``), not updates in
    place; ``act`` records the mean it acted with."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(()))

    def act(self, observation):
        action = (observation[:, 2] > 0).long()
        return action, {"mean": self.mean.expand(observation.shape[0]).clone()}


def test_prefetch_follows_a_buffer_the_consumer_reassigns():
    """The collector's copy once read the live module's tensors once: a reassigned buffer was never seen."""
    policy = Normalized()
    stream = torchpool.stream("CartPole-v1", policy.act, num_envs=2, seed=5, frames_per_batch=20, total_frames=100,
                              prefetch=True)
    for k, batch in enumerate(stream):
        assert torch.all(batch["mean"] == max(k - 1, 0)), f"batch {k} acted with mean {batch['mean'][0, 0]}"
        policy.mean = torch.full((), float(k + 1))  # a new tensor, as `self.mean = (1 - a) * self.mean + a * x`


def test_the_snapshot_follows_reassigned_reshaped_and_unsaved_tensors():
    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 2)
            self.head = nn.Linear(2, 2)
            self.register_buffer("scale", torch.ones(3))
            self.register_buffer("steps", torch.zeros((), dtype=torch.int64), persistent=False)

        def forward(self, observation):
            return self.head(self.body(observation * self.scale)).argmax(-1)

    policy = Policy()
    acting, refresh = snapshot_policy(policy)
    with torch.no_grad():
        policy.scale = torch.arange(4.0, dtype=torch.float64)  # another shape and dtype
        policy.body = nn.Linear(3, 2)  # a submodule replaced
        policy.head.bias += 1.0  # in place, as an optimizer
        policy.steps += 7  # a buffer state_dict() leaves out, in place
    refresh()
    for name, tensor in [*policy.named_parameters(), *policy.named_buffers()]:
        copied = dict([*acting.named_parameters(), *acting.named_buffers()])[name]
        assert copied is not tensor and copied.dtype == tensor.dtype and torch.equal(copied, tensor), name
    assert not any(p.requires_grad for p in acting.parameters())


def test_the_snapshot_follows_tied_weights_untied():
    policy = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    policy[1].weight = policy[0].weight
    acting, refresh = snapshot_policy(policy)
    policy[1].weight = nn.Parameter(torch.full((2, 2), 3.0))
    refresh()
    assert torch.equal(acting[0].weight, policy[0].weight) and torch.equal(acting[1].weight, policy[1].weight)


def test_the_snapshot_refuses_a_tensor_added_or_removed():
    policy = Normalized()
    _, refresh = snapshot_policy(policy)
    del policy.mean
    policy.register_buffer("std", torch.ones(()))
    with pytest.raises(ValueError, match=r"has tensors \['std'\] that it had not .* and lacks \['mean'\]"):
        refresh()


def test_prefetch_needs_a_module_policy():
    with pytest.raises(ValueError, match="prefetch=True needs the policy to be an nn.Module"):
        torchpool.stream("CartPole-v1", lambda obs: torch.zeros(obs.shape[0], dtype=torch.long),
                         num_envs=2, frames_per_batch=4, prefetch=True)


class Noop(nn.Module):
    def forward(self, observation):
        return torch.zeros(observation.shape[0], dtype=torch.long)


def test_breaking_out_stops_the_collector_and_closes_its_pools():
    before = torchpool_threads()
    stream = torchpool.stream("Pong-v5", Noop(), num_envs=4, frames_per_batch=64, prefetch=True)
    for k, _batch in enumerate(stream):
        if k == 2:
            break
    del _batch
    assert not any(t.name == "torchpool-prefetch" for t in threading.enumerate())
    assert started_since(before, settle_to=0) == 0


class Failing(nn.Module):
    def __init__(self, fail_at: int):
        super().__init__()
        self.calls, self.fail_at = 0, fail_at

    def forward(self, observation):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("policy failed on purpose")
        return torch.zeros(observation.shape[0], dtype=torch.long)


def test_a_collector_error_is_raised_in_the_consumer():
    stream = torchpool.stream("CartPole-v1", Failing(fail_at=25), num_envs=2, frames_per_batch=20,
                              total_frames=200, prefetch=True)
    seen = 0
    with pytest.raises(RuntimeError, match="policy failed on purpose"):
        for _ in stream:
            seen += 1
    assert seen == 2, "batches 0 (policy calls 1-10) and 1 (11-20) are handed out; batch 2 fails at call 25"
    assert not any(t.name == "torchpool-prefetch" for t in threading.enumerate())
