#include "sim/event_loop.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/random.h"

namespace sim {
namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::millis(ms); }

TEST(EventLoop, RunsEventsInTimeOrder) {
  EventLoop loop;
  std::vector<int> order;
  loop.at(at_ms(30), [&] { order.push_back(3); });
  loop.at(at_ms(10), [&] { order.push_back(1); });
  loop.at(at_ms(20), [&] { order.push_back(2); });
  loop.run_until_quiet();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loop.now(), at_ms(30));
  EXPECT_EQ(loop.executed(), 3u);
}

TEST(EventLoop, SameInstantRunsInSchedulingOrder) {
  EventLoop loop;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) loop.at(at_ms(5), [&order, i] { order.push_back(i); });
  loop.run_until_quiet();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(EventLoop, EventsScheduledFromCallbacksJoinTheQueue) {
  EventLoop loop;
  std::vector<std::string> log;
  loop.at(at_ms(1), [&] {
    log.push_back("a");
    loop.after(Duration::zero(), [&] { log.push_back("a-now"); });
    loop.after(Duration::millis(1), [&] { log.push_back("a+1"); });
  });
  loop.at(at_ms(1), [&] { log.push_back("b"); });
  loop.run_until_quiet();
  // A zero-delay event goes behind what was already scheduled for the instant.
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "a-now", "a+1"}));
}

TEST(EventLoop, CancelPreventsAnEventAndReportsWhetherItWasPending) {
  EventLoop loop;
  int fired = 0;
  const TimerId t = loop.after(Duration::millis(5), [&] { ++fired; });
  EXPECT_TRUE(loop.is_pending(t));
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_TRUE(loop.cancel(t));
  EXPECT_FALSE(loop.cancel(t));
  EXPECT_FALSE(loop.is_pending(t));
  EXPECT_EQ(loop.pending(), 0u);
  EXPECT_TRUE(loop.run_until_quiet());
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(loop.cancel(TimerId{}));
}

TEST(EventLoop, CancelledSlotReuseDoesNotConfuseOldIds) {
  EventLoop loop;
  int a = 0, b = 0;
  const TimerId first = loop.after(Duration::millis(1), [&] { ++a; });
  loop.cancel(first);
  const TimerId second = loop.after(Duration::millis(1), [&] { ++b; });
  EXPECT_EQ(first.slot, second.slot);  // the slot was recycled ...
  EXPECT_FALSE(loop.cancel(first));    // ... but the old id no longer names it
  EXPECT_TRUE(loop.is_pending(second));
  loop.run_until_quiet();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
}

TEST(EventLoop, AnEventCannotCancelItselfWhileRunning) {
  EventLoop loop;
  TimerId self;
  bool cancelled = true;
  self = loop.after(Duration::millis(1), [&] { cancelled = loop.cancel(self); });
  loop.run_until_quiet();
  EXPECT_FALSE(cancelled);
}

TEST(EventLoop, RunUntilStopsAtTheLimitAndAdvancesTime) {
  EventLoop loop;
  int fired = 0;
  loop.at(at_ms(10), [&] { ++fired; });
  loop.at(at_ms(20), [&] { ++fired; });
  loop.run_until(at_ms(10));  // inclusive
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.now(), at_ms(10));
  loop.run_until(at_ms(15));
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.now(), at_ms(15));
  EXPECT_EQ(loop.next_time(), at_ms(20));
}

