"""Does torchpool.stream keep the GPU fed? Frames/s and where the time goes, on a CUDA machine.

For CartPole-v1, Pendulum-v1 and HalfCheetah-v5 at several num_envs, streams batches to
device="cuda" with a small MLP policy on the GPU, with and without the two
env groups (overlap), and reports frames/s plus stream.stats()'s split of
the time (envs, policy, copies, consumer). The copy share shows how much of
the host-to-device traffic stays off the critical path. Without a GPU it says
so and exits 0.

    python benchmarks/gpu_stream.py [--frames N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics

import harness
import torch

import torchpool


def mlp(obs_size: int, out_size: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(obs_size, 256), torch.nn.Tanh(),
                               torch.nn.Linear(256, 256), torch.nn.Tanh(), torch.nn.Linear(256, out_size)).cuda()


# env id -> (observation size, policy outputs, discrete, action bound, pool sizes). HalfCheetah's
# steps run on the worker threads, so it is the case where the two groups can overlap with the GPU.
ENVS = {"CartPole-v1": (4, 2, True, 0.0, (64, 256, 1024)),
        "Pendulum-v1": (3, 1, False, 2.0, (64, 256, 1024)),
        "HalfCheetah-v5": (17, 6, False, 1.0, (16, 64))}


def measure(env_id: str, num_envs: int, split: bool, frames: int) -> dict:
    obs_size, out_size, discrete, bound = ENVS[env_id][:4]
    net = mlp(obs_size, out_size)

    def policy(observation):
        out = net(observation)
        return out.argmax(-1) if discrete else out.clamp(-bound, bound)

    steps = 64
    batch_frames = num_envs * steps
    stream = torchpool.stream(env_id, policy, num_envs=num_envs, frames_per_batch=batch_frames,
                              total_frames=frames, device="cuda", split_envs=split)
    batches, calls = iter(stream), frames // batch_frames

    def consume(i: int) -> int:
        """One batch, touched on the GPU by its consumer; the last waits for the GPU to finish."""
        next(batches)["next", "reward"].sum()
        if i == calls - 1:
            torch.cuda.synchronize()
        return batch_frames

    frames_per_s, _ = harness.time_calls(consume, calls, warmup=0)  # the stream's start counts, as a run's does
    stats = stream.stats()
    return {"env_id": env_id, "num_envs": num_envs, "split_envs": split, "frames_per_s": frames_per_s,
            "seconds": stats["seconds"], "wall": frames / frames_per_s, "env_groups": stats["env_groups"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=500_000, help="frames per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats (median reported)")
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to measure (run this on a GPU machine)")
        return
    cases = [(env_id, num_envs, split) for env_id, (*_, sizes) in ENVS.items() for num_envs in sizes
             for split in (False, True)]

    def frames_of(env_id: str, num_envs: int) -> int:
        share = 0.2 if env_id == "HalfCheetah-v5" else 1.0  # ~30 us a step: fewer frames
        return max(num_envs * 64, int(args.frames * share) // (num_envs * 64) * (num_envs * 64))

    rows = harness.measure_rounds(cases, args.repeats,
                                  lambda case: measure(*case, frames_of(*case[:2])))
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'env':12s} {'num_envs':>8s} {'split':>6s} {'frames/s':>12s}  time split (envs/policy/copies/consumer)")
    results = []
    for (env_id, num_envs, split), runs in rows.items():
        best = sorted(runs, key=lambda r: r["frames_per_s"])[len(runs) // 2]
        share = {k: v / best["wall"] for k, v in best["seconds"].items()}
        median = statistics.median(r["frames_per_s"] for r in runs)
        print(f"{env_id:12s} {num_envs:8d} {str(split):>6s} {median:12,.0f}  "
              + " / ".join(f"{share[k]:.0%}" for k in ("envs", "policy", "copies", "consumer")))
        results.append(best)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
