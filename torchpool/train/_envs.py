"""What the training scripts ask of an env before they build their MLPs on it.

    make_kwargs = one_vector(env_id, make_kwargs)   # named observation fields -> flatten_obs=True
"""

from __future__ import annotations

from torchpool import registry


def one_vector(env_id: str, make_kwargs: dict) -> dict:
    """``make_kwargs`` under which ``env_id`` observes one vector, as the scripts' MLPs take.

    An env of named observation fields (the Control Suite's ``position``, ``velocity``, ...) gets
    ``flatten_obs=True`` where its family offers it (every key concatenated in the family's order, what
    rl_games' dm_control configs train on); one that cannot flatten is refused by name.
    """
    import torchpool

    with torchpool.make(env_id, num_envs=1, **make_kwargs) as probe:
        named = hasattr(probe.observation_spec, "fields")
    if not named:
        return make_kwargs
    flattens = registry.is_registered(env_id) and "flatten_obs" in registry.lookup(env_id).kwargs
    if flattens and "flatten_obs" not in make_kwargs:
        return {**make_kwargs, "flatten_obs": True}
    raise ValueError(f"the training scripts' MLPs take one observation vector, but {env_id}'s observation is "
                     f"named fields {list(probe.observation_spec.fields)}")
