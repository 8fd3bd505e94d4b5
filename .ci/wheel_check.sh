#!/usr/bin/env bash
# CI: builds the CPython 3.11 wheel (tools/build_wheels.sh) of HEAD, installs it
# into a fresh venv and runs tools/wheel_smoke.py there with no compiler on PATH
# (register_cpp_env alone gets the system's g++). 3 min 1 s on the 2-core host
# with the toolchain cached in ~/.cache/torchpool/wheel-toolchain and ccache
# partly warm (build 125 s, venv ~40 s, smoke test ~10 s); up to 2.5 min more
# to make the toolchain, about 1 min more from an empty ccache (docs/wheels.md).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/torchpool-wheel-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

commit=$(git rev-parse HEAD)  # the wheel and the smoke test's C++ env both come from it
tools/build_wheels.sh --python 3.11 --out "$work/dist" --ref "$commit"
wheel=$(ls "$work"/dist/torchpool-*-cp311-*.whl)

python=$(command -v python3.11 || ls "$HOME"/.pyenv/versions/3.11.*/bin/python3.11 | tail -1)
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check torch==2.13.0
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel[mujoco,atari,dmc,torchrl]"

# From outside the checkout (its torchpool/ must not shadow the wheel), with
# only the venv on PATH; the C++ env is the wheel's commit's.
git show "$commit:examples/cpp_env/my_cartpole.h" >"$work/my_cartpole.h"
cd "$work"
env -i HOME="$HOME" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" PATH="$work/venv/bin" \
  "$work/venv/bin/python" "$repo/tools/wheel_smoke.py" --cxx "$(command -v g++)" --header "$work/my_cartpole.h"
