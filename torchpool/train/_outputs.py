"""What every training script ends with: fresh evaluation episodes and the saved run.

    scores = play_fresh_games(act, env_id, games=10, seed=seed, make_kwargs={}, device=device)
    save_run(state_dict, result, out_dir, algo="ppo")   # <algo>_<env>.pt / .json / .png
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

import torchpool


def file_stem(env_id: str) -> str:
    """The env id as a file name: "gymnasium:LunarLander-v3" is "gymnasium_LunarLander-v3"."""
    return env_id.replace(":", "_").replace("/", "_")


@torch.no_grad()
def play_fresh_games(act: Callable[[torch.Tensor], torch.Tensor], env_id: str, games: int, seed: int,
                     make_kwargs: dict, device: torch.device) -> dict:
    """Plays `games` fresh episodes, one per env, seeded past any seed training used.

    act: observations [games, *obs_shape] on `device` -> actions [games, *action_shape]. Rewards are the
    game's own (an Atari recipe's reward_clip and episodic_life are turned off), so a Pong return is the score
    difference.
    """
    if "reward_clip" in make_kwargs:
        make_kwargs = dict(make_kwargs, reward_clip=False, episodic_life=False)
    returns: dict[int, float] = {}
    with torchpool.make(env_id, num_envs=games, seed=seed + 1_000_003, **make_kwargs) as pool:
        td = pool.reset()
        while len(returns) < games:
            td = pool.step(act(td["observation"].to(device)).cpu())
            for env in td["done"].nonzero().flatten().tolist():
                returns.setdefault(env, float(td["episode_return"][env]))
    scores = [returns[env] for env in range(games)]
    return {"games": games, "mean_return": float(np.mean(scores)), "returns": scores}


def save_run(state: dict, result: dict, out_dir: Path, algo: str) -> None:
    """Writes <algo>_<env>.pt (the state dict), .json (the result) and .png (its learning curve) in out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"{algo}_{file_stem(result['env_id'])}"
    torch.save(state, f"{stem}.pt")
    Path(f"{stem}.json").write_text(json.dumps(result, indent=1))
    if not result["curve"]:
        return
    try:
        # A bare Figure, not pyplot: saving must not switch the caller's backend (a notebook's inline plots).
        from matplotlib.figure import Figure
    except ImportError:
        print("matplotlib is not installed: no learning-curve PNG (pip install matplotlib)")
        return

    frames, _, returns = zip(*result["curve"])
    fig = Figure(figsize=(6, 3.5))
    ax = fig.subplots()
    ax.plot(frames, returns)
    if result["target_return"] is not None:
        ax.axhline(result["target_return"], color="gray", linestyle="--", label="target")
        ax.legend()
    ax.set_xlabel("frames")
    ax.set_ylabel("mean return (last 20 episodes)")
    ax.set_title(f"{algo.upper()} on {result['env_id']}: {result['wall_seconds']:.0f} s, "
                 f"{result['frames_per_s']:,.0f} frames/s")
    fig.tight_layout()
    fig.savefig(f"{stem}.png", dpi=110)
