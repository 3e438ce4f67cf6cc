#include "sim/random.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <cmath>
#include <set>

namespace sim {
namespace {

TEST(Random, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

// Pinned values: a change here changes every seeded run, so it must be
// deliberate. The first three match the reference xoshiro256** seeded from
// splitmix64(0); the rest pin our own fork, range reduction and exponential.
TEST(Random, SequenceIsPinned) {
  Rng r(0);
  EXPECT_EQ(r.next_u64(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(r.next_u64(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(r.next_u64(), 0x1a5f849d4933e6e0ULL);
  EXPECT_EQ(Rng(42).fork("network").next_u64(), 0xab6e106dfcd0d41fULL);
  Rng u(7);
  EXPECT_EQ(u.uniform(0, 1'000'000), 700'577);
  EXPECT_EQ(u.exponential(Duration::millis(10)).us(), 3'268);
  EXPECT_EQ(mix64(0), 0xe220a8397b1dcdafULL);  // splitmix64's first output for seed 0
  EXPECT_EQ(hash_name(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(hash_name("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(Random, ForkDependsOnlyOnKeyAndName) {
  Rng root(7);
  Rng before = root.fork("network");
  for (int i = 0; i < 100; ++i) root.next_u64();  // drawing from the root ...
  Rng after = root.fork("network");               // ... does not move its children
  EXPECT_EQ(before.next_u64(), after.next_u64());
  EXPECT_NE(root.fork("network").next_u64(), root.fork("disk").next_u64());
  EXPECT_NE(Rng(7).fork("x").key(), Rng(8).fork("x").key());
  // Nested forks are distinct from flat ones.
  EXPECT_NE(root.fork("a").fork("b").key(), root.fork("b").fork("a").key());
}

TEST(Random, BelowStaysInRangeAndCoversIt) {
  Rng r(1);
  std::array<int, 7> counts{};
  for (int i = 0; i < 70'000; ++i) {
    const uint64_t v = r.below(7);
    ASSERT_LT(v, 7u);
    ++counts[v];
  }
  for (int c : counts) {
    EXPECT_GT(c, 9'000);  // expected 10'000 each; 10 sigma is ~900
    EXPECT_LT(c, 11'000);
  }
}

TEST(Random, UniformIsInclusiveAndHandlesExtremes) {
  Rng r(2);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = r.uniform(-2, 2);
    ASSERT_GE(v, -2);
    ASSERT_LE(v, 2);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(r.uniform(5, 5), 5);
  // The full int64 range must not overflow the span computation.
  (void)r.uniform(INT64_MIN, INT64_MAX);
  EXPECT_THROW(r.uniform(3, 2), InvariantViolation);
  EXPECT_THROW(r.below(0), InvariantViolation);
}

TEST(Random, ChanceMatchesItsOdds) {
  Rng r(3);
  int hits = 0;
  for (int i = 0; i < 100'000; ++i) hits += r.chance(1, 4) ? 1 : 0;
  EXPECT_NEAR(hits, 25'000, 700);
  EXPECT_FALSE(r.chance(0, 5));
  EXPECT_TRUE(r.chance(5, 5));
  EXPECT_THROW(r.chance(6, 5), InvariantViolation);
}

TEST(Random, ExponentialHasItsMean) {
  Rng r(4);
  const Duration mean = Duration::millis(10);
  int64_t total = 0;
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    const Duration d = r.exponential(mean);
    ASSERT_GE(d, Duration::zero());
    total += d.us();
  }
  EXPECT_NEAR(static_cast<double>(total) / n, 10'000.0, 150.0);
}

TEST(Random, NormalishHasItsMeanAndSpread) {
  Rng r(5);
  const int n = 100'000;
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double v = static_cast<double>(r.normalish(Duration::millis(50), Duration::millis(5)).us());
    sum += v;
    sum_sq += v * v;
    ASSERT_GE(v, 50'000 - 6 * 5'000);
    ASSERT_LE(v, 50'000 + 6 * 5'000);
  }
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_NEAR(mean, 50'000, 100);
  EXPECT_NEAR(stddev, 5'000, 100);
}

TEST(Random, PortableLogMatchesTheLibrary) {
  for (double x : {1e-300, 1e-9, 0.001, 0.3, 0.5, 0.70710678, 1.0, 1.5, 2.0, 10.0, 12345.678}) {
    EXPECT_NEAR(portable_log(x), std::log(x), 1e-13 * (1 + std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_THROW(portable_log(0.0), InvariantViolation);
  EXPECT_THROW(portable_log(-1.0), InvariantViolation);
}

TEST(Random, ShuffleIsAPermutationAndSeeded) {
  std::vector<int> a(50), b(50);
  for (int i = 0; i < 50; ++i) a[i] = b[i] = i;
  Rng r1(9), r2(9);
  r1.shuffle(a);
  r2.shuffle(b);
  EXPECT_EQ(a, b);
  std::vector<int> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  std::vector<int> identity(50);
  for (int i = 0; i < 50; ++i) identity[i] = i;
  EXPECT_NE(a, identity);
}

RC_GTEST_PROP(RandomProperty, UniformWithinBounds, (uint64_t seed, int32_t lo, uint32_t width)) {
  Rng r(seed);
  const int64_t hi = int64_t{lo} + width;
  for (int i = 0; i < 20; ++i) {
    const int64_t v = r.uniform(lo, hi);
    RC_ASSERT(v >= lo);
    RC_ASSERT(v <= hi);
  }
}

RC_GTEST_PROP(RandomProperty, ForkIsPure, (uint64_t seed, std::string name, uint8_t draws)) {
  Rng root(seed);
  const uint64_t first = root.fork(name).next_u64();
  for (int i = 0; i < draws; ++i) root.next_u64();
  RC_ASSERT(root.fork(name).next_u64() == first);
}

}  // namespace
}  // namespace sim
