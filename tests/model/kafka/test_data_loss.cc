// Scenario tests of what Kafka does with acknowledged data when brokers
// fail: the configurations that lose it and the ones that do not, each
// for the mechanism's reason (a truncating follower, an unclean election,
// a page cache lost with the power).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "kafka/cluster.h"

namespace kafka::testing {
namespace {

using sim::Duration;

// acks=1: the leader acknowledges on its own append. If it dies before a
// follower fetched the record, the follower elected in its place never had
// it, and the old leader truncates it away when it comes back.
// Starts `c`, creates t-0 led by a broker other than the controller, writes
// value 1 everywhere, then `tail` with acks=1 to the leader alone; kills the
// leader, and once another leads, starts it again and runs until it is back
// in the ISR. Sets `leader` to the old leader.
void lose_the_tail_of_a_dead_leader(Cluster& c, const std::vector<uint64_t>& tail, BrokerId& leader) {
  c.start();
  ASSERT_TRUE(c.await_ready());
  leader = non_controller(c);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, leader_first(c, leader)}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, 1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(1));
  // The followers stop hearing from the leader; the client still does.
  for (BrokerId b : c.broker_ids()) {
    if (b != leader) cut(c, leader, b);
  }
  auto acked = c.produce(tp, tail, 1);
  ASSERT_TRUE(acked.has_value());
  EXPECT_EQ(acked->error, ErrorCode::none);
  EXPECT_EQ(acked->base_offset, Offset{1});
  c.kill_broker(leader);
  // The controller sees /brokers/ids/<leader> vanish after the session
  // timeout and elects a follower from the ISR. (Healing earlier would let
  // the dead leader's kernel deliver the fetch response still in its send
  // buffer: killing a process does not discard what it already sent.)
  const BrokerId old = leader;
  ASSERT_TRUE(c.run_until([&] { auto s = c.state(tp); return s && s->leader != old && s->leader != kNoBroker; },
                          Duration::seconds(60)));
  c.world().network().heal();
  c.run_for(Duration::seconds(5));
  c.start_broker(leader);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 3; }, Duration::seconds(120)));
}

TEST(KafkaDataLoss, AcksOneLosesTheAcknowledgedTailWhenTheLeaderDiesFirst) {
  Cluster c({.brokers = 3});
  InvariantChecker check(c);
  BrokerId leader = kNoBroker;
  ASSERT_NO_FATAL_FAILURE(lose_the_tail_of_a_dead_leader(c, {2}, leader));
  c.run_for(Duration::seconds(5));
  const TopicPartition tp{"t", 0};
  EXPECT_EQ(c.committed_values(tp), std::vector<uint64_t>{1});
  EXPECT_EQ(c.log_values(leader, tp), std::vector<uint64_t>{1}) << "the old leader truncated value 2";
}

// The same loss, by release and inter-broker protocol: how the old leader
// learns where its log parts from the new leader's. Up to 2.7, and on a
// protocol below 2.7-IV1, it asks OffsetsForLeaderEpoch before it fetches;
// from 2.8 (KAFKA-10554) it fetches at once from its log end with its last
// epoch, and the leader's answer names the diverging epoch and where it
// ends. The cut is the same.
TEST(KafkaDataLoss, TheOldLeaderLearnsWhereItsLogPartsByReleaseAndProtocol) {
  struct Case {
    VersionProfile v;
    const char* protocol;
    const char* why;  // the truncation's reason in the trace
  };
  for (const Case& k : {Case{VersionProfile::v2_2, nullptr, "leader_epoch"},
                        Case{VersionProfile::v2_8, nullptr, "diverging_epoch"},
                        Case{VersionProfile::v2_8, "2.7-IV0", "leader_epoch"},
                        Case{VersionProfile::v3_1, nullptr, "diverging_epoch"},
                        Case{VersionProfile::v3_9, nullptr, "diverging_epoch"},
                        Case{VersionProfile::v3_9, "2.7-IV1", "diverging_epoch"}}) {
    SCOPED_TRACE(fmt::format("{} {}", to_string(k.v), k.protocol ? k.protocol : ""));
    Cluster c(on_protocol(k.v, k.protocol));
    c.world().trace().keep_lines(true);
    InvariantChecker check(c);
    BrokerId leader = kNoBroker;
    ASSERT_NO_FATAL_FAILURE(lose_the_tail_of_a_dead_leader(c, {2, 3}, leader));
    EXPECT_EQ(c.log_values(leader, {"t", 0}), std::vector<uint64_t>{1}) << "values 2 and 3 cut";
    size_t cuts = 0, by_this = 0;
    for (const std::string& line : c.world().trace().lines()) {
      if (line.find("\"log_truncated\"") == std::string::npos) continue;
      ++cuts;
      by_this += line.find(fmt::format("\"why\":\"{}\"", k.why)) != std::string::npos &&
                 line.find("\"from\":3,\"to\":1") != std::string::npos;
    }
    EXPECT_EQ(by_this, 1u) << "cut from 3 to 1 by " << k.why;
    EXPECT_EQ(cuts, 1u);
  }
}

