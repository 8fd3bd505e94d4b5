#!/usr/bin/env bash
# CI: builds the CPython 3.10 to 3.13 wheels (tools/build_wheels.sh) of HEAD, then installs each into a
# fresh venv and runs tools/wheel_smoke.py there with no compiler on PATH (register_cpp_env alone gets the
# system's g++), for the range pyproject.toml claims (docs/wheels.md, "The smoke test"):
#   3.11 + torch 2.13.0 (CPU, from this disk) + the newest torchrl
#   3.13 + torch 2.14.1 (PyPI's CUDA build: the only one for 3.13; it runs on the CPU)
#   3.10 + torch 2.12.1 (CUDA build) + the newest torchrl, on mujoco 3.17.0, 3.10's own pin: "parity"
#        also runs tests/test_mujoco_parity.py there (Gymnasium's MuJoCo envs on that same mujoco)
#   3.11 + torch 2.11.0 + torchrl 0.12.0, tensordict 0.12.4 (the oldest we claim)
#   3.12 + torch 2.11.0 + torchrl 0.12.0, tensordict 0.12.4 (the GPU machine's pairing)
#   3.12 + torch 2.15.0 + the newest torchrl (the newest torch; "uncapped": this machine's pip config caps
#        torch at 2.14.1, so that venv's pip reads no config file)
# Each venv also runs tests/test_storage_use_count.py: HeldWatch's private torch API means what we assume.
# WHEEL_CHECK_QUICK=1 runs the first alone. About 3 min for the first, 14-16 for all (2 cores; the CUDA
# builds of torch are ~3 GB each, ~30 s to fetch here).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d "${TMPDIR:-/tmp}/torchpool-wheel-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

combos=("3.11 torch==2.13.0" "3.13 torch==2.14.1" "3.11 torch==2.11.0 torchrl==0.12.0 tensordict==0.12.4"
  "3.12 torch==2.11.0 torchrl==0.12.0 tensordict==0.12.4" "3.12 uncapped torch==2.15.0" "3.10 parity torch==2.12.1")
[ "${WHEEL_CHECK_QUICK:-0}" = 1 ] && combos=("${combos[0]}")
pythons=$(for combo in "${combos[@]}"; do echo "${combo%% *}"; done | sort -u)

commit=$(git rev-parse HEAD)  # the wheels and the smoke test's C++ env all come from it
# shellcheck disable=SC2046  # one --python per version
tools/build_wheels.sh $(for v in $pythons; do echo --python "$v"; done) --out "$work/dist" --ref "$commit"
# .ci/run hands these on to .ci/aarch64_check.sh, whose parity check compares the aarch64 wheel with them.
if [ -n "${TORCHPOOL_CI_WHEELS:-}" ]; then
  mkdir -p "$TORCHPOOL_CI_WHEELS" && cp "$work"/dist/*.whl "$TORCHPOOL_CI_WHEELS/" && echo "$commit" >"$TORCHPOOL_CI_WHEELS/commit"
fi
git show "$commit:examples/cpp_env/my_cartpole.h" >"$work/my_cartpole.h"
git show "$commit:tests/test_storage_use_count.py" >"$work/test_storage_use_count.py"  # needs torch alone

for index in "${!combos[@]}"; do
  read -r version pins <<<"${combos[$index]}"
  pip_config=()
  if [[ $pins == uncapped* ]]; then
    pins=${pins#uncapped }
    pip_config=(PIP_CONFIG_FILE=/dev/null)
  fi
  parity=0
  [[ $pins == parity* ]] && { pins=${pins#parity }; parity=1; }
  tag="cp${version/./}"
  wheel=$(ls "$work"/dist/torchpool-*-"$tag"-*.whl)
  # pyenv's own interpreter first: its shim answers `command -v` even where that version is not selected
  python=$(ls "$HOME"/.pyenv/versions/"$version".*/bin/python"$version" 2>/dev/null | tail -1)
  [ -n "$python" ] || python=$(command -v "python$version")
  venv="$work/venv-$index-$tag"  # no '=' in it: env would take the path for an assignment
  echo "== smoke test: Python $version, $pins"
  "$python" -m venv "$venv"
  pip=(env "${pip_config[@]}" "$venv/bin/pip" install -q --disable-pip-version-check)
  # A current pip: pyenv 3.10's bundled 23.0.1 picks releases that need a newer Python from a local index,
  # then builds orjson from source or backtracks for minutes.
  "${pip[@]}" --upgrade pip
  # shellcheck disable=SC2086  # pins: one requirement per word
  "${pip[@]}" $pins pytest
  # shellcheck disable=SC2086
  "${pip[@]}" "$wheel[mujoco,atari,torchrl]" $pins
  # The Control Suite reads only dm_control's model files: its own needs (labmaze) have no wheel for 3.13.
  "${pip[@]}" --no-deps dm_control==1.0.50
  "$venv/bin/python" -c "import sys, torch, torchrl; print('   Python', sys.version.split()[0], 'torch', torch.__version__,
    'torchrl', torchrl.__version__)"
  # From outside the checkout (its torchpool/ must not shadow the wheel), with only the venv on PATH.
  (cd "$work" && env -i HOME="$HOME" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" PATH="$venv/bin" \
    "$venv/bin/python" "$repo/tools/wheel_smoke.py" --cxx "$(command -v g++)" --header "$work/my_cartpole.h")
  (cd "$work" && "$venv/bin/python" -m pytest -q -p no:cacheprovider -o addopts= test_storage_use_count.py)
  if [ "$parity" = 1 ]; then
    # The checkout's tests against the installed wheel: run from $work, so sys.path holds tests/, not the
    # checkout's torchpool/. imageio: Gymnasium's MuJoCo envs import it.
    "${pip[@]}" imageio
    (cd "$work" && "$venv/bin/python" -m pytest -q -p no:cacheprovider -o addopts= "$repo/tests/test_mujoco_parity.py")
  fi
done
