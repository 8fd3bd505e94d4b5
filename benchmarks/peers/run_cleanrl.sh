#!/usr/bin/env bash
# CleanRL's EnvPool scripts, unchanged, on torchpool.envpool_compat under the gym CleanRL declares for them
# (gym==0.23.1, its pyproject.toml; EnvPool pinned >=0.6.4,<0.7, the legacy 4-tuple API). `import envpool`
# is the drop-in through cleanrl_shim/envpool.py; with --baseline it is the installed EnvPool instead.
# The scripts come from CleanRL's repository: a git directory given as CLEANRL_REPO (the search tool's
# `fetch github:vwxyzjn/cleanrl` makes one), at CLEANRL_COMMIT (default HEAD). gym 0.23.1 and tyro 0.5.10
# (CleanRL's lock) are installed once under .legacy-gym/ (gitignored), first on PYTHONPATH. Each script runs
# on the CPU through its own flags (CleanRL's tests/test_envpool.py's, made smaller); prints a table with the
# episodes each logged (its `episodic_return=` lines: Breakout games end within 2048 steps, the others' not).
#   bash benchmarks/peers/run_cleanrl.sh [--baseline] [script names...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
repo=${CLEANRL_REPO:-/work/.mirror/vwxyzjn+cleanrl/repo}
commit=${CLEANRL_COMMIT:-HEAD}
cache=$root/.legacy-gym
baseline=0
if [ "${1:-}" = "--baseline" ]; then baseline=1; shift; fi

# script -> its flags. The jax ones run only where jax, flax and optax import.
declare -A flags=(
  [ppo_atari_envpool]="--num-envs 8 --num-steps 128 --update-epochs 1 --total-timesteps 2048"  # games end
  [ppo_rnd_envpool]="--num-envs 8 --num-steps 16 --update-epochs 1 --num-iterations-obs-norm-init 1 --total-timesteps 256"
  [pqn_atari_envpool]="--num-envs 8 --num-steps 16 --update-epochs 1 --total-timesteps 256"
  [pqn_atari_envpool_lstm]="--num-envs 8 --num-steps 16 --update-epochs 1 --total-timesteps 256"
  [ppo_atari_envpool_xla_jax]="--num-envs 8 --num-steps 6 --update-epochs 1 --num-minibatches 1 --total-timesteps 256"
  [ppo_atari_envpool_xla_jax_scan]="--num-envs 8 --num-steps 6 --update-epochs 1 --num-minibatches 1 --total-timesteps 256"
)
jax_scripts=" ppo_atari_envpool_xla_jax ppo_atari_envpool_xla_jax_scan "
scripts=("$@")
if [ ${#scripts[@]} = 0 ]; then
  scripts=(ppo_atari_envpool ppo_rnd_envpool pqn_atari_envpool pqn_atari_envpool_lstm ppo_atari_envpool_xla_jax
           ppo_atari_envpool_xla_jax_scan)
fi

# install_once DIR ARGS...: pip-installs ARGS into $cache/DIR once (into a fresh folder, moved into place whole).
install_once() {
  local dest=$cache/$1; shift
  [ -d "$dest" ] && return 0
  mkdir -p "$cache"
  local fresh; fresh=$(mktemp -d "$dest.XXXX")
  python -m pip install -q --disable-pip-version-check --target "$fresh" "$@" || { rm -rf "$fresh"; return 1; }
  mv -T "$fresh" "$dest" 2>/dev/null || rm -rf "$fresh"  # another run got there first
}
install_once gym-0.23.1 --no-deps gym==0.23.1 || { echo "cannot install gym==0.23.1" >&2; exit 2; }
install_once cleanrl-deps tyro==0.5.10 || { echo "cannot install tyro==0.5.10" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git --git-dir="$repo" archive "$commit" $(printf 'cleanrl/%s.py ' "${scripts[@]}") | tar x -C "$work" || exit 2
path=$cache/gym-0.23.1:$cache/cleanrl-deps
[ "$baseline" = 0 ] && path=$here/cleanrl_shim:$path
export PYTHONPATH=$path${PYTHONPATH:+:$PYTHONPATH}
cd "$work/cleanrl"
envpool=$(python -c 'import envpool, gym; assert gym.__version__ == "0.23.1", gym.__version__
print(envpool.__name__, getattr(envpool, "__version__", "?"), "| gym", gym.__version__)' 2>/dev/null) || {
  echo "envpool or gym 0.23.1 does not import with PYTHONPATH=$PYTHONPATH" >&2; exit 2; }
echo "CleanRL $(git --git-dir="$repo" rev-parse --short "$commit"), envpool = $envpool, $(nproc) CPUs"
printf '%-34s %-8s %8s %9s\n' script result wall_s episodes
failed=0
for script in "${scripts[@]}"; do
  if [[ $jax_scripts == *" $script "* ]] && ! python -c 'import jax, flax, optax' 2>/dev/null; then
    printf '%-34s %-8s %8s\n' "$script" skipped "(no jax)"; continue
  fi
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # the flags are words
  python "$script.py" --no-cuda ${flags[$script]} >"$script.log" 2>&1
  status=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  if [ $status = 0 ]; then result=pass; else result=FAIL; failed=$((failed + 1)); fi
  printf '%-34s %-8s %8.1f %9d\n' "$script" "$result" "$wall" "$(grep -c 'episodic_return=' "$script.log")"
  [ $status = 0 ] || { grep -v '^Gym has\|^Please upgrade\|^Users of\|^See the migration' "$script.log" | tail -15 \
                         | sed 's/^/    /'; }
done
exit $((failed > 0))
