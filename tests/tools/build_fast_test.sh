#!/usr/bin/env bash
# tests/tools/build_fast_test.sh — tools/build-fast and the KAFKASIM_PGO option refuse bad
# input with a clear message before they build anything. (The build itself takes minutes and
# checks its own result: see the header of tools/build-fast.)
#
# Usage: tests/tools/build_fast_test.sh
# Prints PASS/FAIL per case; exits 1 if any case failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0

# expect NAME WANT_STATUS WANT_TEXT COMMAND...
expect() {
  local name=$1 want_status=$2 want_text=$3
  shift 3
  local output status
  output=$("$@" 2>&1)
  status=$?
  if [ "$status" -ne "$want_status" ]; then
    echo "FAIL $name: exit $status, expected $want_status; output: $output"
    failed=1
  elif [[ $output != *"$want_text"* ]]; then
    echo "FAIL $name: output lacks '$want_text': $output"
    failed=1
  else
    echo "PASS $name"
  fi
}

expect unknown-argument 2 "unknown argument: --fast" "$root/tools/build-fast" --fast
expect seeds-not-a-number 2 "expected a whole number from 1 to 9999, got 'ten'" \
  "$root/tools/build-fast" --train-seeds ten
expect seeds-zero 2 "got '0'" "$root/tools/build-fast" --train-seeds=0
expect seeds-missing 2 "usage: tools/build-fast" "$root/tools/build-fast" --train-seeds
expect help 0 "usage: tools/build-fast" "$root/tools/build-fast" --help
expect pgo-stage-misspelt 1 "KAFKASIM_PGO is 'generat'; expected OFF, generate or use" \
  cmake -S "$root" -B "$scratch/pgo-bad" -G Ninja -DKAFKASIM_PGO=generat
expect pgo-with-sanitizers 1 "KAFKASIM_PGO and KAFKASIM_SANITIZE do not go together" \
  cmake -S "$root" -B "$scratch/pgo-asan" -G Ninja -DKAFKASIM_PGO=use -DKAFKASIM_SANITIZE=ON
exit "$failed"
