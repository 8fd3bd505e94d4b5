"""Command line: ``python -m torchpool {train,list,bench,demo}``.

    python -m torchpool train CartPole-v1         # PPO with the tuned recipe: curve PNG + weights in runs/
    python -m torchpool train Pendulum-v1 --algo sac   # SAC (continuous actions), its own recipes
    python -m torchpool list                      # every env id (--markdown: docs/envs.md's table)
    python -m torchpool bench CartPole-v1         # side-by-side steps/s table
    python -m torchpool demo CartPole-v1          # step a pool and print episode returns

A mistake on the command line (an unknown id, a bad value, ``--device cuda``
without CUDA) is one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import textwrap
import warnings
from pathlib import Path

import torch


def _list(args: argparse.Namespace) -> None:
    from . import list_envs, registry

    if args.markdown:
        from ._env_table import markdown

        print(markdown(), end="")
        return

    for env_id in list_envs():
        entry = registry.lookup(env_id)
        kwargs = ", ".join(f"{name}={kw.default!r}" for name, kw in entry.kwargs.items())
        print(f"{env_id:28s} {kwargs}")
    from .cpp_env import registered_elsewhere

    built = registered_elsewhere()
    if built:
        print("\nYour C++ envs built before (torchpool.register_cpp_env makes them in a process):")
    for record in built:
        kwargs = ", ".join(f"{name}={value!r}" for name, value in record["kwargs"].items())
        print(f"{record['env_id']:28s} {kwargs}  [{record['env_class']} in {record['header']}]")
    print("\nAny Gymnasium env also runs, in worker processes: prefix its id with 'gymnasium:' "
          "(torchpool.make('gymnasium:LunarLander-v3', num_envs=16), python -m torchpool train "
          "gymnasium:LunarLander-v3), or pass torchpool.make a function that returns a gymnasium.Env.")


def _bench(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from . import _side_by_side as bench

    n = args.num_envs
    cases = [("torchpool sync", lambda: bench.run_torchpool(args.env_id, n, args.calls)),
             ("torchpool async", lambda: bench.run_torchpool(args.env_id, n, args.calls, batch_size=max(1, n // 2)))]
    if bench.envpool_available():
        cases += [("envpool sync", lambda: bench.run_envpool(args.env_id, n, args.calls)),
                  ("envpool async", lambda: bench.run_envpool(args.env_id, n, args.calls, batch_size=max(1, n // 2)))]
    cases += [("gymnasium SyncVectorEnv", lambda: bench.run_gymnasium(args.env_id, n, max(50, args.calls // 20)))]
    if args.with_async_gym:
        cases += [("gymnasium AsyncVectorEnv",
                   lambda: bench.run_gymnasium(args.env_id, n, max(50, args.calls // 20), "async"))]
    results = []
    for name, run in tqdm(cases, desc=f"bench {args.env_id} num_envs={n}", unit="system"):
        try:
            # The peers' own warnings (Gymnasium's dtype notes, ...) would land in the progress bar.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append((name, run()))
        except Exception as error:  # a missing optional system should not end the table
            results.append((name, error))
    base = next(r.steps_per_s for name, r in results if name == "torchpool sync")
    print(f"\n{args.env_id}, num_envs={n} (async: batch_size={max(1, n // 2)}), {args.calls} calls each\n")
    print(f"{'system':26s} {'steps/s':>12s} {'us/call':>9s} {'torchpool sync is':>18s}")
    for name, result in results:
        if isinstance(result, Exception):
            print(f"{name:26s} {'failed: ' + str(result)[:60]}")
            continue
        print(f"{name:26s} {result.steps_per_s:12,.0f} {result.us_per_call:9.1f} "
              f"{base / result.steps_per_s:17.1f}x")


def _demo(args: argparse.Namespace) -> None:
    from . import make

    with make(args.env_id, num_envs=args.num_envs, seed=0) as pool:
        pool.reset()
        spec = pool.action_spec
        returns = []
        for _ in range(args.steps):
            if hasattr(spec, "n"):
                action = torch.randint(0, spec.n, (pool.num_envs,))
            else:
                action = torch.empty(pool.num_envs, *spec.shape).uniform_(-1, 1) * spec.high.float()
            td = pool.step(action)
            returns += td["episode_return"][td["done"]].tolist()
        if returns:
            print(f"{pool!r}: {len(returns)} episodes with a random policy, "
                  f"mean return {sum(returns) / len(returns):.1f}")
        else:
            print(f"{pool!r}: no episode finished in {args.steps} steps; give it more --steps")


def _score(value: float) -> str:
    """A return as people read it: one decimal for game scores, three digits for MiniGrid's 0-1 returns."""
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def _scores(returns: list[float]) -> str:
    """Each game's return, or their range where there are many."""
    if len(returns) > 20:
        return f"min {_score(min(returns))}, max {_score(max(returns))}"
    return ", ".join(f"{r:g}" for r in returns)


