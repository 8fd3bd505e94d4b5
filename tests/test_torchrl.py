"""TorchPoolEnv (torchpool/torchrl.py): torchrl's EnvBase contract, exact episode boundaries, collectors.

The reference for every collected transition is a direct ``Pool`` rollout
with the same seed and actions. ``check_transitions`` states what any batch
must satisfy, whatever the policy, so the multi-process and distributed
collectors are checked too, not only run.
"""

from __future__ import annotations

import functools
import inspect
import math
import pickle
import textwrap

import pytest
import torch
from distributed_script import run_watched
from packaging.version import Version
from tensordict import TensorDictBase
from tensordict.nn import TensorDictModule
from torch import nn

import torchpool
from torchpool import Pool

torchrl = pytest.importorskip("torchrl")
from torchrl.collectors import Collector, MultiAsyncCollector, MultiSyncCollector  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402
from torchrl.modules import ProbabilisticActor, ValueOperator  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

from torchpool import TorchPoolEnv  # noqa: E402  (imports torchrl)

# Collectors here get nn.Module policies; torchrl 0.14 warns that from 0.15 it
# will append an InitTracker to the env for them. Say no explicitly (torchrl
# 0.12, the oldest we support, has no such argument and appends nothing).
NO_AUTO_TRANSFORMS = ({"auto_register_policy_transforms": False}
                      if "auto_register_policy_transforms" in inspect.signature(Collector.__init__).parameters else {})


class HashPolicy(nn.Module):
    """A deterministic, pseudo-random policy: the action is a hash of the observation.

    Episodes end quickly (CartPole falls in ~20 steps), and a rollout is
    reproducible from the observations alone, so a direct Pool rollout with
    the same seed sees the same actions.
    """

    def __init__(self, num_actions: int | None = None, action_shape: tuple[int, ...] = (), scale: float = 1.0):
        super().__init__()
        self.num_actions, self.action_shape, self.scale = num_actions, action_shape, scale

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        code = (observation.double() * 1e4).floor().sum(-1)
        if self.num_actions is not None:
            return code.long().remainder(self.num_actions)          # int64[...]
        wave = torch.sin(code.unsqueeze(-1) + torch.arange(math.prod(self.action_shape), dtype=torch.float64))
        return (self.scale * wave).float().reshape(*observation.shape[:-1], *self.action_shape)


def hash_policy_for(env_id: str) -> HashPolicy:
    spec = torchpool.make(env_id, num_envs=1).action_spec
    if hasattr(spec, "n"):
        return HashPolicy(num_actions=spec.n)
    return HashPolicy(action_shape=spec.shape, scale=float(spec.high.max()))


def td_policy(module: nn.Module) -> TensorDictModule:
    return TensorDictModule(module, in_keys=["observation"], out_keys=["action"])


def cartpole_actor_critic() -> tuple[ProbabilisticActor, ValueOperator]:
    torch.manual_seed(0)
    actor = ProbabilisticActor(
        TensorDictModule(nn.Linear(4, 2), in_keys=["observation"], out_keys=["logits"]),
        in_keys=["logits"], distribution_class=torch.distributions.Categorical, return_log_prob=True)
    critic = ValueOperator(nn.Linear(4, 1), in_keys=["observation"])
    return actor, critic


