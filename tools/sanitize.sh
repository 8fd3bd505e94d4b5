#!/usr/bin/env bash
# Builds the extension and the C++ tests with sanitizers and runs them with a
# Python stress subset (every family, sync and async, random subsets,
# interrupts, env failures, close with work in flight).
#
#   tools/sanitize.sh address   # AddressSanitizer + UndefinedBehaviorSanitizer
#   tools/sanitize.sh thread    # ThreadSanitizer
#
# Uses its own venv (.venv-san, made on first use) so that the sanitized
# extension is imported instead of an editable install's. Reports land in
# build/san-<mode>/reports/; the script exits non-zero if a sanitizer reported.
# Findings and timings: docs/sanitizers.md.
set -euo pipefail
mode="${1:?usage: tools/sanitize.sh address|thread}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
case "$mode" in
  address) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
           runtime="$(g++ -print-file-name=libasan.so)" ;;
  thread)  flags="-fsanitize=thread -fno-omit-frame-pointer"
           runtime="$(g++ -print-file-name=libtsan.so)" ;;
  *) echo "mode must be address or thread" >&2; exit 2 ;;
esac
# libstdc++ preloaded too: the interpreter does not link it, and without it the
# runtime's __cxa_throw interceptor finds nothing to forward to at the first throw.
runtime="$runtime:$(g++ -print-file-name=libstdc++.so)"
build="$root/build/san-$mode"
reports="$build/reports"
mkdir -p "$build" "$reports"
rm -f "$reports"/*

if [ ! -x .venv-san/bin/python ]; then
  python3 -m venv .venv-san
  .venv-san/bin/pip install -q torch==2.13.0
  .venv-san/bin/pip install -q "numpy>=1.24" "tensordict>=0.6" "gymnasium>=1.0" "tqdm>=4.60" "mujoco==4.0.0" \
    "ale-py==0.12.0" "pytest>=8" "hypothesis>=6.100" "torchrl>=0.14" "pybind11>=2.12"
fi
python=.venv-san/bin/python

echo "== build ($mode)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython_EXECUTABLE="$root/$python" \
  -Dpybind11_DIR="$($python -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -DCMAKE_CXX_FLAGS="" -DTORCHPOOL_SANITIZE="$mode" > "$build/configure.log"
ninja -C "$build" > "$build/build.log"

# The package: the checkout's Python files and the sanitized extension.
package="$build/package"
rm -rf "$package" && mkdir -p "$package"
cp -r torchpool "$package/"
rm -rf "$package/torchpool/__pycache__"
cp "$build"/_*.so "$package/torchpool/"

export PYTHONPATH="$package"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
export TSAN_OPTIONS="halt_on_error=0:report_signal_unsafe=0:second_deadlock_stack=1:die_after_fork=0:log_path=$reports/tsan"
launch=()
deselect="cpp_queue"  # run above, sanitized
export TORCHPOOL_TEST_SLOWDOWN=3  # interrupt tests: longer runs and gaps for the slower envs
if [ "$mode" = thread ]; then
  export TORCHPOOL_TEST_SLOWDOWN=10
  launch=(setarch "$(uname -m)" -R)  # TSan needs the classic memory layout
  # TSan cannot follow fork() out of a threaded process ("dup thread with used id"): fork tests run under ASan.
  deselect="$deselect or fork"
fi

echo "== C++ tests"
g++ -O1 -g -std=c++20 $flags -pthread -I csrc tests/cpp/action_queue_stress.cpp -o "$build/action_queue_stress"
"${launch[@]}" "$build/action_queue_stress" 5 6
for test in tests/cpp/*_test.cpp; do
  [ -e "$test" ] || continue
  g++ -O1 -g -std=c++20 $flags -pthread -I csrc "$test" -o "$build/$(basename "$test" .cpp)"
  "${launch[@]}" "$build/$(basename "$test" .cpp)"
done

echo "== Python stress subset"
cd "$build"  # not the checkout: its torchpool/ has no extension
start=$(date +%s)
status=0
LD_PRELOAD="$runtime" "${launch[@]}" "$root/$python" -m pytest -q -p no:cacheprovider -o addopts= \
  "$root/tests/test_env_failures.py" "$root/tests/test_action_queue.py" "$root/tests/test_fork_and_threads.py" \
  "$root/tests/test_shutdown.py" "$root/tests/test_determinism_threads.py" "$root/tests/test_interrupts.py" \
  "$root/tests/test_fuzz.py" "$root/tests/test_moved_storage.py" "$root/tests/test_named_fields.py" \
  -k "not ($deselect)" > "$build/pytest.log" 2>&1 || status=1
tail -3 "$build/pytest.log"
LD_PRELOAD="$runtime" "${launch[@]}" "$root/$python" "$root/benchmarks/soak.py" --seconds 60 --cycles 100 \
  --no-progress --out "$build/soak.json" > /dev/null 2>&1 || status=1
grep -E '"(ok|rows_checked|interrupts|env_failures)"' "$build/soak.json" || true
echo "Python subset: $(( $(date +%s) - start )) s"

# Reports from our code only (the uninstrumented interpreter and torch produce none).
found=$(cat "$reports"/* 2>/dev/null | grep -cE "^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY)|runtime error:" || true)
echo "== $found sanitizer reports in $reports; tests and soak: $([ $status -eq 0 ] && echo passed || echo FAILED)"
[ "$found" -eq 0 ] && [ "$status" -eq 0 ]
