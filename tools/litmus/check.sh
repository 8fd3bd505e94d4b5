#!/usr/bin/env bash
# Runs the litmus tests of the core's waits (docs/memory_ordering.md) through herd7 and checks each
# outcome against what the review expects: "Never" where torchpool relies on it, "Sometimes" for the
# shapes the code no longer has (kept to show the model tells the two apart).
#
#   HERD=/path/to/herd7 HERD_LIBDIR=/path/to/herdtools7/herd/libdir tools/litmus/check.sh
#
# C tests run under RC11 (the C++ memory model as repaired by Lahav et al.), AArch64 ones under
# herd's aarch64.cat (Arm's official model). herd7 is not packaged for Debian 12 nor on PyPI: the
# review built herdtools7 7.58 from source (docs/memory_ordering.md says how).
set -euo pipefail
cd "$(dirname "$0")"
: "${HERD:?set HERD to herd7's path}" "${HERD_LIBDIR:?set HERD_LIBDIR to herdtools7's herd/libdir}"
# file  expected observation
expected=(
  "action_queue_slot Never"
  "failures_then_rows Never"
  "fill_counter_sleep Never"
  "split_tail_handover Never"
  "sem_sleep_seq_cst_look Never"
  "sem_sleep_relaxed_look Sometimes"
  "sem_sleep_llsc_ldar Never"
  "sem_sleep_llsc_ldr Sometimes"
  "sem_sleep_lse_ldar Never"
  "sem_sleep_lse_ldr Never"
  "worker_doorbell_look Never"
  "worker_doorbell_request_look Sometimes"
  "parent_done_seq_cst_look Never"
  "parent_done_acquire_look Sometimes"
  "parent_done_stlr_ldar Never"
)
[[ ${#expected[@]} -eq $(ls ./*.litmus | wc -l) ]] || { echo "check.sh: a .litmus file has no expectation here" >&2; exit 1; }
failed=0
for line in "${expected[@]}"; do
  read -r name want <<<"$line"
  if head -1 "$name.litmus" | grep -q '^C '; then model=rc11.cat; else model=aarch64.cat; fi
  got=$("$HERD" -I "$HERD_LIBDIR" -model "$HERD_LIBDIR/$model" "$name.litmus" | awk '$1 == "Observation" {print $3}')
  status=ok
  [[ $got == "$want" ]] || { status=FAILED; failed=1; }
  printf '%-30s %-12s %-9s expected %-9s %s\n' "$name" "$model" "${got:-?}" "$want" "$status"
done
exit "$failed"
