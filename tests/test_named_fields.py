"""Observations of named fields (csrc/core/spec.h, ObservationSpec::name), through the probe's dict observation.

With ``dict_observation=True`` the probe declares three fields of three dtypes
and ranks: ``counters`` (float [4]: steps in the episode, last action,
resets, total steps), ``last_action`` (int64 scalar) and ``grid`` (uint8
[2, 3], total steps % 256). The pool nests them under ``"observation"`` (and
``"final_observation"``), the specs become a Gymnasium ``Dict`` and a torchrl
``Composite``, and the stream fills ``[num_envs, T]`` batches of them.
"""

import pytest
import torch

import torchpool
from torchpool.specs import DictSpec

FIELDS = ["counters", "last_action", "grid"]


def make(**kwargs):
    return torchpool.make("_Probe-v0", dict_observation=True, episode_length=3, **kwargs)


def check_fields(observation, where: str) -> None:
    """The three fields describe the same env state."""
    assert list(observation.keys()) == FIELDS, f"{where}: fields {list(observation.keys())} out of order"
    counters = observation["counters"]
    assert torch.equal(observation["last_action"], counters[..., 1].long()), f"{where}: last_action"
    grid = (counters[..., 3].long() % 256).to(torch.uint8)
    assert torch.equal(observation["grid"], grid[..., None, None].expand(observation["grid"].shape)), f"{where}: grid"


def test_a_step_nests_named_fields_with_their_dtypes_and_shapes():
    with make(num_envs=4) as pool:
        td = pool.reset()
        check_fields(td["observation"], "reset")
        td = pool.step(torch.full((4,), 7, dtype=torch.int64))
        observation = td["observation"]
        assert observation["counters"].shape == (4, 4) and observation["counters"].dtype == torch.float32
        assert observation["last_action"].shape == (4,) and observation["last_action"].dtype == torch.int64
        assert observation["grid"].shape == (4, 2, 3) and observation["grid"].dtype == torch.uint8
        assert (observation["last_action"] == 7).all()
        check_fields(observation, "step")
        check_fields(td["final_observation"], "final_observation")


def test_final_observation_fields_hold_the_last_step_of_an_episode():
    with make(num_envs=2) as pool:
        pool.reset()
        for step in range(3):
            td = pool.step(torch.full((2,), step, dtype=torch.int64))
        assert td["done"].all(), "the probe's episodes end after 3 steps"
        final, first = td["final_observation"], td["observation"]
        assert (final["counters"][:, 0] == 3).all() and (final["last_action"] == 2).all()
        assert (first["counters"][:, 0] == 0).all() and (first["last_action"] == -1).all(), "autoreset's first obs"
        check_fields(final, "final")


def test_async_batches_carry_every_field_of_their_envs():
    with make(num_envs=6, batch_size=2, num_threads=2) as pool:
        pool.async_reset()
        for _ in range(12):
            td = pool.recv()
            check_fields(td["observation"], "recv")
            pool.send(td["env_id"] % 5, td["env_id"])


def test_specs_are_a_gymnasium_dict_and_a_torchrl_composite():
    gymnasium = pytest.importorskip("gymnasium")
    with make(num_envs=2) as pool:
        spec = pool.observation_spec
        assert isinstance(spec, DictSpec) and list(spec.fields) == FIELDS
        space = spec.to_gymnasium()
        assert isinstance(space, gymnasium.spaces.Dict) and list(space.keys()) == FIELDS
        assert space["grid"].shape == (2, 3) and space["grid"].dtype == "uint8"
        assert space["last_action"].dtype == "int64"
        sample = pool.reset()[0]["observation"]
        assert space.contains({key: sample[key].numpy() for key in FIELDS}), "a real observation is outside its space"
        pytest.importorskip("torchrl")
        composite = spec.to_torchrl((2,))
        assert list(composite.keys()) == FIELDS and composite.shape == (2,)
        assert composite["grid"].shape == (2, 2, 3) and composite["grid"].dtype == torch.uint8


def test_output_targets_take_nested_keys():
    with make(num_envs=3) as pool:
        pool.reset()
        layout = pool.output_layout()
        keys = [key for key, _, _, _ in layout]
        assert ("observation", "grid") in keys and ("final_observation", "counters") in keys
        tensors = {key: torch.zeros(3, *shape, dtype=dtype) for key, dtype, shape, _ in layout}
        pool.step_into(torch.full((3,), 4, dtype=torch.int64), pool.output_targets(tensors))
        assert (tensors["observation", "last_action"] == 4).all()
        assert (tensors["observation", "grid"] == 1).all(), "one step since the start: total steps 1"


