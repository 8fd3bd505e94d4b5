"""torchpool.stream: layout, equality with a hand-written Pool rollout, stopping, cleanup, errors."""

import importlib
import traceback

import pytest
import torch
from tensordict import TensorDict
from threads import started_since, torchpool_threads

import torchpool


def lean_right(observation: torch.Tensor) -> torch.Tensor:
    """A deterministic CartPole policy: push towards the pole's lean."""
    return (observation[:, 2] > 0).long()


def test_batches_have_torchrl_layout_shapes_and_dtypes():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=40, total_frames=40)
    (batch,) = list(stream)
    assert batch.batch_size == torch.Size([4, 10])
    assert batch["observation"].shape == (4, 10, 4) and batch["observation"].dtype == torch.float32
    assert batch["action"].shape == (4, 10) and batch["action"].dtype == torch.int64
    assert batch["next", "observation"].shape == (4, 10, 4)
    assert batch["next", "reward"].shape == (4, 10, 1) and batch["next", "reward"].dtype == torch.float32
    for key in ("done", "terminated", "truncated"):
        assert batch["next", key].shape == (4, 10, 1) and batch["next", key].dtype == torch.bool
        assert not batch[key].any(), "same-step autoreset: a root observation never ends an episode"
    assert batch["next", "episode_return"].shape == (4, 10, 1), "torchrl's layout, as TorchPoolEnv's"
    assert batch["next", "episode_length"].shape == (4, 10, 1) and batch["next", "episode_length"].dtype == torch.int64
    assert torch.equal(batch["env_id"], torch.arange(4).unsqueeze(1).expand(4, 10))


def hand_rollout(num_envs: int, steps: int, seed: int = 0) -> list[TensorDict]:
    with torchpool.make("CartPole-v1", num_envs=num_envs, seed=seed) as pool:
        observation = pool.reset()["observation"].clone()
        transitions = []
        for _ in range(steps):
            action = lean_right(observation)
            td = pool.step(action)
            transitions.append(TensorDict({
                "observation": observation, "action": action,
                "next_observation": td["final_observation"].clone(), "reward": td["reward"].clone(),
                "done": td["done"].clone(), "terminated": td["terminated"].clone(),
                "episode_return": td["episode_return"].clone()}, batch_size=[num_envs]))
            observation = td["observation"].clone()
    return transitions


def assert_rollout_is(rollout, expected: list[dict], what: str) -> None:
    """The stream's rollout [num_envs, T] equals hand_rollout()'s steps, field by field, crossing episode ends."""
    assert rollout["next", "done"].any(), f"{what}: the rollout crosses episode ends"
    for t, step in enumerate(expected):
        got, where = rollout[:, t], f"{what}: step {t}"
        assert torch.equal(got["observation"], step["observation"]), where
        assert torch.equal(got["action"], step["action"]), where
        assert torch.equal(got["next", "observation"], step["next_observation"]), where
        assert torch.equal(got["next", "reward"].squeeze(-1), step["reward"]), where
        assert torch.equal(got["next", "done"].squeeze(-1), step["done"]), where
        assert torch.equal(got["next", "terminated"].squeeze(-1), step["terminated"]), where
        assert torch.equal(got["next", "episode_return"].squeeze(-1), step["episode_return"]), where


@pytest.mark.parametrize("split_envs", [True, False])
def test_batches_equal_a_hand_written_pool_rollout(split_envs):
    num_envs, steps_per_batch, batches = 6, 25, 4
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=num_envs, seed=3, split_envs=split_envs,
                              frames_per_batch=num_envs * steps_per_batch,
                              total_frames=num_envs * steps_per_batch * batches)
    collected = torch.cat([batch.clone() for batch in stream], dim=1)
    assert_rollout_is(collected, hand_rollout(num_envs, steps_per_batch * batches, seed=3),
                      f"split_envs={split_envs}")


class VersionedPolicy:
    """Pushes left, and records as an extra which weights version the consumer had set."""

    version = 0

    def __call__(self, observation: torch.Tensor):
        n = observation.shape[0]
        return torch.zeros(n, dtype=torch.int64), {"version": torch.full((n,), self.version)}


@pytest.mark.parametrize("split_envs", [False, True])
def test_policy_lag_is_none_with_one_group_and_the_first_groups_first_step_with_two(split_envs):
    policy = VersionedPolicy()
    stream = torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=20, total_frames=80,
                              split_envs=split_envs)
    for index, batch in enumerate(stream):
        version = batch["version"]
        expected = torch.full((4, 5), index)
        if split_envs and index > 0:
            expected[:2, 0] = index - 1  # computed before the previous batch was handed out
        assert torch.equal(version, expected), f"batch {index}: {version.tolist()}"
        policy.version += 1  # the consumer's update