def check_transitions(batch: TensorDictBase, reward_per_step: float | None = None) -> int:
    """Asserts what every collected batch ``[..., T]`` must satisfy; returns the number of episode ends.

    Along time, each env's root observation is the previous ``("next",
    "observation")`` unless that step ended an episode; episode statistics
    count up by one step and its reward, and restart at 0 after an end.
    """
    batch = batch.reshape(-1, batch.shape[-1])
    obs, next_obs = batch["observation"], batch["next", "observation"]
    done = batch["next", "done"][..., 0]
    reward = batch["next", "reward"][..., 0]
    length, next_length = batch["episode_length"][..., 0], batch["next", "episode_length"][..., 0]
    ret, next_ret = batch["episode_return"][..., 0], batch["next", "episode_return"][..., 0]
    assert torch.equal(done, batch["next", "terminated"][..., 0] | batch["next", "truncated"][..., 0])
    assert torch.equal(next_length, length + 1), "episode_length must grow by one per step"
    assert torch.allclose(next_ret, ret + reward), "episode_return must grow by the step's reward"
    if reward_per_step is not None:
        assert bool((reward == reward_per_step).all()), f"rewards other than {reward_per_step}: {reward.unique()}"
    same_episode = ~done[:, :-1]
    assert torch.equal(obs[:, 1:][same_episode], next_obs[:, :-1][same_episode]), \
        "within an episode the root observation must be the previous ('next', 'observation')"
    assert bool((length[:, 1:][done[:, :-1]] == 0).all()), "a new episode must start with episode_length 0"
    if ("collector", "traj_ids") in batch.keys(True):
        traj = batch["collector", "traj_ids"]
        assert torch.equal(traj[:, 1:] != traj[:, :-1], done[:, :-1]), "trajectory ids must change exactly at ends"
    return int(done.sum())


def pool_rollout(env_id: str, num_envs: int, steps: int, policy: nn.Module, extras: tuple[str, ...] = (),
                 **make_kwargs) -> list[dict]:
    """The reference: transitions of a direct Pool rollout, in torchrl's layout minus the trailing 1.

    Family ``extras`` are the step's values under ``next_<name>`` and the
    previous step's (the reset's at t = 0) at the root.
    """
    transitions = []
    with torchpool.make(env_id, num_envs=num_envs, **make_kwargs) as pool:
        first = pool.reset().clone()
        obs = first["observation"]
        root_extras = {name: first[name] for name in extras}
        length, ret = torch.zeros(num_envs, dtype=torch.int64), torch.zeros(num_envs)
        for _ in range(steps):
            action = policy(obs)
            out = pool.step(action).clone()
            transitions.append({
                "observation": obs, "action": action, "episode_length": length, "episode_return": ret,
                "next_observation": out["final_observation"], "reward": out["reward"], "done": out["done"],
                "terminated": out["terminated"], "truncated": out["truncated"],
                "next_episode_length": out["episode_length"], "next_episode_return": out["episode_return"],
                **root_extras, **{f"next_{name}": out[name] for name in extras},
            })
            obs = out["observation"]
            length = torch.where(out["done"], 0, out["episode_length"])
            ret = torch.where(out["done"], 0.0, out["episode_return"])
            root_extras = {name: out[name] for name in extras}
    return transitions


# ---- the EnvBase contract -----------------------------------------------------

@pytest.mark.parametrize("env_id", torchpool.list_envs())
def test_check_env_specs(env_id):
    env = TorchPoolEnv(env_id, num_envs=3, seed=0)
    try:
        check_env_specs(env, break_when_any_done="both")
        assert env.batch_size == torch.Size([3])
        td = env.rand_step(env.reset())
        assert td["next", "reward"].shape == (3, 1) and td["next", "reward"].dtype == torch.float32
        for key in ("done", "terminated", "truncated"):
            assert td["next", key].shape == (3, 1) and td["next", key].dtype == torch.bool
        spec = env.pool.observation_spec
        if hasattr(spec, "fields"):  # named fields (the Control Suite's): one root key each, scalars [N, 1]
            for name, field in spec.fields.items():
                assert td["next", name].shape == (3, *(field.shape or (1,))), name
        else:
            assert td["next", "observation"].shape == (3, *spec.shape)
    finally:
        env.close()