def _train(args: argparse.Namespace) -> None:
    from .train._outputs import file_stem

    if args.algo == "sac":
        from .train.sac import Args, train
    else:
        from .train.ppo import Args, train
    settings = args.settings  # main() looked the recipe up
    for name in ("total_frames", "num_envs", "device", "seed", "out_dir", "target_return", "max_seconds"):
        value = getattr(args, name)
        if value is not None:
            settings[name] = value
    if args.no_early_stop:
        settings["target_return"] = None
    if args.tensorboard:
        settings["tensorboard"] = True
    result = train(Args(env_id=args.env_id, **settings))
    stem = f"{result['args']['out_dir']}/{args.algo}_{file_stem(args.env_id)}"
    run = f"{result['frames']:,} frames in {result['wall_seconds']:.1f} s ({result['frames_per_s']:,.0f} frames/s)"
    if math.isnan(result["final_mean_return"]):  # no episode ended: there is no return to average
        print(f"{args.env_id}: no episode finished in {run}; give it more --total-frames")
    else:
        print(f"{args.env_id}: mean return {_score(result['final_mean_return'])} (last 20 episodes) after {run}")
    split = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in result["time_split"].items())
    print(f"time split (torchpool.stream.stats()): {split}")
    if result["seconds_to_target"] is not None:
        print(f"reached the target {result['target_return']} in {result['seconds_to_target']:.1f} s")
    if result["evaluation"] is not None:
        evaluation = result["evaluation"]
        print(f"{evaluation['games']} fresh episodes with the trained policy (new seeds, {evaluation['policy']}): "
              f"mean return {_score(evaluation['mean_return'])} ({_scores(evaluation['returns'])})")
        if "sampled" in evaluation:
            sampled = evaluation["sampled"]
            print(f"the same seeds with sampled actions (as in training): mean return {_score(sampled['mean_return'])} "
                  f"({_scores(sampled['returns'])})")
    saved = [f"{stem}.png (learning curve)"] if Path(f"{stem}.png").exists() and result["curve"] else []
    print(f"saved {', '.join([*saved, f'{stem}.pt (weights)', f'{stem}.json'])}")


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (what was wrong, where to read more) and exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {text!r}")
    return value


def _nonnegative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative int, got {text!r}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int, got {text!r}") from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _device(text: str) -> str:
    try:
        device = torch.device(text)
    except RuntimeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a torch device: use cpu, cuda or cuda:<index>") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            built = "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            raise argparse.ArgumentTypeError(f"{text!r}: CUDA is not available ({built}); use --device cpu")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise argparse.ArgumentTypeError(
                f"{text!r}: there are {torch.cuda.device_count()} CUDA devices (cuda:0 ...)")
    elif device.type != "cpu":
        raise argparse.ArgumentTypeError(f"{text!r}: train runs on cpu or cuda")
    return text


def _recipes_epilog() -> str:
    from .train import sac
    from .train.ppo import _GPU_BASES, RECIPES, VARIANTS

    recipes = textwrap.fill(f"envs with a tuned PPO recipe: {', '.join(RECIPES)}; any other id trains with the "
                            "generic defaults (torchpool/train/ppo.py, Args).", width=78, break_on_hyphens=False)
    sac_recipes = textwrap.fill(f"envs with a tuned SAC recipe (--algo sac, continuous actions only): "
                                f"{', '.join(sac.RECIPES)}; other ids get CleanRL's defaults "
                                "(torchpool/train/sac.py, Args).", width=78, break_on_hyphens=False)
    variants = "\n".join(f"  {name}: {', '.join(sorted(envs))}" for name, envs in VARIANTS.items())
    variants += f"\n  gpu (envs scaled to the cores, for a GPU box): {', '.join(sorted(_GPU_BASES))}"
    return f"{recipes}\n\n{sac_recipes}\n\n--recipe variants (PPO only), and the envs they cover:\n{variants}"


