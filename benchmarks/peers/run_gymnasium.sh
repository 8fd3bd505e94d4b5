#!/usr/bin/env bash
# Gymnasium's own vector-env tests, assertions untouched, with AsyncVectorEnv swapped for torchpool's
# VectorEnv (gymnasium_plugin.py), and then as they are (Gymnasium's own baseline on the same files).
# The tests come from Gymnasium's repository (a git directory, GYMNASIUM_REPO) at the commit of the
# installed release (GYMNASIUM_COMMIT, default v1.4.0's 95a790e19: "Update to v1.4.0"; the PyPI sdist
# has no tests). Prints each run's pytest summary. TORCHPOOL_STEPS_IN=workers steps the envs in worker
# processes (default "auto": the cheap test envs step in the calling process).
#   bash benchmarks/peers/run_gymnasium.sh [--ours-only|--baseline-only] [pytest args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=${GYMNASIUM_REPO:-/work/.mirror/Farama-Foundation+Gymnasium/repo}
commit=${GYMNASIUM_COMMIT:-95a790e199c1ea7befa2fca03ac9fc42001c908d}
runs=(ours baseline)
case "${1:-}" in
  --ours-only) runs=(ours); shift ;;
  --baseline-only) runs=(baseline); shift ;;
esac
files=(tests/vector/test_vector_env.py tests/vector/test_autoreset_mode.py tests/vector/test_vector_env_info.py
       tests/vector/test_observation_mode.py)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# tests/ only (the support modules the four files import are in it: tests/spaces/utils.py, tests/testing_env.py).
# A mirror without some docs/ blobs makes git print "error: invalid object ... docs/..." and still exit 0.
git --git-dir="$repo" archive "$commit" tests | tar x -C "$work"
cd "$work"
status=0
for run in "${runs[@]}"; do
  plugin=(-p gymnasium_plugin)
  [ "$run" = baseline ] && plugin=()
  echo "== $run: ${files[*]} (Gymnasium $commit)"
  PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" python -m pytest -q -p no:cacheprovider -rs "${plugin[@]}" \
    "${files[@]}" "$@" | tail -n "${TAIL:-60}" || status=1
done
exit $status
