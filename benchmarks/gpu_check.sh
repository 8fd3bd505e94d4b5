#!/usr/bin/env bash
# One prepared run on a CUDA machine (the device tool), results under $1:
#   build, pytest -m cuda, the CUDA checks of the trust issue, the GPU stream
#   benchmark, and Pong trained on the GPU. Fits in 10 minutes; every step has
#   its own timeout and a failed step does not stop the next.
#
#   bash benchmarks/gpu_check.sh "$OUT"
set -uo pipefail
out="${1:?usage: benchmarks/gpu_check.sh OUT_DIR}"
mkdir -p "$out"
cd "$(dirname "$0")/.."
exec > >(tee "$out/gpu_check.log") 2>&1

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s)"
  local start=$(date +%s)
  timeout "$limit" "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  echo "   rc=$rc in $(( $(date +%s) - start ))s"; tail -5 "$out/$name.txt"
}

{ nvidia-smi; nproc; free -g; python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())"; } \
  > "$out/machine.txt" 2>&1
step build 300 python3 -m pip install --no-build-isolation -e ".[test]"
step pytest_cuda 120 python3 -m pytest -q -m cuda -p no:cacheprovider
step pytest_trust 120 python3 -m pytest -q -p no:cacheprovider tests/test_pin_memory.py tests/test_cpus.py \
  tests/test_determinism_threads.py tests/test_fork_and_threads.py
step gpu_stream 120 python3 benchmarks/gpu_stream.py --out "$out/gpu_stream.json"
# The issue's line: the default recipe with --device cuda, 18 within 3 minutes; the run stops at 18.
step train_pong_cuda 240 python3 -m torchpool train Pong-v5 --device cuda --max-seconds 200 --out-dir "$out/pong_cuda"
echo "== done"