// The same sequence with acks=all and min.insync.replicas=2: the write is
// not acknowledged, so nothing acknowledged is lost.
TEST(KafkaDataLoss, AcksAllDoesNotAcknowledgeWhatOnlyTheLeaderHas) {
  Cluster c({.brokers = 3, .broker_properties = {{"min.insync.replicas", "2"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId leader = non_controller(c);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, leader_first(c, leader)}}), ErrorCode::none);
  for (BrokerId b : c.broker_ids()) {
    if (b != leader) cut(c, leader, b);
  }
  auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
  c.produce_async(tp, {2}, -1, out, 5000);
  c.run_for(Duration::seconds(6));
  ASSERT_TRUE(out->has_value());
  EXPECT_EQ((*out)->error, ErrorCode::request_timed_out);
}

// acks=all with min.insync.replicas=2 refuses writes once only one replica
// is left in the ISR: NOT_ENOUGH_REPLICAS, before appending anything.
TEST(KafkaDataLoss, MinInsyncReplicasRefusesWritesWithOneReplicaLeft) {
  Cluster c({.brokers = 3, .broker_properties = {{"min.insync.replicas", "2"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
  const BrokerId leader = c.state(tp)->leader;
  for (BrokerId b : c.broker_ids()) {
    if (b != leader) c.stop_broker(b);
  }
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr == std::vector<BrokerId>{leader}; },
                          Duration::seconds(120)));
  c.run_for(Duration::seconds(1));
  auto refused = c.produce(tp, {2}, -1);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->error, ErrorCode::not_enough_replicas);
  EXPECT_EQ(c.log_values(leader, tp), std::vector<uint64_t>{1}) << "refused before the append";
  // acks=1 still goes through.
  EXPECT_EQ(c.produce(tp, {3}, 1)->error, ErrorCode::none);
}

// NOT_ENOUGH_REPLICAS_AFTER_APPEND: appended while the ISR was big enough,
// but the ISR shrank below min.insync.replicas before the high watermark
// covered the batch.
TEST(KafkaDataLoss, IsrShrinkWhileWaitingGivesNotEnoughReplicasAfterAppend) {
  Cluster c({.brokers = 2, .version = VersionProfile::v2_2,
             .broker_properties = {{"min.insync.replicas", "2"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const BrokerId leader = non_controller(c);
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, leader_first(c, leader)}}), ErrorCode::none);
  const BrokerId follower = leader == 1 ? 2 : 1;
  cut(c, leader, follower);
  auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
  c.produce_async(tp, {5}, -1, out, 60000);
  // replica.lag.time.max.ms is 10 s on 2.2: the leader shrinks the ISR to
  // itself, and the waiting produce completes with the after-append error.
  c.run_for(Duration::seconds(20));
  ASSERT_TRUE(out->has_value());
  EXPECT_EQ((*out)->error, ErrorCode::not_enough_replicas_after_append);
  EXPECT_EQ(c.state(tp)->isr, std::vector<BrokerId>{leader});
}

