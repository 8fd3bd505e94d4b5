"""How fast does `torchpool.stream` feed a training loop on the CPU?

Question: frames/s of rollout collection with a small policy, for
torchpool.stream next to the loops users would otherwise write:
  * a CleanRL-style loop over EnvPool (torch.from_numpy each step, rollout
    tensors filled in place, as in CleanRL's ppo_atari_envpool.py);
  * torchrl's Collector over torchpool.TorchPoolEnv (when torchrl is installed);
  * torchrl's Collector over ParallelEnv of GymEnv (when torchrl is installed);
on CartPole-v1 with an MLP and on Pong-v5 with a small CNN; and, with a
trivial policy, the stream's frames/s as a share of the bare Pool's steps/s
(the stream's own overhead) on CartPole-v1, HalfCheetah-v5 and Pong-v5,
measured as back-to-back pairs of batches in one process (run_paired).

Every system collects the same number of frames per measurement (the stream
two warm-up batches more and the Collector one, untimed, which also keeps
their env construction and output buffers off the clock), timed batch by
batch; measurements alternate between systems over --repeats rounds
(benchmarks/harness); medians are reported.

    python benchmarks/stream.py            # full run: table + RESULTS.md section + stream.png
    python benchmarks/stream.py --quick    # smoke test, prints only
"""

from __future__ import annotations

import argparse
import statistics

import harness
import torch

import torchpool

ENV_ID = "CartPole-v1"


