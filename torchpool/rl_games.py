"""rl_games vec-env ``TORCHPOOL`` and env config ``torchpool``: rl_games trains on a torchpool Pool.

    import torchpool.rl_games
    torchpool.rl_games.register()       # before rl_games builds its agent

    # rl_games YAML (examples/rl_games/):
    params:
      config:
        env_name: torchpool
        device: cuda:0
        env_config: {env_id: CartPole-v1, device: cuda:0, num_threads: 4}

``env_config`` holds ``env_id``, ``device`` (where observations, rewards,
dones and ``time_outs`` are put; default ``cuda:0`` when CUDA is available,
else ``cpu``: keep it equal to ``config.device``, which rl_games does not pass
to vec-envs) and any other ``torchpool.make`` argument (``seed`` is filled in
by rl_games' runner; ``num_envs`` comes from ``config.num_actors``).

It also takes the ``env_config`` of rl_games' own EnvPool YAMLs
(``rl_games/configs/**/*envpool*.yaml``), so those run natively by changing
``env_name: envpool`` to ``env_name: torchpool`` alone: ``env_name`` (the env
id, another name for ``env_id``), ``has_lives`` and ``use_dict_obs_space``
(as in rl_games' ``Envpool`` wrapper; see :class:`RlGamesVecEnv`).

The pool runs sync with same-step autoreset, the convention of rl_games'
GPU envs (Isaac Gym, Brax): a done row's observation is the first of the next
episode. Each ``step`` returns torch tensors on ``device``: observations
``[num_actors, *obs_shape]``, rewards float32 ``[num_actors]``, dones bool
``[num_actors]``, and ``infos`` with

* ``time_outs`` (bool ``[num_actors]`` on ``device``): truncated by the time
  limit and not terminated; rl_games bootstraps the value there
  (``value_bootstrap: True``);
* ``scores`` (float64 NumPy ``[num_actors]``): the unclipped return of the
  game so far, its total on the step the game ends (what rl_games'
  ``DefaultAlgoObserver`` logs as ``scores/mean``);
* ``lives`` (int NumPy ``[num_actors]``), only for games that count lives
  (not Pong, whose ALE lives stay 0): the observer then counts a game as over
  where ``lives == 0``.

``scores`` and ``lives`` stay NumPy because the observer reads them with NumPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
import torch

from .pool import Pool, make
from .specs import DictSpec

if TYPE_CHECKING:
    from tensordict import TensorDict

__all__ = ["register", "RlGamesVecEnv", "ENV_NAME", "VECENV_TYPE"]

ENV_NAME = "torchpool"      # config.env_name
VECENV_TYPE = "TORCHPOOL"   # rl_games' vecenv_type


def _default_device() -> str:
    # rl_games' own default for config.device is "cuda:0".
    return "cuda:0" if torch.cuda.is_available() else "cpu"


class RlGamesVecEnv:
    """rl_games' ``IVecEnv`` interface over a sync, same-step-autoreset :class:`torchpool.Pool`.

    Args:
        config_name: the rl_games env name (``"torchpool"``); unused.
        num_actors: how many envs (rl_games' ``num_actors``).
        env_id: a torchpool env id.
        device: where step outputs go (see the module docstring).
        env_name: the env id under the name rl_games' EnvPool YAMLs give it;
            pass it or ``env_id``, not both.
        has_lives: whether ``infos`` carry ``lives``, which makes rl_games'
            observer end a game where ``lives == 0`` (rl_games' EnvPool
            option); ``None`` (default): where the game counts lives.
        use_dict_obs_space: observations become rl_games' EnvPool dict, for
            networks with ``require_rewards`` / ``require_last_actions``:
            ``{"observation": [num_actors, *obs_shape], "reward": float32
            [num_actors] (the reward clipped to [-1, 1]; 0 after reset),
            "last_action": [num_actors] (the action just taken; 0 after reset)}``.
        **make_kwargs: other ``torchpool.make`` arguments (``seed``,
            ``num_threads``, ``max_episode_steps``, task kwargs).
    """

    def __init__(self, config_name: str, num_actors: int, env_id: str | None = None,
                 device: str | torch.device | None = None, *, env_name: str | None = None,
                 has_lives: bool | None = None, use_dict_obs_space: bool = False, **make_kwargs: Any):
        if (env_id is None) == (env_name is None):
            raise ValueError(f"pass the env id as env_id or as env_name (rl_games' EnvPool key), not "
                             f"{'both' if env_id is not None else 'neither'}: env_id={env_id!r}, env_name={env_name!r}")
        env_id = env_id if env_id is not None else env_name
        for name, required in (("autoreset", "same_step"), ("batch_size", num_actors)):
            if make_kwargs.get(name, required) != required:
                raise ValueError(f"rl_games steps every env at once with same-step autoreset: "
                                 f"{name} must be {required!r}, got {make_kwargs[name]!r}")
            make_kwargs.pop(name, None)
        self._pool: Pool = make(env_id, num_envs=num_actors, autoreset="same_step", **make_kwargs)
        self.env_id = env_id
        self.num_actors = num_actors
        self.device = torch.device(device if device is not None else _default_device())
        self.action_space = self._pool.action_spec.to_gymnasium()
        if hasattr(self.action_space, "n"):
            # A Python int, as gym gave: rl_games' resnet network passes n to
            # torch.nn.LSTM(input_size=...), which refuses Gymnasium's np.int64.
            self.action_space.n = int(self.action_space.n)
        # Named observation fields reach rl_games as one float32 vector, in field order.
        self._flatten = isinstance(self._pool.observation_spec, DictSpec)
        spec = self._pool.observation_spec.flattened() if self._flatten else self._pool.observation_spec
        self.observation_space = spec.to_gymnasium()
        self._use_dict_obs_space = use_dict_obs_space
        if use_dict_obs_space:
            if not hasattr(self.action_space, "n"):
                raise ValueError(f"use_dict_obs_space needs a discrete action space (last_action is one action "
                                 f"index, as in rl_games' EnvPool wrapper); {env_id} has {self.action_space}")
            # rl_games' Envpool wrapper's Dict, bounds and all (rl_games/envs/envpool.py).
            self.observation_space = gymnasium.spaces.Dict({
                "observation": self.observation_space,
                "reward": gymnasium.spaces.Box(low=0, high=1, shape=(), dtype=np.float32),
                "last_action": gymnasium.spaces.Box(low=0, high=self.action_space.n, shape=(), dtype=int),
            })
        self._has_lives = has_lives
        self._atari = self._pool.family == "Atari"  # by family, not by extras' names a Python env may share
        self._scores = np.zeros(num_actors, dtype=np.float64)  # unclipped return of each running game
        self._counts_lives = False  # set by reset()
        self._next_seed: int | None = None

    @property
    def pool(self) -> Pool:
        """The underlying :class:`torchpool.Pool`."""
        return self._pool

    # ---- IVecEnv ----------------------------------------------------------------

    def step(self, actions: Any) -> tuple[Any, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """``actions`` ``[num_actors, *action_shape]`` (torch on any device, or NumPy) ->
        ``(obs, rewards, dones, infos)``; see the module docstring (and ``use_dict_obs_space``)."""
        td = self._pool.step(actions)
        keys = td.keys()
        terminated, truncated, done = td["terminated"], td["truncated"], td["done"]

        unclipped = td["raw_reward"] if self._atari else td["reward"]
        self._scores += unclipped.numpy()
        scores = self._scores.copy()
        infos: dict[str, Any] = {"time_outs": self._to_device(truncated & ~terminated), "scores": scores}
        if self._atari:
            # Atari: the game's real end (with episodic life an episode, a
            # life, can end before it), or the time limit cutting it.
            game_over = td["game_over"].numpy() | (done.numpy() & truncated.numpy())
            if self._counts_lives:
                infos["lives"] = td["lives"].numpy().copy()
        elif "lives" in keys:
            lives = td["lives"].numpy()
            game_over = done.numpy() & ((lives == 0) | truncated.numpy())
            if self._counts_lives:
                infos["lives"] = lives.copy()
        else:
            game_over = done.numpy()
        self._scores[game_over] = 0.0
        reward = self._to_device(td["reward"])
        obs = self._observation(td)
        if self._use_dict_obs_space:
            obs = {"observation": obs, "reward": reward.clamp(-1, 1),
                   "last_action": torch.as_tensor(actions, device=self.device)}
        return obs, reward, self._to_device(done), infos

    def reset(self) -> Any:
        """Resets every env; observations ``[num_actors, *obs_shape]`` on ``device`` (see ``use_dict_obs_space``)."""
        td = self._pool.reset(seed=self._next_seed)
        self._next_seed = None
        self._scores[:] = 0.0
        if self._has_lives is not None:
            self._counts_lives = self._has_lives and "lives" in td.keys()
        else:
            # Games without lives (Pong) report 0 lives throughout; handing that to
            # rl_games' observer would make it log a "finished" score every step.
            self._counts_lives = "lives" in td.keys() and bool((td["lives"] > 0).any())
        obs = self._observation(td)
        if self._use_dict_obs_space:
            zeros = torch.zeros(self.num_actors, device=self.device)
            obs = {"observation": obs, "reward": zeros, "last_action": zeros.long()}
        return obs

    def seed(self, seed: int) -> None:
        """Reseeds at the next ``reset()``: env ``i`` gets ``seed + i``."""
        self._next_seed = int(seed)

    def get_number_of_agents(self) -> int:
        return 1

    def get_env_info(self) -> dict[str, Any]:
        """The single-env spaces rl_games builds its networks from."""
        return {"observation_space": self.observation_space, "action_space": self.action_space,
                "agents": 1, "value_size": 1}

    def has_action_masks(self) -> bool:
        return False

    def set_train_info(self, env_frames: int, *args: Any, **kwargs: Any) -> None:
        pass

    def get_env_state(self) -> None:
        return None

    def set_env_state(self, env_state: Any) -> None:
        pass

    def close(self) -> None:
        self._pool.close()

    # ---- internals --------------------------------------------------------------

    def _observation(self, td: TensorDict) -> torch.Tensor:
        observation = td["observation"]
        return self._to_device(DictSpec.flatten(observation) if self._flatten else observation)

    def _to_device(self, tensor: torch.Tensor) -> torch.Tensor:
        if tensor.device == self.device:
            return tensor  # zero-copy view of the pool's output (never overwritten while held)
        # Blocking: the source is a ring block the pool writes again a few
        # steps later, which an asynchronous copy could still be reading.
        return tensor.to(self.device)


def _create_vec_env(config_name: str, num_actors: int, **env_config: Any) -> RlGamesVecEnv:
    return RlGamesVecEnv(config_name, num_actors, **env_config)


def _create_env(**env_config: Any) -> RlGamesVecEnv:
    # rl_games' players build their env with env_creator(**env_config); it is
    # batched like the training one, num_actors (default 1) envs wide.
    return RlGamesVecEnv(ENV_NAME, env_config.pop("num_actors", 1), **env_config)


def register() -> None:
    """Registers the vec-env type ``TORCHPOOL`` and the env config ``torchpool`` with rl_games; idempotent."""
    from rl_games.common import env_configurations, vecenv

    vecenv.register(VECENV_TYPE, _create_vec_env)
    env_configurations.register(ENV_NAME, {"vecenv_type": VECENV_TYPE, "env_creator": _create_env})