// RF 2: the follower falls out of the ISR, the leader takes more writes and
// dies. Without unclean election the partition stays offline until the old
// leader returns, with everything; with it, the stale follower leads and the
// writes it never had are gone.
class UncleanElection : public ::testing::TestWithParam<bool> {};

TEST_P(UncleanElection, LosesDataOnlyWhenEnabled) {
  const bool unclean = GetParam();
  Cluster c({.brokers = 3, .version = VersionProfile::v2_2,
             .broker_properties = {{"unclean.leader.election.enable", unclean ? "true" : "false"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const std::vector<BrokerId> others = c.broker_ids_except(*c.controller());
  const BrokerId leader = others[0], follower = others[1];
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 2, {}, {{0, {leader, follower}}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
  cut(c, leader, follower);
  // A follower at the leader's log end is never out of sync, however long
  // it is silent: it must fall behind first.
  ASSERT_EQ(c.produce(tp, {2}, 1)->error, ErrorCode::none);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr == std::vector<BrokerId>{leader}; },
                          Duration::seconds(60)));
  ASSERT_EQ(c.produce(tp, {3}, -1)->error, ErrorCode::none) << "min.insync.replicas=1";
  c.kill_broker(leader);
  c.world().network().heal();
  c.run_for(Duration::seconds(30));
  auto s = c.state(tp);
  if (!unclean) {
    EXPECT_EQ(s->leader, kNoBroker);
    EXPECT_EQ(s->isr, std::vector<BrokerId>{leader}) << "the last ISR member stays";
    c.start_broker(leader);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->leader == leader; }, Duration::seconds(60)));
    c.run_for(Duration::seconds(5));
    EXPECT_EQ(c.committed_values(tp), (std::vector<uint64_t>{1, 2, 3}));
  } else {
    EXPECT_EQ(s->leader, follower);
    EXPECT_EQ(s->isr, std::vector<BrokerId>{follower});
    c.start_broker(leader);
    ASSERT_TRUE(c.run_until([&] { return c.state(tp)->isr.size() == 2; }, Duration::seconds(120)));
    c.run_for(Duration::seconds(5));
    EXPECT_EQ(c.committed_values(tp), std::vector<uint64_t>{1}) << "values 2 and 3 were acknowledged and lost";
    EXPECT_EQ(c.log_values(leader, tp), std::vector<uint64_t>{1});
  }
}
INSTANTIATE_TEST_SUITE_P(KafkaDataLoss, UncleanElection, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Enabled" : "Disabled"; });

// KIP-101: a follower that truncates to its high watermark when it becomes
// a follower of a new leader can throw away a record the old leader had
// already acknowledged (its high watermark lags the leader's by a fetch). If
// the new leader then dies too, that follower leads without the record.
// Truncating by leader epoch keeps it. RF 3 on brokers 1 (leader), 2, 3;
// broker 3 cannot send to 2, so it cannot re-fetch from 2.
class Truncation : public ::testing::TestWithParam<bool> {};

TEST_P(Truncation, ByHighWatermarkLosesAnAcknowledgedRecordWhereByLeaderEpochDoesNot) {
  const bool by_hw = GetParam();
  Cluster c({.brokers = 3,
             .broker_properties = {{"min.insync.replicas", "2"},
                                   {"replica.fetch.wait.max.ms", "5000"},
                                   {"kafkasim.truncation", by_hw ? "high-watermark" : "leader-epoch"}}});
  InvariantChecker check(c);
  c.start();
  ASSERT_TRUE(c.await_ready());
  const TopicPartition tp{"t", 0};
  ASSERT_EQ(c.create_topic("t", 1, 3, {}, {{0, {1, 2, 3}}}), ErrorCode::none);
  ASSERT_EQ(c.produce(tp, {1}, -1)->error, ErrorCode::none);
  c.run_for(Duration::seconds(6));  // the followers learn the high watermark 1
  auto acked = c.produce(tp, {2}, -1);
  ASSERT_TRUE(acked.has_value());
  ASSERT_EQ(acked->error, ErrorCode::none);
  // Both followers hold value 2, but their high watermark is still 1: they
  // learn 2 only from the answer to a fetch that is now parked for 5 s.
  for (BrokerId b : {2, 3}) {
    EXPECT_EQ(c.log_values(b, tp), (std::vector<uint64_t>{1, 2}));
    EXPECT_EQ(c.broker(b)->partition(tp)->high_watermark(), Offset{1});
  }
  c.world().network().block(c.broker_host(3), c.broker_host(2));
  c.kill_broker(1);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->leader == 2; }, Duration::seconds(60)));
  c.run_for(Duration::seconds(3));
  ASSERT_EQ(c.broker(3)->partition(tp)->leader(), 2) << "broker 3 heard of the new leader";
  const std::vector<uint64_t> expected = by_hw ? std::vector<uint64_t>{1} : std::vector<uint64_t>{1, 2};
  EXPECT_EQ(c.log_values(3, tp), expected);
  c.kill_broker(2);
  ASSERT_TRUE(c.run_until([&] { return c.state(tp)->leader == 3; }, Duration::seconds(60)));
  c.world().network().heal();
  c.run_for(Duration::seconds(5));
  if (by_hw) {
    EXPECT_EQ(c.committed_values(tp), std::vector<uint64_t>{1}) << "acknowledged value 2 lost";
  } else {
    EXPECT_EQ(c.committed_values(tp), (std::vector<uint64_t>{1, 2}));
  }
}
INSTANTIATE_TEST_SUITE_P(KafkaDataLoss, Truncation, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "HighWatermark" : "LeaderEpoch"; });

