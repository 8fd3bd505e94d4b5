"""What does keeping each step's outputs cost? Per-step time of a loop that drops them vs one that keeps them.

A loop that keeps outputs (a rollout list, torchrl's `rollout`, CleanRL-style
code holding last step's arrays) forces the pool to hand out fresh memory
instead of reusing its output ring (NOTE [Output ring reuse]). Each case times
the same steps both ways, interleaved round by round in one process
(benchmarks/harness):

* dropped: `out = step(action)`, nothing kept past the next step;
* kept: every output appended to a list, the list started anew every
  `--horizon` steps (a rollout buffer's pattern, so memory stays bounded and
  Python's garbage collector sees what a real loop gives it).

Cases: `Pool.step`, `envpool_compat` (EnvPool's gymnasium API: the observation
array kept), torchrl's `TorchPoolEnv` (kept: `rollout(horizon)`; dropped: the
collector's `step_and_maybe_reset` loop), and EnvPool itself where installed.

    python benchmarks/keep_outputs.py --record
"""

from __future__ import annotations

import argparse
import gc
import statistics
from collections.abc import Callable

import harness
import numpy as np
import torch

import torchpool

TASKS = (("CartPole-v1", 4), ("Pong-v5", 4))


def us_per_step(loop: Callable[[int], None], steps: int) -> float:
    """Microseconds per step of loop(steps), after a garbage collection (each turn starts with the same heap)."""
    gc.collect()
    return 1e6 / harness.time_calls(lambda _: (loop(steps), steps)[1], calls=1, warmup=0)[0]


def pool_loops(env_id: str, num_envs: int, horizon: int):
    pool = torchpool.make(env_id, num_envs=num_envs, seed=0)
    pool.reset()
    action = torch.zeros(num_envs, dtype=torch.int64)

    def dropped(steps: int) -> None:
        for _ in range(steps):
            pool.step(action)

    def kept(steps: int) -> None:
        rollout = []
        for i in range(steps):
            if i % horizon == 0:
                rollout = []
            rollout.append(pool.step(action))

    return dropped, kept, pool.close


def compat_loops(module, env_id: str, num_envs: int, horizon: int):
    envs = module.make(env_id, env_type="gymnasium", num_envs=num_envs, seed=0)
    envs.reset()
    action = np.zeros(num_envs, dtype=np.int64)

    def dropped(steps: int) -> None:
        for _ in range(steps):
            envs.step(action)

    def kept(steps: int) -> None:
        rollout = []
        for i in range(steps):
            if i % horizon == 0:
                rollout = []
            obs, reward, terminated, truncated, info = envs.step(action)
            rollout.append((obs, reward, terminated, truncated))

    return dropped, kept, getattr(envs, "close", lambda: None)


def torchrl_loops(env_id: str, num_envs: int, horizon: int):
    from torchpool.torchrl import TorchPoolEnv

    env = TorchPoolEnv(env_id, num_envs=num_envs, seed=0)
    td = env.reset()
    action = torch.zeros(env.action_spec.shape, dtype=env.action_spec.dtype)
    state = {"td": td}

    def dropped(steps: int) -> None:
        td = state["td"]
        for _ in range(steps):
            td["action"] = action
            _, td = env.step_and_maybe_reset(td)
        state["td"] = td

    def kept(steps: int) -> None:
        for _ in range(steps // horizon):
            env.rollout(horizon, break_when_any_done=False)  # one reset per rollout

    return dropped, kept, env.close


def measure(name: str, make_loops, steps: int, horizon: int, rounds: int) -> dict:
    dropped, kept, close = make_loops()
    dropped(horizon), kept(horizon)  # warm-up
    loops = {"dropped": dropped, "kept": kept}
    times = harness.measure_rounds(list(loops), rounds, lambda which: us_per_step(loops[which], steps))
    close()
    return {"case": name, "dropped_us": statistics.median(times["dropped"]),
            "kept_us": statistics.median(times["kept"]), "ratio": harness.paired(times["kept"], times["dropped"]).ratio,
            "rounds": rounds}


def cases(args) -> list[tuple[str, Callable, int]]:
    import torchpool.envpool_compat as compat

    out = []
    for env_id, num_envs in TASKS:
        steps = args.steps if env_id.startswith("CartPole") else max(args.steps // 20, args.horizon)
        label = f"{env_id} x{num_envs}"
        out.append((f"Pool.step, {label}", lambda e=env_id, n=num_envs: pool_loops(e, n, args.horizon), steps))
        out.append((f"envpool_compat, {label}",
                    lambda e=env_id, n=num_envs: compat_loops(compat, e, n, args.horizon), steps))
        out.append((f"TorchPoolEnv, {label}", lambda e=env_id, n=num_envs: torchrl_loops(e, n, args.horizon),
                    steps))
        if harness.envpool_available():
            import envpool

            out.append((f"EnvPool {envpool.__version__}, {label}",
                        lambda e=env_id, n=num_envs: compat_loops(envpool, e, n, args.horizon), steps))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4096, help="CartPole steps per measurement (Pong: 1/20)")
    parser.add_argument("--horizon", type=int, default=128, help="steps per kept rollout (default 128)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per case (default 5)")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and keep_outputs.png")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for name, make_loops, steps in cases(args):
        result = measure(name, make_loops, steps, args.horizon, args.rounds)
        results.append(result)
        print(f"{name:38s} dropped {result['dropped_us']:8.1f} us/step  kept {result['kept_us']:8.1f}  "
              f"kept/dropped {result['ratio']:5.2f}x", flush=True)
    if args.record:
        record(results, args)


def record(results: list[dict], args) -> None:
    rows = [(r["case"], f"{r['dropped_us']:.1f}", f"{r['kept_us']:.1f}", f"{r['ratio']:.2f}x") for r in results]
    harness.record_section(
        "keep-outputs", "Keeping each step's outputs (`benchmarks/keep_outputs.py`)",
        packages=("envpool", "torchrl", "tensordict"),
        question="What does keeping each step's outputs cost a loop? Target: kept <= 2x dropped.",
        settings=[f"- Settings: microseconds per step (steps of all envs; the default num_threads), medians of "
                  f"{args.rounds} interleaved rounds. Kept: every output appended to a list started anew every "
                  f"{args.horizon} steps (TorchPoolEnv: `rollout({args.horizon})`); dropped: nothing kept past the "
                  "next step (TorchPoolEnv: `step_and_maybe_reset`)."],
        body=[*harness.markdown_table(("case", "dropped (us/step)", "kept (us/step)", "kept / dropped"), rows),
              "", "![kept / dropped per case](keep_outputs.png)"])
    figure, (ax,) = harness.panels(1, (8, 0.45 * len(results) + 1.2))
    harness.hbars(ax, [r["case"] for r in results], [r["ratio"] for r in results], colors=["tab:blue"] * len(results))
    ax.axvline(2.0, color="gray", linestyle="--", label="target (2x)")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("per-step time kept / dropped")
    ax.legend()
    harness.save(figure, harness.OUTPUT / "keep_outputs.png")


if __name__ == "__main__":
    main()