def test_spec_shapes_and_dtypes():
    env = TorchPoolEnv("Pendulum-v1", num_envs=5, obs_dtype=torch.float64)
    assert env.observation_spec["observation"].shape == (5, 3)
    assert env.observation_spec["observation"].dtype == torch.float64
    assert env.observation_spec["episode_return"].shape == (5, 1)
    assert env.observation_spec["episode_length"].dtype == torch.int64
    assert env.action_spec.shape == (5, 1) and env.action_spec.dtype == torch.float32
    assert torch.equal(env.action_spec.space.high, torch.full((5, 1), 2.0))
    assert env.reward_spec.shape == (5, 1)
    assert set(env.full_done_spec.keys()) == {"done", "terminated", "truncated"}
    env.close()


# ---- exact episode boundaries ---------------------------------------------------

def test_episode_boundaries_are_exact_probe():
    # The probe's observation is [steps in episode, last action, resets so far,
    # total steps] and its reward is the action: a bogus transition, an ignored
    # action or a second C++ reset would all show in these counters.
    env = TorchPoolEnv("_Probe-v0", num_envs=2, episode_length=3, seed=0)
    td = env.reset()
    assert td["observation"][:, 2].tolist() == [1, 1], "construction + reset() must cost one reset, not two"
    data = env.rollout(10, policy=td_policy(HashPolicy(num_actions=1000)), break_when_any_done=False,
                       auto_reset=False, tensordict=td)
    obs, next_obs, action = data["observation"], data["next", "observation"], data["action"]
    assert torch.equal(data["next", "reward"][..., 0], action.float()), "every reward must be its action's"
    assert torch.equal(next_obs[..., 1], action.float()), "no action may be ignored"
    assert next_obs[..., 3].tolist() == [list(range(1, 11))] * 2, "no step may be inserted or skipped"
    done = data["next", "done"][..., 0]
    assert done.tolist() == [[t % 3 == 2 for t in range(10)]] * 2
    # At an end: ("next", "observation") is the true last one, the next root the new episode's first.
    assert bool((next_obs[done][:, 0] == 3).all())
    assert torch.equal(obs[:, 3::3, 0], torch.zeros(2, 3)) and torch.equal(obs[:, 3::3, 1], -torch.ones(2, 3))
    assert torch.equal(obs[..., 2], torch.tensor([[1.0] * 3 + [2.0] * 3 + [3.0] * 3 + [4.0]] * 2)), \
        "each episode must be reset exactly once (by the pool, inside its last step)"
    check_transitions(data)
    env.close()


def registered(env_id: str, *args):
    """A parametrize entry that skips while ``env_id`` is not registered (families land one by one)."""
    return pytest.param(env_id, *args, marks=pytest.mark.skipif(
        env_id not in torchpool.list_envs(), reason=f"{env_id} is not registered"))


@pytest.mark.parametrize("env_id, make_kwargs", [
    ("CartPole-v1", {"max_episode_steps": 25}),
    ("Pendulum-v1", {"max_episode_steps": 7}),
    ("MountainCarContinuous-v0", {"max_episode_steps": 9}),
    registered("Hopper-v5", {"max_episode_steps": 15}),  # family extras (x_position, reward terms, ...)
])
def test_collector_matches_pool_rollout(env_id, make_kwargs):
    num_envs, steps_per_batch, batches = 4, 20, 3
    policy = hash_policy_for(env_id)
    env = TorchPoolEnv(env_id, num_envs, seed=3, **make_kwargs)
    extras = tuple(key for key in env.observation_spec.keys()
                   if key not in ("observation", "episode_return", "episode_length"))
    collector = Collector(env, td_policy(policy), frames_per_batch=num_envs * steps_per_batch,
                          total_frames=num_envs * steps_per_batch * batches, **NO_AUTO_TRANSFORMS)
    data = torch.cat(list(collector), dim=-1)
    collector.shutdown()
    expected = pool_rollout(env_id, num_envs, steps_per_batch * batches, policy, extras, seed=3, **make_kwargs)

    keys = {"observation": "observation", "action": "action", "episode_length": "episode_length",
            "episode_return": "episode_return", "next_observation": ("next", "observation"),
            "next_episode_length": ("next", "episode_length"), "next_episode_return": ("next", "episode_return")}
    keys.update({key: ("next", key) for key in ("reward", "done", "terminated", "truncated")})
    keys.update({name: name for name in extras})
    keys.update({f"next_{name}": ("next", name) for name in extras})
    for t, transition in enumerate(expected):
        for name, key in keys.items():
            got = data[key][:, t]
            if got.dim() > transition[name].dim():
                got = got.squeeze(-1)  # torchrl's trailing 1 on rewards, flags and stats
            assert torch.equal(got, transition[name]), f"{env_id} step {t}: {key} differs from the Pool rollout"
    ends = check_transitions(data)
    assert bool(data["next", "truncated"].any()), "the rollout must cross a truncation to test it"
    if env_id == "CartPole-v1":
        assert bool(data["next", "terminated"].any()), "the rollout must cross a termination to test it"
    assert ends >= num_envs


