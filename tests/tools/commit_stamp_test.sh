#!/usr/bin/env bash
# tests/tools/commit_stamp_test.sh — tools/kafkasim/commit_stamp.cmake, which stamps the build's
# commit into the header kafkasim prints it from, run on scratch checkouts: the commit of HEAD,
# "-dirty" once a tracked file differs from it (an untracked one does not count), "unknown"
# outside git, a header left untouched when the stamp has not changed, and a clear error
# without its arguments.
#
# Usage: tests/tools/commit_stamp_test.sh   (CMAKE=/path/to/cmake to choose the cmake)
# Prints PASS/FAIL per case; exits 1 if any case failed, 77 (skipped) without git.
set -uo pipefail

if ! command -v git > /dev/null; then
  echo "SKIP: no git here to make scratch checkouts with"
  exit 77
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
script=$root/tools/kafkasim/commit_stamp.cmake
cmake=${CMAKE:-cmake}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Never look above the scratch folder for a repository (a TMPDIR inside a checkout).
export GIT_CEILING_DIRECTORIES=$scratch
failed=0

check() {  # check NAME WANT GOT
  if [ "$2" == "$3" ]; then
    echo "PASS $1"
  else
    echo "FAIL $1: expected '$2', got '$3'"
    failed=1
  fi
}

stamp() {  # stamp SOURCE_DIR OUT: the commit the header defines
  "$cmake" -DSOURCE_DIR="$1" -DOUT="$2" -P "$script" || return 1
  sed -n 's/^#define KAFKASIM_COMMIT "\(.*\)"$/\1/p' "$2"
}

repo=$scratch/repo
mkdir -p "$repo"
git -C "$repo" init -q
echo one > "$repo/file"
git -C "$repo" add file
git -C "$repo" -c user.name=test -c user.email=test@example.com commit -q -m first
head=$(git -C "$repo" rev-parse --short=12 HEAD)

check "a clean checkout: its commit" "$head" "$(stamp "$repo" "$scratch/h1.h")"

echo untracked > "$repo/other"
check "an untracked file does not count" "$head" "$(stamp "$repo" "$scratch/h1.h")"

# The header is rewritten only when the stamp changes (so nothing recompiles).
touch -d '2000-01-01 00:00:00' "$scratch/h1.h"
stamp "$repo" "$scratch/h1.h" > /dev/null
check "an unchanged stamp leaves the header alone" "946684800" "$(date -u -r "$scratch/h1.h" +%s)"

echo two > "$repo/file"
check "a changed tracked file: -dirty" "$head-dirty" "$(stamp "$repo" "$scratch/h1.h")"
check "a changed stamp rewrites the header" "1" "$([ "$(date -u -r "$scratch/h1.h" +%s)" != 946684800 ] && echo 1)"

git -C "$repo" -c user.name=test -c user.email=test@example.com commit -q -am second
check "a new commit: its commit" "$(git -C "$repo" rev-parse --short=12 HEAD)" "$(stamp "$repo" "$scratch/h1.h")"

mkdir -p "$scratch/plain"
check "outside git: unknown" "unknown" "$(stamp "$scratch/plain" "$scratch/h2.h")"

if output=$("$cmake" -P "$script" 2>&1); then
  echo "FAIL no arguments: exit 0"
  failed=1
elif [[ $output != *"needs -DSOURCE_DIR"* ]]; then
  echo "FAIL no arguments: output lacks the usage: $output"
  failed=1
else
  echo "PASS no arguments: refused"
fi

exit $failed
