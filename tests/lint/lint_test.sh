#!/usr/bin/env bash
# tests/lint/lint_test.sh — proves that tools/lint catches each rule family and leaves alone
# what it must (comments, look-alike identifiers, well-formed opt-outs).
#
# Usage: tests/lint/lint_test.sh [--list] [CASE...]     (no CASE: run every case)
#
# Each case writes a small tree under a temporary directory and runs `tools/lint --root` on
# it. CMake registers every case as its own ctest test `lint.CASE` (see tests/CMakeLists.txt).
# Prints PASS/FAIL per case, then `lint_test: N passed, M failed`; exits 1 if any case failed.
set -uo pipefail  # no -e: a case's failure is reported, not fatal to the other cases

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lint=$root/tools/lint

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# --- helpers -------------------------------------------------------------------------------
# Every helper leaves its explanation in $why when it fails.
why=""
output=""
status=0

run_lint() { # args… → $output, $status
  output=$("$lint" "$@" 2>&1)
  status=$?
}

# Makes a new tree with empty sim/ and model/, writes the given files into it, prints its path.
# Arguments come in pairs: PATH CONTENT (CONTENT may hold several lines).
make_tree() {
  local tree
  tree=$(mktemp -d "$scratch/tree.XXXXXX")
  mkdir -p "$tree/sim" "$tree/model"
  while (($# >= 2)); do
    mkdir -p "$(dirname "$tree/$1")"
    printf '%s\n' "$2" >"$tree/$1"
    shift 2
  done
  echo "$tree"
}

# expect_violation RULE PATH CONTENT: the lint exits 1 and reports RULE at PATH.
expect_violation() {
  local rule=$1 path=$2 content=$3 tree
  tree=$(make_tree "$path" "$content")
  run_lint --root "$tree"
  if ((status != 1)); then
    why="expected exit 1, got $status"
    return 1
  fi
  # The report line must name both the file (relative to the root) and the rule.
  if ! grep -qE "^${path//./\\.}:[0-9]+: ${rule}: " <<<"$output"; then
    why="no '$path:LINE: $rule:' line in the report"
    return 1
  fi
}

# expect_clean PATH CONTENT: the lint exits 0.
expect_clean() {
  local tree
  tree=$(make_tree "$1" "$2")
  run_lint --root "$tree"
  if ((status != 0)); then
    why="expected exit 0, got $status"
    return 1
  fi
}

# --- cases: every function named case_* is one ---------------------------------------------

# (a) The real tree passes, with the root found from the script's own location.
case_real_tree() {
  output=$(cd / && "$lint" 2>&1)
  status=$?
  if ((status != 0)); then
    why="tools/lint on the repository exited $status"
    return 1
  fi
}

# (b) A wall clock in sim/.
case_wall_clock_steady() {
  expect_violation wall-clock sim/bad.cc \
    'auto now() { return std::chrono::steady_clock::now(); }'
}
case_wall_clock_system_in_model() {
  expect_violation wall-clock model/zk/session.h \
    'inline auto stamp = std::chrono::system_clock::now();'
}
case_wall_clock_time_null() {
  expect_violation wall-clock sim/bad.cc 'long t = time(nullptr);'
}
case_wall_clock_clock() {
  expect_violation wall-clock sim/bad.cc 'auto ticks = clock();'
}

# (c) One case per other rule family.
case_random_device() {
  expect_violation random-device sim/bad.cc 'std::random_device entropy;'
}
case_rand() {
  expect_violation rand sim/bad.cc 'int die() { return rand() % 6; }'
}
case_srand() {
  expect_violation rand model/bad.cc 'void seed() { std::srand(42); }'
}
case_std_distribution() {
  expect_violation std-distribution sim/bad.cc 'std::uniform_int_distribution<int> pick(0, 9);'
}
case_shuffle() {
  expect_violation shuffle sim/bad.cc 'void mix(V& v, G& g) { std::shuffle(v.begin(), v.end(), g); }'
}
case_thread() {
  expect_violation thread sim/bad.cc 'std::thread worker([] {});'
}
case_thread_include_future() {
  expect_violation thread model/bad.h '#include <future>'
}
case_include_random() {
  expect_violation include-random sim/bad.h '#include <random>'
}
case_getenv() {
  expect_violation getenv model/bad.cc 'const char* home = std::getenv("HOME");'
}
case_layering_model_include() {
  expect_violation layering sim/network.cc '#include "model/broker.h"'
}
case_layering_kafka_include() {
  expect_violation layering sim/disk.h '#include "kafka/log.h"'
}

# (d) Whole-line comments may mention banned names.
case_comment_ok() {
  expect_clean sim/time.h "$(printf '%s\n' \
    '// Virtual time only: never steady_clock or system_clock, never std::thread.' \
    '    /// rand() and std::random_device are banned too.' \
    'int64_t micros = 0;')"
}

# (e) Identifiers that merely contain a banned word.
case_identifier_ok() {
  expect_clean sim/expr.cc "$(printf '%s\n' \
    'int operand(int x);' \
    'int brand(int x);' \
    'Duration runtime(0);' \
    'auto t = env.clock();' \
    'std::vector<int> latency_distribution;' \
    'std::clock_t unused_type_name;')"
}

# model/ may include model/ headers; only sim/ is kept free of them.
case_layering_model_to_model_ok() {
  expect_clean model/kafka/broker.cc '#include "model/zk/client.h"'
}

# (f) A well-formed opt-out silences its rule.
case_allow_ok() {
  expect_clean sim/progress.cc \
    'auto t = std::chrono::steady_clock::now();  // lint:allow wall-clock — progress bar only'
}

# An opt-out without a reason does not count.
case_allow_without_reason_fails() {
  expect_violation wall-clock sim/bad.cc \
    'auto t = std::chrono::steady_clock::now();  // lint:allow wall-clock'
}

# An opt-out naming another rule does not silence this one.
case_allow_wrong_rule_fails() {
  expect_violation wall-clock sim/bad.cc \
    'auto t = std::chrono::steady_clock::now();  // lint:allow getenv — wrong rule'
}

# An opt-out on a line where its rule does not fire is stale.
case_allow_stale_fails() {
  expect_violation bad-allow sim/bad.cc 'int x = 1;  // lint:allow rand — nothing here'
}

# The layering rule cannot be opted out of.
case_allow_layering_refused() {
  expect_violation layering sim/bad.cc '#include "model/broker.h"  // lint:allow layering — please'
}

# Usage errors exit 2.
case_usage_errors() {
  run_lint --no-such-flag
  if ((status != 2)); then
    why="unknown flag: expected exit 2, got $status"
    return 1
  fi
  run_lint --root "$scratch/does-not-exist"
  if ((status != 2)); then
    why="missing root: expected exit 2, got $status"
    return 1
  fi
}

# --- runner --------------------------------------------------------------------------------
mapfile -t all_cases < <(declare -F | awk '{print $3}' | grep '^case_' | sed 's/^case_//')

if [[ ${1-} == --list ]]; then
  printf '%s\n' "${all_cases[@]}"
  exit 0
fi
selected=("$@")
((${#selected[@]} > 0)) || selected=("${all_cases[@]}")

passed=0
failed=0
for name in "${selected[@]}"; do
  if ! declare -F "case_$name" >/dev/null; then
    echo "lint_test: no such case: $name (see --list)" >&2
    exit 2
  fi
  why=""
  output=""
  if "case_$name"; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $why"
    # Show what the lint said, indented under the FAIL line.
    if [[ -n $output ]]; then
      while IFS= read -r line; do echo "    | $line"; done <<<"$output"
    fi
    failed=$((failed + 1))
  fi
done
echo "lint_test: $passed passed, $failed failed"
((failed == 0))