def steering(env_id: str):
    """A deterministic policy that depends on the observation, for any family."""
    if env_id == "HalfCheetah-v5":
        return lambda obs: torch.tanh(obs[:, :6]).float()
    return lambda obs: (obs.flatten(1).float().sum(1) % 6).long()  # Pong's six actions


@pytest.mark.parametrize("split_envs", [False, True])  # workers write into the batch / into raw slots
@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Pong-v5"])
def test_every_key_of_multi_dim_observations_and_family_extras_matches_a_pool_rollout(env_id, split_envs):
    if env_id not in torchpool.list_envs():
        pytest.skip(f"{env_id} is not built")
    num_envs, T, batches = 4, 6, 3
    kwargs = {"max_episode_steps": 8} if env_id == "HalfCheetah-v5" else {"max_episode_steps": 10, "noop_max": 0}
    policy = steering(env_id)
    stream = torchpool.stream(env_id, policy, num_envs=num_envs, frames_per_batch=num_envs * T,
                              total_frames=num_envs * T * batches, seed=4, split_envs=split_envs, **kwargs)
    collected = torch.cat([batch.clone() for batch in stream], dim=1)
    with torchpool.make(env_id, num_envs=num_envs, seed=4, **kwargs) as pool:
        observation = pool.reset()["observation"].clone()
        for t in range(T * batches):
            action = policy(observation)
            td = pool.step(action)
            got = collected[:, t]
            assert torch.equal(got["observation"], observation), f"step {t}"
            assert torch.equal(got["action"], action), f"step {t}"
            assert torch.equal(got["next", "observation"], td["final_observation"]), f"step {t}"
            for key in td.keys():
                if key in ("observation", "final_observation", "env_id"):
                    continue
                trailing_one = key in ("reward", "done", "terminated", "truncated", "episode_return", "episode_length")
                expected = td[key].unsqueeze(-1) if trailing_one else td[key]
                assert torch.equal(got["next", key], expected), f"step {t}: {key}"
            observation = td["observation"].clone()
    assert collected["next", "truncated"].any(), "the rollout crosses episode ends"


@pytest.mark.parametrize("form", ["strided", "int32"])
def test_actions_in_other_forms_give_the_same_batches(form):
    """A contiguous action of the stored dtype is sent as is and recorded by the core; a strided one
    goes through a torch copy, and int32 actions are stored and sent as int32."""
    def policy(observation):
        action = lean_right(observation)
        if form == "strided":
            return action.repeat_interleave(2)[::2]
        return action.to(torch.int32)

    stream = torchpool.stream("CartPole-v1", policy, num_envs=4, seed=3, frames_per_batch=4 * 25,
                              total_frames=4 * 25 * 3)
    collected = torch.cat([batch.clone() for batch in stream], dim=1)
    expected = hand_rollout(4, 75, seed=3)
    for t, step in enumerate(expected):
        assert torch.equal(collected[:, t]["observation"], step["observation"]), f"{form}, step {t}"
        assert torch.equal(collected[:, t]["action"].long(), step["action"]), f"{form}, step {t}"


@pytest.mark.parametrize("split_envs", [False, True])
def test_the_staging_path_of_cuda_gives_the_same_batches_when_run_on_the_cpu(split_envs):
    """With CUDA, workers write into a few pinned staging rows that are copied into the
    rollout buffer; here that bookkeeping (which row, which slot, when) runs on the CPU."""
    def run(staged):
        push_right = lambda obs: torch.ones(obs.shape[0], dtype=torch.int64)  # noqa: E731 (episodes of ~10 steps)
        stream = torchpool.stream("CartPole-v1", push_right, num_envs=6, frames_per_batch=6 * 7,
                                  total_frames=6 * 7 * 5, seed=2, split_envs=split_envs)
        stream._staged = staged
        batches = [batch.clone() for batch in stream]
        assert stream.stats()["env_groups"] == (2 if split_envs else 1)
        return batches

    direct, staged = run(False), run(True)
    assert len(direct) == len(staged) == 5 and torch.cat(direct, 1)["next", "done"].any()
    for t, (a, b) in enumerate(zip(direct, staged)):
        assert (a == b).all(), f"batch {t}"


