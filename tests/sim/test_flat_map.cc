// sim::FlatMap: the sorted-vector map behind per-message socket lookups.
#include "sim/flat_map.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace {

TEST(FlatMap, FindsInsertsAndErasesInKeyOrder) {
  sim::FlatMap<int, int> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find(3), nullptr);
  m[5] = 50;
  m[1] = 10;
  m[3] = 30;
  ASSERT_NE(m.find(3), nullptr);
  EXPECT_EQ(*m.find(3), 30);
  EXPECT_EQ(m.find(2), nullptr);
  EXPECT_EQ(m.count(2), 0u);
  EXPECT_EQ(m.count(5), 1u);
  m[3] += 1;  // an existing key is not inserted twice
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(*m.find(3), 31);
  std::vector<int> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<int>{1, 3, 5}));
  EXPECT_TRUE(m.erase(1));
  EXPECT_FALSE(m.erase(1));
  EXPECT_EQ(m.find(1), nullptr);
  EXPECT_EQ(m.size(), 2u);
  const sim::FlatMap<int, int>& view = m;
  ASSERT_NE(view.find(5), nullptr);
  EXPECT_EQ(*view.find(5), 50);
  EXPECT_EQ(view.at(5), 50);
  EXPECT_EQ(view.lower_bound(4)->first, 5);
  EXPECT_EQ(view.lower_bound(3)->first, 3);
  EXPECT_EQ(view.lower_bound(6), view.end());
  EXPECT_THROW(view.at(4), std::out_of_range);
  m.at(5) = 51;
  EXPECT_EQ(*m.find(5), 51);
}

// Any sequence of inserts, updates and erases leaves the same contents, in
// the same order, as std::map.
RC_GTEST_PROP(FlatMapProperty, BehavesAsStdMap, ()) {
  const auto steps = *rc::gen::container<std::vector<std::pair<uint8_t, int8_t>>>(
      rc::gen::pair(rc::gen::inRange<uint8_t>(0, 3), rc::gen::inRange<int8_t>(-20, 20)));
  sim::FlatMap<int, int> flat;
  std::map<int, int> reference;
  int stamp = 0;
  for (const auto& [what, key] : steps) {
    ++stamp;
    if (what == 0) {
      flat[key] = stamp;
      reference[key] = stamp;
    } else if (what == 1) {
      RC_ASSERT(flat.erase(key) == (reference.erase(key) == 1));
    } else {
      const int* found = flat.find(key);
      const auto it = reference.find(key);
      RC_ASSERT((found == nullptr) == (it == reference.end()));
      if (found != nullptr) RC_ASSERT(*found == it->second);
    }
  }
  using Entries = std::vector<std::pair<int, int>>;
  RC_ASSERT((Entries(flat.begin(), flat.end()) == Entries(reference.begin(), reference.end())));
}

}  // namespace
