// kafka::Invariants (model/kafka/invariants.h) fed broken states: each check
// must fire with its exact message, and only when the state really breaks it
// (the per-incarnation, per-leader-epoch bookkeeping). The cluster runs to a
// steady state under the checker; then a test corrupts a broker's or the
// controller's state in place (const_cast on objects the world owns, never
// run again) and calls check() by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kafka/cluster.h"
#include "sim/assert.h"

namespace kafka::testing {
namespace {

using sim::Duration;

// The message of the violation check() raises ("condition: message"), or
// "" when none.
std::string violation(InvariantChecker& check) {
  try {
    check.check();
  } catch (const sim::InvariantViolation& e) {
    return e.message();
  }
  return "";
}

// check() raises a violation whose message is exactly `expected`.
::testing::AssertionResult violates(InvariantChecker& check, const std::string& expected) {
  const std::string got = violation(check);
  const std::string tail = ": " + expected;
  if (got.size() >= tail.size() && got.compare(got.size() - tail.size(), tail.size(), tail) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "violation \"" << got << "\", expected \"" << expected << "\"";
}

Partition& partition_at(Cluster& c, BrokerId b, const TopicPartition& tp) {
  const Partition* p = c.broker(b)->partition(tp);
  if (p == nullptr) throw std::runtime_error(fmt::format("broker {} has no {}", b, to_string(tp)));
  return const_cast<Partition&>(*p);
}

// A settled cluster: topic "t" (two partitions, RF 3) with three committed
// records in t-0, every follower caught up, and the checker run after every
// event so far.
struct Settled {
  Cluster c{{.brokers = 3}};
  InvariantChecker check{c};
  BrokerId leader = kNoBroker;

  Settled() {
    c.start();
    if (c.create_topic("t", 2, 3) != ErrorCode::none) throw std::runtime_error("create_topic");
    auto r = c.produce({"t", 0}, {1, 2, 3}, -1);
    if (!r.has_value() || r->error != ErrorCode::none) throw std::runtime_error("produce");
    c.run_for(Duration::seconds(5));
    leader = c.state({"t", 0})->leader;
  }
  Partition& t0() { return partition_at(c, leader, {"t", 0}); }
  BrokerId follower() const { return leader == 1 ? 2 : 1; }
  // What the controller would send to make `leader` lead t-0 in `epoch`.
  PartitionState leading_in(int64_t epoch) {
    const Partition& p = t0();
    return PartitionState{.tp = {"t", 0},
                          .controller_epoch = p.controller_epoch(),
                          .leader = leader,
                          .leader_epoch = LeaderEpoch{epoch},
                          .isr = p.isr(),
                          .zk_version = p.zk_version(),
                          .replicas = p.replicas(),
                          .is_new = false};
  }
};

TEST(KafkaInvariants, SettledClusterPasses) {
  Settled s;
  EXPECT_EQ(s.t0().high_watermark(), Offset{3});
  EXPECT_EQ(violation(s.check), "");
  EXPECT_GE(s.check.controller_epochs_seen(), 1u);
}

TEST(KafkaInvariants, LeaderOutsideItsIsr) {
  Settled s;
  std::vector<BrokerId> others;
  for (BrokerId r : s.t0().replicas()) {
    if (r != s.leader) others.push_back(r);
  }
  s.t0().set_isr(others, s.t0().zk_version());
  EXPECT_TRUE(violates(s.check, fmt::format("broker {} leads t-0 but is not in its ISR", s.leader)));
}

TEST(KafkaInvariants, IsrMemberThatIsNotAReplica) {
  Settled s;
  s.t0().set_isr({s.leader, 99}, s.t0().zk_version());
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: ISR member 99 of t-0 is not a replica", s.leader)));
}

TEST(KafkaInvariants, HighWatermarkGoingDownInOneLeaderEpoch) {
  Settled s;
  s.t0().set_checkpointed_high_watermark(Offset{1});
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: hw of t-0 went down from 3 to 1", s.leader)));
}

TEST(KafkaInvariants, HighWatermarkMayStartLowerInANewLeaderEpoch) {
  Settled s;
  // A new leader epoch: a lower high watermark is no regression in it...
  s.t0().make_leader(s.leading_in(1), s.c.world().now().since_start().ms());
  s.t0().set_checkpointed_high_watermark(Offset{2});
  EXPECT_EQ(violation(s.check), "");
  // ... but going down within it is.
  s.t0().set_checkpointed_high_watermark(Offset{1});
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: hw of t-0 went down from 2 to 1", s.leader)));
}

TEST(KafkaInvariants, HighWatermarkAboveWhatAnIsrMemberReported) {
  Settled s;
  const BrokerId f = s.follower();
  const int64_t now = s.c.world().now().since_start().ms();
  // A stale fetch in the same leader epoch reports less than before: the
  // highest log end heard still covers the high watermark.
  s.t0().update_follower(f, Offset{1}, now);
  EXPECT_EQ(violation(s.check), "");
  // A new leader epoch at the same leader keeps what it heard
  // (Partition.makeLeader resets it only for a new leader)...
  s.t0().make_leader(s.leading_in(1), now);
  EXPECT_EQ(violation(s.check), "");
  s.t0().update_follower(f, Offset{1}, now);
  EXPECT_EQ(violation(s.check), "");
  // ... but once it has followed and leads again, only what is heard since counts.
  PartitionState following = s.leading_in(2);
  following.leader = f;
  s.t0().make_follower(following);
  s.t0().make_leader(s.leading_in(3), now);
  EXPECT_EQ(violation(s.check), "");  // nothing heard yet
  s.t0().update_follower(f, Offset{1}, now);
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: high watermark 3 of t-0 above ISR member {}'s log end 1",
                        s.leader, f)));
}

