#!/usr/bin/env bash
# CI: builds torchpool's aarch64 wheel of HEAD on this x86-64 host (tools/build_wheels.sh --arch aarch64) and
# smoke-tests it under qemu-user, in a Debian arm64 Python (docs/wheels.md, "aarch64"):
#   cp311 in Debian 12's python3.11 (bookworm); with AARCH64_ALL=1 also cp310, cp312 (built and checked,
#   no aarch64 interpreter to run them: Debian has none) and cp313 in Debian 13's python3.13 (trixie).
# For each Python it runs: tools/wheel_smoke.py (every family, Python envs in worker processes, torchrl,
# register_cpp_env with the cross compiler), then tools/aarch64_parity.py against the x86-64 wheel of the same
# commit and Python (built here too; AARCH64_PARITY=0 skips it): every native family stepped with the same seeds
# and actions, output by output. Known differences (docs/wheels.md, "Parity") are reported, not failed on:
# the script fails if a family that is bit for bit (classic, Atari, MiniGrid) differs.
#
# Needs root on a Debian 12 x86-64 host (it may apt-get install g++-aarch64-linux-gnu, qemu-user-static,
# binfmt-support and debootstrap, and registers qemu-aarch64 with binfmt_misc: worker processes exec the
# aarch64 Python). Cached under ~/.cache/torchpool (made when absent, reused when present): the aarch64
# toolchain, the Debian arm64 roots (aarch64-root-<suite>) and the aarch64 wheels pip downloads
# (aarch64-wheels/cp3XX: torch is PyPI's CUDA build, ~2.8 GB with its libraries).
# With the caches warm: about 6.5 min on 2 cores when .ci/run hands over .ci/wheel_check.sh's x86-64 wheels
# (TORCHPOOL_CI_WHEELS), about 10 more when it builds its own under load; AARCH64_PARITY=0 saves ~2.5 min.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
cache=${TORCHPOOL_AARCH64_CACHE:-$HOME/.cache/torchpool}
work=$(mktemp -d "${TMPDIR:-/tmp}/torchpool-aarch64-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
say() { echo "aarch64_check: [$(date -u +%H:%M:%S)] $*"; }
started_all=$SECONDS

# python: suite, packages, torch pin (PyPI's aarch64 torch is the CUDA build; it runs on the CPU)
declare -A SUITE=([3.11]=bookworm [3.13]=trixie)
declare -A TORCH=([3.11]=2.13.0 [3.13]=2.13.0)
builds=(3.11) runs=(3.11)
[ "${AARCH64_ALL:-0}" = 1 ] && { builds=(3.10 3.11 3.12 3.13); runs=(3.11 3.13); }

# ---- Host tools and binfmt -----------------------------------------------------------------------
missing=()
for pair in aarch64-linux-gnu-g++:g++-aarch64-linux-gnu qemu-aarch64-static:qemu-user-static \
    update-binfmts:binfmt-support debootstrap:debootstrap; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Worker processes exec the venv's aarch64 python: the kernel must hand aarch64 ELF files to qemu.
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 \
  || update-binfmts --import qemu-aarch64
grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64 || { echo "aarch64_check: qemu-aarch64 is not registered with binfmt_misc" >&2; exit 1; }
export QEMU_CPU=neoverse-n1  # Graviton 2's core: torch's CPU probes want a known one

# ---- The wheels ------------------------------------------------------------------------------------
commit=$(git rev-parse HEAD)
git show "$commit:examples/cpp_env/my_cartpole.h" >"$work/my_cartpole.h"
git show "$commit:tools/wheel_smoke.py" >"$work/wheel_smoke.py"
git show "$commit:tools/aarch64_parity.py" >"$work/aarch64_parity.py" 2>/dev/null || cp tools/aarch64_parity.py "$work/"
started=$SECONDS
# shellcheck disable=SC2046  # one --python per version
nice -n 5 tools/build_wheels.sh --arch aarch64 $(for v in "${builds[@]}"; do echo --python "$v"; done) \
  --out "$work/dist" --ref "$commit"
say "aarch64 wheels built in $((SECONDS - started)) s"
if [ "${AARCH64_PARITY:-1}" = 1 ]; then
  started=$SECONDS
  # The x86-64 wheels .ci/wheel_check.sh built of the same commit (TORCHPOOL_CI_WHEELS, set by .ci/run), or new ones.
  reuse=${TORCHPOOL_CI_WHEELS:-}
  mkdir -p "$work/dist-x86_64"
  for version in "${runs[@]}"; do
    if [ -n "$reuse" ] && [ "$(cat "$reuse/commit" 2>/dev/null)" = "$commit" ] \
        && compgen -G "$reuse/torchpool-*-cp${version/./}-*x86_64.whl" >/dev/null; then
      cp "$reuse"/torchpool-*-cp"${version/./}"-*x86_64.whl "$work/dist-x86_64/"
      say "cp${version/./}: the x86-64 wheel (the parity reference) is .ci/wheel_check.sh's"
    else
      nice -n 5 tools/build_wheels.sh --python "$version" --out "$work/dist-x86_64" --ref "$commit"
      say "cp${version/./}: the x86-64 wheel (the parity reference) built in $((SECONDS - started)) s"
    fi
  done
fi

# ---- A Debian arm64 root per Python: its python3.X, run by qemu with the root as its library prefix -------
# debootstrap's first stage (--foreign) fetches and checks the packages against the suite's signed release
# and unpacks the base; the rest are unpacked with dpkg-deb (no maintainer scripts run: nothing needs them).
# torch's CPU probes (cpuinfo, oneDNN's xbyak) read /proc/cpuinfo and MIDR_EL1, which qemu-user does not
# emulate: the root gets a Neoverse-N1's, which qemu finds under its prefix before the host's.
make_root() {
  local version=$1 suite=${SUITE[$1]} root=$cache/aarch64-root-${SUITE[$1]}
  [ -f "$root/.torchpool-root" ] && { echo "$root"; return; }
  local staging=$root.partial
  rm -rf "$staging"
  debootstrap --arch=arm64 --variant=minbase --foreign \
    --include="python$version,python$version-venv,libpython$version-dev" "$suite" "$staging" \
    http://deb.debian.org/debian >"$work/debootstrap-$suite.log" 2>&1 \
    || { tail -20 "$work/debootstrap-$suite.log" >&2; exit 1; }
  local deb
  for deb in "$staging"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$staging"; done
  rm -f "$staging"/var/cache/apt/archives/*.deb
  mkdir -p "$staging/proc"
  : >"$staging/proc/cpuinfo"
  local cpu
  for cpu in $(seq 0 $(($(nproc --all) - 1))); do
    printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n' \
      "$cpu" >>"$staging/proc/cpuinfo"
    mkdir -p "$staging/sys/devices/system/cpu/cpu$cpu/regs/identification"
    echo 0x00000000413fd0c1 >"$staging/sys/devices/system/cpu/cpu$cpu/regs/identification/midr_el1"
  done
  touch "$staging/.torchpool-root" && rm -rf "$root" && mv "$staging" "$root"
  echo "$root"
}

status=0
for version in "${runs[@]}"; do
  tag=cp${version/./}
  started=$SECONDS
  root=$(make_root "$version")
  export QEMU_LD_PREFIX=$root
  say "$tag: root $root ($(QEMU_LD_PREFIX=$root "$root/usr/bin/python$version" -c 'import platform; print(platform.python_version(), platform.machine())')) in $((SECONDS - started)) s"

  # The venv's packages are installed by the host's pip (native speed) for the aarch64 platform tags, from a
  # cache of the downloaded wheels; pip lists manylinux2014 and each manylinux_2_17..28 tag explicitly.
  started=$SECONDS
  venv=$work/venv-$tag
  "$root/usr/bin/python$version" -m venv --without-pip "$venv"
  host_python=$(ls "$HOME"/.pyenv/versions/"$version".*/bin/python"$version" 2>/dev/null | tail -1)
  [ -n "$host_python" ] || host_python=$(command -v "python$version")
  wheels=$cache/aarch64-wheels/$tag
  mkdir -p "$wheels"
  platforms=(--platform manylinux2014_aarch64)
  for minor in $(seq 17 28); do platforms+=(--platform "manylinux_2_${minor}_aarch64"); done
  target=(--only-binary=:all: "${platforms[@]}" --python-version "$version" --implementation cp --abi "$tag")
  wheel=$(ls "$work"/dist/torchpool-*-"$tag"-*.whl)
  requirements=("$wheel[mujoco,atari,torchrl]" "torch==${TORCH[$version]}" pytest)
  pip=("$host_python" -m pip --disable-pip-version-check -q)
  if ! "${pip[@]}" install --no-index --find-links "$wheels" "${target[@]}" --dry-run --target "$work/dry-run" \
      "${requirements[@]}" >/dev/null 2>&1; then  # not all cached: download what is missing
    "${pip[@]}" download "${target[@]}" -d "$wheels" "${requirements[@]}" 2>&1 | grep -v '^WARNING: Location' || true
    rm -f "$wheels"/torchpool-*.whl
  fi
  compgen -G "$wheels/dm_control-1.0.50-*.whl" >/dev/null \
    || "${pip[@]}" download --no-deps -d "$wheels" dm_control==1.0.50 2>&1 | grep -v '^WARNING: Location' || true
  site=$venv/lib/python$version/site-packages
  "${pip[@]}" install --no-index --find-links "$wheels" "${target[@]}" --target "$site" "${requirements[@]}" 2>&1 \
    | grep -v -e '^WARNING: Location' -e "Running pip as the 'root' user" || true
  # The Control Suite reads only dm_control's model files (as in .ci/wheel_check.sh).
  "${pip[@]}" install --no-index --find-links "$wheels" --no-deps --target "$site" dm_control==1.0.50 2>&1 \
    | grep -v -e '^WARNING: Location' -e "Running pip as the 'root' user" -e 'already exists' || true
  say "$tag: venv with torch ${TORCH[$version]} in $((SECONDS - started)) s ($(du -sh "$wheels" | cut -f1) of cached wheels)"

  # The smoke test, from outside the checkout, with only the venv on PATH; register_cpp_env gets the cross
  # compiler, which finds the root's multiarch pyconfig.h through -idirafter (a native g++ would search
  # /usr/include itself).
  started=$SECONDS
  cat >"$work/g++-$tag" <<EOF
#!/bin/sh
exec $(command -v aarch64-linux-gnu-g++) -idirafter "$root/usr/include" "\$@"
EOF
  chmod +x "$work/g++-$tag"
  (cd "$work" && env -i HOME="$HOME" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" PATH="$venv/bin" QEMU_LD_PREFIX="$root" \
    QEMU_CPU="$QEMU_CPU" "$venv/bin/python" "$work/wheel_smoke.py" --cxx "$work/g++-$tag" --header "$work/my_cartpole.h")
  say "$tag: smoke test passed in $((SECONDS - started)) s"

  if [ "${AARCH64_PARITY:-1}" = 1 ]; then
    started=$SECONDS
    x86_venv=$work/x86-venv-$tag
    "$host_python" -m venv "$x86_venv"
    "$x86_venv/bin/pip" install -q --disable-pip-version-check "torch==${TORCH[$version]}" \
      "$(ls "$work"/dist-x86_64/torchpool-*-"$tag"-*.whl)[mujoco,atari]" 2>&1 | grep -v '^WARNING: Location' || true
    "$x86_venv/bin/pip" install -q --disable-pip-version-check --no-deps dm_control==1.0.50 2>&1 | grep -v '^WARNING: Location' || true
    (cd "$work" && "$x86_venv/bin/python" aarch64_parity.py dump "$work/x86_64-$tag.npz")
    (cd "$work" && env -i HOME="$HOME" LANG=C.UTF-8 PATH="$venv/bin" QEMU_LD_PREFIX="$root" QEMU_CPU="$QEMU_CPU" \
      "$venv/bin/python" aarch64_parity.py dump "$work/aarch64-$tag.npz")
    set +e
    "$x86_venv/bin/python" "$work/aarch64_parity.py" compare "$work/x86_64-$tag.npz" "$work/aarch64-$tag.npz" \
      | tee "$work/parity-$tag.txt"
    compared=${PIPESTATUS[0]}
    set -e
    say "$tag: parity checked in $((SECONDS - started)) s"
    if [ "$compared" = 2 ]; then
      echo "aarch64_check: $tag: the two dumps are not comparable (above)" >&2; status=1
    fi
    # Classic control, Atari and MiniGrid are our own code with contraction off: they must be bit for bit.
    # MuJoCo and the Control Suite run libmujoco, which the mujoco wheels build per architecture (docs/wheels.md).
    if grep -E '^(classic|atari|minigrid) +[0-9]+ of' "$work/parity-$tag.txt"; then
      echo "aarch64_check: $tag: a family that must be bit for bit differs (above)" >&2; status=1
    fi
  fi
done
say "done in $((SECONDS - started_all)) s"
exit $status