def test_cartpole_batches_have_no_zero_reward():
    env = TorchPoolEnv("CartPole-v1", 8, seed=1)
    collector = Collector(env, None, frames_per_batch=8 * 50, total_frames=8 * 50 * 2)
    for batch in collector:
        assert check_transitions(batch, reward_per_step=1.0) > 0, "the batch must cross episode ends"
    collector.shutdown()


def test_gae_bootstraps_from_the_true_last_observation():
    # With a linear critic V, GAE at a truncation must bootstrap from V(true
    # last observation), never from the reset observation; we recompute it by hand.
    env = TorchPoolEnv("CartPole-v1", 4, seed=0, max_episode_steps=20)
    _, critic = cartpole_actor_critic()
    collector = Collector(env, td_policy(HashPolicy(num_actions=2)), frames_per_batch=4 * 60, total_frames=4 * 60,
                          **NO_AUTO_TRANSFORMS)
    batch = next(iter(collector))
    collector.shutdown()
    assert bool(batch["next", "truncated"].any()) and bool(batch["next", "terminated"].any())
    gamma, lmbda = 0.9, 0.8
    with torch.no_grad():
        GAE(gamma=gamma, lmbda=lmbda, value_network=critic, average_gae=False)(batch)
        value = critic.module(batch["observation"])[..., 0]
        next_value = critic.module(batch["next", "observation"])[..., 0]
    reward = batch["next", "reward"][..., 0]
    terminated, done = batch["next", "terminated"][..., 0].float(), batch["next", "done"][..., 0].float()
    delta = reward + gamma * next_value * (1 - terminated) - value
    advantage = torch.zeros_like(delta)
    running = torch.zeros(delta.shape[0])
    for t in reversed(range(delta.shape[1])):
        running = delta[:, t] + gamma * lmbda * (1 - done[:, t]) * running
        advantage[:, t] = running
    assert batch["advantage"].shape == (4, 60, 1)
    torch.testing.assert_close(batch["advantage"][..., 0], advantage, rtol=1e-5, atol=1e-5)


