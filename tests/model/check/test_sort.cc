// check::sort_runs (model/check/sort.h) sorts exactly as std::sort does,
// whatever the shape of its input: one run, a few long runs (merged), many
// short runs (handed to std::sort), interleaved sequences, repeats.
#include "model/check/sort.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace {

using check::sort_runs;

std::vector<std::pair<uint32_t, int64_t>> sorted_copy(std::vector<std::pair<uint32_t, int64_t>> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(SortRuns, HandlesTheShapesOfAHistory) {
  using V = std::vector<std::pair<uint32_t, int64_t>>;
  std::vector<V> cases;
  cases.push_back({});
  cases.push_back({{1, 1}});
  V ascending, two_interleaved, concatenated, descending, few_swaps;
  for (int64_t i = 0; i < 1000; ++i) {
    ascending.emplace_back(0, i);
    two_interleaved.emplace_back(static_cast<uint32_t>(i % 2), i);  // many runs: std::sort
    descending.emplace_back(0, 1000 - i);
    few_swaps.emplace_back(0, i % 100 == 99 ? i - 50 : i);  // ten runs: merged
  }
  for (int64_t part = 0; part < 3; ++part) {
    for (int64_t i = 0; i < 300; ++i) concatenated.emplace_back(0, i * 3 + part);  // three runs
  }
  for (const V* v : {&ascending, &two_interleaved, &concatenated, &descending, &few_swaps}) cases.push_back(*v);
  for (V v : cases) {
    const V want = sorted_copy(v);
    sort_runs(v);
    EXPECT_EQ(v, want);
  }
  // A stretch of a vector, the rest untouched.
  V part = {{9, 9}, {0, 3}, {0, 1}, {0, 2}, {9, 0}};
  sort_runs(part.begin() + 1, part.begin() + 4);
  EXPECT_EQ(part, (V{{9, 9}, {0, 1}, {0, 2}, {0, 3}, {9, 0}}));
}

RC_GTEST_PROP(SortRunsProperty, SortsAsStdSortDoes, ()) {
  // Runs of random lengths with random starts: anywhere from one run to
  // one per element, with repeats.
  const auto runs = *rc::gen::container<std::vector<std::pair<uint8_t, int8_t>>>(
      rc::gen::pair(rc::gen::inRange<uint8_t>(1, 80), rc::gen::arbitrary<int8_t>()));
  std::vector<std::pair<uint32_t, int64_t>> v;
  for (const auto& [length, start] : runs) {
    for (uint8_t i = 0; i < length; ++i) v.emplace_back(0, int64_t{start} + i / 2);
  }
  const auto want = sorted_copy(v);
  sort_runs(v);
  RC_ASSERT(v == want);
}

}  // namespace
