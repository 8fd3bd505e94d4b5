"""How fast does torchpool step Python envs, next to the vector envs users would otherwise pick?

Systems, each built fresh for its turn (idle workers of one would disturb
another; PufferLib's spin), in interleaved rounds whose order rotates
(benchmarks/harness):
a bare one-env loop (one process: the ceiling of one core); torchpool's
process pool, sync and async (``batch_size = num_envs / 2``); Gymnasium's
``SyncVectorEnv`` and ``AsyncVectorEnv(shared_memory=True)``; torchrl's
``ParallelEnv`` of ``GymEnv``; SB3's ``SubprocVecEnv``; PufferLib's
``Multiprocessing`` vector env with 1 and 2 workers, sync and async
(``pip install --no-deps pufferlib-core``; skipped when missing).

Envs: Gymnasium's Python ``CartPole-v1`` (cheap), Gymnasium's ``Ant-v5``
through the mujoco bindings (costly), and ``uneven_env.UnevenEnv`` (each
step computes 0.1-2 ms). Actions are drawn before the timed loop; outputs
stay as each system delivers them. Rates are env steps per second (one env
advancing once), medians over the rounds.

    python benchmarks/python_envs.py --record
    python benchmarks/python_envs.py --envs CartPole-v1 --rounds 1   # a quick look
    python benchmarks/python_envs.py --spins                          # NOTE [Yielding spins]
    python benchmarks/python_envs.py --modes                          # the core schedule it runs under
    python benchmarks/python_envs.py --versus-sync --record           # torchpool sync / SyncVectorEnv, 4-16 envs
    python benchmarks/python_envs.py --versus-sync --through gym --record  # the same through torchpool.gym.VectorEnv
    python benchmarks/python_envs.py --where                          # NOTE [Where envs step]: caller vs workers

``--versus-sync`` answers one question: is ``torchpool.make(env_fn)`` with its
defaults ever slower than Gymnasium's ``SyncVectorEnv`` on this host? It adds
LunarLander-v3 and MiniGrid-Empty-8x8-v0 (``ImgObsWrapper``) to the envs,
steps 4, 8 and 16 envs, alternates the two systems (A/B, B/A) in each round
and writes the medians, their ratio and where the pool chose to step
(``pool.schedule["steps_in"]``) to RESULTS.md and python_envs_vs_sync.png.
``--through gym`` steps torchpool's side through ``torchpool.gym.VectorEnv``
(what ``gymnasium.make_vec("torchpool/...")`` gives: NumPy outputs and infos
as SyncVectorEnv's), into its own section and python_envs_vs_sync_gym.png.
"""

from __future__ import annotations

import argparse
import functools
import statistics
from collections.abc import Callable

import gymnasium
import harness
import numpy as np
import torch

import torchpool
import torchpool.gym
from torchpool._workers import process_pool

ENVS = ("CartPole-v1", "Ant-v5", "uneven")
VERSUS_SYNC_ENVS = ("CartPole-v1", "LunarLander-v3", "MiniGrid-Empty-8x8-v0", "Ant-v5", "uneven")


def make_minigrid(env_id: str = "MiniGrid-Empty-8x8-v0") -> gymnasium.Env:
    import minigrid  # noqa: F401  registers the ids
    from minigrid.wrappers import ImgObsWrapper

    return ImgObsWrapper(gymnasium.make(env_id))


def env_fn(env: str) -> Callable[[], gymnasium.Env]:
    if env == "uneven":
        import uneven_env

        return uneven_env.make_uneven
    if env.startswith("MiniGrid"):
        return functools.partial(make_minigrid, env)
    return functools.partial(gymnasium.make, env)