def test_episode_statistics_sum_the_rewards_of_each_episode():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=400, total_frames=400)
    (batch,) = list(stream)
    rewards = batch["next", "reward"].squeeze(-1)
    done = batch["next", "done"].squeeze(-1)
    for env in range(4):
        ends = done[env].nonzero().flatten().tolist()
        for previous, end in zip(ends, ends[1:]):  # whole episodes inside the batch
            assert batch["next", "episode_return"][env, end, 0] == rewards[env, previous + 1:end + 1].sum()
            assert batch["next", "episode_length"][env, end, 0] == end - previous


def test_stops_at_total_frames_and_reports_its_length():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=20, total_frames=50)
    assert len(stream) == 3
    assert len(list(stream)) == 3
    assert stream.stats()["frames"] == 60
    with pytest.raises(TypeError, match="no total_frames"):
        len(torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=20))


def test_break_leaves_no_thread_running_and_an_existing_pool_reusable():
    before = torchpool_threads()
    stream_threads = []
    for _ in torchpool.stream("Pendulum-v1", lambda obs: torch.zeros(obs.shape[0], 1), num_envs=4,
                              frames_per_batch=8, num_threads=2, split_envs=True):
        stream_threads.append(started_since(before))
        break
    assert stream_threads == [4], "two pools of two workers ran"
    assert started_since(before, settle_to=0) == 0, "owned pools are closed when the loop ends"
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        for _ in torchpool.stream(pool, lean_right, frames_per_batch=8):
            break
        td = pool.step(torch.zeros(4, dtype=torch.int64))  # idle again: nothing left in flight
        assert td.batch_size == torch.Size([4])



class LeanRight(torch.nn.Module):
    """``lean_right`` as a module, which prefetch can snapshot."""

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return lean_right(observation)


@pytest.mark.parametrize("path", ["direct", "staged", "two groups", "prefetch"])
def test_two_live_iterators_over_one_stream_each_collect_their_own_rollout(path):
    num_envs, steps_per_batch, batches = 6, 25, 4
    policy = LeanRight() if path == "prefetch" else lean_right
    stream = torchpool.stream("CartPole-v1", policy, num_envs=num_envs, seed=3, split_envs=path == "two groups",
                              frames_per_batch=num_envs * steps_per_batch, prefetch=path == "prefetch",
                              total_frames=num_envs * steps_per_batch * batches)
    stream._staged = path == "staged"
    first, second = iter(stream), iter(stream)
    collected = {"first": [], "second": []}
    # The first runs a batch ahead of the second, so a buffer the two shared
    # would hand one of them steps of the other's time (identical rollouts in
    # lockstep could share one unnoticed).
    for name in ("first", "first", "second", "first", "second", "first", "second", "second"):
        batch = next(first if name == "first" else second)
        collected[name].append(batch.clone())
    assert next(first, None) is None and next(second, None) is None
    expected = hand_rollout(num_envs, steps_per_batch * batches, seed=3)
    for name, batches_of_one in collected.items():
        assert_rollout_is(torch.cat(batches_of_one, dim=1), expected, f"the {name} iterator, {path}")
    assert stream.stats()["frames"] == num_envs * steps_per_batch * batches, "the latest iterator's frames"


def test_a_second_live_iterator_over_an_existing_pool_is_refused():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        stream = torchpool.stream(pool, lean_right, frames_per_batch=8)
        first = iter(stream)
        next(first)
        with pytest.raises(RuntimeError, match="one iterator at a time"):
            next(iter(stream))
        next(first)  # the refused iterator left the first's pool alone
        first.close()
        assert next(iter(stream)).batch_size == torch.Size([4, 2]), "the pool is free once the first is closed"


def test_a_failing_drain_neither_hides_the_error_that_stopped_the_stream_nor_leaves_a_pool_open(monkeypatch):
    # Two groups: while the policy computes the second group's action, the
    # first group's step is in flight, so stopping there drains that pool.
    stream_module = importlib.import_module("torchpool.stream")
    made, calls, exploded = [], [], []

    def recording_make(*args, **kwargs):
        made.append(torchpool.make(*args, **kwargs))
        return made[-1]

    def policy(observation):
        calls.append(1)
        if len(calls) == 2:  # the second group's first action: the first group's first step is in flight
            exploded.append(True)
            raise ValueError("policy exploded")
        return lean_right(observation)

    recv_into = torchpool.Pool.recv_into

    def failing_drain(pool):
        if exploded:
            raise RuntimeError("drain failed")
        return recv_into(pool)

    monkeypatch.setattr(stream_module, "make", recording_make)
    monkeypatch.setattr(torchpool.Pool, "recv_into", failing_drain)
    before = torchpool_threads()
    with pytest.raises(ValueError, match="policy exploded") as error:
        list(torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=8, total_frames=16,
                              split_envs=True))
    if hasattr(error.value, "add_note"):  # Python 3.11+
        assert "RuntimeError: drain failed" in "".join(getattr(error.value, "__notes__", [])), "the drain's failure"
    assert len(made) == 2 and [pool.closed for pool in made] == [True, True], "every pool is closed"
    assert started_since(before, settle_to=0) == 0

