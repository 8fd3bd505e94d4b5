"""What makes PPO's update fast on a CPU? An interleaved A/B of its variants: the recipes' MLPs and the Pong CNN.

The update is where a CPU run's learner time goes. Each variant is timed in
turn, round after round in one process, the order alternating
(benchmarks/harness), so drifts of a shared machine fall on every variant
alike; medians of the rounds, and each variant's ratio to the baseline.

The MLP recipes (issue #34; the default): ``torchpool.train.ppo.update``,
the update of ``python -m torchpool train``, on a batch the shape of a
recipe's (random observations, actions and advantages: the update's cost does
not depend on their values), one whole update per turn. Variants:

- ``baseline``: torch's default Adam (the single-tensor loop on a CPU), 1
  intra-op thread (the recipes' default for MLPs, so the env workers keep
  their cores)
- ``foreach``: Adam(foreach=True), one kernel per op over every parameter
- ``fused``: Adam(fused=True), torch's fused CPU kernel (what the recipes use
  since this measurement)
- ``compile``: the actor's and critic's MLPs through ``torch.compile``
  (compile time reported apart, not in the per-update times)
- ``2 threads``: the baseline with 2 intra-op threads

The Pong CNN (``--cnn``): PPO's minibatch update (one CNN pass for policy and
value, the clipped loss, backward, Adam) on --batch random frames, each
variant trained for --seconds a turn on --threads torch threads, samples/s,
for the compact (42x42) and Nature (84x84) networks. Variants: ``eager``
(float32, NCHW); ``channels_last`` (the CNN's weights and input in NHWC);
``compile`` (``torch.compile`` of the channels_last agent's update pass);
``bf16`` (channels_last under ``torch.autocast("cpu", torch.bfloat16)``, only
where the CPU has native bf16, e.g. AVX512-BF16 or AMX).

    python benchmarks/update_speed.py [--recipes Ant-v4 Pendulum-v1] [--rounds 7] --record
    python benchmarks/update_speed.py --cnn [--threads 2] [--rounds 5] [--seconds 3] --record
"""

from __future__ import annotations

import argparse
import statistics
import time

import harness
import numpy as np
import torch

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
        for run, threads, _, _ in updates.values():  # warm-up: first-call allocations
            torch.set_num_threads(threads)
            run()

        def seconds_of(variant: str) -> float:
            """One update of the variant, on its thread count."""
            run, threads, _, _ = updates[variant]  # noqa: B023  (called within this env's rounds)
            torch.set_num_threads(threads)
            return 1 / harness.time_calls(lambda _: (run(), 1)[1], calls=1, warmup=0)[0]

        times = harness.measure_rounds(VARIANTS, rounds, seconds_of, progress=f"{env_id} updates")
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


def record_mlp(results: dict, args: argparse.Namespace) -> None:
    figure, axes = harness.panels(len(results), (4.5, 3.4))
    for ax, (env_id, result) in zip(axes, results.items()):
        medians = [statistics.median(result["times"][v]) * 1e3 for v in VARIANTS]
        ax.bar(range(len(VARIANTS)), medians, color=["C0", "C1", "C2", "C3", "C4"])
        ax.set_xticks(range(len(VARIANTS)), VARIANTS, rotation=20, fontsize=8)
        ax.set_ylabel("ms per update (median)")
        ax.set_title(f"{env_id}: one PPO update", fontsize=10)
    harness.save(figure, harness.OUTPUT / "update_speed.png", dpi=100)
    lines = ["| recipe | the update | " + " | ".join(VARIANTS) + " |", "|---|---|" + "---:|" * len(VARIANTS)]
    for env_id, result in results.items():
        medians = {v: statistics.median(result["times"][v]) for v in VARIANTS}
        cells = [f"{medians[v] * 1e3:.1f} ms ({medians['baseline'] / medians[v]:.2f}x)" for v in VARIANTS]
        lines.append(f"| {env_id} | {result['shape']} | " + " | ".join(cells) + " |")
    compile_setup = ", ".join(f"{env_id} {r['setup']['compile']:.1f} s" for env_id, r in results.items())
    print("\n".join(lines))
    harness.record_section(
        "update-speed", "The PPO update on a CPU: optimizers, torch.compile, threads (`benchmarks/update_speed.py`)",
        settings=[f"- Settings: `torchpool.train.ppo.update` on a random batch of each recipe's shape, a fixed rate; "
                  f"{args.rounds} interleaved rounds after a warm-up, medians; cells: ms per update (speed relative "
                  f"to the baseline). torch.compile's first update (compiling) took {compile_setup}, not counted."],
        body=[*lines, "", "![The PPO update's variants](update_speed.png)"])


# ---- the Pong CNN (--cnn) ----------------------------------------------------------------------------

NETWORKS = {"compact": (4, 42, 42), "nature": (4, 84, 84)}


