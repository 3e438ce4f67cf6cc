// TopicPartition's comparison must order exactly as comparing (topic as
// std::string, partition) does: maps keyed by it are iterated on paths that
// change state, so a different order would change every trace. Its topic is
// interned (one address a name, in every thread), which the comparison uses
// as a shortcut for equal names.
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <functional>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "model/kafka/types.h"

namespace kafka {
namespace {

int sign(std::strong_ordering o) { return o < 0 ? -1 : o > 0 ? 1 : 0; }

// The order of (name, partition) as given, before any interning: a table
// that handed two names one string would fail here.
using Named = std::pair<std::string, int32_t>;
int reference(const Named& a, const Named& b) { return a < b ? -1 : b < a ? 1 : 0; }
TopicPartition made(const Named& n) { return TopicPartition{n.first, n.second}; }

TEST(TopicPartitionOrder, MatchesStringThenPartitionOnEdgeCases) {
  const Named cases[] = {
      {"", 0},         {"", 1},          {"a", 0},          {"a", -1},         {"ab", 0},
      {"b", 0},        {"mytopic", 0},   {"mytopic", 1},    {"mytopic2", 0},   {"mytopiZ", 5},
      {"\xff", 0},     {"\x7f", 0},      {std::string("a\0b", 3), 0},          {"a", 2147483647},
      {"__consumer_offsets", 49},        {"__consumer_offsets", 7},
      // Names sharing long prefixes, differing in their last bytes or in
      // length, with high bytes that a signed compare would put first.
      {"abcdefgh", 0}, {"abcdefgh\x80", 0}, {"abcdefgh\x7f", 0}, {"abcdefg\xff", 0},
      {"abcdefghijkl", 0}, {"abcdefghijkm", 0}, {"abcdefghijk", 0}, {"abcdefghijklmnop", 0},
      {"abcdefghijklmnoq", 0}, {"abcd\xff" "efgh", 0}, {"abcd", 0}, {"abce", 0}, {"abc\x80", 0},
  };
  for (const Named& x : cases) {
    for (const Named& y : cases) {
      const TopicPartition a = made(x);
      const TopicPartition b = made(y);
      EXPECT_EQ(sign(a <=> b), reference(x, y)) << a.topic << "-" << a.partition << " vs " << b.topic
                                                << "-" << b.partition;
      EXPECT_EQ(a == b, reference(x, y) == 0);
    }
  }
}

RC_GTEST_PROP(TopicPartitionOrder, MatchesStringThenPartition,
              (const std::string& ta, int pa, const std::string& tb, int pb)) {
  // Half the cases share a topic, where the partition decides.
  const bool same = *rc::gen::arbitrary<bool>();
  const Named x{ta, pa};
  const Named y{same ? ta : tb, pb};
  const TopicPartition a = made(x);
  const TopicPartition b = made(y);
  RC_ASSERT(sign(a <=> b) == reference(x, y));
  RC_ASSERT((a == b) == (reference(x, y) == 0));
}

// Topics sharing a prefix of any length and then differing, or one a prefix
// of the other.
RC_GTEST_PROP(TopicPartitionOrder, MatchesStringThenPartitionAfterACommonPrefix,
              (const std::string& prefix, const std::string& ta, const std::string& tb, int pa, int pb)) {
  const Named x{prefix + ta, pa};
  const Named y{prefix + tb, pb};
  const TopicPartition a = made(x);
  const TopicPartition b = made(y);
  RC_ASSERT(sign(a <=> b) == reference(x, y));
  RC_ASSERT((a == b) == (reference(x, y) == 0));
}

TEST(Topic, OneNameHasOneAddressHoweverItIsMade) {
  const std::string name = "interned-topic";
  const Topic a = name;
  const Topic b = "interned-topic";
  const Topic c = std::string_view(name);
  const Topic d = std::string("interned-") + "topic";
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(&a.str(), &c.str());
  EXPECT_EQ(&a.str(), &d.str());
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.str(), "interned-topic");
  EXPECT_NE(&a.str(), &Topic("interned-topic2").str());
  EXPECT_FALSE(a == Topic("interned-topic2"));
  // The empty name, default or spelt out, is one too.
  EXPECT_EQ(&Topic().str(), &Topic("").str());
  EXPECT_TRUE(Topic().empty());
}

TEST(Topic, ANameInternedByAnotherThreadIsTheSameTopic) {
  // A sweep runs one simulation a thread; a scenario's topics, made on the
  // main thread, meet topics its simulations make on theirs.
  const Topic here = "shared-across-threads";
  const std::string* there = nullptr;
  const std::string* fresh_there = nullptr;
  std::thread worker([&] {
    there = &Topic("shared-across-threads").str();
    fresh_there = &Topic("first-made-on-a-worker").str();
  });
  worker.join();
  EXPECT_EQ(there, &here.str());
  EXPECT_EQ(fresh_there, &Topic("first-made-on-a-worker").str());
}

TEST(Topic, TwoThreadsMakingOneNewNameAtOnceGetOneAddress) {
  // Each thread makes the same fresh names in the same order, racing.
  std::vector<const std::string*> seen[2];
  auto make = [](std::vector<const std::string*>& out) {
    for (int i = 0; i < 2000; ++i) out.push_back(&Topic("raced-" + std::to_string(i)).str());
  };
  std::thread a(make, std::ref(seen[0]));
  std::thread b(make, std::ref(seen[1]));
  a.join();
  b.join();
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (size_t i = 0; i < seen[0].size(); ++i) {
    ASSERT_EQ(seen[0][i], seen[1][i]) << i;
    ASSERT_EQ(*seen[0][i], "raced-" + std::to_string(i));
  }
}

TEST(Topic, ManyNamesStillInternToOneAddressEach) {
  // More names than a thread's cache of recent names holds.
  std::vector<const std::string*> first;
  for (int i = 0; i < 100; ++i) first.push_back(&Topic("many-" + std::to_string(i)).str());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(first[static_cast<size_t>(i)], &Topic("many-" + std::to_string(i)).str()) << i;
  }
}

TEST(Topic, ComparesWithPlainNamesByTheirBytes) {
  const Topic t = "mytopic";
  EXPECT_TRUE(t == "mytopic");
  EXPECT_TRUE(t == std::string("mytopic"));
  EXPECT_TRUE(t == std::string_view("mytopic"));
  EXPECT_TRUE(std::string("mytopic") == t);
  EXPECT_FALSE(t == "mytopi");
  EXPECT_FALSE(t == std::string("mytopic\0", 8));
  EXPECT_EQ(fmt::format("{}-{}", t, 3), "mytopic-3");
  EXPECT_EQ(to_string(TopicPartition{t, 3}), "mytopic-3");
}

}  // namespace
}  // namespace kafka