TEST(EventLoop, RunUntilPredicate) {
  EventLoop loop;
  int count = 0;
  std::function<void()> tick = [&] {
    ++count;
    loop.after(Duration::millis(1), tick);
  };
  loop.after(Duration::millis(1), tick);
  EXPECT_TRUE(loop.run_until([&] { return count == 5; }, at_ms(100)));
  EXPECT_EQ(loop.now(), at_ms(5));
  EXPECT_FALSE(loop.run_until([&] { return count == 1'000; }, at_ms(50)));
  EXPECT_EQ(loop.now(), at_ms(50));
  EXPECT_EQ(count, 50);
}

TEST(EventLoop, RunUntilQuietWithALimitLeavesLaterEvents) {
  EventLoop loop;
  loop.at(at_ms(10), [] {});
  loop.at(at_ms(1000), [] {});
  EXPECT_FALSE(loop.run_until_quiet(at_ms(500)));
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_TRUE(loop.run_until_quiet());
}

TEST(EventLoop, StepRunsOneEvent) {
  EventLoop loop;
  int fired = 0;
  loop.after(Duration::millis(1), [&] { ++fired; });
  loop.after(Duration::millis(2), [&] { ++fired; });
  EXPECT_TRUE(loop.step());
  EXPECT_EQ(fired, 1);
  EXPECT_TRUE(loop.step());
  EXPECT_FALSE(loop.step());
}

TEST(EventLoop, SchedulingInThePastIsAnInvariantViolation) {
  EventLoop loop;
  loop.run_until(at_ms(10));
  EXPECT_THROW(loop.at(at_ms(5), [] {}), InvariantViolation);
  EXPECT_THROW(loop.after(Duration::millis(-1), [] {}), InvariantViolation);
}

TEST(EventLoop, ZeroDelayLivelockEndsAsAnError) {
  EventLoop loop(EventLimits{.max_events = 1'000'000'000, .max_events_per_instant = 1'000});
  std::function<void()> spin = [&] { loop.after(Duration::zero(), spin); };
  loop.after(Duration::millis(3), spin);
  try {
    loop.run_until_quiet();
    FAIL() << "expected EventLimitExceeded";
  } catch (const EventLimitExceeded& e) {
    EXPECT_NE(std::string(e.what()).find("livelock"), std::string::npos) << e.what();
    ASSERT_TRUE(e.at().has_value());
    EXPECT_EQ(*e.at(), at_ms(3));
  }
}

TEST(EventLoop, TotalEventBoundEndsARunawayRun) {
  EventLoop loop(EventLimits{.max_events = 500, .max_events_per_instant = 1'000'000});
  std::function<void()> tick = [&] { loop.after(Duration::millis(1), tick); };
  loop.after(Duration::millis(1), tick);
  EXPECT_THROW(loop.run_until_quiet(), EventLimitExceeded);
  EXPECT_EQ(loop.executed(), 501u);
}

TEST(EventLoop, LargeClosuresAreKeptOnTheHeapAndStillRun) {
  EventLoop loop;
  std::array<int64_t, 32> big{};
  big[31] = 7;
  int64_t seen = 0;
  loop.after(Duration::millis(1), [big, &seen] { seen = big[31]; });
  loop.run_until_quiet();
  EXPECT_EQ(seen, 7);
}

// at() builds a closure straight in its slot; one too big to sit there
// goes to the heap, and cancelling it frees it without running it.
TEST(EventLoop, ClosuresBuiltInTheirSlotRunOrAreCancelled) {
  EventLoop loop;
  std::array<int64_t, 32> big{};
  big[31] = 9;
  auto owned = std::make_shared<int>(0);
  int64_t seen = 0;
  loop.at(at_ms(2), [big, &seen] { seen = big[31]; });
  const TimerId cancelled = loop.at(at_ms(1), [big, owned] { *owned = 1; });
  EXPECT_EQ(owned.use_count(), 2);
  EXPECT_TRUE(loop.cancel(cancelled));
  EXPECT_EQ(owned.use_count(), 1);  // the closure was destroyed with the cancel
  loop.run_until_quiet();
  EXPECT_EQ(seen, 9);
  EXPECT_EQ(*owned, 0);
}

TEST(EventLoop, AnEmptyCallableIsRefused) {
  EventLoop loop;
  std::function<void()> empty;
  EXPECT_THROW(loop.at(at_ms(1), empty), InvariantViolation);
  EXPECT_THROW(loop.at(at_ms(1), Callback{}), InvariantViolation);
  EXPECT_EQ(loop.pending(), 0u);
}

TEST(EventLoop, ManyCancellationsLeaveOnlyTheLiveEventsToRun) {
  EventLoop loop;
  int fired = 0;
  std::vector<TimerId> ids;
  for (int i = 0; i < 10'000; ++i) {
    ids.push_back(loop.after(Duration::millis(1 + i % 97), [&] { ++fired; }));
  }
  for (int i = 0; i < 10'000; ++i) {
    if (i % 10 != 0) loop.cancel(ids[i]);
  }
  EXPECT_EQ(loop.pending(), 1'000u);
  loop.run_until_quiet();
  EXPECT_EQ(fired, 1'000);
}

// The queue against a simple model: sort by (time, scheduling order), with a
// random mix of schedules, cancellations and steps.
RC_GTEST_PROP(EventLoopProperty, MatchesASortedModel, (uint64_t seed)) {
  Rng rng(seed);
  EventLoop loop;
  struct Pending {
    int64_t time_us;
    int id;
    TimerId timer;
  };
  std::vector<Pending> model;
  std::vector<int> ran;
  std::vector<int> expected;
  int next_id = 0;
  for (int op = 0; op < 400; ++op) {
    const uint64_t kind = rng.below(10);
    if (kind < 6) {
      const int id = next_id++;
      const Time t = loop.now() + Duration::micros(rng.uniform(0, 50));
      const TimerId timer = loop.at(t, [&ran, id] { ran.push_back(id); });
      model.push_back({t.us(), id, timer});
    } else if (kind < 8 && !model.empty()) {
      const size_t i = rng.below(model.size());
      RC_ASSERT(loop.cancel(model[i].timer));
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (!model.empty()) {
      auto first = std::min_element(model.begin(), model.end(), [](const auto& a, const auto& b) {
        return a.time_us < b.time_us || (a.time_us == b.time_us && a.id < b.id);
      });
      expected.push_back(first->id);
      model.erase(first);
      RC_ASSERT(loop.step());
    }
    RC_ASSERT(loop.pending() == model.size());
  }
  RC_ASSERT(ran == expected);
}

}  // namespace
}  // namespace sim