def test_clip_ppo_loss_runs_on_a_batch():
    env = TorchPoolEnv("CartPole-v1", 4, seed=0)
    actor, critic = cartpole_actor_critic()
    collector = Collector(env, actor, frames_per_batch=4 * 32, total_frames=4 * 32, **NO_AUTO_TRANSFORMS)
    batch = next(iter(collector))
    collector.shutdown()
    GAE(gamma=0.99, lmbda=0.95, value_network=critic)(batch)
    loss = ClipPPOLoss(actor, critic)
    losses = loss(batch)
    total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
    assert torch.isfinite(total)
    total.backward()
    grads = [p.grad for p in loss.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


# ---- resets and seeds -------------------------------------------------------------

def test_partial_reset_of_a_running_env_resets_only_that_env():
    env = TorchPoolEnv("_Probe-v0", num_envs=3, episode_length=100)
    td = env.reset()
    for _ in range(4):
        td["action"] = torch.ones(3, dtype=torch.int64)
        td = env.step_mdp(env.step(td))
    td["_reset"] = torch.tensor([[False], [True], [False]])
    td = env.reset(td)
    assert td["observation"][:, 0].tolist() == [4, 0, 4], "only env 1 starts a new episode"
    assert td["observation"][:, 2].tolist() == [1, 2, 1], "env 1 is really reset (a second C++ reset)"
    env.close()


@pytest.mark.skipif(
    Version(torchrl.__version__) < Version("0.14"),
    reason=f"torchrl {torchrl.__version__}'s Collector.reset(index=...) resets every env: it sets the '_reset' "
           "mask but calls env.reset() without it (0.12.0's collectors/_single.py; 0.14 passes it)")
def test_collector_reset_index_resets_only_that_env():
    env = TorchPoolEnv("_Probe-v0", num_envs=3, episode_length=100)
    collector = Collector(env, td_policy(HashPolicy(num_actions=5)), frames_per_batch=3 * 4, total_frames=-1,
                          **NO_AUTO_TRANSFORMS)
    iterator = iter(collector)
    next(iterator)
    collector.reset(index=2)
    batch = next(iterator)
    assert batch["observation"][:, 0, 0].tolist() == [4, 4, 0]
    assert batch["observation"][:, 0, 2].tolist() == [1, 1, 2]
    collector.shutdown()


def test_seeds_match_pool_seeds():
    with Pool("CartPole-v1", num_envs=3, seed=7) as pool:
        expected = pool.reset()["observation"].clone()
    env = TorchPoolEnv("CartPole-v1", 3, seed=7)
    assert torch.equal(env.reset()["observation"], expected), "seed= seeds env i with seed + i, as in Pool"
    env.rand_step(env.reset())
    env.set_seed(7)
    assert torch.equal(env.reset()["observation"], expected), "set_seed(7); reset() must equal Pool(seed=7)"
    assert torch.equal(env.reset(seed=7)["observation"], expected)
    assert not torch.equal(env.reset()["observation"], expected), "a plain reset continues the random stream"
    with pytest.raises(ValueError, match="non-negative int"):
        env.reset(seed=-1)
    env.close()


# ---- construction, from_pool, pickling ------------------------------------------

def test_bad_constructor_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="sync pool"):
        TorchPoolEnv("CartPole-v1", 4, batch_size=2)
    with pytest.raises(ValueError, match="same_step"):
        TorchPoolEnv("CartPole-v1", 4, autoreset="next_step")
    with pytest.raises(ValueError, match="unknown env id"):
        TorchPoolEnv("CartPol-v1", 4)


def test_from_pool_wraps_a_sync_same_step_pool():
    pool = Pool("_Probe-v0", num_envs=2, episode_length=2)
    env = TorchPoolEnv.from_pool(pool)
    assert env.pool is pool and env.batch_size == (2,)
    data = env.rollout(5, break_when_any_done=False)
    check_transitions(data)
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(env)
    env.close()
    assert pool.closed, "the env owns the pool it wraps"


@pytest.mark.parametrize("make_kwargs, match", [
    ({"batch_size": 2}, "sync pool"),
    ({"autoreset": "next_step"}, "same_step"),
    ({"autoreset": "disabled"}, "same_step"),
])
def test_from_pool_rejects_unsuitable_pools(make_kwargs, match):
    with Pool("CartPole-v1", num_envs=4, **make_kwargs) as pool, pytest.raises(ValueError, match=match):
        TorchPoolEnv.from_pool(pool)


def test_from_pool_rejects_closed_pools_and_other_objects():
    pool = Pool("CartPole-v1", num_envs=2)
    pool.close()
    with pytest.raises(ValueError, match="closed"):
        TorchPoolEnv.from_pool(pool)
    with pytest.raises(TypeError, match="torchpool.Pool"):
        TorchPoolEnv.from_pool("CartPole-v1")


