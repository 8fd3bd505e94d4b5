#!/usr/bin/env bash
# Fills the ignored folder that benchmarks/gpu_check.sh needs on the CUDA test
# machine, which reaches no network at all. Run here, on a machine that reaches
# PyPI and Debian's packages; the folder then travels with the working tree
# (the device tool's `carry`, 64 MiB for everything sent).
#
#   bash benchmarks/prepare_gpu_check.sh                        # -> .gpu/        (cp312: the CUDA machine)
#   bash benchmarks/prepare_gpu_check.sh --python-version 3.11  # -> .gpu-cp311/  (a rehearsal on this machine)
#   options: --python-version X.Y (default 3.12), --dest DIR (default .gpu, or .gpu-cpXY for another Python)
#
# What the folder holds (nothing is built here; all of it is read there offline):
#   wheels/             manylinux x86-64 wheels for that Python of every package the check needs that
#                       the machine's image lacks (the image: Python 3.12, torch 2.11.0+cu130, numpy,
#                       pybind11, scikit-build-core, cmake, ninja, pytest, hypothesis, cloudpickle, tqdm,
#                       matplotlib, opencv-python-headless, imageio, ...: .library/device/KINDS.md).
#                       Fetched one by one with --no-deps, so nothing can pull a (CUDA) torch in.
#   ale_py-<version>/   ALE's C++ source, trimmed as cmake/fetch_ale_source.py trims its cache (src/ and
#                       the licence): the build reads it through TORCHPOOL_ALE_SOURCE.
#   dm_control_files/   dm_control's Control Suite XML files (not the package): what the dmc family reads
#   zlib/include, zlib/lib/libz.a
#                       zlib's headers (and static library) from Debian's zlib1g-dev, for an image
#                       without them: ALE reads ROMs with zlib.
# Exit status: non-zero if anything could not be fetched. The last lines print the folder's size.
set -euo pipefail
cd "$(dirname "$0")/.."

python_version=3.12
dest=
while [ $# -gt 0 ]; do
  case $1 in
    --python-version) python_version=$2; shift 2 ;;
    --dest) dest=$2; shift 2 ;;
    *) echo "usage: $0 [--python-version X.Y] [--dest DIR]" >&2; exit 2 ;;
  esac
done
tag="cp${python_version/./}"
[ -n "$dest" ] || { [ "$tag" = cp312 ] && dest=.gpu || dest=".gpu-$tag"; }

# The pins the build and the runtime must agree on are read from where the project states them.
ale_version=$(sed -n 's/^set(TORCHPOOL_ALE_VERSION "\([^"]*\)").*/\1/p' CMakeLists.txt)
# One mujoco pin per Python ("mujoco==4.0.0; python_version >= '3.11'"): the build-system's for this one.
[ "$python_version" = 3.10 ] && marker="python_version < '3.11'" || marker="python_version >= '3.11'"
mujoco_version=$(grep -o "\"mujoco==[0-9.]*; $marker\"" pyproject.toml | head -1 | sed 's/^"mujoco==\([0-9.]*\);.*/\1/')
dm_control_version=$(grep -o '"dm_control==[^"]*"' pyproject.toml | head -1 | tr -d '"' | cut -d= -f3)
if [ -z "$ale_version" ] || [ -z "$mujoco_version" ] || [ -z "$dm_control_version" ]; then
  echo "cannot read the ALE, MuJoCo and dm_control pins from CMakeLists.txt and pyproject.toml" >&2
  exit 1
fi

# Every package the check imports that the image lacks, with each one's own
# requirements (their wheels' Requires-Dist, extras left out) down to what the
# image has. Versions for torch 2.11: torchrl 0.12 is the release built against
# it (April 2026) and wants tensordict 0.12.x (TORCHRL_VERSION and
# TENSORDICT_VERSION choose others). Its Collector lacks the newer
# auto_register_policy_transforms that some CPU tests of tests/test_torchrl.py
# pass; the check runs only that module's CUDA test. Left out on purpose, though
# mujoco's metadata names them: mujoco-studio (12.5 MB, the viewer app, with its
# websockets) and pyopengl (3 MB, EGL/OSMesa rendering); mujoco's __init__ only
# tries to import its renderers, and nothing in the check renders. zipp is in
# the image; it is carried (16 kB) for a rehearsal venv that lacks it, and an
# install by name leaves the image's own copy alone.
wheels=(
  "tensordict==${TENSORDICT_VERSION:-0.12.4}" "torchrl==${TORCHRL_VERSION:-0.12.0}"
  "pyvers==0.2.3" "orjson==3.13.0" "importlib-metadata==10.2.0" "lazy-importer==0.1.0" "zipp==4.1.2"
  "gymnasium==1.4.0" "farama-notifications==0.0.6"
  "mujoco==$mujoco_version" "mujoco-core==$mujoco_version" "glfw==2.11.0"
  "ale-py==$ale_version"
)

