// sim::Fifo: the queue behind network streams, request queues and a
// partition's records.
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

TEST(Fifo, IndexesFromTheFrontAndPopsAtEitherEnd) {
  sim::Fifo<int> q;
  for (int i = 0; i < 5; ++i) q.push_back(i);
  EXPECT_EQ(q.emplace_back(5), 5);
  q.pop_front();
  EXPECT_EQ(q[0], 1);
  EXPECT_EQ(q[4], 5);
  EXPECT_EQ(q.back(), 5);
  q.pop_back();
  EXPECT_EQ(q.back(), 4);
  EXPECT_EQ(contents(q), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.end() - q.begin(), 4);
  while (!q.empty()) q.pop_back();
  EXPECT_EQ(q.size(), 0u);
  q.push_back(9);  // after popping back to empty, the next push is the front
  EXPECT_EQ(q.front(), 9);
  EXPECT_EQ(q[0], 9);
}

// A queue that never drains (a log losing its oldest records while new ones
// arrive) gives popped slots back and keeps every index right.
TEST(Fifo, ALongQueueThatNeverDrainsStaysInOrder) {
  sim::Fifo<std::string> q;
  int next_in = 0;
  int next_out = 0;
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 3; ++i) q.push_back(std::to_string(next_in++));
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(q.front(), std::to_string(next_out));
      q.pop_front();
      ++next_out;
    }
    ASSERT_EQ(q.size(), static_cast<size_t>(next_in - next_out));
    for (size_t i = 0; i < q.size(); i += 97) ASSERT_EQ(q[i], std::to_string(next_out + static_cast<int>(i)));
    ASSERT_EQ(q.back(), std::to_string(next_in - 1));
  }
}

}  // namespace
