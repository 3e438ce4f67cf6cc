#include "sim/time.h"

#include <gtest/gtest.h>

namespace sim {
namespace {

TEST(Time, DurationUnitsConvert) {
  EXPECT_EQ(Duration::millis(3).us(), 3'000);
  EXPECT_EQ(Duration::seconds(2).us(), 2'000'000);
  EXPECT_EQ(Duration::minutes(1), Duration::seconds(60));
  EXPECT_EQ(Duration::micros(1'999).ms(), 1);
}

TEST(Time, ArithmeticKeepsInstantsAndDurationsApart) {
  const Time t = Time::zero() + Duration::seconds(5);
  EXPECT_EQ(t.us(), 5'000'000);
  EXPECT_EQ(t - Time::zero(), Duration::seconds(5));
  EXPECT_EQ((t - Duration::seconds(1)).us(), 4'000'000);
  EXPECT_LT(Time::zero(), t);
  EXPECT_EQ(Duration::seconds(3) * 2 - Duration::seconds(1), Duration::seconds(5));
  EXPECT_EQ(Duration::seconds(3) / 2, Duration::millis(1500));
}

TEST(Time, AddingMaxSaturatesInsteadOfWrapping) {
  const Time t = Time::from_us(123) + Duration::max();
  EXPECT_EQ(t, Time::max());
  Time u = Time::max();
  u += Duration::seconds(1);
  EXPECT_EQ(u, Time::max());
}

TEST(Time, FormatsWithMicrosecondPrecision) {
  EXPECT_EQ(format_time(Time::from_us(12'204'000)), "12.204000s");
  EXPECT_EQ(format_time(Time::zero()), "0.000000s");
  EXPECT_EQ(format_time(Time::from_us(-1'500'000)), "-1.500000s");
  EXPECT_EQ(format_duration(Duration::seconds(6)), "6s");
  EXPECT_EQ(format_duration(Duration::millis(250)), "250ms");
  EXPECT_EQ(format_duration(Duration::micros(12)), "12us");
}

}  // namespace
}  // namespace sim