// Power-off loses what only the page cache held (the default flush policy
// fsyncs nothing), on every replica at once. How much each replica keeps is
// up to the disk (the kernel may have written part of the dirty data), so
// this holds across seeds: what survives is always a prefix of what was
// acknowledged, and some seeds lose acknowledged values.
std::vector<uint64_t> power_cycle_all(uint64_t seed, std::map<std::string, std::string> props) {
  sim::DiskOptions disk;
  disk.writeback_delay = Duration::max();
  disk.torn_write_percent = 0;
  props["min.insync.replicas"] = "2";
  Cluster c({.brokers = 3, .seed = seed, .broker_properties = props, .disk = disk});
  InvariantChecker check(c);
  c.start();
  EXPECT_TRUE(c.await_ready());
  const TopicPartition tp{"t", 0};
  EXPECT_EQ(c.create_topic("t", 1, 3), ErrorCode::none);
  for (uint64_t v = 1; v <= 20; ++v) EXPECT_EQ(c.produce(tp, {v}, -1)->error, ErrorCode::none);
  for (BrokerId b : c.broker_ids()) c.power_off_broker(b);
  // Longer than the session timeout: a broker back sooner would find its
  // old /brokers/ids znode and refuse to start, as a real one does.
  c.run_for(Duration::seconds(30));
  for (BrokerId b : c.broker_ids()) c.power_on_broker(b);
  c.run_for(Duration::seconds(60));
  return c.committed_values(tp);
}

TEST(KafkaDataLoss, PowerOffOfEveryReplicaLosesTheUnflushedTail) {
  int seeds_that_lost = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const std::vector<uint64_t> got = power_cycle_all(seed, {});
    ASSERT_LE(got.size(), 20u);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i + 1) << "seed " << seed;
    seeds_that_lost += got.size() < 20 ? 1 : 0;
  }
  EXPECT_GT(seeds_that_lost, 0) << "acknowledged values lost with the page cache";
}

TEST(KafkaDataLoss, FlushEveryMessageSurvivesPowerOff) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    EXPECT_EQ(power_cycle_all(seed, {{"log.flush.interval.messages", "1"}}).size(), 20u) << "seed " << seed;
  }
}

}  // namespace
}  // namespace kafka::testing