def test_pickle_rebuilds_from_constructor_arguments():
    env = TorchPoolEnv("Pendulum-v1", 3, seed=5, g=9.0)
    env.rand_step(env.reset())
    clone = pickle.loads(pickle.dumps(env))
    assert clone is not env and clone.pool is not env.pool
    assert clone.pool.task_kwargs["g"] == 9.0
    with Pool("Pendulum-v1", num_envs=3, seed=5, g=9.0) as pool:
        assert torch.equal(clone.reset()["observation"], pool.reset()["observation"])
    env.close()
    clone.close()


def test_pickled_copies_get_distinct_seeds():
    # NOTE [Seeds of copies]: copy k of an env seeded s seeds its envs from s + k * num_envs.
    env = TorchPoolEnv("CartPole-v1", 3, seed=5)
    first, second, third = (pickle.loads(pickle.dumps(env)) for _ in range(3))
    with Pool("CartPole-v1", num_envs=9, seed=5) as pool:
        expected = pool.reset()["observation"]
    for k, copy in enumerate((first, second, third)):
        assert torch.equal(copy.reset()["observation"], expected[3 * k:3 * k + 3]), \
            f"copy {k} of an env with seed=5 must seed its envs 5 + {3 * k} + i"
        copy.close()
    env.close()
    env = TorchPoolEnv("CartPole-v1", 3, seed=None)  # a random seed: each copy draws its own
    first, second = (pickle.loads(pickle.dumps(env)) for _ in range(2))
    assert not torch.equal(first.reset()["observation"], second.reset()["observation"])
    for closeable in (env, first, second):
        closeable.close()


def test_step_without_an_action_raises_a_key_error():
    env = TorchPoolEnv("CartPole-v1", 2)
    td = env.reset()
    with pytest.raises(KeyError, match="'action'"):
        env.step(td)
    td["action"] = torch.zeros(2, dtype=torch.int64)
    assert env.step(td)["next", "reward"].shape == (2, 1), "the env must still step after the refused call"
    env.close()


def test_partial_steps_raise_a_clear_error():
    env = TorchPoolEnv("CartPole-v1", 2)
    td = env.reset()
    td["action"] = torch.zeros(2, dtype=torch.int64)
    td["_step"] = torch.tensor([True, False])
    with pytest.raises(NotImplementedError, match="cannot step a subset"):
        env.step(td)
    env.close()


def test_close_closes_the_pool():
    env = TorchPoolEnv("CartPole-v1", 2)
    env.close()
    assert env.pool.closed and env.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def spec_devices(env) -> dict[str, torch.device]:
    """The device of every spec of ``env``, composites and leaves, by a readable name."""
    devices = {}
    for name in ("full_observation_spec", "full_action_spec", "full_reward_spec", "full_done_spec",
                 "full_state_spec"):
        composite = getattr(env, name)
        devices[name] = composite.device
        devices.update((f"{name}[{key!r}]", leaf.device) for key, leaf in composite.items(True, True))
    return devices


def test_specs_are_built_on_the_requested_device_meta():
    # NOTE [Specs on the env's device], on a device every machine has. torchrl refused this env
    # ("All devices of Composite must match": sub-specs on the CPU, the composite on meta), as it refused
    # device="cuda" on the GPU machine. (Only CartPole's specs can live on meta: torchrl's bounded specs
    # compare their bounds with .item(), which meta tensors cannot do; the CUDA test below covers those.)
    env = TorchPoolEnv("CartPole-v1", 4, device="meta")
    wrong = {name: device for name, device in spec_devices(env).items() if device != torch.device("meta")}
    assert not wrong, f"specs not on the env's device meta: {wrong}"
    env.close()