TEST(KafkaInvariants, HighWatermarkAboveLogEnd) {
  Settled s;
  // Only a broken high watermark can pass the log end: truncate under it
  // (to the start: the three records are one batch).
  s.t0().log().truncate_to(Offset{0});
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: hw above log end for t-0", s.leader)));
}

TEST(KafkaInvariants, StateFollowsThePartitionWhenTheBrokersMapChanges) {
  Settled s;
  // A topic sorting before "t" moves t-0 and t-1 to other places in every
  // broker's partition map; what the checker tracks must stay with t-0.
  ASSERT_EQ(s.c.create_topic("a", 3, 3), ErrorCode::none);
  s.c.run_for(Duration::seconds(5));
  ASSERT_EQ(s.c.state({"t", 0})->leader, s.leader);
  EXPECT_EQ(violation(s.check), "");
  s.t0().set_checkpointed_high_watermark(Offset{1});
  EXPECT_TRUE(violates(s.check, fmt::format("broker {}: hw of t-0 went down from 3 to 1", s.leader)));
}

// The controller's view, corrupted through its (read-only) partition map.
Controller::PartitionInfo& controller_info(Cluster& c, const TopicPartition& tp) {
  const Controller* ctl = c.broker(*c.controller())->controller();
  auto& partitions = const_cast<std::map<TopicPartition, Controller::PartitionInfo>&>(ctl->partitions());
  return partitions.at(tp);
}

TEST(KafkaInvariants, ControllerLeaderOutsideTheIsr) {
  Settled s;
  controller_info(s.c, {"t", 1}).state->leader = 99;
  EXPECT_TRUE(violates(s.check, fmt::format("controller {}: leader 99 of t-1 not in its ISR", *s.c.controller())));
}

TEST(KafkaInvariants, ControllerIsrMemberThatIsNotAReplica) {
  Settled s;
  controller_info(s.c, {"t", 1}).state->isr.push_back(42);
  EXPECT_TRUE(violates(s.check, fmt::format("controller {}: ISR member 42 of t-1 is not a replica", *s.c.controller())));
}

TEST(KafkaInvariants, LeaderEpochGoingBackInTheNewestControllersView) {
  Settled s;
  auto& state = *controller_info(s.c, {"t", 1}).state;
  state.leader_epoch = LeaderEpoch{5};
  EXPECT_EQ(violation(s.check), "");
  state.leader_epoch = LeaderEpoch{4};
  EXPECT_TRUE(violates(s.check, "leader epoch of t-1 went back from 5 to 4"));
}

}  // namespace
// check_after_event (what a scenario run installs) skips brokers no event
// touched, but a broker changed directly between runs (as these tests do) is
// checked at the first event of the next run, and one whose own code runs is
// checked after that event.
TEST(KafkaInvariants, AfterEventCheckSeesAChangeMadeBetweenRuns) {
  Settled s;
  Invariants after(s.c.world(), s.c.broker_processes());
  s.c.world().set_invariant_check([&] { after.check_after_event(); });
  s.c.run_for(Duration::seconds(1));
  s.t0().set_checkpointed_high_watermark(Offset{1});
  try {
    s.c.run_for(Duration::seconds(1));
    FAIL() << "no violation";
  } catch (const sim::InvariantViolation& e) {
    EXPECT_NE(e.message().find(fmt::format("broker {}: hw of t-0 went down from 3 to 1", s.leader)),
              std::string::npos)
        << e.message();
  }
}