COSTLY_PROBE = {"max_sleep_us": 100.0, "episode_length": 50}  # steps the workers run in the background


def env_groups(env_id: str, device: str, **kwargs) -> int:
    stream = torchpool.stream(env_id, lambda obs: torch.zeros(obs.shape[0], dtype=torch.int64, device=obs.device),
                              num_envs=4, frames_per_batch=8, total_frames=8, device=device, **kwargs)
    (batch,) = list(stream)
    assert torch.equal(batch["env_id"][:, 0].cpu(), torch.arange(4))
    return stream.stats()["env_groups"]


def test_on_the_cpu_the_envs_are_not_split_by_default():
    # The policy would compete with the workers for the same cores (NOTE [Env groups]).
    assert env_groups("CartPole-v1", "cpu") == 1
    assert env_groups("_Probe-v0", "cpu", **COSTLY_PROBE) == 1
    assert env_groups("_Probe-v0", "cpu", split_envs=True, **COSTLY_PROBE) == 2


@pytest.mark.cuda
def test_with_cuda_the_envs_are_not_split_by_default():
    # One group beat two in every row of gpu_stream.py on the H200 (NOTE [Env groups]).
    assert env_groups("CartPole-v1", "cuda") == 1
    assert env_groups("_Probe-v0", "cuda", **COSTLY_PROBE) == 1
    assert env_groups("_Probe-v0", "cuda", split_envs=True, **COSTLY_PROBE) == 2


def test_an_exception_in_the_policy_propagates_with_its_traceback():
    calls = []

    def broken_policy(observation):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("policy exploded")
        return lean_right(observation)

    before = torchpool_threads()
    with pytest.raises(ValueError, match="policy exploded") as error:
        list(torchpool.stream("CartPole-v1", broken_policy, num_envs=4, frames_per_batch=40, total_frames=80))
    assert "broken_policy" in "".join(traceback.format_tb(error.value.__traceback__))
    assert started_since(before, settle_to=0) == 0


@pytest.mark.parametrize("bad_from_call", [1, 30])  # the first step, and one in the CPU hot loop
def test_actions_of_the_wrong_shape_are_refused_not_broadcast(bad_from_call):
    calls = []

    def policy(observation):
        calls.append(1)
        action = lean_right(observation)
        return action[:1] if len(calls) >= bad_from_call else action

    with pytest.raises(ValueError, match=r"actions of shape \(1,\) for \(4, 4\) observations; expected \(4,\)"):
        list(torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=20, total_frames=200))
    assert len(calls) == bad_from_call


def test_policy_extras_are_stored_next_to_the_action():
    def policy(observation):
        return lean_right(observation), {"state_value": observation.sum(-1, keepdim=True)}

    (batch,) = list(torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=12, total_frames=12))
    assert torch.equal(batch["state_value"], batch["observation"].sum(-1, keepdim=True))


@pytest.mark.parametrize("container", ["dict", "TensorDict"])
def test_a_policy_returning_a_mapping_gives_action_and_extras(container):
    def policy(observation):
        out = {"action": lean_right(observation), "state_value": observation.sum(-1, keepdim=True)}
        return out if container == "dict" else TensorDict(out, batch_size=observation.shape[:1])

    (batch,) = list(torchpool.stream("CartPole-v1", policy, num_envs=4, frames_per_batch=12, total_frames=12))
    assert torch.equal(batch["action"], lean_right(batch["observation"].flatten(0, 1)).view(4, 3))
    assert torch.equal(batch["state_value"], batch["observation"].sum(-1, keepdim=True))


def test_a_tensordict_module_policy_writes_action_and_extras():
    from tensordict.nn import TensorDictModule

    class Head(torch.nn.Module):
        def forward(self, observation):
            return (observation[:, 2] > 0).long(), observation[:, :1]

    module = TensorDictModule(Head(), in_keys=["observation"], out_keys=["action", "sample_log_prob"])
    (batch,) = list(torchpool.stream("CartPole-v1", module, num_envs=2, frames_per_batch=6, total_frames=6))
    assert torch.equal(batch["action"], (batch["observation"][..., 2] > 0).long())
    assert torch.equal(batch["sample_log_prob"], batch["observation"][..., :1])