@pytest.mark.cuda
@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "HalfCheetah-v5", "CheetahRun-v1"])
def test_cuda_specs_and_rollouts_match_cpu(env_id):
    # Bounded specs (Pendulum's action), family extras (HalfCheetah's), named fields (CheetahRun's).
    # (No Atari id: every Atari pool crashed on the GPU machine, issue 46 item 1.)
    env = TorchPoolEnv(env_id, 3, device="cuda", seed=0)
    wrong = {name: device for name, device in spec_devices(env).items() if device.type != "cuda"}
    assert not wrong, f"{env_id}: specs not on the env's device {env.device}: {wrong}"
    cpu = TorchPoolEnv(env_id, 3, seed=0)
    zeros = lambda td: td.set("action", cpu.action_spec.zero().to(td.device))
    expected = cpu.rollout(40, zeros, break_when_any_done=False)
    got = env.rollout(40, zeros, break_when_any_done=False)
    assert got.device.type == "cuda", f"{env_id}: the rollout is on {got.device}"
    differing = [key for key in expected.keys(True, True) if not torch.equal(got[key].cpu(), expected[key])]
    assert not differing, f"{env_id}: entries that differ between device='cuda' and the CPU: {differing}"
    check_env_specs(env)
    env.close()
    cpu.close()


@pytest.mark.cuda
def test_cuda_device_matches_cpu():
    policy = td_policy(HashPolicy(num_actions=2))
    cpu = TorchPoolEnv("CartPole-v1", 4, seed=0).rollout(60, policy, break_when_any_done=False)
    env = TorchPoolEnv("CartPole-v1", 4, device="cuda", seed=0)
    gpu = env.rollout(60, policy.to("cuda"), break_when_any_done=False)
    assert gpu.device.type == "cuda" and gpu["next", "observation"].device.type == "cuda"
    assert (gpu.cpu() == cpu).all()
    env.close()


# ---- collectors in other processes ---------------------------------------------------

@pytest.mark.parametrize("collector_class", [MultiSyncCollector, MultiAsyncCollector])
def test_multiprocess_collectors(collector_class):
    # Workers are spawned: the first env travels as a constructor, the second
    # as an instance (pickled by its constructor arguments).
    make = functools.partial(TorchPoolEnv, "CartPole-v1", 4, seed=0, num_threads=1)
    collector = collector_class([make, TorchPoolEnv("CartPole-v1", 4, seed=100, num_threads=1)], None,
                                frames_per_batch=4 * 24, total_frames=4 * 24 * 3)
    try:
        batches = list(collector)
    finally:
        collector.shutdown()
    assert len(batches) == 3
    assert sum(check_transitions(batch, reward_per_step=1.0) for batch in batches) > 0


def first_batch_of_two_workers(envs: list, seed: int | None = None) -> TensorDictBase:
    """The first batch of a MultiSyncCollector over ``envs`` (2 envs each), stacked: [worker, env, time]."""
    collector = MultiSyncCollector(envs, td_policy(HashPolicy(num_actions=2)), frames_per_batch=2 * 2 * 8,
                                   total_frames=2 * 2 * 8, cat_results="stack", **NO_AUTO_TRANSFORMS)
    try:
        if seed is not None:
            collector.set_seed(seed)
        return next(iter(collector)).clone()
    finally:
        collector.shutdown()


def test_copies_of_one_env_in_a_multi_collector_collect_different_data():
    # The same seeded env twice: each worker gets a pickled copy,
    # and a deterministic policy would repeat one copy's data in the other.
    env = TorchPoolEnv("CartPole-v1", 2, seed=0, num_threads=1)
    batch = first_batch_of_two_workers([env, env])
    assert batch.shape == (2, 2, 8)
    assert not torch.equal(batch[0]["observation"], batch[1]["observation"]), \
        "two copies of one env collected identical data"
    with Pool("CartPole-v1", num_envs=4, seed=0) as pool:
        expected = pool.reset()["observation"]
    first = torch.cat([batch[0]["observation"][:, 0], batch[1]["observation"][:, 0]])
    assert torch.equal(first, expected), "copy k must seed its envs seed + k * num_envs + i, like one pool of 4"
    check_transitions(batch, reward_per_step=1.0)
    env.close()


