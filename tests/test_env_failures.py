"""An env that raises: the batch holding its row raises EnvError; no other row is lost, repeated or stale.

NOTE [Env failures] in csrc/core/episode.h states the rule: the failed env's
row arrives (zeroed, truncated, done) inside ``EnvError.batch`` with every
other row of its batch, and the env's next step resets it.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torchpool


class Expect:
    """What each probe env's next row must show: observation = [episode steps, last action, resets, total steps]."""

    def __init__(self, num_envs: int):
        self.total = [0] * num_envs
        self.resets = [1] * num_envs      # the first reset
        self.steps = [0] * num_envs
        self.reset_next = [False] * num_envs
        self.sent = set()
        self.rows = 0

    def sent_step(self, ids):
        for env_id in ids:
            assert env_id not in self.sent
            self.sent.add(env_id)

    def check(self, td, failed: list[int], episode_length: int):
        for row, env_id in enumerate(td["env_id"].tolist()):
            assert env_id in self.sent, f"env {env_id}: a row nobody sent for (stale or repeated)"
            self.sent.discard(env_id)
            self.rows += 1
            obs = td["observation"][row].tolist()
            if env_id in failed:
                assert obs == [0.0, 0.0, 0.0, 0.0] and bool(td["truncated"][row]) and bool(td["done"][row])
                assert float(td["reward"][row]) == 0.0
                self.total[env_id] += 1  # the probe counts the step that raised
                self.reset_next[env_id] = True
                continue
            if self.reset_next[env_id]:  # the step after a failure resets
                self.reset_next[env_id] = False
                self.resets[env_id] += 1
                self.steps[env_id] = 0
                assert obs[0] == 0.0 and obs[2] == self.resets[env_id] and obs[3] == self.total[env_id], (env_id, obs)
                assert float(td["reward"][row]) == 0.0 and not bool(td["done"][row])
                continue
            self.total[env_id] += 1
            self.steps[env_id] += 1
            assert obs[3] == self.total[env_id], f"env {env_id}: total steps {obs[3]}, expected {self.total[env_id]}"
            if self.steps[env_id] == episode_length:  # same_step autoreset: the next episode's first observation
                self.steps[env_id] = 0
                self.resets[env_id] += 1
                assert bool(td["terminated"][row]) and obs[0] == 0.0
            else:
                assert obs[0] == self.steps[env_id] and obs[2] == self.resets[env_id], (env_id, obs)


def received(pool, call):
    """(batch, failed env ids) of one step()/recv()."""
    try:
        return call(), []
    except torchpool.EnvError as error:
        assert isinstance(error, RuntimeError)
        assert set(error.env_ids) == set(error.messages) and error.env_ids
        batch_ids = error.batch["env_id"].tolist()
        assert set(error.env_ids) <= set(batch_ids), "an EnvError names an env outside its batch"
        for env_id in error.env_ids:
            assert "probe" in error.messages[env_id] and f"env {env_id}:" in str(error)
        return error.batch, error.env_ids


@settings(max_examples=25, deadline=None)
@given(num_envs=st.integers(2, 8), batch_divisor=st.integers(1, 4), threads=st.integers(1, 3),
       probability=st.sampled_from([0.05, 0.2, 0.5]), seed=st.integers(0, 1000),
       subsets=st.lists(st.integers(1, 8), min_size=10, max_size=40))
def test_random_failures_keep_every_other_row_exact(num_envs, batch_divisor, threads, probability, seed, subsets):
    batch_size = max(1, num_envs // batch_divisor)
    with torchpool.make("_Probe-v0", num_envs=num_envs, batch_size=batch_size, num_threads=threads, seed=seed,
                        fail_probability=probability, max_busy_us=20.0) as pool:
        expect = Expect(num_envs)
        pool.reset()
        idle = list(range(num_envs))
        failures = 0
        for size in subsets:
            if pool.is_async:
                ids = idle[:max(size, batch_size) if len(idle) >= batch_size else len(idle)]
                if ids:
                    pool.send(torch.ones(len(ids), dtype=torch.int64), torch.tensor(ids))
                    expect.sent_step(ids)
                    idle = idle[len(ids):]
                td, failed = received(pool, pool.recv)
                idle += td["env_id"].tolist()
            else:
                expect.sent_step(range(num_envs))
                td, failed = received(pool, lambda: pool.step(torch.ones(num_envs, dtype=torch.int64)))
            failures += len(failed)
            expect.check(td, failed, episode_length=5)
        assert pool.in_flight == len(expect.sent)


def test_failures_are_raised_by_the_batch_that_holds_the_failed_env():
    # Env 1 fails on its 2nd step; batches of 2 from 4 envs: only the batch with env 1 raises.
    with torchpool.make("_Probe-v0", num_envs=4, batch_size=2, fail_at_step=2, num_threads=1) as pool:
        pool.async_reset()
        first, second = pool.recv(), pool.recv()
        pool.send(torch.ones(2, dtype=torch.int64), first["env_id"].clone())
        td = pool.recv()
        pool.send(torch.ones(2, dtype=torch.int64), td["env_id"].clone())
        with pytest.raises(torchpool.EnvError) as error:
            pool.recv()
        assert sorted(error.value.env_ids) == sorted(td["env_id"].tolist())
        assert error.value.batch["truncated"].all()
        # The other two envs, never stepped twice, still arrive normally.
        pool.send(torch.ones(2, dtype=torch.int64), second["env_id"].clone())
        assert pool.recv()["observation"][:, 3].tolist() == [1.0, 1.0]


def test_disabled_autoreset_refuses_a_failed_env_until_reset():
    with torchpool.make("_Probe-v0", num_envs=2, fail_at_step=1, autoreset="disabled") as pool:
        pool.reset()
        with pytest.raises(torchpool.EnvError):
            pool.step(torch.ones(2, dtype=torch.int64))
        with pytest.raises(ValueError, match="env 0 failed .*reset"):
            pool.step(torch.ones(2, dtype=torch.int64))
        pool.reset(env_ids=[0, 1])
        assert pool.step(torch.ones(2, dtype=torch.int64))["observation"][:, 3].tolist() == [2.0, 2.0]


def test_env_error_pickles_without_its_batch():
    import pickle

    error = torchpool.EnvError([3], ["boom"], batch=object())
    copy = pickle.loads(pickle.dumps(error))
    assert copy.env_ids == [3] and copy.messages == {3: "boom"} and copy.batch is None


def test_an_interrupt_while_the_env_error_is_built_gives_the_batch_and_its_failures_back():
    # Ctrl-C can land in the Python that turns the core's failure into an
    # EnvError, after the batch was taken: the next recv() must raise it again.
    from torchpool import _core, errors

    def interrupted(*args):
        raise KeyboardInterrupt

    with torchpool.make("_Probe-v0", num_envs=4, batch_size=2, fail_at_step=1, num_threads=1) as pool:
        pool.async_reset()
        for _ in range(2):
            td = pool.recv()
            pool.send(torch.ones(2, dtype=torch.int64), td["env_id"].clone())
        _core.set_env_error_factory(interrupted)
        try:
            with pytest.raises(KeyboardInterrupt):
                pool.recv()
        finally:
            _core.set_env_error_factory(errors._from_core)
        assert pool.in_flight == 4
        with pytest.raises(torchpool.EnvError) as error:
            pool.recv()
        assert len(error.value.env_ids) == 2 and error.value.batch["truncated"].all()
        assert pool.in_flight == 2