def probe_policy(observation):
    """The probe's last action plus one, from the named field (a TensorDict reaches the policy)."""
    assert list(observation.keys()) == FIELDS
    return (observation["last_action"].clamp(min=0) + 1) % 50


@pytest.mark.parametrize("split_envs", [False, True])
def test_stream_batches_nest_named_fields_and_equal_a_pool_rollout(split_envs):
    num_envs, T = 4, 5
    stream = torchpool.stream("_Probe-v0", probe_policy, num_envs=num_envs, frames_per_batch=num_envs * T,
                              total_frames=num_envs * T * 3, split_envs=split_envs, dict_observation=True,
                              episode_length=3)
    batches = [batch.clone() for batch in stream]
    assert stream.stats()["env_groups"] == (2 if split_envs else 1)
    batch = torch.cat(batches, dim=1)
    assert batch["observation", "grid"].shape == (num_envs, 3 * T, 2, 3)
    assert batch["next", "observation", "counters"].shape == (num_envs, 3 * T, 4)
    with make(num_envs=num_envs) as pool:
        observation = pool.reset()["observation"].clone()
        for t in range(3 * T):
            action = probe_policy(observation)
            td = pool.step(action)
            for key in FIELDS:
                assert torch.equal(batch["observation", key][:, t], observation[key]), f"step {t}: {key}"
                assert torch.equal(batch["next", "observation", key][:, t], td["final_observation", key]), (
                    f"step {t}: next {key}")
            assert torch.equal(batch["action"][:, t], action), f"step {t}: action"
            observation = td["observation"].clone()


def test_gymnasium_vector_env_gives_a_dict_space_and_dict_batches():
    gymnasium = pytest.importorskip("gymnasium")
    from torchpool.gym import VectorEnv

    env = VectorEnv("_Probe-v0", num_envs=3, autoreset_mode="SameStep", dict_observation=True, episode_length=2)
    assert isinstance(env.single_observation_space, gymnasium.spaces.Dict)
    observation, _ = env.reset(seed=0)
    assert list(observation) == FIELDS and env.observation_space.contains(observation)
    for _ in range(2):
        observation, _, terminated, _, info = env.step(env.action_space.sample() % 50)
    assert terminated.all() and env.observation_space.contains(observation)
    final = info["final_obs"][0]
    assert list(final) == FIELDS and final["counters"][0] == 2, "final_obs is each env's last dict observation"
    env.close()


def test_envpool_compat_gives_a_dict_and_rl_games_one_vector_in_field_order():
    import torchpool.envpool_compat as envpool

    envs = envpool.make("_Probe-v0", env_type="gymnasium", num_envs=2, dict_observation=True)
    obs, _ = envs.reset()
    assert isinstance(obs, dict) and list(obs) == FIELDS and obs["grid"].shape == (2, 2, 3)
    envs.close()
    pytest.importorskip("rl_games")
    from torchpool.rl_games import RlGamesVecEnv

    env = RlGamesVecEnv("probe", 2, "_Probe-v0", device="cpu", dict_observation=True)
    assert env.observation_space.shape == (4 + 1 + 6,)
    vector = env.reset()
    assert vector.shape == (2, 11) and vector.dtype == torch.float32
    assert torch.equal(vector[:, 4], vector[:, 1]), "last_action follows counters, in field order"


def test_torchrl_env_puts_named_fields_at_the_root_and_passes_check_env_specs():
    """One root key per field, as torchrl's DMControlEnv and GymEnv (Dict spaces) name them."""
    pytest.importorskip("torchrl")
    from torchrl.envs.utils import check_env_specs

    env = torchpool.TorchPoolEnv("_Probe-v0", num_envs=3, dict_observation=True, episode_length=2)
    assert "observation" not in env.observation_spec.keys()
    assert [key for key in env.observation_spec.keys() if key in FIELDS] == FIELDS
    check_env_specs(env)
    rollout = env.rollout(5, break_when_any_done=False)
    assert rollout["grid"].shape == (3, 5, 2, 3)
    assert rollout["last_action"].shape == (3, 5, 1), "a scalar field gets torchrl's trailing singleton"
    last = {key: rollout["next", key][:, 1] for key in FIELDS}
    check_fields(dict(last, last_action=last["last_action"].squeeze(-1)), "torchrl next observation at an episode end")
    assert (rollout["next", "counters"][:, 1, 0] == 2).all(), "the true last observation"
    assert (rollout["counters"][:, 2, 0] == 0).all(), "the new episode's first at the root"
    env.close()