def test_unseeded_envs_draw_random_seeds():
    # NOTE [Seeds of copies]: torchrl's GymEnv and Gymnasium leave an unseeded env random.
    first, second = TorchPoolEnv("CartPole-v1", 3), TorchPoolEnv("CartPole-v1", 3)
    assert first.pool.seed != second.pool.seed, f"two unseeded envs both drew seed {first.pool.seed}"
    assert not torch.equal(first.reset()["observation"], second.reset()["observation"])
    with Pool("CartPole-v1", num_envs=3, seed=first.pool.seed) as pool:
        assert torch.equal(first.reset(seed=first.pool.seed)["observation"], pool.reset()["observation"]), \
            "env.pool.seed must say which seed an unseeded env drew"
    first.close()
    second.close()


def make_unseeded_cartpole() -> TorchPoolEnv:
    """A factory, as torchrl's examples hand collectors: called afresh in each worker."""
    return TorchPoolEnv("CartPole-v1", 2, num_threads=1)


def test_factory_copies_in_a_multi_collector_collect_different_data():
    # Issue 48 item 6: each worker calls the factory; with a fixed default seed every worker stepped the
    # same episodes and a deterministic policy collected the same data twice.
    batch = first_batch_of_two_workers([make_unseeded_cartpole] * 2)
    assert batch.shape == (2, 2, 8)
    assert not torch.equal(batch[0]["observation"], batch[1]["observation"]), \
        "two workers' envs made by one factory collected identical data"
    check_transitions(batch, reward_per_step=1.0)


@pytest.mark.parametrize("made_by", ["instance", "factory"])
def test_collector_set_seed_is_reproducible_and_seeds_workers_apart(made_by):
    # ("collector", "traj_ids") numbers trajectories in the order workers report: not data.
    def envs():
        return [TorchPoolEnv("CartPole-v1", 2, num_threads=1)] * 2 if made_by == "instance" \
            else [make_unseeded_cartpole] * 2
    runs = [first_batch_of_two_workers(envs(), seed=7).exclude("collector") for _ in range(2)]
    assert (runs[0] == runs[1]).all(), "the same collector seed must give the same data"
    assert not torch.equal(runs[0][0]["observation"], runs[0][1]["observation"]), \
        "collector.set_seed must give each worker its own seed"
    with Pool("CartPole-v1", num_envs=2, seed=7) as pool:
        assert torch.equal(runs[0][0]["observation"][:, 0], pool.reset()["observation"]), \
            "worker 0 must be seeded with the collector's seed"


DISTRIBUTED_SCRIPT = textwrap.dedent("""
    import functools, sys, torch
    from torch import nn
    from tensordict.nn import TensorDictModule
    from torchrl.collectors.distributed import DistributedCollector
    from torchrl.modules import ProbabilisticActor
    from torchpool import TorchPoolEnv

    if __name__ == "__main__":
        port, out = int(sys.argv[1]), sys.argv[2]
        actor = ProbabilisticActor(
            TensorDictModule(nn.Linear(4, 2), in_keys=["observation"], out_keys=["logits"]),
            in_keys=["logits"], distribution_class=torch.distributions.Categorical)
        make = functools.partial(TorchPoolEnv, "CartPole-v1", 4, seed=0, num_threads=1)
        collector = DistributedCollector([make], actor, frames_per_batch=4 * 16, total_frames=4 * 16 * 3,
                                         launcher="mp", backend="gloo", tcp_port=port)
        batches = [batch.clone() for batch in collector]
        collector.shutdown()
        torch.save(torch.stack(batches), out)
        print("collected", len(batches), "batches", flush=True)
""")


@pytest.mark.slow
def test_distributed_collector_over_loopback(tmp_path):
    out = tmp_path / "batches.pt"
    run_watched(DISTRIBUTED_SCRIPT, out)
    batches = torch.load(out, weights_only=False)
    assert batches.shape == (3, 4, 16)
    assert check_transitions(batches, reward_per_step=1.0) > 0
