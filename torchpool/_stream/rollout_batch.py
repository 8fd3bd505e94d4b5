"""The batch a stream hands out, and the transposes that fill it.

A batch is a TensorDict ``[num_envs, T]`` in torchrl's layout: ``observation``,
``action``, the policy's extras, the root flags and ``env_id`` at the root;
under ``"next"`` the true next observation, ``reward``, the flags,
``episode_return`` and ``episode_length`` ``[..., 1]`` (as torchrl and
``TorchPoolEnv`` have them), and the family's extras.
"""

from __future__ import annotations

from typing import Any

import torch

from ..pool import FIXED_KEYS

# The fixed keys that have a place of their own in a batch; every other output
# key (episode_return, episode_length, the family's extras) rides along under "next".
_PLACED = set(FIXED_KEYS) - {"episode_return", "episode_length"}
# Per-step scalars torchrl keeps as [..., 1], as TorchPoolEnv gives them: the
# batch holds them so, and the pool's [num_envs] column is their squeeze(-1).
_TRAILING_ONE = ("reward", "done", "terminated", "truncated", "episode_return", "episode_length")


def next_column(out: Any, key: str) -> torch.Tensor:
    """``out["next", key]`` shaped as the pool's output column ``[num_envs, T, *shape]``."""
    value = out["next", key]
    return value.squeeze(-1) if key in _TRAILING_ONE else value


def next_keys(layout: dict[str, tuple]) -> list[str]:
    """The output keys, of ``Pool.output_layout()``, that a batch holds under "next" as they are."""
    return [key for key in layout if _top(key) not in _PLACED]


def observation_keys(layout: dict[Any, tuple]) -> list[Any]:
    """The observation's keys in ``layout``: ``"observation"``, or ``("observation", name)`` per named field."""
    return [key for key in layout if _top(key) == "observation"]


def final_key(observation_key: Any) -> Any:
    """The key of the final observation's column that matches an observation key."""
    return ("final_observation", observation_key[1]) if isinstance(observation_key, tuple) else "final_observation"


def under_next(key: Any) -> tuple[str, ...]:
    """A batch's key under "next" for a layout key (a string or a nested tuple)."""
    return ("next", *key) if isinstance(key, tuple) else ("next", key)


def observation_input(fields: dict[Any, torch.Tensor], batch: int) -> Any:
    """What a policy gets from the observation keys' tensors: the tensor itself, or a TensorDict of named fields."""
    if list(fields) == ["observation"]:
        return fields["observation"]
    from tensordict import TensorDict

    return TensorDict({key[1]: value for key, value in fields.items()}, batch_size=[batch])


def _top(key: Any) -> str:
    return key[0] if isinstance(key, tuple) else key


def empty_batch(num_envs: int, steps: int, layout: dict[str, tuple], policy_outputs: dict[str, torch.Tensor],
                device: torch.device) -> Any:
    """A batch to fill; ``policy_outputs``: the policy's buffers ``[T, num_envs, ...]`` by key."""
    from tensordict import TensorDict

    N, T = num_envs, steps
    flag = lambda: torch.zeros((N, T, 1), dtype=torch.bool, device=device)  # noqa: E731

    def observation() -> Any:
        fields = {key: torch.empty((N, T, *layout[key][1]), dtype=layout[key][0], device=device)
                  for key in observation_keys(layout)}
        return fields["observation"] if "observation" in fields else {key[1]: value for key, value in fields.items()}

    nxt = {"observation": observation(),
           "reward": torch.empty((N, T, 1), dtype=torch.float32, device=device),
           "done": flag(), "terminated": flag(), "truncated": flag()}
    for key in next_keys(layout):
        dtype, shape, _ = layout[key]
        nxt[key] = torch.empty((N, T, *shape, *((1,) if key in _TRAILING_ONE else ())), dtype=dtype, device=device)
    out = {"observation": observation(),
           "env_id": torch.arange(N, device=device).unsqueeze(1).expand(N, T).clone(),
           # Same-step autoreset: an observation at the root never ends an episode.
           "done": flag(), "terminated": flag(), "truncated": flag(),
           "next": TensorDict(nxt, batch_size=[N, T], device=device)}
    for key, value in policy_outputs.items():
        out[key] = torch.empty((N, T, *value.shape[2:]), dtype=value.dtype, device=device)
    return TensorDict(out, batch_size=[N, T], device=device)


# NOTE [Records]: assembling a batch transposes every key from step-major to
# env-major. torch copies a small trailing dim (CartPole's 4 floats) one
# element at a time, with its loop overhead per record; viewed as one
# 16-byte element per record, the same copy is a plain 2D transpose, many
# times faster (docs/performance.md, "Code choices and their measurements").
# So each record is viewed as the widest whole element its size and alignment allow.
_RECORD_DTYPES = (torch.complex128, torch.int64, torch.int32, torch.int16, torch.uint8)


def as_records(destination: torch.Tensor, source: torch.Tensor, batch_dims: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(destination, source) of equal shape ``[*batch, *record]``, each record contiguous, re-viewed as
    ``[*batch, k]`` of the widest element that divides the records (``[*batch]`` when one element fits)."""
    if destination.device.type != "cpu":
        return destination, source  # copies on the GPU are fast as they are
    pair = []
    for tensor in (destination, source):
        bytes_ = tensor.unsqueeze(-1) if tensor.dim() == batch_dims else tensor.flatten(batch_dims)
        pair.append(bytes_.view(torch.uint8))
    for dtype in _RECORD_DTYPES:
        try:
            wide = [bytes_.view(dtype) for bytes_ in pair]
        except RuntimeError:  # the record size, an offset or a stride is not a multiple of this width
            continue
        if wide[0].shape[-1] == 1:
            wide = [tensor.squeeze(-1) for tensor in wide]
        return wide[0], wide[1]
    raise AssertionError("every record is a whole number of bytes")
