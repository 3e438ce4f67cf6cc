// TopicPartition's hand-written comparison must order exactly as comparing
// (topic as std::string, partition) does: maps keyed by it are iterated on
// paths that change state, so a different order would change every trace.
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "model/kafka/types.h"

namespace kafka {
namespace {

int sign(std::strong_ordering o) { return o < 0 ? -1 : o > 0 ? 1 : 0; }

int reference(const TopicPartition& a, const TopicPartition& b) {
  const auto x = std::tie(a.topic, a.partition);
  const auto y = std::tie(b.topic, b.partition);
  return x < y ? -1 : y < x ? 1 : 0;
}

TEST(TopicPartitionOrder, MatchesStringThenPartitionOnEdgeCases) {
  const TopicPartition cases[] = {
      {"", 0},         {"", 1},          {"a", 0},          {"a", -1},         {"ab", 0},
      {"b", 0},        {"mytopic", 0},   {"mytopic", 1},    {"mytopic2", 0},   {"mytopiZ", 5},
      {"\xff", 0},     {"\x7f", 0},      {std::string("a\0b", 3), 0},          {"a", 2147483647},
      {"__consumer_offsets", 49},        {"__consumer_offsets", 7},
      // Differences inside the 8- and 4-byte words the comparison loads, and
      // in the bytes after them, with high bytes that a signed compare would
      // put first.
      {"abcdefgh", 0}, {"abcdefgh\x80", 0}, {"abcdefgh\x7f", 0}, {"abcdefg\xff", 0},
      {"abcdefghijkl", 0}, {"abcdefghijkm", 0}, {"abcdefghijk", 0}, {"abcdefghijklmnop", 0},
      {"abcdefghijklmnoq", 0}, {"abcd\xff" "efgh", 0}, {"abcd", 0}, {"abce", 0}, {"abc\x80", 0},
  };
  for (const auto& a : cases) {
    for (const auto& b : cases) {
      EXPECT_EQ(sign(a <=> b), reference(a, b)) << a.topic << "-" << a.partition << " vs " << b.topic
                                                << "-" << b.partition;
      EXPECT_EQ(a == b, reference(a, b) == 0);
    }
  }
}

RC_GTEST_PROP(TopicPartitionOrder, MatchesStringThenPartition,
              (const std::string& ta, int pa, const std::string& tb, int pb)) {
  // Half the cases share a topic, where the partition decides.
  const bool same = *rc::gen::arbitrary<bool>();
  const TopicPartition a{ta, pa};
  const TopicPartition b{same ? ta : tb, pb};
  RC_ASSERT(sign(a <=> b) == reference(a, b));
  RC_ASSERT((a == b) == (reference(a, b) == 0));
}

// Topics sharing a prefix of any length (through the word-at-a-time part)
// and then differing, or one a prefix of the other.
RC_GTEST_PROP(TopicPartitionOrder, MatchesStringThenPartitionAfterACommonPrefix,
              (const std::string& prefix, const std::string& ta, const std::string& tb, int pa, int pb)) {
  const TopicPartition a{prefix + ta, pa};
  const TopicPartition b{prefix + tb, pb};
  RC_ASSERT(sign(a <=> b) == reference(a, b));
  RC_ASSERT((a == b) == (reference(a, b) == 0));
}

}  // namespace
}  // namespace kafka