def test_a_held_batch_is_not_overwritten():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=8, total_frames=40)
    kept, copies = [], []
    for batch in stream:
        kept.append(batch)
        copies.append(batch.clone())
    for batch, copy in zip(kept, copies):
        assert (batch == copy).all()
    assert len({batch["observation"].data_ptr() for batch in kept}) == 5


def test_a_loop_that_drops_its_batches_reuses_two_output_buffers():
    # The loop variable still holds batch k while batch k + 1 is made, so two
    # buffers take turns; a third would mean an allocation per batch.
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=8, total_frames=8 * 6)
    addresses = [batch["observation"].data_ptr() for batch in stream]
    assert len(addresses) == 6 and len(set(addresses)) == 2
    assert addresses[0::2] == [addresses[0]] * 3 and addresses[1::2] == [addresses[1]] * 3


def test_works_through_a_dataloader():
    stream = torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=16, total_frames=48)
    loader = torch.utils.data.DataLoader(stream, batch_size=None, collate_fn=lambda batch: batch)
    batches = list(loader)
    assert len(batches) == 3 and all(batch.batch_size == torch.Size([4, 4]) for batch in batches)


def test_torchrl_gae_runs_on_a_batch():
    pytest.importorskip("torchrl")
    from tensordict.nn import TensorDictModule
    from torchrl.objectives.value import GAE

    value = TensorDictModule(torch.nn.Linear(4, 1), in_keys=["observation"], out_keys=["state_value"])
    (batch,) = list(torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=64, total_frames=64))
    with torch.no_grad():
        batch = GAE(gamma=0.99, lmbda=0.95, value_network=value)(batch)
    assert batch["advantage"].shape == (4, 16, 1) and torch.isfinite(batch["advantage"]).all()


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(frames_per_batch=10), ValueError, "frames_per_batch must be a positive multiple of num_envs=4"),
    (dict(frames_per_batch=8, total_frames=0), ValueError, "total_frames must be a positive int"),
    (dict(frames_per_batch=9, num_envs=3, split_envs=True), ValueError, "split_envs needs an even num_envs"),
    (dict(frames_per_batch=8, total_frame=80), TypeError, "unknown kwarg 'total_frame'. Did you mean 'total_frames'"),
    (dict(frames_per_batch=8, sutton_barto_rewrd=True), TypeError, "Did you mean 'sutton_barto_reward'"),
    (dict(frames_per_batch=8, env="Cartpole-v1"), ValueError, "unknown env id 'Cartpole-v1'. Did you mean 'CartPole"),
])
def test_bad_arguments_are_refused_when_the_stream_is_made(kwargs, error, message):
    kwargs.setdefault("num_envs", 4)
    env = kwargs.pop("env", "CartPole-v1")
    with pytest.raises(error, match=message):
        torchpool.stream(env, lean_right, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only refusal")
def test_a_cuda_device_without_cuda_is_refused_when_the_stream_is_made():
    with pytest.raises(ValueError, match="device='cuda', but CUDA is not available"):
        torchpool.stream("CartPole-v1", lean_right, num_envs=4, frames_per_batch=8, device="cuda")


def test_an_async_pool_is_refused():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        with pytest.raises(ValueError, match="needs a sync pool"):
            torchpool.stream(pool, lean_right, frames_per_batch=8)


@pytest.mark.cuda
@pytest.mark.parametrize("split_envs", [False, True])
def test_cuda_batches_equal_cpu_batches(split_envs):
    def run(device):
        def policy(observation):
            return lean_right(observation.to(device))
        stream = torchpool.stream("CartPole-v1", policy, num_envs=8, frames_per_batch=64, total_frames=256,
                                  device=device, seed=1, split_envs=split_envs)
        return [batch.to("cpu").clone() for batch in stream]

    cpu, gpu = run("cpu"), run("cuda")
    assert len(cpu) == len(gpu) == 4
    for cpu_batch, gpu_batch in zip(cpu, gpu):
        assert (cpu_batch == gpu_batch).all()


@pytest.mark.cuda
def test_cuda_batches_live_on_the_gpu_and_actions_return_through_pinned_memory():
    stream = torchpool.stream("Pendulum-v1", lambda obs: torch.zeros(obs.shape[0], 1, device=obs.device),
                              num_envs=8, frames_per_batch=64, total_frames=64, device="cuda")
    (batch,) = list(stream)
    assert batch.device.type == "cuda" and batch["observation"].is_cuda
