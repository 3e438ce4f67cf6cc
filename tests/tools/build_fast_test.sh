#!/usr/bin/env bash
# tests/tools/build_fast_test.sh — tools/build-fast and the KAFKASIM_PGO option refuse bad
# input with a clear message before they build anything, and the script's own checks (profiles
# written, results repeated, an unchecked binary renamed) pass and fail as they must, run
# against a stand-in cmake and kafkasim. (A real build takes minutes: see tools/build-fast.)
#
# Usage: tests/tools/build_fast_test.sh
# Prints PASS/FAIL per case; exits 1 if any case failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cmake=${CMAKE:-cmake}  # ctest passes the cmake that configured the build
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
  "$cmake" -S "$root" -B "$scratch/pgo-bad" -G Ninja -DKAFKASIM_PGO=generat
expect pgo-with-sanitizers 1 "KAFKASIM_PGO and KAFKASIM_SANITIZE do not go together" \
  "$cmake" -S "$root" -B "$scratch/pgo-asan" -G Ninja -DKAFKASIM_PGO=Use -DKAFKASIM_SANITIZE=ON

# --- the script's own checks, against a stand-in cmake and kafkasim ------------------------
# A copy of tools/build-fast runs in a scratch tree whose `cmake` (first on PATH) only writes
# the cache and a fake kafkasim: the fake's sweep and runs print results tagged with the build
# stage, so the test decides whether the optimised build agrees, writes profiles or crashes.
fake=$scratch/fake
mkdir -p "$fake/bin" "$fake/tree/tools" "$fake/tree/scenarios/seeds"
cp "$root/tools/build-fast" "$fake/tree/tools/build-fast"
printf '#!/usr/bin/env bash\necho "install-deps: stand-in"\n' >"$fake/tree/tools/install-deps"
chmod +x "$fake/tree/tools/install-deps"
echo '{}' >"$fake/tree/scenarios/seeds/000_f0aa22d7ff924a8b.json"
echo '{}' >"$fake/tree/scenarios/seeds/001_other.json"
cat >"$fake/bin/cmake" <<'FAKE'
#!/usr/bin/env bash
# Stand-in: `cmake --preset P` and `cmake --build --preset P ...`, in build/fast.
set -eu
dir=build/fast
if [ "$1" = --preset ]; then
  mkdir -p "$dir"
  echo "KAFKASIM_PGO_DIR:PATH=$PWD/$dir/pgo-profile" >"$dir/CMakeCache.txt"
  echo "$2" >"$dir/stage"
  # Leftovers of an earlier training: the stale profile must go, the other file stay.
  mkdir -p "$dir/pgo-profile"
  [ "$2" != fast-train ] || touch "$dir/pgo-profile/keep.txt" "$dir/pgo-profile/old.gcda"
  exit 0
fi
mkdir -p "$dir/tools/kafkasim"
cat >"$dir/tools/kafkasim/kafkasim" <<'KAFKASIM'
#!/usr/bin/env bash
# Results tagged "same", unless FAKE_MISMATCH makes the optimised build say otherwise.
stage=$(cat build/fast/stage)
tag=same
if [ "$stage" = fast ] && [ -n "${FAKE_MISMATCH:-}" ]; then tag=other; fi
[ -z "${FAKE_CRASH:-}" ] || exit 3
# The profiling runtime of an instrumented binary may write to stderr: not a result.
[ "$stage" != fast-train ] || echo "profiling: stand-in message" >&2
if [ "$1" = sweep ]; then
  out=${@: -1}
  mkdir -p "$out"
  for i in 1 2 3 4 5 6; do echo "{\"seed\":$i,\"tag\":\"$tag\"}" >>"$out/results.jsonl"; done
  if [ "$stage" = fast-train ] && [ -z "${FAKE_NO_PROFILES:-}" ]; then
    # Enough profiles that their list fills several pipe buffers.
    seq 2000 | sed 's|.*|build/fast/pgo-profile/#x#model#CMakeFiles#kafkasim_model.dir#source_&.cc.gcda|' |
      xargs touch
  fi
else
  echo "{\"run\":\"$2\",\"tag\":\"$tag\"}"
fi
KAFKASIM
chmod +x "$dir/tools/kafkasim/kafkasim"
FAKE
chmod +x "$fake/bin/cmake"

# fake_build NAME WANT_STATUS WANT_TEXT WANT_BINARY(kept|unverified) [ENV=VALUE...]
fake_build() {
  local name=$1 want_status=$2 want_text=$3 want_binary=$4
  shift 4
  rm -rf "$fake/tree/build"
  local output status bin=$fake/tree/build/fast/tools/kafkasim/kafkasim
  output=$(cd "$fake/tree" && env PATH="$fake/bin:$PATH" "$@" tools/build-fast 2>&1)
  status=$?
  local have=none
  if [ -e "$bin" ]; then have=kept; elif [ -e "$bin.unverified" ]; then have=unverified; fi
  if [ "$status" -ne "$want_status" ] || [[ $output != *"$want_text"* ]] || [ "$have" != "$want_binary" ]; then
    echo "FAIL $name: exit $status (expected $want_status), binary $have (expected $want_binary)," \
      "expected '$want_text' in: $output"
    failed=1
  else
    echo "PASS $name"
  fi
}

fake_build agreeing-builds 0 "done: build/fast/tools/kafkasim/kafkasim" kept
if [ -e "$fake/tree/build/fast/pgo-profile/old.gcda" ] || [ ! -e "$fake/tree/build/fast/pgo-profile/keep.txt" ]; then
  echo "FAIL profile-cleanup: the training must delete old *.gcda files and nothing else"
  failed=1
else
  echo "PASS profile-cleanup"
fi
fake_build results-differ 1 "results differ: build/fast/pgo-train/instrumented/runs/001_other.json" \
  unverified FAKE_MISMATCH=1
fake_build no-profiles 1 "the training wrote no profiles of the model" unverified FAKE_NO_PROFILES=1
fake_build training-crash 1 "the training sweep failed (exit 3)" unverified FAKE_CRASH=1
exit "$failed"
