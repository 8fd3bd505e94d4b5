"""Does an aarch64 build step every native family bit for bit as the x86-64 build does? (docs/wheels.md)

Run ``dump`` once with each build, same seeds, same actions, then ``compare`` the two files:

    x86-venv/bin/python tools/aarch64_parity.py dump x86_64.npz
    arm-venv/bin/python tools/aarch64_parity.py dump aarch64.npz        # under qemu-aarch64
    python tools/aarch64_parity.py compare x86_64.npz aarch64.npz        # any Python with NumPy

``dump`` makes each env of ``ENVS`` (classic control, MuJoCo, the Control Suite, Atari, MiniGrid and
BabyAI) with ``num_envs=4, seed=7``, resets it and steps it ``--steps`` times (300) with actions drawn
from NumPy's PCG64 (seed 11: the same numbers on every platform), and saves every output of every step:
each leaf of the TensorDict (observation, reward, terminated, truncated, done, episode totals,
final_observation, the family's extras), stacked over steps, plus the actions. ``compare`` prints one
line per env and a verdict per family: identical bytes, or where the two first differ (step, output),
by how much (largest absolute difference and in units in the last place, at that first step and
over the whole run). Exit status: 0 if every env is identical, 1 if any differs, 2 if the two files
do not hold the same envs, steps, actions or versions (nothing comparable).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections import defaultdict

import numpy as np

# family -> env ids and their make() kwargs: each family's cheap and costly ends, each with a different
# mix of the numerics that can differ across architectures (libm, fused multiply-adds in libmujoco).
ENVS: dict[str, list[tuple[str, dict]]] = {
    "classic": [("CartPole-v1", {}), ("Acrobot-v1", {}), ("MountainCar-v0", {}),
                ("MountainCarContinuous-v0", {}), ("Pendulum-v1", {})],
    "mujoco": [("Hopper-v5", {}), ("HalfCheetah-v5", {}), ("Ant-v5", {}), ("Humanoid-v5", {}),
               ("Walker2d-v4", {})],
    "dmc": [("CheetahRun-v1", {}), ("WalkerWalk-v1", {}), ("CartpoleSwingup-v1", {}), ("FingerSpin-v1", {}),
            ("HumanoidRun-v1", {})],
    "atari": [("Pong-v5", {}), ("Breakout-v5", {}), ("MsPacman-v5", {})],
    "minigrid": [("MiniGrid-DoorKey-8x8-v0", {}), ("MiniGrid-MultiRoom-N4-S5-v0", {}),
                 ("BabyAI-GoTo-v0", {"observation": "rgb"})],
}
NUM_ENVS, SEED, ACTION_SEED = 4, 7, 11


def leaves(td, prefix: str = "") -> dict[str, np.ndarray]:
    """Every leaf of a TensorDict as a NumPy array, named by its key path ('a.b')."""
    import torch

    out = {}
    for key, value in td.items(include_nested=True, leaves_only=True):
        name = prefix + (".".join(key) if isinstance(key, tuple) else key)
        if isinstance(value, torch.Tensor):
            out[name] = value.detach().cpu().numpy().copy()
        else:  # non-tensor data (a mission string): compared as text
            out[name] = np.asarray(str(getattr(value, "data", value)))
    return out


def draw_actions(spec, rng: np.random.Generator) -> np.ndarray:
    from torchpool.specs import DiscreteSpec

    if isinstance(spec, DiscreteSpec):
        return rng.integers(0, spec.n, size=(NUM_ENVS, *spec.shape)).astype(str(spec.dtype).removeprefix("torch."))
    low = spec.low.double().expand(*spec.shape).numpy()
    high = spec.high.double().expand(*spec.shape).numpy()
    draw = rng.random(size=(NUM_ENVS, *spec.shape))  # float64 in [0, 1): platform-independent
    return (low + (high - low) * draw).astype(str(spec.dtype).removeprefix("torch."))


def dump(path: str, steps: int) -> None:
    import torch

    import torchpool

    arrays: dict[str, np.ndarray] = {}
    started_all = time.perf_counter()
    for family, envs in ENVS.items():
        for env_id, kwargs in envs:
            started = time.perf_counter()
            rng = np.random.Generator(np.random.PCG64(ACTION_SEED))
            per_key: dict[str, list[np.ndarray]] = defaultdict(list)
            actions = []
            with torchpool.make(env_id, num_envs=NUM_ENVS, seed=SEED, **kwargs) as pool:
                for name, value in leaves(pool.reset()).items():
                    per_key[name].append(value)
                for _ in range(steps):
                    action = draw_actions(pool.action_spec, rng)
                    actions.append(action)
                    for name, value in leaves(pool.step(torch.from_numpy(action))).items():
                        per_key[name].append(value)
            arrays[f"{family}/{env_id}/action"] = np.stack(actions)
            for name, values in per_key.items():
                if len({v.shape for v in values}) == 1:
                    arrays[f"{family}/{env_id}/{name}"] = np.stack(values)
                else:  # an output whose shape varies by step: one array per step
                    for step, value in enumerate(values):
                        arrays[f"{family}/{env_id}/{name}@{step}"] = value
            print(f"dumped {env_id:32s} {steps} steps in {time.perf_counter() - started:6.1f} s", flush=True)
    meta = {"machine": platform.machine(), "python": platform.python_version(), "torchpool": torchpool.__version__,
            "torch": torch.__version__, "numpy": np.__version__, "steps": str(steps)}
    try:
        import mujoco

        meta["mujoco"] = mujoco.__version__
    except ImportError:
        pass
    for key, value in meta.items():
        arrays[f"meta/{key}"] = np.asarray(value)
    np.savez_compressed(path, **arrays)
    print(f"wrote {path}: {len(arrays)} arrays, {time.perf_counter() - started_all:.1f} s ({meta})", flush=True)


def ordered(values: np.ndarray) -> np.ndarray:
    """Floats as integers in the same order, one apart per representable step (ULP distance)."""
    bits = {4: np.int32, 8: np.int64}[values.dtype.itemsize]
    raw = values.view(bits).astype(np.int64)
    magnitude = raw & np.int64(np.iinfo(bits).max)
    return np.where(raw < 0, -magnitude, magnitude)


def difference(a: np.ndarray, b: np.ndarray) -> str:
    if a.dtype.kind != "f":
        if a.dtype.kind in "iub":
            largest = np.abs(a.astype(np.int64) - b.astype(np.int64)).max()
            return f"{np.count_nonzero(a != b)} of {a.size} {a.dtype} values differ: max |diff| {largest}"
        return f"{np.count_nonzero(a != b)} of {a.size} differ"
    differing = (a.view(f"u{a.itemsize}") != b.view(f"u{b.itemsize}")) & np.isfinite(a) & np.isfinite(b)
    x, y = a[differing], b[differing]
    absolute = np.abs(x.astype(np.float64) - y.astype(np.float64)).max(initial=0.0)
    # In Python integers: two int64 orderings of opposite sign can be further apart than int64 holds.
    ulps = max((abs(int(p) - int(q)) for p, q in zip(ordered(x), ordered(y))), default=0)
    relative = (np.abs(x.astype(np.float64) - y.astype(np.float64))
                / np.maximum(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64)))).max(initial=0.0)
    return (f"{np.count_nonzero(differing)} of {a.size} {a.dtype} values differ: max |diff| {absolute:.3g}, "
            f"relative {relative:.3g}, {ulps:.3g} ulp")


def compare(first: str, second: str) -> int:
    a, b = np.load(first), np.load(second)
    meta_a = {k.split("/", 1)[1]: str(a[k]) for k in a.files if k.startswith("meta/")}
    meta_b = {k.split("/", 1)[1]: str(b[k]) for k in b.files if k.startswith("meta/")}
    print(f"{first}: {meta_a}\n{second}: {meta_b}")
    for key in ("steps", "torchpool", "mujoco"):
        if meta_a.get(key) != meta_b.get(key):
            print(f"NOT COMPARABLE: {key} differs ({meta_a.get(key)} vs {meta_b.get(key)})")
            return 2
    if set(a.files) != set(b.files):
        print(f"NOT COMPARABLE: outputs differ: only in the first {sorted(set(a.files) - set(b.files))[:8]}, "
              f"only in the second {sorted(set(b.files) - set(a.files))[:8]}")
        return 2
    envs = sorted({tuple(k.split("/")[:2]) for k in a.files if not k.startswith("meta/")},
                  key=lambda fe: (list(ENVS).index(fe[0]) if fe[0] in ENVS else 99, fe[1]))
    verdict: dict[str, list[str]] = defaultdict(list)
    status = 0
    for family, env_id in envs:
        prefix = f"{family}/{env_id}/"
        if not np.array_equal(a[prefix + "action"], b[prefix + "action"]):
            print(f"NOT COMPARABLE: {env_id}: the actions differ (NumPy's PCG64 should draw the same everywhere)")
            return 2
        keys = sorted(k for k in a.files if k.startswith(prefix) and k != prefix + "action")
        differing = [k for k in keys if a[k].tobytes() != b[k].tobytes() or a[k].dtype != b[k].dtype]
        if not differing:
            print(f"identical  {env_id:32s} {len(keys)} outputs, {a[keys[0]].shape[0] - 1} steps, bit for bit")
            continue
        status = 1
        verdict[family].append(env_id)
        # The first step at which any output differs, and what differs there.
        first_step, first_keys = None, []
        for k in differing:
            if "@" in k:
                step = int(k.rsplit("@", 1)[1])
            else:
                rows = np.nonzero([x.tobytes() != y.tobytes() for x, y in zip(a[k], b[k])])[0]
                step = int(rows[0])
            if first_step is None or step < first_step:
                first_step, first_keys = step, [k]
            elif step == first_step:
                first_keys.append(k)
        print(f"DIFFERS    {env_id:32s} first at step {first_step} (0 = reset) in "
              f"{', '.join(k[len(prefix):] for k in first_keys)}")
        for k in first_keys:
            x, y = (a[k], b[k]) if "@" in k else (a[k][first_step], b[k][first_step])
            print(f"           at step {first_step}, {k[len(prefix):]}: {difference(x, y)}")
        for k in differing:
            print(f"           whole run, {k[len(prefix):]}: {difference(a[k], b[k])}")
    print()
    for family in dict.fromkeys(f for f, _ in envs):
        count = sum(1 for f, _ in envs if f == family)
        if verdict[family]:
            print(f"{family:9s} {len(verdict[family])} of {count} differ: {', '.join(verdict[family])}")
        else:
            print(f"{family:9s} all {count} bit for bit")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="step every env of ENVS and save every output to an .npz")
    dumping.add_argument("path")
    dumping.add_argument("--steps", type=int, default=300)
    comparing = commands.add_parser("compare", help="compare two dumps, env by env")
    comparing.add_argument("first")
    comparing.add_argument("second")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.path, args.steps)
        return 0
    return compare(args.first, args.second)


if __name__ == "__main__":
    sys.exit(main())