def main(argv: list[str] | None = None) -> None:
    doc = __doc__.split("\n\n")
    parser = _Parser(prog="python -m torchpool", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="torchpool's command line: train PPO or SAC on an env, list the envs, "
                                 "benchmark a pool, run a demo.",
                     epilog="examples:\n" + textwrap.indent(textwrap.dedent(doc[1]), "  "))
    commands = parser.add_subparsers(dest="command", required=True, metavar="<command>")
    train_parser = commands.add_parser("train", help="train PPO or SAC on torchpool.stream with the tuned recipe",
                                       description="Train PPO (or SAC) on torchpool.stream with the env's tuned "
                                                   "recipe; the learning curve (PNG), the weights (.pt) and a "
                                                   "JSON summary go to --out-dir.",
                                       epilog=_recipes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    train_parser.add_argument("env_id", nargs="?", default="CartPole-v1", help="env id (default CartPole-v1)")
    train_parser.add_argument("--algo", choices=("ppo", "sac"), default="ppo",
                              help="ppo (default) or sac (continuous actions only)")
    train_parser.add_argument("--recipe", default=None,
                              help="a named variant of the env's recipe, e.g. cleanrl (CleanRL's Nature-CNN "
                                   "Atari settings, the GPU recipe); default: the tuned one")
    train_parser.add_argument("--total-frames", type=_positive_int, default=None,
                              help="env steps at most (recipe's default)")
    train_parser.add_argument("--num-envs", type=_positive_int, default=None,
                              help="envs in parallel (recipe's default)")
    train_parser.add_argument("--device", type=_device, default=None, help="cpu (default) or cuda")
    train_parser.add_argument("--seed", type=_nonnegative_int, default=None, help="seed (default 1)")
    train_parser.add_argument("--target-return", type=_finite_float, default=None,
                              help="stop once the mean of the last 20 returns reaches this (recipe's default)")
    train_parser.add_argument("--max-seconds", type=_positive_float, default=None,
                              help="stop after this many seconds of training (default: no limit)")
    train_parser.add_argument("--no-early-stop", action="store_true", help="always run total_frames")
    train_parser.add_argument("--out-dir", default=None, help="where outputs go (default runs/)")
    train_parser.add_argument("--tensorboard", action="store_true",
                              help="also log to TensorBoard under <out-dir>/tensorboard/")
    train_parser.set_defaults(run=_train)

    list_parser = commands.add_parser("list", help="list every env id and its task kwargs")
    list_parser.add_argument("--markdown", action="store_true",
                             help="the table of docs/envs.md: ids grouped by family and kwargs, with their docs")
    list_parser.set_defaults(run=_list)

    bench_parser = commands.add_parser("bench", help="steps/s of torchpool next to Gymnasium and EnvPool")
    bench_parser.add_argument("env_id", nargs="?", default="CartPole-v1", help="env id (default CartPole-v1)")
    bench_parser.add_argument("--num-envs", type=_positive_int, default=8, help="envs per pool (default 8)")
    bench_parser.add_argument("--calls", type=_positive_int, default=5000,
                              help="timed step calls per system (default 5000)")
    bench_parser.add_argument("--with-async-gym", action="store_true",
                              help="also time Gymnasium's AsyncVectorEnv (one process per env)")
    bench_parser.set_defaults(run=_bench)

    demo_parser = commands.add_parser("demo", help="step a pool with a random policy")
    demo_parser.add_argument("env_id", nargs="?", default="CartPole-v1", help="env id (default CartPole-v1)")
    demo_parser.add_argument("--num-envs", type=_positive_int, default=8, help="envs in the pool (default 8)")
    demo_parser.add_argument("--steps", type=_positive_int, default=2000, help="sync steps to run (default 2000)")
    demo_parser.set_defaults(run=_demo)

    args = parser.parse_args(argv)
    command_parser = commands.choices[args.command]
    if getattr(args, "env_id", None) is not None and not args.env_id.startswith("gymnasium:"):
        from . import registry

        try:
            registry.lookup(args.env_id)  # an unknown id: the error suggests the closest
        except ValueError as error:
            command_parser.error(str(error))
    if args.command == "train" and args.algo == "sac":
        from .train import sac

        if args.recipe is not None:
            command_parser.error(f"--recipe {args.recipe}: the recipe variants are PPO's; --algo sac has none")
        if args.tensorboard:
            command_parser.error("--tensorboard logs PPO only; --algo sac does not log to TensorBoard")
        args.settings = sac.recipe(args.env_id)
        try:
            sac.check_env(args.env_id, args.settings.get("make_kwargs"))
        except ValueError as error:
            command_parser.error(str(error))
    elif args.command == "train":
        from .train.ppo import recipe

        try:
            args.settings = recipe(args.env_id, args.recipe)
        except ValueError as error:
            command_parser.error(str(error))
    try:
        args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader left (`python -m torchpool list | head`): no traceback, and none
        # again when the interpreter flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