class MLPPolicy(torch.nn.Module):
    """4 -> 64 -> 64 -> 2 logits, actions sampled like CleanRL's agent."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                                       torch.nn.Tanh(), torch.nn.Linear(64, 2))

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return torch.distributions.Categorical(logits=self.net(observation)).sample()


class SmallCNN(torch.nn.Module):
    """Two convolutions and a linear head over [4, 84, 84] frames: a small Atari policy."""

    def __init__(self, num_actions: int = 6):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(4, 16, 8, stride=4), torch.nn.ReLU(), torch.nn.Conv2d(16, 32, 4, stride=2),
            torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(32 * 9 * 9, num_actions))

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        logits = self.net(observation.float() / 255.0)
        return torch.distributions.Categorical(logits=logits).sample()


# The stream makes its two output buffers in its first two batches (one per
# batch a for-loop may hold), so those stay off the clock with its pools, as
# the other loops build their envs and buffers before timing.
STREAM_WARMUP_BATCHES = 2


def run_stream(num_envs: int, frames: int, steps_per_batch: int, policy, split_envs: bool,
               env_id: str = ENV_ID) -> float:
    batch = num_envs * steps_per_batch
    stream = torchpool.stream(env_id, policy, num_envs=num_envs, frames_per_batch=batch,
                              total_frames=frames + STREAM_WARMUP_BATCHES * batch, split_envs=split_envs)
    return timed_batches(iter(stream), frames, batch, STREAM_WARMUP_BATCHES)


def timed_batches(batches, frames: int, batch: int, warmup: int) -> float:
    """frames/s over ``frames`` of batches after the first ``warmup``: construction and warm-up stay off the
    clock."""
    return harness.time_calls(lambda _: (next(batches), batch)[1], frames // batch, warmup)[0]


def run_cleanrl_envpool(num_envs: int, frames: int, steps_per_batch: int, policy, env_id: str = ENV_ID) -> float:
    import envpool

    envs = envpool.make(env_id, env_type="gymnasium", num_envs=num_envs)
    obs_space = envs.observation_space
    obs_buffer = torch.zeros((steps_per_batch, num_envs, *obs_space.shape),
                             dtype=torch.from_numpy(obs_space.sample()).dtype)
    actions = torch.zeros((steps_per_batch, num_envs), dtype=torch.int64)
    rewards = torch.zeros((steps_per_batch, num_envs))
    dones = torch.zeros((steps_per_batch, num_envs))
    next_obs = torch.from_numpy(envs.reset()[0])

    def rollout(_: int) -> int:
        """One batch of CleanRL's rollout loop; returns its frames."""
        nonlocal next_obs
        for step in range(steps_per_batch):
            obs_buffer[step] = next_obs
            with torch.no_grad():
                action = policy(next_obs)
            actions[step] = action
            observation, reward, terminated, truncated, _ = envs.step(action.numpy())
            rewards[step] = torch.from_numpy(reward)
            dones[step] = torch.from_numpy(terminated | truncated)
            next_obs = torch.from_numpy(observation)
        return num_envs * steps_per_batch

    rate = harness.time_calls(rollout, frames // (num_envs * steps_per_batch), warmup=0)[0]
    envs.close()
    return rate


def run_torchrl_collector(make_env, num_envs: int, frames: int, steps_per_batch: int, policy) -> float:
    from tensordict.nn import TensorDictModule
    from torchrl.collectors import Collector

    module = TensorDictModule(policy, in_keys=["observation"], out_keys=["action"])
    batch = num_envs * steps_per_batch
    collector = Collector(make_env, module, frames_per_batch=batch, total_frames=frames + batch)
    rate = timed_batches(iter(collector), frames, batch, 1)
    collector.shutdown()
    return rate


def constant_policy(num_envs: int, action_shape: tuple[int, ...], dtype: torch.dtype):
    """The trivial policy: the same preallocated action every step, as the bare Pool loop sends,
    so what the stream adds is its own cost, with no inference to hide it."""
    action = torch.zeros((num_envs, *action_shape), dtype=dtype)
    return lambda observation: action


def zeros_policy(action_shape: tuple[int, ...], dtype: torch.dtype):
    """A new zeros tensor each step: the cheapest policy that allocates, as every real one does."""
    return lambda observation: torch.zeros((observation.shape[0], *action_shape), dtype=dtype)


# Envs for the overhead rows: the cheapest there is, a MuJoCo task (~30 us a
# step) and Atari (~300 us a step; at the first pool size only: its pools take
# long to build). The value is a measurement's frames as a share of --frames
# (CartPole's steps are so short that 100,000 frames take milliseconds), and
# never fewer than OVERHEAD_MIN_BATCHES pairs of batches (run_paired).
OVERHEAD_ENVS = {"CartPole-v1": ((), torch.int64, 10.0), "HalfCheetah-v5": ((6,), torch.float32, 0.1),
                 "Pong-v5": ((), torch.int64, 0.1)}
OVERHEAD_MIN_BATCHES = 8
ATARI_ENV_ID = "Pong-v5"


def atari_available() -> bool:
    return ATARI_ENV_ID in torchpool.list_envs()


def torchrl_available() -> bool:
    try:
        import torchrl  # noqa: F401

        from torchpool import TorchPoolEnv  # noqa: F401
    except Exception:
        return False
    return True


def batch_multiple(frames: float, n: int, T: int) -> int:
    """``frames`` rounded down to whole [n, T] batches (at least one)."""
    return max(n * T, int(frames) // (n * T) * (n * T))


def cases(args) -> list[tuple[str, int, callable]]:
    """(system, num_envs, run() -> frames/s) for every measurement of one repeat."""
    mlp = MLPPolicy()
    T = args.steps_per_batch
    out = []
    if atari_available():  # Pong with a small CNN: at the first pool size only (Atari pools build slowly)
        n, cnn = args.num_envs[0], SmallCNN()
        frames = batch_multiple(args.frames * 0.1, n, T)
        out.append((f"stream, small CNN, {ATARI_ENV_ID}", n,
                    lambda n=n, f=frames: run_stream(n, f, T, cnn, split_envs=False, env_id=ATARI_ENV_ID)))
        if harness.envpool_available():
            out.append((f"CleanRL loop over EnvPool, small CNN, {ATARI_ENV_ID}", n,
                        lambda n=n, f=frames: run_cleanrl_envpool(n, f, T, cnn, env_id=ATARI_ENV_ID)))
    for n in args.num_envs:
        frames = batch_multiple(args.frames, n, T)
        out.append(("stream, MLP", n, lambda n=n, f=frames: run_stream(n, f, T, mlp, split_envs=False)))
        out.append(("stream split, MLP", n, lambda n=n, f=frames: run_stream(n, f, T, mlp, split_envs=True)))
        if harness.envpool_available():
            out.append(("CleanRL loop over EnvPool, MLP", n,
                        lambda n=n, f=frames: run_cleanrl_envpool(n, f, T, mlp)))
        if torchrl_available() and not args.quick:
            from torchrl.envs import GymEnv, ParallelEnv

            out.append(("torchrl Collector(TorchPoolEnv), MLP", n, lambda n=n, f=frames: run_torchrl_collector(
                lambda: torchpool.TorchPoolEnv(ENV_ID, n), n, f, T, mlp)))
            if n <= 8:  # one process per env: more than 8 on a 2-core machine only measures the OS
                out.append(("torchrl Collector(ParallelEnv), MLP", n, lambda n=n, f=frames: run_torchrl_collector(
                    lambda: ParallelEnv(n, lambda: GymEnv(ENV_ID, categorical_action_encoding=True)), n, f, T, mlp)))
    return out


def overhead_cases(args) -> list[tuple[str, int, str, callable, int]]:
    """(env, num_envs, policy name, policy, pairs) of the stream-overhead measurements (run_paired)."""
    T = args.steps_per_batch
    out = []
    for n in args.num_envs:
        for env_id, (shape, dtype, share) in OVERHEAD_ENVS.items():
            if env_id == ATARI_ENV_ID and (n != args.num_envs[0] or not atari_available()):
                continue
            pairs = max(OVERHEAD_MIN_BATCHES, int(args.frames * share) // (n * T))
            out.append((env_id, n, "trivial", constant_policy(n, shape, dtype), pairs))
            if env_id == ENV_ID:
                out.append((env_id, n, "zeros", zeros_policy(shape, dtype), pairs))
    return out


def run_paired(env_id: str, num_envs: int, steps_per_batch: int, policy, pairs: int) -> tuple[float, float, float]:
    """The stream's cost next to the bare Pool's, in one process: ``pairs`` times, T bare ``Pool.step``
    calls then one stream batch of T steps (order alternating), each pair timed back to back, so the
    VM's drift (tens of % within minutes) hits both alike. Returns the stream's and the bare loop's
    steps/s (medians) and the median per-pair ratio."""
    T, n = steps_per_batch, num_envs
    with torchpool.make(env_id, num_envs=n) as pool:
        pool.reset()
        action = torch.zeros((n, *pool.action_spec.shape), dtype=pool.action_spec.dtype)
        batches = iter(torchpool.stream(env_id, policy, num_envs=n, frames_per_batch=n * T))
        for _ in range(STREAM_WARMUP_BATCHES):
            next(batches)
        loops = {"bare": (lambda _: (pool.step(action), n)[1], T), "stream": (lambda _: (next(batches), n * T)[1], 1)}
        harness.time_calls(*loops["bare"], warmup=0)
        rates = harness.measure_rounds(list(loops), pairs, lambda name: harness.time_calls(*loops[name], warmup=0)[0])
        batches.close()
    return (statistics.median(rates["stream"]), statistics.median(rates["bare"]),
            harness.paired(rates["stream"], rates["bare"]).ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one small repeat; print only, write nothing")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats (median reported)")
    parser.add_argument("--frames", type=int, default=100_000, help="frames per measurement")
    parser.add_argument("--steps-per-batch", type=int, default=64, help="T of each [num_envs, T] batch")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[8, 64, 256], help="pool sizes")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.frames, args.num_envs = 1, 8192, [8]
    torch.set_num_threads(1)  # the policy's matmuls stay on the calling thread for every system

    measurements = {(system, n): run for system, n, run in cases(args)}
    rates = harness.measure_rounds(list(measurements), args.repeats, lambda key: measurements[key](),
                                   progress="stream benchmark")
    median = {key: statistics.median(values) for key, values in rates.items()}
    lines = ["| system | num_envs | env steps/s | spread | vs CleanRL loop over EnvPool |",
             "|---|---:|---:|---:|---:|"]
    for (system, n), rate in median.items():
        base = median.get(("CleanRL loop over EnvPool, MLP", n))
        if "small CNN" in system:
            base = median.get((f"CleanRL loop over EnvPool, small CNN, {ATARI_ENV_ID}", n))
        ratio = f"{rate / base:.2f}x" if base and ("MLP" in system or "CNN" in system) else "-"
        lines.append(f"| {system} | {n} | {rate:,.0f} | {harness.spread(rates[(system, n)]):.0%} | {ratio} |")
    overheads = {(env_id, n, name): (policy, pairs) for env_id, n, name, policy, pairs in overhead_cases(args)}
    paired = harness.measure_rounds(
        list(overheads), args.repeats,
        lambda key: run_paired(key[0], key[1], args.steps_per_batch, *overheads[key]), progress="stream overhead")
    overhead = ["| env | num_envs | stream, trivial policy (steps/s) | bare Pool.step (steps/s) "
                "| trivial policy: stream / bare | zeros policy: stream / bare |", "|---|---:|---:|---:|---:|---:|"]
    for (env_id, n, name), results in paired.items():
        if name != "trivial":
            continue
        stream_rate, bare_rate, share = (statistics.median(r[i] for r in results) for i in range(3))
        zeros = paired.get((env_id, n, "zeros"))
        zeros_share = f"{statistics.median(r[2] for r in zeros):.0%}" if zeros else "-"
        overhead.append(f"| {env_id} | {n} | {stream_rate:,.0f} | {bare_rate:,.0f} | {share:.0%} | {zeros_share} |")
    print("\n" + "\n".join(lines) + "\n\n" + "\n".join(overhead))
    if args.quick:
        return

    packages = ("envpool", "torchrl")
    harness.record_section(
        "stream", "torchpool.stream: rollout collection on the CPU (`benchmarks/stream.py`)", packages=packages,
        question="How many frames/s does `torchpool.stream` collect with a small MLP policy (CartPole-v1) and a "
        "small CNN (Pong-v5), next to a CleanRL-style loop over EnvPool and torchrl's Collector, and what does the "
        "stream itself cost (trivial policy, share of the bare Pool's steps/s)? Targets: at least 1.5x the "
        "CleanRL loop, and 90% of the bare Pool with a trivial policy.",
        settings=[
            f"- Settings: {args.repeats} alternating repeats, medians; {args.frames:,} frames per measurement; "
            f"batches of [num_envs, {args.steps_per_batch}]; policy MLP 4-64-64-2 with Categorical sampling, "
            "small CNN conv 16x8/4, conv 32x4/2, linear (Pong-v5, 10% of the frames, first pool size only), "
            "torch.set_num_threads(1); default threads for every pool; frames/s = env steps/s here (Pong's "
            "frame skip not counted). `split` = two env groups stepped in turn (overlap); the stream's default "
            "on the CPU is one group. Overhead rows: in one process, T bare `Pool.step` calls then one stream "
            "batch of T steps, alternating, each pair back to back (at least "
            f"{OVERHEAD_MIN_BATCHES} pairs; {OVERHEAD_ENVS[ENV_ID][2]:g}x --frames for CartPole-v1); a share is "
            "the median over repeats of the median per-pair ratio. Trivial policy = the same preallocated "
            "action every step, as the bare loop sends (what remains is the stream's own cost); zeros policy "
            "= a new `torch.zeros` each step (~1.8 us here, the cheapest policy that allocates)."],
        body=[*lines, "", *overhead, "", "![frames/s by system and num_envs](stream.png)"])

    systems = list(dict.fromkeys(system for system, _ in median))
    figure, (ax,) = harness.panels(1, (10, 4.5))
    harness.grouped_bars(ax, [str(n) for n in args.num_envs],
                         {system: [median.get((system, n), 0) for n in args.num_envs] for system in systems})
    ax.set_xlabel("num_envs")
    ax.set_ylabel("env steps/s (log)")
    ax.set_yscale("log")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    harness.save(figure, harness.OUTPUT / "stream.png", info=harness.machine(packages),
                 title=f"Rollout collection (CartPole-v1 unless named), median of {args.repeats}")


if __name__ == "__main__":
    main()