TEST(KafkaInvariants, AfterEventCheckSeesAChangeOnceTheBrokerRunsAgain) {
  Settled s;
  Invariants after(s.c.world(), s.c.broker_processes());
  s.c.world().set_invariant_check([&] { after.check_after_event(); });
  s.c.run_for(Duration::seconds(1));
  // Changed by an event that is not the broker's own (no process context):
  // skipped then, caught after the broker's next timer or message.
  const sim::Time changed = s.c.world().now() + Duration::millis(1);
  s.c.world().loop().at(changed, [&] { s.t0().set_checkpointed_high_watermark(Offset{1}); });
  try {
    s.c.run_for(Duration::seconds(5));
    FAIL() << "no violation";
  } catch (const sim::InvariantViolation& e) {
    EXPECT_NE(e.message().find(fmt::format("broker {}: hw of t-0 went down from 3 to 1", s.leader)),
              std::string::npos)
        << e.message();
  }
}

// The same for a controller's view changed in place between runs (no event
// of the controller's, no change to Controller::partitions_version): the
// first event of the next run checks it, as it checks everything.
TEST(KafkaInvariants, AfterEventCheckSeesAControllerChangeMadeBetweenRuns) {
  Settled s;
  Invariants after(s.c.world(), s.c.broker_processes());
  s.c.world().set_invariant_check([&] { after.check_after_event(); });
  s.c.run_for(Duration::seconds(1));
  controller_info(s.c, {"t", 1}).state->leader = 99;
  try {
    s.c.run_for(Duration::seconds(1));
    FAIL() << "no violation";
  } catch (const sim::InvariantViolation& e) {
    EXPECT_NE(e.message().find(fmt::format("controller {}: leader 99 of t-1 not in its ISR", *s.c.controller())),
              std::string::npos)
        << e.message();
  }
}

}  // namespace kafka::testing

namespace kafka::testing {
namespace {

// A partition that comes to lead a broker during a run (the LeaderAndIsr of a
// failover) is checked from then on: a broker's check visits the leaders it
// found last time only while Broker::roles_version stands.
TEST(KafkaInvariants, AfterEventCheckFollowsAPartitionThatComesToLeadDuringARun) {
  Settled s;
  Invariants after(s.c.world(), s.c.broker_processes());
  s.c.world().set_invariant_check([&] { after.check_after_event(); });
  s.c.run_for(Duration::seconds(1));
  const BrokerId old_leader = s.leader;
  s.c.stop_broker(old_leader);  // a controlled shutdown moves t-0 at once
  BrokerId new_leader = kNoBroker;
  std::vector<BrokerId> isr_then;
  try {
    s.c.run_until(
        [&] {
          if (new_leader != kNoBroker) return false;
          for (BrokerId b : s.c.broker_ids()) {
            const Broker* broker = b == old_leader ? nullptr : s.c.broker(b);
            const Partition* p = broker == nullptr ? nullptr : broker->partition({"t", 0});
            if (p == nullptr || !p->is_leader()) continue;
            new_leader = b;
            // Changed by an event that is not the broker's own, in the same
            // run (the leader dropped from its own ISR, which nothing undoes
            // meanwhile): caught after the broker's next event only if its
            // check visits t-0, which did not lead there when the run began.
            s.c.world().loop().at(s.c.world().now() + Duration::millis(1), [&s, &isr_then, b] {
              Partition& t0 = partition_at(s.c, b, {"t", 0});
              isr_then = t0.isr();
              std::vector<BrokerId> isr = isr_then;
              std::erase(isr, b);
              t0.set_isr(isr, t0.zk_version());
            });
          }
          return false;
        },
        Duration::seconds(60));
    FAIL() << (new_leader == kNoBroker ? "t-0 never moved" : "no violation");
  } catch (const sim::InvariantViolation& e) {
    ASSERT_NE(new_leader, kNoBroker);
    EXPECT_NE(std::find(isr_then.begin(), isr_then.end(), new_leader), isr_then.end());
    EXPECT_NE(e.message().find(fmt::format("broker {} leads t-0 but is not in its ISR", new_leader)),
              std::string::npos)
        << e.message();
  }
}

}  // namespace
}  // namespace kafka::testing