def cpu_has_bf16() -> bool:
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
    return any(flag in flags.split() for flag in ("avx512_bf16", "amx_bf16"))


def make_cnn_update(network: str, variant: str, batch: int):
    """step(i): one minibatch update of the Pong CNN in ``variant``; returns the samples it trained on."""
    from torchpool.train.ppo import CnnAgent

    obs_shape = NETWORKS[network]
    torch.manual_seed(0)
    agent = CnnAgent(obs_shape, 6, network, channels_last=variant != "eager")
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    observation = torch.randint(0, 256, (batch, *obs_shape), dtype=torch.uint8)
    action = torch.randint(0, 6, (batch,))
    old_logprob = torch.full((batch,), -1.79)
    advantage, returns = torch.randn(batch), torch.randn(batch)
    evaluate = torch.compile(agent.evaluate) if variant == "compile" else agent.evaluate

    def update(_: int) -> int:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=variant == "bf16"):
            distribution, value = evaluate(observation)
            ratio = (distribution.log_prob(action) - old_logprob).exp()
            policy_loss = -torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean()
            loss = policy_loss + 0.5 * ((value.float().squeeze(-1) - returns) ** 2).mean() \
                - 0.01 * distribution.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return batch

    return update


def measure_cnn(args: argparse.Namespace) -> tuple[dict, list[str]]:
    """{(network, variant): (median samples/s, median ratio to eager)}, and the variants measured."""
    torch.set_num_threads(args.threads)
    variants = ["eager", "channels_last", "compile"] + (["bf16"] if cpu_has_bf16() else [])
    results = {}
    for network in NETWORKS:
        updates = {variant: make_cnn_update(network, variant, args.batch) for variant in variants}
        for update in updates.values():  # warm-up; compiles the compiled one
            for i in range(3):
                update(i)
        rates = harness.measure_rounds(
            variants, args.rounds, lambda v: harness.rate_for(updates[v], args.seconds, warmup=0).steps_per_s,  # noqa: B023
            progress=f"{network} CNN updates")
        for variant in variants:
            ratio = harness.paired(rates[variant], rates["eager"]).ratio
            results[(network, variant)] = (statistics.median(rates[variant]), ratio)
            print(f"{network:8s} {variant:14s} {results[(network, variant)][0]:9,.0f} samples/s  "
                  f"{ratio:5.2f}x eager", flush=True)
    return results, variants


def record_cnn(results: dict, variants: list[str], args: argparse.Namespace) -> None:
    rows = [(f"{network} ({'x'.join(map(str, NETWORKS[network]))})", variant, f"{rate:,.0f}", f"{ratio:.2f}x")
            for (network, variant), (rate, ratio) in results.items()]
    harness.record_section(
        "cnn-update", "The Pong CNN's update on a CPU (`benchmarks/update_speed.py --cnn`)",
        settings=[f"- Settings: PPO's minibatch update (one CNN pass for policy and value, clipped loss, backward, "
                  f"Adam), batch {args.batch}, {args.threads} torch threads, random uint8 frames; median samples/s "
                  f"of {args.rounds} interleaved rounds of {args.seconds} s, and the median ratio to eager float32; "
                  f"native bf16: {'yes' if cpu_has_bf16() else 'no'}."],
        body=[*harness.markdown_table(("network (frames)", "variant", "samples/s", "vs eager"), rows, text_columns=2),
              "", "![The Pong CNN's update by variant](cnn_update.png)"])
    figure, (ax,) = harness.panels(1, (7, 3.4))
    harness.grouped_bars(ax, [f"{n} {'x'.join(map(str, NETWORKS[n][1:]))}" for n in NETWORKS],
                         {variant: [results[(network, variant)][0] for network in NETWORKS] for variant in variants})
    ax.set_ylabel("samples/s (update)")
    harness.save(figure, harness.OUTPUT / "cnn_update.png",
                 title=f"PPO update, batch {args.batch}, {args.threads} threads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cnn", action="store_true", help="the Pong CNN's minibatch update instead of the MLPs'")
    parser.add_argument("--recipes", nargs="+", default=["Ant-v4", "Pendulum-v1"], help="the MLP recipes' envs")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved rounds, each variant once per round (default 7; --cnn 5)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="--cnn: torch threads")
    parser.add_argument("--batch", type=int, default=256, help="--cnn: minibatch size (the Pong recipe's: 256)")
    parser.add_argument("--seconds", type=float, default=3.0, help="--cnn: seconds per variant per round")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and its PNG")
    args = parser.parse_args()
    if args.cnn:
        args.rounds = args.rounds or 5
        results, variants = measure_cnn(args)
        if args.record:
            record_cnn(results, variants, args)
        return
    args.rounds = args.rounds or 7
    results = measure(args.recipes, args.rounds)
    if args.record:
        record_mlp(results, args)


if __name__ == "__main__":
    main()
