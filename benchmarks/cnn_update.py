"""How fast does the CPU learner train the Pong CNN? Samples/s of PPO's minibatch update, by variant.

The update (one CNN pass for policy and value, PPO's clipped loss, backward,
Adam) is where Pong's time goes on a CPU. Each variant trains minibatches of
--batch random frames for --seconds, the variants interleaved round by round
in one process on --threads torch threads; medians of the rounds are printed,
with each variant's ratio to eager float32:

* eager: float32, NCHW;
* channels_last: the CNN's weights and input in NHWC;
* compile: `torch.compile` of the channels_last agent's update pass;
* bf16: channels_last under `torch.autocast("cpu", torch.bfloat16)` (only
  where the CPU has native bf16, e.g. AVX512-BF16 or AMX).

    python benchmarks/cnn_update.py --record
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from torchpool import bench
from torchpool.train.ppo import CnnAgent

HERE = Path(__file__).resolve().parent
NETWORKS = {"compact": (4, 42, 42), "nature": (4, 84, 84)}


def cpu_has_bf16() -> bool:
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
    return any(flag in flags.split() for flag in ("avx512_bf16", "amx_bf16"))


def make_update(network: str, variant: str, batch: int):
    obs_shape = NETWORKS[network]
    torch.manual_seed(0)
    agent = CnnAgent(obs_shape, 6, network, channels_last=variant != "eager")
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    observation = torch.randint(0, 256, (batch, *obs_shape), dtype=torch.uint8)
    action = torch.randint(0, 6, (batch,))
    old_logprob = torch.full((batch,), -1.79)
    advantage, returns = torch.randn(batch), torch.randn(batch)
    evaluate = torch.compile(agent.evaluate) if variant == "compile" else agent.evaluate

    def update() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=variant == "bf16"):
            distribution, value = evaluate(observation)
            ratio = (distribution.log_prob(action) - old_logprob).exp()
            policy_loss = -torch.min(ratio * advantage, ratio.clamp(0.8, 1.2) * advantage).mean()
            loss = policy_loss + 0.5 * ((value.float().squeeze(-1) - returns) ** 2).mean() \
                - 0.01 * distribution.entropy().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return update


def samples_per_second(update, batch: int, seconds: float) -> float:
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        update()
        count += batch
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(), help="torch threads")
    parser.add_argument("--batch", type=int, default=256, help="minibatch size (the Pong recipe's: 256)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per variant per round")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and cnn_update.png")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    variants = ["eager", "channels_last", "compile"] + (["bf16"] if cpu_has_bf16() else [])
    results = {}
    for network in NETWORKS:
        updates = {variant: make_update(network, variant, args.batch) for variant in variants}
        for update in updates.values():  # warm-up; compiles the compiled one
            for _ in range(3):
                update()
        rates = {variant: [] for variant in variants}
        for i in range(args.rounds):
            order = variants if i % 2 == 0 else variants[::-1]
            for variant in order:
                rates[variant].append(samples_per_second(updates[variant], args.batch, args.seconds))
        for variant in variants:
            ratio = statistics.median([r / e for r, e in zip(rates[variant], rates["eager"])])
            results[(network, variant)] = (statistics.median(rates[variant]), ratio)
            print(f"{network:8s} {variant:14s} {results[(network, variant)][0]:9,.0f} samples/s  "
                  f"{ratio:5.2f}x eager", flush=True)
    if args.record:
        record(results, variants, args)


def record(results: dict, variants: list[str], args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = bench.machine(())
    lines = ["<!-- cnn-update:begin -->", "## The Pong CNN's update on a CPU (benchmarks/cnn_update.py)", "",
             f"Machine: {info['cpu']}, {info['cores']} cores, {info['ram']}; {info['os']}; {info['versions']}; "
             f"native bf16: {'yes' if cpu_has_bf16() else 'no'}.",
             f"PPO's minibatch update (one CNN pass for policy and value, clipped loss, backward, Adam), "
             f"batch {args.batch}, {args.threads} torch threads, random uint8 frames; median samples/s of "
             f"{args.rounds} interleaved rounds of {args.seconds} s, and the median ratio to eager float32.", "",
             "| network (frames) | variant | samples/s | vs eager |", "|---|---|---:|---:|"]
    for (network, variant), (rate, ratio) in results.items():
        frames = "x".join(map(str, NETWORKS[network]))
        lines.append(f"| {network} ({frames}) | {variant} | {rate:,.0f} | {ratio:.2f}x |")
    lines.append("<!-- cnn-update:end -->")
    bench.write_section(HERE / "RESULTS.md", "\n".join(lines), "<!-- cnn-update:begin -->",
                        "<!-- cnn-update:end -->")
    fig, ax = plt.subplots(figsize=(7, 3.4))
    bench.grouped_bars(ax, [f"{n} {'x'.join(map(str, NETWORKS[n][1:]))}" for n in NETWORKS],
                       {variant: [results[(network, variant)][0] for network in NETWORKS] for variant in variants})
    ax.set_ylabel("samples/s (update)")
    ax.set_title(f"PPO update, batch {args.batch}, {args.threads} threads")
    fig.tight_layout()
    fig.savefig(HERE / "cnn_update.png", dpi=120)
    print("wrote RESULTS.md and cnn_update.png")


if __name__ == "__main__":
    main()
