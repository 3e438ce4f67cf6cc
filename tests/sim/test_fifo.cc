// sim::Fifo: the small queue behind network streams and request queues.
#include "sim/fifo.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

std::vector<int> contents(const sim::Fifo<int>& q) { return {q.begin(), q.end()}; }

TEST(Fifo, FirstInFirstOutAcrossDrains) {
  sim::Fifo<int> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  for (int round = 0; round < 3; ++round) {
    q.push_back(1 + 10 * round);
    q.push_back(2 + 10 * round);
    EXPECT_EQ(q.front(), 1 + 10 * round);
    q.pop_front();
    q.push_back(3 + 10 * round);  // pushed while not drained: stays behind 2
    EXPECT_EQ(contents(q), (std::vector<int>{2 + 10 * round, 3 + 10 * round}));
    EXPECT_EQ(q.size(), 2u);
    q.pop_front();
    q.pop_front();
    EXPECT_TRUE(q.empty());  // drained: the next push starts afresh
  }
}

TEST(Fifo, PopReleasesTheItemAtOnce) {
  auto shared = std::make_shared<std::string>("held");
  sim::Fifo<std::shared_ptr<std::string>> q;
  q.push_back(shared);
  q.push_back(std::make_shared<std::string>("other"));
  EXPECT_EQ(shared.use_count(), 2);
  q.pop_front();
  EXPECT_EQ(shared.use_count(), 1);  // not kept until the queue drains
  EXPECT_EQ(*q.front(), "other");
  q.clear();
  EXPECT_TRUE(q.empty());
}

}  // namespace
