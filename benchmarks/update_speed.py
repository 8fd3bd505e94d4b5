"""What makes a small MLP's PPO update fast on a CPU: an interleaved A/B of torchpool.train.ppo.update (issue #34).

The update of ``python -m torchpool train`` (``torchpool.train.ppo.update``)
on a batch the shape of a recipe's (random observations, actions and
advantages: the update's cost does not depend on their values), timed for
each variant in turn, round after round, so drifts of a shared machine fall
on every variant alike. Variants:

- ``baseline``: torch's default Adam (the single-tensor loop on a CPU), 1
  intra-op thread (the recipes' default for MLPs, so the env workers keep
  their cores)
- ``foreach``: Adam(foreach=True), one kernel per op over every parameter
- ``fused``: Adam(fused=True), torch's fused CPU kernel (what the recipes use
  since this measurement)
- ``compile``: the actor's and critic's MLPs through ``torch.compile``
  (compile time reported apart, not in the per-update times)
- ``2 threads``: the baseline with 2 intra-op threads

    python benchmarks/update_speed.py [--recipes Ant-v4 Pendulum-v1] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
VARIANTS = ("baseline", "foreach", "fused", "compile", "2 threads")


def make_update(env_id: str, variant: str):
    """A closure running one update of env_id's recipe on a fixed random batch, and its setup seconds."""
    import torchpool
    from torchpool.train import ppo

    settings = ppo.recipe(env_id)
    args = ppo.Args(env_id=env_id, **settings)
    with torchpool.make(env_id, num_envs=1) as probe:
        obs_size = int(np.prod(probe.observation_spec.shape))
        action_spec = probe.action_spec
    torch.manual_seed(0)
    agent = ppo.Agent(obs_size, action_spec, args.hidden, args.norm_obs, args.activation, args.norm_value,
                      args.shared_body)
    options = {"foreach": dict(foreach=True), "fused": dict(fused=True)}.get(variant, {})
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5, **options)
    frames = args.num_envs * args.num_steps
    actions = int(np.prod(action_spec.shape))
    flat = {"observation": torch.randn(frames, obs_size), "action": torch.randn(frames, actions).clamp(-1, 1),
            "log_prob": torch.randn(frames) - 5, "advantage": torch.randn(frames), "returns": torch.randn(frames)}
    flat["prox_log_prob"] = flat["log_prob"] + 0.01 * torch.randn(frames)
    if args.prefetch:
        flat["weight"] = (flat["prox_log_prob"] - flat["log_prob"]).exp()
    args.kl_target = None  # a fixed rate: every variant does the same steps
    shuffles = torch.Generator().manual_seed(0)
    setup = 0.0
    if variant == "compile":
        agent.actor, agent.critic = torch.compile(agent.actor), torch.compile(agent.critic)
        started = time.perf_counter()
        ppo.update(agent, optimizer, flat, args, shuffles)  # compiles forward and backward
        setup = time.perf_counter() - started
    threads = 2 if variant == "2 threads" else 1
    return (lambda: ppo.update(agent, optimizer, flat, args, shuffles)), threads, setup, args


def measure(env_ids: list[str], rounds: int) -> dict:
    results: dict[str, dict] = {}
    for env_id in env_ids:
        updates = {variant: make_update(env_id, variant) for variant in VARIANTS}
        times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        for run, threads, _, _ in updates.values():  # warm-up: first-call allocations
            torch.set_num_threads(threads)
            run()
        for _ in range(rounds):
            for variant, (run, threads, _, _) in updates.items():
                torch.set_num_threads(threads)
                started = time.perf_counter()
                run()
                times[variant].append(time.perf_counter() - started)
        args = updates["baseline"][3]
        results[env_id] = {"times": times, "setup": {v: u[2] for v, u in updates.items()},
                           "shape": f"{args.num_envs * args.num_steps} frames, {args.update_epochs} epochs of "
                                    f"{args.num_minibatches} minibatches, MLP {args.hidden} {args.activation}"}
        base = statistics.median(times["baseline"])
        for variant in VARIANTS:
            median = statistics.median(times[variant])
            print(f"{env_id} {variant}: {median * 1e3:.1f} ms per update ({base / median:.2f}x the baseline's speed)",
                  flush=True)
    torch.set_num_threads(1)
    return results


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.5 * len(results), 3.4), squeeze=False)
    for ax, (env_id, result) in zip(axes[0], results.items()):
        medians = [statistics.median(result["times"][v]) * 1e3 for v in VARIANTS]
        ax.bar(range(len(VARIANTS)), medians, color=["C0", "C1", "C2", "C3", "C4"])
        ax.set_xticks(range(len(VARIANTS)), VARIANTS, rotation=20, fontsize=8)
        ax.set_ylabel("ms per update (median)")
        ax.set_title(f"{env_id}: one PPO update", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    from torchpool import bench

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", nargs="+", default=["Ant-v4", "Pendulum-v1"])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (each variant once per round)")
    args = parser.parse_args()
    results = measure(args.recipes, args.rounds)
    plot(results, HERE / "update_speed.png")
    lines = ["| recipe | the update | " + " | ".join(VARIANTS) + " |", "|---|---|" + "---:|" * len(VARIANTS)]
    for env_id, result in results.items():
        medians = {v: statistics.median(result["times"][v]) for v in VARIANTS}
        cells = [f"{medians[v] * 1e3:.1f} ms ({medians['baseline'] / medians[v]:.2f}x)" for v in VARIANTS]
        lines.append(f"| {env_id} | {result['shape']} | " + " | ".join(cells) + " |")
    compile_setup = ", ".join(f"{env_id} {r['setup']['compile']:.1f} s" for env_id, r in results.items())
    bench.record_section(
        HERE / "RESULTS.md", "update-speed",
        "The PPO update on a CPU: optimizers, torch.compile, threads (`benchmarks/update_speed.py`)", settings=[
        f"- Settings: `torchpool.train.ppo.update` on a random batch of each recipe's shape, a fixed rate; "
        f"{args.rounds} interleaved rounds after a warm-up, medians; cells: ms per update (speed relative to the "
        f"baseline). torch.compile's first update (compiling) took {compile_setup}, not counted.",
    ], body=[
        *lines,
        "",
        "![The PPO update's variants](update_speed.png)",
    ])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