def actions_for(space, count: int, num_envs: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if isinstance(space, gymnasium.spaces.Discrete):
        return [rng.integers(0, space.n, num_envs) for _ in range(count)]
    return [rng.uniform(-1, 1, (num_envs, *space.shape)).astype(space.dtype) for _ in range(count)]


# ---- the systems: each returns (step, close) --------------------------------

def bare_loop(env: str, num_envs: int):
    one = env_fn(env)()
    one.reset(seed=0)
    acts = actions_for(one.action_space, 256, 1)

    def step(i):
        _, _, terminated, truncated, _ = one.step(acts[i % 256][0])
        if terminated or truncated:
            one.reset()
        return 1
    return step, one.close


def torchpool_sync(env: str, num_envs: int, workers: int | None = None, steps_in: str = "auto", report=None,
                   autoreset: str = "same_step"):
    pool = torchpool.make(env_fn(env), num_envs=num_envs, num_workers=workers, steps_in=steps_in,
                          autoreset=autoreset)
    if report is not None:
        report.append(pool.schedule["steps_in"])
    pool.reset()
    acts = [torch.as_tensor(a) for a in actions_for(pool.action_space, 256, num_envs)]

    def step(i):
        pool.step(acts[i % 256])
        return num_envs
    return step, pool.close


def torchpool_gym(env: str, num_envs: int, report=None):
    """torchpool through its Gymnasium VectorEnv, Gymnasium's default autoreset (next_step), NumPy actions."""
    envs = torchpool.gym.VectorEnv(env_fn(env), num_envs=num_envs, autoreset_mode="NextStep")
    if report is not None:
        report.append(envs.pool.schedule["steps_in"])
    return vector_stepper(envs)


def torchpool_async(env: str, num_envs: int):
    batch = num_envs // 2
    pool = torchpool.make(env_fn(env), num_envs=num_envs, batch_size=batch)
    pool.async_reset()
    acts = [torch.as_tensor(a) for a in actions_for(pool.action_space, 256, batch)]

    def step(i):
        td = pool.recv()
        pool.send(acts[i % 256], td["env_id"])
        return batch
    return step, pool.close


def gymnasium_vector(kind: str):
    def make(env: str, num_envs: int):
        fns = [env_fn(env)] * num_envs
        if kind == "sync":
            envs = gymnasium.vector.SyncVectorEnv(fns)
        else:
            envs = gymnasium.vector.AsyncVectorEnv(fns, shared_memory=True)
        return vector_stepper(envs)
    return make


def vector_stepper(envs: gymnasium.vector.VectorEnv):
    """(step, close) of a Gymnasium vector env, reset with seed 0, stepping NumPy actions drawn beforehand."""
    envs.reset(seed=0)
    num_envs = envs.num_envs
    acts = actions_for(envs.single_action_space, 256, num_envs)

    def step(i):
        envs.step(acts[i % 256])
        return num_envs
    return step, envs.close


def torchrl_parallel(env: str, num_envs: int):
    from torchrl.envs import GymEnv, ParallelEnv

    factory = env_fn(env)
    envs = ParallelEnv(num_envs, functools.partial(GymEnv, factory().spec.id) if env != "uneven"
                       else functools.partial(_torchrl_wrap, factory))
    td = envs.reset()
    space = factory().action_space
    acts = [torch.as_tensor(a) for a in actions_for(space, 256, num_envs)]
    if isinstance(space, gymnasium.spaces.Discrete):  # torchrl's GymEnv takes one-hot discrete actions
        acts = [torch.nn.functional.one_hot(a, space.n) for a in acts]

    def step(i):
        td.set("action", acts[i % 256])
        envs.step_and_maybe_reset(td)
        return num_envs
    return step, envs.close


def _torchrl_wrap(factory):
    from torchrl.envs import GymWrapper

    return GymWrapper(factory())


def sb3_subproc(env: str, num_envs: int):
    from stable_baselines3.common.vec_env import SubprocVecEnv

    envs = SubprocVecEnv([env_fn(env)] * num_envs)
    envs.reset()
    acts = actions_for(envs.action_space, 256, num_envs)

    def step(i):
        envs.step(acts[i % 256])
        return num_envs
    return step, envs.close


def pufferlib_vector(workers: int, asynchronous: bool = False):
    def make(env: str, num_envs: int):
        import pufferlib.emulation
        import pufferlib.vector

        creator = functools.partial(pufferlib.emulation.GymnasiumPufferEnv, env_creator=env_fn(env))
        batch = num_envs // 2 if asynchronous else num_envs
        envs = pufferlib.vector.make(creator, num_envs=num_envs, num_workers=workers, batch_size=batch,
                                     backend=pufferlib.vector.Multiprocessing)
        acts = actions_for(envs.single_action_space, 256, batch)
        if asynchronous:
            envs.async_reset(0)

            def step(i):
                envs.recv()
                envs.send(acts[i % 256])
                return batch
        else:
            envs.reset(0)

            def step(i):
                envs.step(acts[i % 256])
                return num_envs
        return step, envs.close
    return make


def pufferlib_available() -> bool:
    try:
        import pufferlib.vector  # noqa: F401
    except Exception:
        return False
    return True


SYSTEMS: dict[str, Callable] = {
    "bare loop (1 env, 1 process)": bare_loop,
    "torchpool sync": torchpool_sync,
    "torchpool async": torchpool_async,
    "Gymnasium SyncVectorEnv": gymnasium_vector("sync"),
    "Gymnasium AsyncVectorEnv(shm)": gymnasium_vector("async"),
    "torchrl ParallelEnv": torchrl_parallel,
    "SB3 SubprocVecEnv": sb3_subproc,
    "PufferLib Multiprocessing, 1 worker": pufferlib_vector(1),
    "PufferLib Multiprocessing, 2 workers": pufferlib_vector(2),
    "PufferLib Multiprocessing, 2 workers, async": pufferlib_vector(2, asynchronous=True),
}
# Seconds each system steps per round, by env (the costly ones step slower).
SECONDS = {"CartPole-v1": 2.0, "Ant-v5": 3.0, "uneven": 3.0}


def measure(make: Callable, env: str, num_envs: int, seconds: float, warmup: float = 0.3) -> harness.Rate:
    """A system built fresh for its turn, stepped for ``seconds`` after ``warmup``, then closed."""
    step, close = make(env, num_envs)
    try:
        return harness.rate_for(step, seconds, warmup)
    finally:
        close()


def run(envs: list[str], systems: list[str], rounds: int, num_envs: int) -> dict:
    results = {env: {name: [] for name in systems} for env in envs}
    for r in range(rounds):
        for env in envs:
            for name in harness.round_order(systems, r, "rotate"):
                rate = measure(SYSTEMS[name], env, num_envs, SECONDS[env]).steps_per_s
                results[env][name].append(rate)
                print(f"round {r + 1}/{rounds}  {env:12s} {name:45s} {rate:12,.0f} steps/s", flush=True)
    return {env: {name: statistics.median(rates) for name, rates in by.items()} for env, by in results.items()}


def spins(num_envs: int, rounds: int) -> None:
    """NOTE [Yielding spins]: the process pool with and without yielding polls before sleeping."""
    settings = [(0, 0), (100, 100), (1000, 1000), (10000, 10000)]

    def rate(setting: tuple[int, int]) -> float:
        process_pool._PARENT_SPIN_POLLS, process_pool._WORKER_SPIN_POLLS = setting
        return measure(torchpool_sync, "CartPole-v1", num_envs, 2.0).steps_per_s

    rates = harness.measure_rounds(settings, rounds, rate)
    for (parent, worker), values in rates.items():
        print(f"parent {parent:6d} worker {worker:6d} yields: {statistics.median(values):10,.0f} steps/s")


def modes(num_envs: int, rounds: int) -> None:
    """Which core schedule collects the answers fastest: the declared step cost (and threads) picks it."""
    settings = {"caller_runs_items": (1000.0, 1), "caller_only / workers": (50e3, 1),
                "workers": (20e6, 1), "caller_as_worker": (20e3, 2)}
    saved = process_pool._STEP_COST_NS, process_pool._THREADS
    makes = {"sync": torchpool_sync, "async": torchpool_async}

    def rate(case: tuple[str, str]) -> float:
        name, kind = case
        process_pool._STEP_COST_NS, process_pool._THREADS = settings[name]
        return measure(makes[kind], "CartPole-v1", num_envs, 2.0).steps_per_s

    rates = harness.measure_rounds([(name, kind) for name in settings for kind in makes], rounds, rate)
    process_pool._STEP_COST_NS, process_pool._THREADS = saved
    for (name, kind), values in rates.items():
        print(f"{name:24s} {kind:5s} {statistics.median(values):10,.0f} steps/s")


# Seconds each system steps per turn in --versus-sync and --where.
VERSUS_SECONDS = 1.5


def versus_sync(envs: list[str], sizes: list[int], rounds: int, through: str = "pool") -> dict:
    """torchpool sync (the pool, or through="gym" its Gymnasium VectorEnv) against SyncVectorEnv:
    {(env, num_envs): (ours, theirs, steps_in, our cpu, their cpu)}."""
    ours_system = (functools.partial(torchpool_sync, autoreset="next_step") if through == "pool"
                   else torchpool_gym)
    results = {}
    for env in envs:
        for num_envs in sizes:
            chosen: list[str] = []
            # Gymnasium's default autoreset (next_step) on both sides: same_step steps each ending
            # env once more per episode (its reset in the same call), more work per env step counted.
            turns = {"ours": functools.partial(ours_system, report=chosen), "theirs": gymnasium_vector("sync")}
            rates = harness.measure_rounds(
                list(turns), rounds,
                lambda name, turns=turns, env=env, num_envs=num_envs: measure(turns[name], env, num_envs,
                                                                              VERSUS_SECONDS, warmup=0.2))
            ours, theirs = ([rate.steps_per_s for rate in rates[name]] for name in turns)
            our_cpu, their_cpu = ([rate.cpu_s_per_step for rate in rates[name]] for name in turns)
            results[(env, num_envs)] = (statistics.median(ours), statistics.median(theirs),
                                        "/".join(sorted(set(chosen))), statistics.median(our_cpu),
                                        statistics.median(their_cpu))
            o, t, c, oc, tc = results[(env, num_envs)]
            print(f"{env:24s} {num_envs:3d} envs  torchpool {o:10,.0f}  SyncVectorEnv {t:10,.0f}  "
                  f"{o / t:5.2f}x  steps in: {c}  CPU us/step {oc * 1e6:7.1f} vs {tc * 1e6:7.1f}", flush=True)
    return results


def where(envs: list[str], sizes: list[int], rounds: int) -> None:
    """NOTE [Where envs step]: the same pool stepping in the caller and in workers, interleaved."""
    for env in envs:
        for num_envs in sizes:
            rates = harness.measure_rounds(
                ["caller", "workers"], rounds,
                lambda steps_in, env=env, num_envs=num_envs: measure(
                    functools.partial(torchpool_sync, steps_in=steps_in), env, num_envs, VERSUS_SECONDS,
                    warmup=0.2).steps_per_s)
            caller, workers = statistics.median(rates["caller"]), statistics.median(rates["workers"])
            print(f"{env:24s} {num_envs:3d} envs  caller {caller:10,.0f}  workers {workers:10,.0f}  "
                  f"workers/caller {workers / caller:5.2f}x", flush=True)


VIA_GYM = " through its Gymnasium VectorEnv (NumPy outputs, infos as SyncVectorEnv gives them)"


def record_versus_sync(results: dict, rounds: int, through: str = "pool") -> None:
    packages = ("gymnasium", "minigrid", "Box2D")
    suffix = "" if through == "pool" else f"_{through}"  # the section's and the plot's names
    ours = "torchpool.make(env_fn)" if through == "pool" else "torchpool.gym.VectorEnv(env_fn)"
    lines = ["| env | num_envs | torchpool steps/s | SyncVectorEnv steps/s | ratio | steps in | CPU µs/step, "
             "torchpool | CPU µs/step, SyncVectorEnv | CPU ratio |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for (env, num_envs), (our_rate, theirs, chosen, our_cpu, their_cpu) in results.items():
        cpu = (f"{our_cpu * 1e6:.1f} | {their_cpu * 1e6:.1f} | {their_cpu / our_cpu:.2f}x" if chosen == "caller"
               else "- | - | -")
        lines.append(f"| {env} | {num_envs} | {our_rate:,.0f} | {theirs:,.0f} | {our_rate / theirs:.2f}x | {chosen} | "
                     f"{cpu} |")
    harness.record_section(
        f"python-envs-vs-sync{suffix.replace('_', '-')}",
        f"Python envs: {ours} against SyncVectorEnv (`benchmarks/python_envs.py "
        f"--versus-sync{'' if through == 'pool' else ' --through gym'}`)", packages=packages,
        settings=[f"- Settings: torchpool sync{'' if through == 'pool' else VIA_GYM} "
                  f"(it chooses where envs step: NOTE [Where envs step]) against Gymnasium's "
                  f"SyncVectorEnv, both with Gymnasium's default autoreset (next_step; torchpool's default same_step "
                  f"steps each ending env once more per episode); batch_size = num_envs; the two alternate in "
                  f"{rounds} rounds of {VERSUS_SECONDS:.1f} s each; medians, env steps/s (one env advancing once; "
                  "frames/s are the same, no frame skip).",
                  "- CPU: this process's CPU time per env step (both sides step in it when torchpool steps in the "
                  "caller; a busy host lengthens the wall time of both, their CPU time far less). With workers it "
                  "counts the parent only, so it is not shown."],
        body=[*lines, "", f"![python_envs_vs_sync{suffix}](python_envs_vs_sync{suffix}.png)"])
    envs = list(dict.fromkeys(env for env, _ in results))
    sizes = sorted({n for _, n in results})
    figure, axes = harness.panels(2, (6.5, 4.2))
    panels = ((f"steps/s: {ours} / SyncVectorEnv", lambda r: r[0] / r[1]),
              ("CPU per env step: SyncVectorEnv / torchpool (caller only)",
               lambda r: r[4] / r[3] if r[2] == "caller" else 0.0))
    for ax, (title, ratio) in zip(axes, panels):
        harness.grouped_bars(ax, envs, {f"{n} envs": [ratio(results[(env, n)]) if (env, n) in results else 0.0
                                                       for env in envs] for n in sizes})
        ax.axhline(1.0, color="k", lw=1, ls="--")
        ax.tick_params(axis="x", labelsize=8)
        ax.set_title(title, fontsize=10)
    harness.save(figure, harness.OUTPUT / f"python_envs_vs_sync{suffix}.png", info=harness.machine(packages),
                 title=f"load {harness.load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=list(ENVS), choices=ENVS + VERSUS_SYNC_ENVS[1:3])
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spins", action="store_true", help="compare the yielding polls' settings")
    parser.add_argument("--modes", action="store_true", help="compare the core's schedules for the process family")
    parser.add_argument("--record", action="store_true", help="write RESULTS.md's section and python_envs.png")
    parser.add_argument("--versus-sync", action="store_true", help="torchpool sync against SyncVectorEnv only")
    parser.add_argument("--where", action="store_true", help="steps_in='caller' against 'workers'")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16], help="num_envs for --versus-sync")
    parser.add_argument("--through", choices=["pool", "gym"], default="pool",
                        help="--versus-sync: torchpool's side as the pool or its Gymnasium VectorEnv")
    args = parser.parse_args()
    if args.versus_sync or args.where:
        envs = [e for e in VERSUS_SYNC_ENVS if e in args.envs or args.envs == list(ENVS)]
        if args.where:
            return where(envs, args.sizes, args.rounds)
        results = versus_sync(envs, args.sizes, args.rounds, args.through)
        if args.record:
            record_versus_sync(results, args.rounds, args.through)
        return
    if args.spins:
        return spins(args.num_envs, args.rounds)
    if args.modes:
        return modes(args.num_envs, args.rounds)
    systems = [name for name in SYSTEMS if pufferlib_available() or "PufferLib" not in name]
    results = run(args.envs, systems, args.rounds, args.num_envs)
    summary = summarize(results)
    for line in summary:
        print(line)
    if args.record:
        record(results, summary, args)


def summarize(results: dict) -> list[str]:
    lines = []
    workers = torchpool.available_cpus()
    for env, rates in results.items():
        ours, ours_async = rates["torchpool sync"], rates["torchpool async"]
        others = {name: rate for name, rate in rates.items() if not name.startswith(("torchpool", "bare"))}
        best = max(others, key=others.get)
        bare = rates["bare loop (1 env, 1 process)"]
        lines.append(f"{env}: torchpool sync {ours / rates['Gymnasium SyncVectorEnv']:.2f}x SyncVectorEnv, "
                     f"{ours / rates['Gymnasium AsyncVectorEnv(shm)']:.2f}x AsyncVectorEnv(shm), "
                     f"{max(ours, ours_async) / others[best]:.2f}x the best other ({best}); "
                     f"async {ours_async / ours:.2f}x sync; "
                     f"{max(ours, ours_async) / (workers * bare):.0%} of the ideal ({workers} x the bare loop)")
        if env == "CartPole-v1":
            cost_us = (workers / ours - 1 / bare) * 1e6
            lines.append(f"{env}: the pool's own cost per env step and core: {cost_us:.2f} us "
                         f"({workers} cores / {ours:,.0f} steps/s - 1 / {bare:,.0f} steps/s)")
    return lines


def record(results: dict, summary: list[str], args) -> None:
    envs = list(results)
    systems = list(results[envs[0]])
    lines = ["| system | " + " | ".join(envs) + " |", "|---|" + "---:|" * len(envs)]
    for name in systems:
        lines.append(f"| {name} | " + " | ".join(f"{results[env][name]:,.0f}" for env in envs) + " |")
    harness.record_section(
        "python-envs", "Python envs in worker processes (`benchmarks/python_envs.py`)",
        packages=("gymnasium", "torchrl", "stable_baselines3", "pufferlib"),
        question=__doc__.splitlines()[0],
        settings=[f"- Settings: {args.num_envs} envs; async batches of {args.num_envs // 2}; torchpool with its "
                  f"default {torchpool.available_cpus()} worker processes; each system built fresh for its turn, "
                  f"{args.rounds} interleaved rounds ({', '.join(f'{e} {s:.0f} s' for e, s in SECONDS.items())} "
                  "each); medians, env steps/s."],
        body=[*lines, "", *[f"- {line}" for line in summary], "", "![python_envs](python_envs.png)"])
    figure, axes = harness.panels(len(envs), (5, 4.2))
    for ax, env in zip(axes, envs):
        names = [n for n in systems if not n.startswith("bare")]
        harness.hbars(ax, names if ax is axes[0] else [""] * len(names), [results[env][n] for n in names],
                      colors=["tab:orange" if n.startswith("torchpool") else "tab:blue" for n in names])
        ax.axvline(results[env]["bare loop (1 env, 1 process)"], color="k", ls="--", lw=1, label="bare loop, 1 core")
        ax.tick_params(axis="y", labelsize=8)
        ax.set_title(f"{env}, {args.num_envs} envs")
        ax.set_xlabel("env steps/s")
        ax.legend(fontsize=8)
    harness.save(figure, harness.OUTPUT / "python_envs.png")


if __name__ == "__main__":
    main()
