// The 1 s timer a client waiting for a leader asks for metadata on
// (client/connection_wait.h): librdkafka starts it with the client, so its
// ticks fall a whole number of seconds after the client's start, not on the
// virtual clock's whole seconds, and clients started apart ask apart.
#include <gtest/gtest.h>

#include <cstdint>

#include "model/client/connection_wait.h"

namespace client {
namespace {

TEST(ScanTimer, TicksAWholeNumberOfSecondsAfterTheStart) {
  ScanTimer timer(250);
  int64_t next = 0;
  EXPECT_FALSE(timer.due(250, &next));  // the first tick is a second in
  EXPECT_EQ(next, 1250);
  EXPECT_FALSE(timer.due(1249, &next));
  EXPECT_EQ(next, 1250);
  EXPECT_TRUE(timer.due(1250, &next));
  EXPECT_EQ(next, 2250);
  EXPECT_FALSE(timer.due(1250, &next));  // once per tick
  EXPECT_EQ(next, 2250);
  EXPECT_FALSE(timer.due(1251, &next));
  EXPECT_EQ(next, 2250);
  EXPECT_TRUE(timer.due(5250, &next));  // ticks missed in between are not made up
  EXPECT_EQ(next, 6250);
}

TEST(ScanTimer, ClientsStartedApartAskApart) {
  ScanTimer a(0);
  ScanTimer b(400);
  int64_t next_a = 0;
  int64_t next_b = 0;
  EXPECT_FALSE(a.due(3100, &next_a));
  EXPECT_FALSE(b.due(3100, &next_b));
  EXPECT_EQ(next_a, 4000);
  EXPECT_EQ(next_b, 3400);
  EXPECT_TRUE(b.due(3400, &next_b));
  EXPECT_FALSE(a.due(3400, &next_a));
  EXPECT_TRUE(a.due(4000, &next_a));
}

}  // namespace
}  // namespace client
