// ConnectionErrors: one report per (error, node) and virtual instant.
#include <gtest/gtest.h>

#include "model/client/connection_errors.h"

namespace client {
namespace {

TEST(ConnectionErrors, TheRepeatsOfAnInstantAreDroppedAndALaterInstantReportsAgain) {
  ConnectionErrors e;
  EXPECT_TRUE(e.first("connection_closed", 2, 1000));
  EXPECT_FALSE(e.first("connection_closed", 2, 1000));  // another request on the same connection
  EXPECT_TRUE(e.first("connection_closed", 3, 1000));   // another node
  EXPECT_TRUE(e.first("request_timed_out", 2, 1000));   // another error
  EXPECT_FALSE(e.first("connection_closed", 2, 1000));  // still that instant, after others
  EXPECT_FALSE(e.first("connection_closed", 3, 1000));
  EXPECT_TRUE(e.first("connection_closed", 2, 1001));   // a later failure
  EXPECT_FALSE(e.first("connection_closed", 2, 1001));
}

}  // namespace
}  // namespace client