mkdir -p "$dest"
rm -rf "$dest/wheels"  # one version of each: two of one name stop the offline install there
# pip matches manylinux_2_N exactly, so name every N the packages above are built for.
platforms=()
for p in manylinux_2_35 manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 \
         manylinux2014 manylinux1; do
  platforms+=(--platform "${p}_x86_64")
done
echo "== wheels for Python $python_version ($tag) -> $dest/wheels"
python3 -m pip download --quiet --no-deps --only-binary=:all: --implementation cp \
  --python-version "$python_version" "${platforms[@]}" -d "$dest/wheels" "${wheels[@]}" \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)  # a pip.conf's absent local indexes

# A requirement that is neither carried nor in the image would fail there at
# import time, after the device time is spent: list each wheel's requirements
# that are not carried, for a reader to hold against the image's package list.
python3 - "$dest/wheels" <<'EOF'
import re, sys, zipfile
from pathlib import Path

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

wheels = sorted(Path(sys.argv[1]).glob("*.whl"))
carried = {norm(w.name.split("-")[0]) for w in wheels}
for wheel in wheels:
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    needs = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    needs = [n for n in needs if "extra ==" not in n]
    outside = sorted({norm(re.split(r"[ ;<>=!~\[(]", n, maxsplit=1)[0]) for n in needs} - carried)
    print(f"   {wheel.name:80s} {wheel.stat().st_size / 2**20:5.1f} MiB  needs from the image: "
          f"{', '.join(outside) or '-'}")
EOF

echo "== ALE $ale_version source -> $dest/ale_py-$ale_version"
# fetch_ale_source.py finds, downloads and trims it (or reuses its cache, ~/.cache/torchpool).
ale_source=$(python3 cmake/fetch_ale_source.py "$ale_version")
rm -rf "$dest/ale_py-$ale_version"
cp -r "$ale_source" "$dest/ale_py-$ale_version"

echo "== zlib headers (Debian's zlib1g-dev) -> $dest/zlib"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# As root, apt's sandbox user cannot write into the private scratch folder: download as root.
if ! (cd "$scratch" && apt-get -o APT::Sandbox::User=root download zlib1g-dev >/dev/null); then
  echo "apt-get download zlib1g-dev failed: run apt-get update once, then again" >&2
  exit 1
fi
dpkg -x "$scratch"/zlib1g-dev_*.deb "$scratch/root"
# Only the headers and the static library: the package's libz.so is a link to
# the runtime library of this machine, which does not travel.
rm -rf "$dest/zlib"
mkdir -p "$dest/zlib/include" "$dest/zlib/lib"
cp "$scratch"/root/usr/include/zlib.h "$scratch"/root/usr/include/zconf.h "$dest/zlib/include/"
cp "$scratch"/root/usr/lib/x86_64-linux-gnu/libz.a "$dest/zlib/lib/"
echo "   from $(basename "$scratch"/zlib1g-dev_*.deb)"

echo "== the Control Suite's model files (dm_control $dm_control_version) -> $dest/dm_control_files"
# The Control Suite tasks read only dm_control's XML files (dm_control itself is never imported): the
# suite's XML and common/ files, not the 56 MB wheel (nor dog's 20 MB of meshes: DogRun does not run
# there). gpu_check.sh puts the folder on PYTHONPATH when the image has no dm_control.
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$scratch/dm_control" \
  "dm_control==$dm_control_version" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
rm -rf "$dest/dm_control_files"
mkdir -p "$dest/dm_control_files"
(cd "$dest/dm_control_files" && python3 -m zipfile -e "$scratch"/dm_control/dm_control-*.whl "$scratch/dm_control/x" &&
  mkdir -p dm_control/suite && cp "$scratch"/dm_control/x/dm_control/suite/*.xml dm_control/suite/ &&
  cp -r "$scratch"/dm_control/x/dm_control/suite/common dm_control/suite/ &&
  echo '"""dm_control'"'"'s Control Suite model files alone, carried for the GPU check (prepare_gpu_check.sh)."""' \
    > dm_control/__init__.py)

echo "== $dest: $(du -sh --apparent-size "$dest" | cut -f1) (the tracked tree adds ~$(git ls-files -z | du -ch \
  --apparent-size --files0-from=- | tail -1 | cut -f1); a device run sends at most 64 MiB in all)"
du -sh --apparent-size "$dest"/* | sed 's/^/   /'
