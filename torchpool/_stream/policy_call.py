"""What a stream accepts as a policy, and how it reads the action from each kind.

A policy maps observations ``[n, *obs_shape]`` to actions ``[n, *action_shape]``.
It may return a bare tensor (the common case, checked first), ``(action,
extras_dict)``, or a dict or TensorDict holding ``"action"``; or it may be a
TensorDict module (``in_keys``/``out_keys``) that writes ``"action"``. Extras
ride along into the batch under their own keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import torch


def is_tensordict_module(policy: Callable) -> bool:
    return hasattr(policy, "in_keys") and hasattr(policy, "out_keys")


def call_policy(policy: Callable, observation: torch.Tensor,
                module: bool) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """(action, extras) of one call; ``module``: ``is_tensordict_module(policy)``, decided once."""
    if module:
        from tensordict import TensorDict  # imported by now: the stream's batches are TensorDicts

        td = policy(TensorDict({"observation": observation}, batch_size=observation.shape[:1]))
        if "action" not in td.keys():
            raise KeyError(f"the policy module wrote {list(td.keys())} but no 'action'")
        return td["action"], {key: td[key] for key in td.keys() if key not in ("observation", "action")}
    out = policy(observation)
    if out.__class__ is torch.Tensor:
        return out, {}
    return policy_result(out)


def policy_result(out: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """(action, extras) from what a plain policy returned, when that is not a bare tensor."""
    if isinstance(out, tuple):
        if len(out) != 2 or not isinstance(out[1], Mapping):
            raise TypeError("a policy returning a tuple must return (action, dict_of_extras)")
        return out[0], dict(out[1])
    if isinstance(out, Mapping):  # a TensorDict is a Mapping too
        if "action" not in out.keys():
            raise KeyError(f"the policy returned {list(out.keys())} but no 'action'")
        return out["action"], {key: out[key] for key in out.keys() if key != "action"}
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"the policy must return a tensor, (action, extras) or a dict; got {type(out).__name__}")
    return out, {}


def wrong_action_shape(action: torch.Tensor, observation: torch.Tensor, expected: torch.Size) -> NoReturn:
    raise ValueError(f"the policy returned actions of shape {tuple(action.shape)} for "
                     f"{tuple(observation.shape)} observations; expected {tuple(expected)}")
