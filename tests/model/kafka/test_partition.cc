// Tests for model/kafka/partition: one replica's leader/follower state.
//
// Each test holds a Partition over a real PartitionLog on a one-host World,
// through the context of a process that does nothing by itself (as in
// test_log.cc). The broker under test is broker 1; the partition's replicas
// are brokers 1, 2 and 3 unless a test says otherwise. Partition takes the
// time as an argument, so the tests pass virtual milliseconds directly and
// never run the world.
//
// The rules checked are Kafka's (kafka.cluster.Partition, kafka.cluster.Replica
// and kafka.log.ProducerStateManager), as partition.h states them.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "model/kafka/partition.h"
#include "sim/world.h"

namespace kafka {

// Readable failures: gtest finds this by argument-dependent lookup.
template <typename Tag>
[[maybe_unused]] static void PrintTo(const Quantity<Tag>& q, std::ostream* os) {
  *os << q.value;
}

namespace {

constexpr const char* kDir = "/tmp/kafka-logs/tiny-0";
constexpr BrokerId kLocal = 1;
constexpr ProducerId kPid = 4000;
constexpr int64_t kLagMaxMs = 30000;  // replica.lag.time.max.ms (2.5+ default)

const TopicPartition kTp{"tiny", 0};

// A process that only lends its context to the log under test.
class Idle final : public sim::Process {
 public:
  void on_start() override {}
  sim::ProcessContext& context() { return ctx(); }
};

PartitionState state(BrokerId leader, LeaderEpoch epoch, std::vector<BrokerId> isr,
                     std::vector<BrokerId> replicas = {1, 2, 3}, int32_t zk_version = 0) {
  return PartitionState{.tp = kTp,
                        .controller_epoch = ControllerEpoch{5},
                        .leader = leader,
                        .leader_epoch = epoch,
                        .isr = std::move(isr),
                        .zk_version = zk_version,
                        .replicas = std::move(replicas)};
}

// A record from producer `pid` with sequence `seq`; offsets are the log's.
Record idempotent(int32_t seq, int16_t epoch = 0, ProducerId pid = kPid) {
  Record r;
  r.producer_id = pid;
  r.producer_epoch = epoch;
  r.sequence = seq;
  r.value = static_cast<uint64_t>(seq) + 1;
  r.size = 10;
  return r;
}

// One host, one idle process, and a Partition of broker 1 over its log.
class Bed {
 public:
  Bed() : world_(1) {
    host_ = world_.add_host("broker1", "10.0.0.1");
    process_ = world_.add_process(host_, "broker", [] { return std::make_unique<Idle>(); });
    world_.boot();
    reopen();
  }

  Partition& p() { return *partition_; }
  PartitionLog& log() { return partition_->log(); }

  // A fresh Partition over what the directory holds now.
  void reopen() {
    partition_.reset();
    auto log = std::make_unique<PartitionLog>(ctx(), kDir, LogConfig{});
    log->load();
    partition_ = std::make_unique<Partition>(kTp, std::move(log), kLocal);
  }

  // Appends `n` plain records as the leader of `epoch`.
  Offset produce(int n, LeaderEpoch epoch = LeaderEpoch{0}, int64_t now_ms = 0) {
    std::vector<Record> batch(static_cast<size_t>(n));
    for (Record& r : batch) r.size = 10;
    return log().append_as_leader(std::move(batch), epoch, now_ms);
  }

  // The broker's produce path for an accepted batch: append as leader, then
  // record the producer state from what was written. Returns the first offset.
  Offset append_batch(std::vector<Record> batch, LeaderEpoch epoch = LeaderEpoch{0}) {
    const Offset first = log().append_as_leader(std::move(batch), epoch, 0);
    p().record_producers(log().read(first, log().log_end(), INT64_MAX));
    return first;
  }
  // A batch of sequences [first, last] from one producer.
  Offset append_sequences(int32_t first, int32_t last, int16_t epoch = 0, ProducerId pid = kPid) {
    std::vector<Record> batch;
    for (int32_t s = first; s <= last; ++s) batch.push_back(idempotent(s, epoch, pid));
    return append_batch(std::move(batch));
  }

  SequenceCheck check(int32_t first, int32_t last, int16_t epoch = 0, Offset* dup = nullptr,
                      ProducerId pid = kPid) {
    return p().check_sequence(pid, epoch, first, last, dup);
  }

 private:
  sim::ProcessContext& ctx() { return world_.process_as<Idle>(process_)->context(); }

  sim::World world_;
  sim::HostId host_;
  sim::ProcessId process_;
  std::unique_ptr<Partition> partition_;
};

// --- make_leader / make_follower -------------------------------------------------

TEST(KafkaPartitionLeadership, MakeLeaderStartsTheEpochAtTheLogEndAndCachesIt) {
  Bed bed;
  bed.produce(3, LeaderEpoch{0});
  ASSERT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{0}, Offset{0}}}));

  bed.p().make_leader(state(kLocal, LeaderEpoch{4}, {1, 2}, {1, 2, 3}, 17), 1000);

  EXPECT_TRUE(bed.p().is_leader());
  EXPECT_EQ(bed.p().leader(), kLocal);
  EXPECT_EQ(bed.p().leader_epoch(), LeaderEpoch{4});
  EXPECT_EQ(bed.p().controller_epoch(), ControllerEpoch{5});
  EXPECT_EQ(bed.p().zk_version(), 17);
  EXPECT_EQ(bed.p().isr(), (std::vector<BrokerId>{1, 2}));
  EXPECT_EQ(bed.p().replicas(), (std::vector<BrokerId>{1, 2, 3}));
  EXPECT_EQ(bed.p().leader_epoch_start(), Offset{3});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{0}, Offset{0}},
                                                         {LeaderEpoch{4}, Offset{3}}}));
  EXPECT_EQ(bed.log().latest_epoch(), LeaderEpoch{4});
}

TEST(KafkaPartitionLeadership, MakeLeaderOnAnEmptyLogStartsTheEpochAtZero) {
  Bed bed;
  bed.p().make_leader(state(kLocal, LeaderEpoch{0}, {1, 2, 3}), 0);
  EXPECT_EQ(bed.p().leader_epoch_start(), Offset{0});
  EXPECT_EQ(bed.log().epochs(), (std::vector<EpochEntry>{{LeaderEpoch{0}, Offset{0}}}));
}

TEST(KafkaPartitionLeadership, IsrFollowersCountAsCaughtUpAtMakeLeaderOthersDoNot) {
  Bed bed;
  bed.produce(5);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 7000);

  const auto& f = bed.p().followers();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.count(kLocal), 0u) << "the leader does not track itself";
  EXPECT_EQ(f.at(2).last_caught_up_ms, 7000);
  EXPECT_EQ(f.at(3).last_caught_up_ms, 0);
  // What a follower has is learned from its next fetch.
  EXPECT_EQ(f.at(2).log_end, Offset{-1});
  EXPECT_EQ(f.at(3).log_end, Offset{-1});
  EXPECT_EQ(f.at(2).last_fetch_leader_log_end, Offset{-1});
}

TEST(KafkaPartitionLeadership, ASecondLeaderAndIsrForTheSameEpochKeepsFollowerProgress) {
  Bed bed;
  bed.produce(5);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 1000);
  bed.p().update_follower(2, Offset{5}, 2000);
  bed.produce(2, LeaderEpoch{1});

  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}, {1, 2, 3}, 3), 3000);

  EXPECT_EQ(bed.p().leader_epoch_start(), Offset{5}) << "not moved to the new log end";
  EXPECT_EQ(bed.p().followers().at(2).log_end, Offset{5});
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 2000);
  EXPECT_EQ(bed.p().isr(), (std::vector<BrokerId>{1, 2}));
  EXPECT_EQ(bed.p().zk_version(), 3);
}

// The controller raises the epoch of a partition whose leader stays (an ISR
// member died or shut down): Partition.makeLeader resets only a new leader's
// view of its followers (2.2 resetLastCaughtUpTime, 3.x
// Replica.resetReplicaState with isNewLeader false).
TEST(KafkaPartitionLeadership, ANewEpochAtTheSameLeaderKeepsWhatItsFollowersHave) {
  Bed bed;
  bed.produce(5);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 1000);
  bed.p().update_follower(2, Offset{5}, 1500);
  bed.p().update_follower(3, Offset{5}, 1600);
  bed.produce(2, LeaderEpoch{1});
  bed.p().update_follower(3, Offset{7}, 1700);
  bed.p().maybe_increment_high_watermark(1700);
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});

  bed.p().make_leader(state(kLocal, LeaderEpoch{2}, {1, 3}, {1, 2, 3}, 1), 3000);

  EXPECT_EQ(bed.p().leader_epoch_start(), Offset{7});
  const FollowerState& in_isr = bed.p().followers().at(3);
  EXPECT_EQ(in_isr.log_end, Offset{7});
  EXPECT_EQ(in_isr.last_caught_up_ms, 3000);
  EXPECT_EQ(in_isr.last_fetch_leader_log_end, Offset{7});
  EXPECT_EQ(in_isr.last_fetch_ms, 3000);
  const FollowerState& out = bed.p().followers().at(2);
  EXPECT_EQ(out.log_end, Offset{5});
  EXPECT_EQ(out.last_caught_up_ms, 0) << "2 is not in the new ISR";
  // The ISR's log ends are known: the watermark moves without waiting for a fetch.
  EXPECT_EQ(bed.p().high_watermark(), Offset{7});
  // A silent follower at the log end stays in the ISR.
  EXPECT_TRUE(bed.p().out_of_sync(100 * kLagMaxMs, kLagMaxMs).empty());
  EXPECT_EQ(out.last_fetch_ms, 3000) << "2.x: every follower's last fetch";

  // 3.3+ (Replica.resetReplicaState): one outside the ISR has not fetched.
  bed.p().set_rules({.new_epoch_forgets_out_of_sync_fetch = true});
  bed.p().make_leader(state(kLocal, LeaderEpoch{3}, {1, 3}, {1, 2, 3}, 2), 4000);
  EXPECT_EQ(bed.p().followers().at(2).last_fetch_ms, 0);
  EXPECT_EQ(bed.p().followers().at(2).log_end, Offset{5});
  EXPECT_EQ(bed.p().followers().at(3).last_fetch_ms, 4000);
}

TEST(KafkaPartitionLeadership, MakeFollowerThenLeaderAgainStartsFresh) {
  Bed bed;
  bed.produce(4);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 1000);
  bed.p().update_follower(2, Offset{4}, 1500);

  bed.p().make_follower(state(2, LeaderEpoch{2}, {2, 3}));
  EXPECT_FALSE(bed.p().is_leader());
  EXPECT_EQ(bed.p().leader(), 2);
  EXPECT_EQ(bed.p().leader_epoch(), LeaderEpoch{2});
  EXPECT_TRUE(bed.p().needs_truncation);
  EXPECT_TRUE(bed.p().followers().empty());
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(1500));
  EXPECT_FALSE(bed.p().can_join_isr(2));
  EXPECT_FALSE(bed.p().can_join_isr(3));
  EXPECT_TRUE(bed.p().out_of_sync(1'000'000, kLagMaxMs).empty());

  bed.produce(2, LeaderEpoch{2});  // as if fetched from broker 2
  bed.p().make_leader(state(kLocal, LeaderEpoch{3}, {1, 3}), 9000);
  EXPECT_FALSE(bed.p().needs_truncation);
  EXPECT_EQ(bed.p().leader_epoch_start(), Offset{6});
  EXPECT_EQ(bed.p().followers().at(2).log_end, Offset{-1});
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 0) << "2 is not in the new ISR";
  EXPECT_EQ(bed.p().followers().at(3).last_caught_up_ms, 9000);
}

TEST(KafkaPartitionLeadership, AFollowerIsNeverTheLeader) {
  Bed bed;
  bed.p().make_follower(state(kNoBroker, LeaderEpoch{3}, {2}));
  EXPECT_FALSE(bed.p().is_leader());
  EXPECT_EQ(bed.p().leader(), kNoBroker);
  bed.p().update_follower(2, Offset{0}, 100);  // ignored: no follower is tracked
  EXPECT_TRUE(bed.p().followers().empty());
}

// --- follower fetch state (Replica.updateFetchState) -------------------------------

TEST(KafkaPartitionFetchState, AFetchAtTheLeaderLogEndIsCaughtUpNow) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}), 100);

  bed.p().update_follower(3, Offset{10}, 250);
  const FollowerState& f = bed.p().followers().at(3);
  EXPECT_EQ(f.log_end, Offset{10});
  EXPECT_EQ(f.last_caught_up_ms, 250);
  EXPECT_EQ(f.last_fetch_leader_log_end, Offset{10});
  EXPECT_EQ(f.last_fetch_ms, 250);
}

TEST(KafkaPartitionFetchState, AFetchReachingThePreviousLeaderLogEndIsCaughtUpAsOfThePreviousFetch) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 50);

  bed.p().update_follower(2, Offset{5}, 100);  // behind the leader's 10
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 50) << "unchanged since make_leader";

  bed.produce(5, LeaderEpoch{1});              // leader log end 15
  bed.p().update_follower(2, Offset{10}, 200);  // reached what the leader had at 100
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 100);
  EXPECT_EQ(bed.p().followers().at(2).last_fetch_leader_log_end, Offset{15});

  bed.p().update_follower(2, Offset{12}, 300);  // short of 15, which the leader had at 200
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 100);

  bed.p().update_follower(2, Offset{15}, 400);  // at the leader's log end
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 400);
}

TEST(KafkaPartitionFetchState, TheFirstFetchBehindTheLeaderDoesNotCountAsCaughtUp) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}), 100);

  // Not in the ISR (caught up "never"), and no previous fetch to compare with.
  bed.p().update_follower(3, Offset{0}, 200);
  EXPECT_EQ(bed.p().followers().at(3).last_caught_up_ms, 0);
  // The previous fetch saw a leader log end of 10; 9 is not enough.
  bed.p().update_follower(3, Offset{9}, 300);
  EXPECT_EQ(bed.p().followers().at(3).last_caught_up_ms, 0);
  bed.p().update_follower(3, Offset{10}, 400);
  EXPECT_EQ(bed.p().followers().at(3).last_caught_up_ms, 400);
}

TEST(KafkaPartitionFetchState, ReachingOnlyThePreviousLogEndGivesThePreviousFetchTimeNotNow) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 100);
  bed.p().update_follower(2, Offset{10}, 500);  // caught up at 500
  bed.produce(1, LeaderEpoch{1});
  // Reaches the leader's log end of the previous fetch (10), but not the
  // current one (11): caught up as of 500, not 600.
  bed.p().update_follower(2, Offset{10}, 600);
  EXPECT_EQ(bed.p().followers().at(2).last_caught_up_ms, 500);
  EXPECT_EQ(bed.p().followers().at(2).last_fetch_ms, 600);
}

TEST(KafkaPartitionFetchState, FetchesFromBrokersThatAreNotReplicasAreIgnored) {
  Bed bed;
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(9, Offset{0}, 10);
  bed.p().update_follower(kConsumerReplicaId, Offset{0}, 10);
  EXPECT_EQ(bed.p().followers().count(9), 0u);
  EXPECT_EQ(bed.p().followers().count(kConsumerReplicaId), 0u);
  EXPECT_EQ(bed.p().followers().size(), 2u);
}

// --- high watermark -------------------------------------------------------------------

TEST(KafkaPartitionHighWatermark, IsTheSmallestLogEndInTheIsr) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 0);
  EXPECT_EQ(bed.p().high_watermark(), Offset{0});

  bed.p().update_follower(2, Offset{7}, 10);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(10)) << "3's log end is still unknown";
  EXPECT_EQ(bed.p().high_watermark(), Offset{0});

  bed.p().update_follower(3, Offset{5}, 20);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(20));
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});

  bed.p().update_follower(2, Offset{10}, 30);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(30)) << "3 still holds it at 5";
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});

  bed.p().update_follower(3, Offset{10}, 40);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(40));
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});
}

TEST(KafkaPartitionHighWatermark, IsCappedByTheLeaderLogEnd) {
  Bed bed;
  bed.produce(4);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{4}, 10);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{4});
  bed.produce(3, LeaderEpoch{1});
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{4});
}

TEST(KafkaPartitionHighWatermark, ReplicasOutsideTheIsrDoNotHoldItBack) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(3, Offset{1}, 5);
  bed.p().update_follower(2, Offset{10}, 10);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});
}

// A follower outside the ISR that has caught up within
// replica.lag.time.max.ms holds the high watermark at its log end
// (Partition.maybeIncrementLeaderHW, every release): a follower catching up
// under load would otherwise find the watermark always past its log end and
// never qualify for the ISR.
TEST(KafkaPartitionHighWatermark, ACaughtUpFollowerOutsideTheIsrHoldsIt) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  bed.p().update_follower(3, Offset{10}, 20);  // at the leader's log end: caught up at 20
  ASSERT_TRUE(bed.p().maybe_increment_high_watermark(20));
  ASSERT_EQ(bed.p().high_watermark(), Offset{10});
  bed.produce(5, LeaderEpoch{1});
  bed.p().update_follower(2, Offset{15}, 30);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(30)) << "3 holds it at 10";
  // 3 fetches the log end it saw last time: caught up as of that fetch.
  bed.p().update_follower(3, Offset{12}, 40);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(40));
  EXPECT_EQ(bed.p().high_watermark(), Offset{12});
  // Silent for longer than replica.lag.time.max.ms: no longer caught up.
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(20 + kLagMaxMs));
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(21 + kLagMaxMs));
  EXPECT_EQ(bed.p().high_watermark(), Offset{15});
}

// From 3.6 (KAFKA-15021) a caught-up follower holds the watermark only if it
// may join the ISR: from 3.3 (KAFKA-14140) its broker must be alive in the
// leader's metadata cache. Before, a dead one held it until its lag ran out.
TEST(KafkaPartitionHighWatermark, From36OnlyAFollowerThatMayJoinTheIsrHoldsIt) {
  for (bool v36 : {false, true}) {
    SCOPED_TRACE(v36 ? "3.6+" : "2.x");
    Bed bed;
    bed.p().set_rules({.isr_join_needs_live_broker = v36, .high_watermark_waits_for_eligible_only = v36});
    bed.p().set_liveness([](BrokerId b) { return b != 3; });
    bed.produce(10);
    bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
    bed.p().update_follower(3, Offset{10}, 20);
    bed.produce(5, LeaderEpoch{1});
    bed.p().update_follower(2, Offset{15}, 30);
    bed.p().maybe_increment_high_watermark(30);
    EXPECT_EQ(bed.p().high_watermark(), v36 ? Offset{15} : Offset{10});
    // 3 at the watermark and the epoch's start, but not alive: not eligible from 3.3.
    bed.p().update_follower(3, Offset{15}, 40);
    EXPECT_EQ(bed.p().can_join_isr(3), !v36);
  }
}

TEST(KafkaPartitionHighWatermark, ALeaderAloneInTheIsrCommitsItsWholeLogAtMakeLeader) {
  Bed bed;
  bed.produce(6);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}), 0);
  EXPECT_EQ(bed.p().high_watermark(), Offset{6});
  bed.produce(2, LeaderEpoch{1});
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(0));
  EXPECT_EQ(bed.p().high_watermark(), Offset{8});
}

TEST(KafkaPartitionHighWatermark, NeverGoesDownAtALeader) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  ASSERT_TRUE(bed.p().maybe_increment_high_watermark(10));
  ASSERT_EQ(bed.p().high_watermark(), Offset{10});

  // A member with a smaller log end joins (or was there all along).
  bed.p().update_follower(3, Offset{4}, 20);
  bed.p().set_isr({1, 2, 3}, 1);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(20));
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});
}

TEST(KafkaPartitionHighWatermark, ShrinkingTheIsrLetsItAdvance) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(10)) << "3 never fetched";
  bed.p().set_isr({1, 2}, 1);
  EXPECT_EQ(bed.p().zk_version(), 1);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});
}

TEST(KafkaPartitionHighWatermark, AFollowerTakesTheLeadersCappedAtItsOwnLogEnd) {
  Bed bed;
  bed.produce(5);
  bed.p().make_follower(state(2, LeaderEpoch{1}, {1, 2}));
  bed.p().set_follower_high_watermark(Offset{8});
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});
  bed.p().set_follower_high_watermark(Offset{3});
  EXPECT_EQ(bed.p().high_watermark(), Offset{3});
  bed.p().set_follower_high_watermark(Offset{5});
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});
}

// Kafka 3.7+ (KAFKA-15583, the 3.9 profile): min.insync.replicas counts at
// most the replication factor, and nothing is committed while the ISR is
// below it.
TEST(KafkaPartitionHighWatermark, StaysPutWhileTheIsrIsBelowMinInsyncWhereKafka15583Applies) {
  for (const bool rule : {false, true}) {
    SCOPED_TRACE(rule ? "3.9" : "2.2");
    Bed bed;
    LogConfig config;
    config.min_insync_replicas = 2;
    bed.log().set_config(config);
    bed.p().set_rules({.min_isr_holds_high_watermark = rule});
    bed.produce(4);
    bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}), 0);
    EXPECT_TRUE(bed.p().under_min_isr());
    // Alone in the ISR: before 3.7 the leader commits its whole log.
    EXPECT_EQ(bed.p().high_watermark(), rule ? Offset{0} : Offset{4});
    bed.p().set_isr({1, 2}, 1);
    bed.p().update_follower(2, Offset{4}, 10);
    EXPECT_FALSE(bed.p().under_min_isr());
    EXPECT_EQ(bed.p().maybe_increment_high_watermark(10), rule);
    EXPECT_EQ(bed.p().high_watermark(), Offset{4});
  }
}

TEST(KafkaPartitionHighWatermark, MinInsyncIsCappedAtTheReplicationFactorOnlyWhereKafka15583Applies) {
  Bed bed;
  LogConfig config;
  config.min_insync_replicas = 3;
  bed.log().set_config(config);
  bed.p().make_leader(state(kLocal, LeaderEpoch{0}, {1, 2}, {1, 2}), 0);
  EXPECT_EQ(bed.p().effective_min_isr(), 3);
  EXPECT_TRUE(bed.p().under_min_isr()) << "2.2: an acks=all write to RF 2 with min.insync.replicas=3 fails";
  bed.p().set_rules({.min_isr_holds_high_watermark = true});
  EXPECT_EQ(bed.p().effective_min_isr(), 2);
  EXPECT_FALSE(bed.p().under_min_isr());
}

TEST(KafkaPartitionHighWatermark, TheCheckpointedValueIsCappedAtTheLogEnd) {
  Bed bed;
  bed.produce(5);
  bed.p().set_checkpointed_high_watermark(Offset{9});
  EXPECT_EQ(bed.p().high_watermark(), Offset{5});
  bed.p().set_checkpointed_high_watermark(Offset{2});
  EXPECT_EQ(bed.p().high_watermark(), Offset{2});
}

TEST(KafkaPartitionHighWatermark, MakeLeaderKeepsACheckpointedValueWhileAnIsrMemberIsUnknown) {
  Bed bed;
  bed.produce(8);
  bed.p().set_checkpointed_high_watermark(Offset{3});
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  EXPECT_EQ(bed.p().high_watermark(), Offset{3});
}

// --- ISR expansion and shrink ----------------------------------------------------------

TEST(KafkaPartitionIsr, AFollowerJoinsOnceItReachesTheHighWatermark) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  bed.p().maybe_increment_high_watermark(10);
  ASSERT_EQ(bed.p().high_watermark(), Offset{10});

  bed.p().update_follower(3, Offset{9}, 20);
  EXPECT_FALSE(bed.p().can_join_isr(3));
  bed.p().update_follower(3, Offset{10}, 30);
  EXPECT_TRUE(bed.p().can_join_isr(3));

  bed.p().set_isr({1, 2, 3}, 1);
  EXPECT_FALSE(bed.p().can_join_isr(3)) << "already in the ISR";
}

TEST(KafkaPartitionIsr, AFollowerMustAlsoReachTheStartOfTheLeaderEpoch) {
  Bed bed;
  bed.produce(10);
  // A high watermark below the epoch start: checkpointed at 4, and held
  // there by ISR member 2, which has not fetched yet.
  bed.p().set_checkpointed_high_watermark(Offset{4});
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  ASSERT_EQ(bed.p().high_watermark(), Offset{4});
  ASSERT_EQ(bed.p().leader_epoch_start(), Offset{10});

  bed.p().update_follower(3, Offset{6}, 10);  // >= HW 4 but < epoch start 10
  EXPECT_FALSE(bed.p().can_join_isr(3));
  bed.p().update_follower(3, Offset{10}, 20);
  EXPECT_TRUE(bed.p().can_join_isr(3));
}

TEST(KafkaPartitionIsr, AFollowerNotHeardFromIsNeverAdded) {
  Bed bed;
  bed.p().make_leader(state(kLocal, LeaderEpoch{0}, {1}), 0);
  // The log is empty: HW and epoch start are 0, but 2 and 3 have not fetched.
  EXPECT_FALSE(bed.p().can_join_isr(2));
  EXPECT_FALSE(bed.p().can_join_isr(3));
  bed.p().update_follower(2, Offset{0}, 10);
  EXPECT_TRUE(bed.p().can_join_isr(2));
  EXPECT_FALSE(bed.p().can_join_isr(3));
}

TEST(KafkaPartitionIsr, EachFollowerIsJudgedOnItsOwnAndOnlyAnAssignedOneCanJoin) {
  Bed bed;
  bed.produce(3);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}, {1, 2, 3, 4}), 0);
  bed.p().update_follower(4, Offset{3}, 10);
  bed.p().update_follower(2, Offset{1}, 11);
  EXPECT_TRUE(bed.p().can_join_isr(4));
  EXPECT_FALSE(bed.p().can_join_isr(2));
  EXPECT_FALSE(bed.p().can_join_isr(3)) << "not heard from";
  EXPECT_FALSE(bed.p().can_join_isr(5)) << "not a replica";
  EXPECT_FALSE(bed.p().can_join_isr(kLocal)) << "the leader is in the ISR";
}

TEST(KafkaPartitionIsr, AFollowerLeavesAfterReplicaLagTimeMax) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 1000);
  bed.produce(5, LeaderEpoch{1});  // leader log end 15
  bed.p().update_follower(2, Offset{15}, 20'000);  // 2 caught up at 20 s
  bed.p().update_follower(3, Offset{12}, 20'000);  // 3 behind; caught up as of 1 s
  bed.produce(1, LeaderEpoch{1});                   // neither is at the leader's log end

  EXPECT_TRUE(bed.p().out_of_sync(1000 + kLagMaxMs, kLagMaxMs).empty()) << "exactly the max is fine";
  EXPECT_EQ(bed.p().out_of_sync(1001 + kLagMaxMs, kLagMaxMs), (std::vector<BrokerId>{3}));
  EXPECT_EQ(bed.p().out_of_sync(20'001 + kLagMaxMs, kLagMaxMs), (std::vector<BrokerId>{2, 3}));
}

TEST(KafkaPartitionIsr, OnlyIsrMembersOtherThanTheLeaderCanBeOutOfSync) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  // 3 is not in the ISR and has never caught up; 1 is the leader.
  EXPECT_EQ(bed.p().out_of_sync(10 * kLagMaxMs, kLagMaxMs), (std::vector<BrokerId>{2}));
}

TEST(KafkaPartitionIsr, AnIsrMemberThatNeverFetchesLeavesAfterTheLagTime) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 5000);
  EXPECT_TRUE(bed.p().out_of_sync(5000 + kLagMaxMs, kLagMaxMs).empty());
  EXPECT_EQ(bed.p().out_of_sync(5001 + kLagMaxMs, kLagMaxMs), (std::vector<BrokerId>{2}));
}

// Kafka never shrinks the ISR by a follower whose log end equals the
// leader's, however long ago it last fetched (Partition.getOutOfSyncReplicas
// since 2.1: `followerReplica.logEndOffset != leaderEndOffset && ...`; 3.x:
// ReplicaState.isCaughtUp: `leaderEndOffset == logEndOffset || ...`). On an
// idle partition a follower that stopped fetching therefore stays in the ISR.
TEST(KafkaPartitionIsr, AFollowerAtTheLeaderLogEndIsNeverOutOfSync) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{10}, 1000);
  // No more fetches and no more appends.
  EXPECT_TRUE(bed.p().out_of_sync(1001 + kLagMaxMs, kLagMaxMs).empty());
  EXPECT_TRUE(bed.p().out_of_sync(100 * kLagMaxMs, kLagMaxMs).empty());
  // One more record at the leader and the old fetch no longer counts.
  bed.produce(1, LeaderEpoch{1});
  EXPECT_EQ(bed.p().out_of_sync(1001 + kLagMaxMs, kLagMaxMs), (std::vector<BrokerId>{2}));
}

// --- the maximal ISR while an ISR write is in flight (KIP-497) --------------------------

TEST(KafkaPartitionMaximalIsr, AMemberBeingAddedHoldsTheHighWatermarkUntilItsWriteLands) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  ASSERT_TRUE(bed.p().maybe_increment_high_watermark(10));
  bed.p().update_follower(3, Offset{10}, 20);
  ASSERT_TRUE(bed.p().can_join_isr(3));
  bed.p().set_pending_isr({1, 2, 3});

  bed.produce(4, LeaderEpoch{1});  // log end 14
  bed.p().update_follower(2, Offset{14}, 30);
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(30)) << "3, being added, is at 10";
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});

  bed.p().update_follower(3, Offset{12}, 40);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(40));
  EXPECT_EQ(bed.p().high_watermark(), Offset{12});

  bed.p().set_isr({1, 2, 3}, 1);
  bed.p().clear_pending_isr();
  bed.p().update_follower(3, Offset{14}, 50);
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(50));
  EXPECT_EQ(bed.p().high_watermark(), Offset{14});
}

TEST(KafkaPartitionMaximalIsr, AMemberBeingRemovedStillHoldsTheHighWatermark) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2, 3}), 0);
  bed.p().update_follower(2, Offset{10}, 10);
  bed.p().update_follower(3, Offset{4}, 10);
  ASSERT_TRUE(bed.p().maybe_increment_high_watermark(10));
  ASSERT_EQ(bed.p().high_watermark(), Offset{4});

  bed.p().set_pending_isr({1, 2});  // shrink in flight: 3 is still in the ISR
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{4});

  bed.p().set_isr({1, 2}, 1);
  bed.p().clear_pending_isr();
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(10));
  EXPECT_EQ(bed.p().high_watermark(), Offset{10});
}

TEST(KafkaPartitionMaximalIsr, ANewLeaderAndIsrStateDropsThePendingIsr) {
  Bed bed;
  bed.produce(10);
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1}), 0);
  ASSERT_EQ(bed.p().high_watermark(), Offset{10});
  bed.p().set_pending_isr({1, 3});  // 3 has not fetched: it would hold the HW
  bed.produce(2, LeaderEpoch{1});
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(0));

  bed.p().make_leader(state(kLocal, LeaderEpoch{2}, {1}), 100);
  EXPECT_EQ(bed.p().high_watermark(), Offset{12});

  bed.p().make_follower(state(2, LeaderEpoch{3}, {1, 2}));
  bed.p().set_pending_isr({1, 3});
  bed.p().make_leader(state(kLocal, LeaderEpoch{4}, {1}), 200);
  bed.produce(1, LeaderEpoch{4});
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(200));
  EXPECT_EQ(bed.p().high_watermark(), Offset{13});
}

// --- idempotent producers ------------------------------------------------------------------

TEST(KafkaPartitionProducers, ANewProducerMustStartAtSequenceZero) {
  Bed bed;
  EXPECT_EQ(bed.check(0, 4), SequenceCheck::append);
  EXPECT_EQ(bed.check(1, 4), SequenceCheck::out_of_order);
  EXPECT_EQ(bed.check(5, 9), SequenceCheck::out_of_order);
}

// From Kafka 2.5 (KIP-360) a leader with no state for a producer takes its
// batch at any sequence: the producer's earlier records may have been
// truncated away or never reached this replica (an unclean election). A
// producer the leader knows still needs sequence 0 in a new epoch.
TEST(KafkaPartitionProducers, From25AnUnknownProducerMayStartAtAnySequence) {
  Bed bed;
  ReplicationRules rules;
  rules.unknown_producer_any_sequence = true;
  bed.p().set_rules(rules);
  EXPECT_EQ(bed.check(5, 9), SequenceCheck::append);
  EXPECT_EQ(bed.check(5, 9, 0, nullptr, kPid + 1), SequenceCheck::append);
  bed.append_sequences(0, 4);
  EXPECT_EQ(bed.check(7, 9), SequenceCheck::out_of_order) << "a known producer's gap";
  EXPECT_EQ(bed.check(3, 5, /*epoch=*/1), SequenceCheck::out_of_order) << "a new epoch starts at 0";
  EXPECT_EQ(bed.check(0, 2, /*epoch=*/1), SequenceCheck::append);
}

TEST(KafkaPartitionProducers, TheNextBatchMustContinueTheLastSequence) {
  Bed bed;
  bed.append_sequences(0, 4);
  EXPECT_EQ(bed.check(5, 9), SequenceCheck::append);
  EXPECT_EQ(bed.check(6, 9), SequenceCheck::out_of_order) << "a gap";
  EXPECT_EQ(bed.check(4, 8), SequenceCheck::out_of_order) << "overlaps the last batch";
  EXPECT_EQ(bed.check(0, 0), SequenceCheck::duplicate) << "within the last batch";
}

TEST(KafkaPartitionProducers, ADuplicateOfAnyOfTheLastFiveBatchesReturnsItsOriginalOffset) {
  Bed bed;
  std::vector<Offset> first_offsets;
  for (int32_t b = 0; b < 6; ++b) {
    bed.produce(1);  // a record from no producer between batches: offsets differ from sequences
    first_offsets.push_back(bed.append_sequences(2 * b, 2 * b + 1));
  }
  ASSERT_EQ(first_offsets[1], Offset{4});
  ASSERT_EQ(bed.p().producers().at(kPid).batches.size(), 5u);

  for (int32_t b = 1; b < 6; ++b) {
    Offset dup{-1};
    EXPECT_EQ(bed.check(2 * b, 2 * b + 1, 0, &dup), SequenceCheck::duplicate) << "batch " << b;
    EXPECT_EQ(dup, first_offsets[static_cast<size_t>(b)]) << "batch " << b;
  }
  // The sixth-newest batch is no longer remembered: Kafka answers
  // OUT_OF_ORDER_SEQUENCE_NUMBER for it.
  Offset untouched{-7};
  EXPECT_EQ(bed.check(0, 1, 0, &untouched), SequenceCheck::out_of_order);
  EXPECT_EQ(untouched, Offset{-7});
  // The next new batch is still fine.
  EXPECT_EQ(bed.check(12, 13), SequenceCheck::append);
}

TEST(KafkaPartitionProducers, ADuplicateCheckWithoutAnOffsetPointerIsAllowed) {
  Bed bed;
  bed.append_sequences(0, 2);
  EXPECT_EQ(bed.p().check_sequence(kPid, 0, 0, 2, nullptr), SequenceCheck::duplicate);
}

TEST(KafkaPartitionProducers, BatchesFetchedTogetherMergeIntoOneRangeThatStillFindsEachDuplicate) {
  Bed bed;
  // A follower appends what one fetch brought: two of the producer's
  // batches back to back (sequences 0-2 and 3-5 at offsets 0-5).
  std::vector<Record> fetched;
  for (int32_t s = 0; s < 6; ++s) {
    Record r = idempotent(s);
    r.offset = Offset{s};
    r.leader_epoch = LeaderEpoch{0};
    fetched.push_back(r);
  }
  bed.log().append_as_follower(fetched, 0);
  bed.p().record_producers(fetched);

  const ProducerEntry& e = bed.p().producers().at(kPid);
  ASSERT_EQ(e.batches.size(), 1u);
  EXPECT_EQ(e.batches.front().first_sequence, 0);
  EXPECT_EQ(e.batches.front().last_sequence, 5);
  EXPECT_EQ(e.batches.front().first_offset, Offset{0});

  Offset dup{-1};
  EXPECT_EQ(bed.check(3, 5, 0, &dup), SequenceCheck::duplicate);
  EXPECT_EQ(dup, Offset{3});
  EXPECT_EQ(bed.check(6, 6), SequenceCheck::append);
}

TEST(KafkaPartitionProducers, ProducersAreTrackedApart) {
  Bed bed;
  bed.append_sequences(0, 3, 0, 1);
  bed.append_sequences(0, 1, 0, 2);
  EXPECT_EQ(bed.check(4, 4, 0, nullptr, 1), SequenceCheck::append);
  EXPECT_EQ(bed.check(2, 2, 0, nullptr, 2), SequenceCheck::append);
  EXPECT_EQ(bed.check(4, 4, 0, nullptr, 2), SequenceCheck::out_of_order);
  EXPECT_EQ(bed.check(0, 0, 0, nullptr, 3), SequenceCheck::append);
}

TEST(KafkaPartitionProducers, RecordsWithoutAProducerAreNotTracked) {
  Bed bed;
  bed.produce(5);
  bed.p().record_producers(bed.log().read(Offset{0}, bed.log().log_end(), INT64_MAX));
  EXPECT_TRUE(bed.p().producers().empty());
}

TEST(KafkaPartitionProducers, AnOlderEpochIsInvalid) {
  Bed bed;
  bed.append_sequences(0, 2, /*epoch=*/3);
  EXPECT_EQ(bed.check(3, 3, 2), SequenceCheck::invalid_epoch);
  EXPECT_EQ(bed.check(0, 0, 2), SequenceCheck::invalid_epoch) << "even at sequence 0";
  EXPECT_EQ(bed.check(0, 2, 2), SequenceCheck::invalid_epoch) << "not a duplicate of another epoch";
}

TEST(KafkaPartitionProducers, ANewEpochMustRestartAtZero) {
  Bed bed;
  bed.append_sequences(0, 4, /*epoch=*/0);
  EXPECT_EQ(bed.check(5, 5, 1), SequenceCheck::out_of_order);
  EXPECT_EQ(bed.check(0, 1, 1), SequenceCheck::append) << "not a duplicate of epoch 0's 0-4";

  bed.append_sequences(0, 1, /*epoch=*/1);
  const ProducerEntry& e = bed.p().producers().at(kPid);
  EXPECT_EQ(e.epoch, 1);
  ASSERT_EQ(e.batches.size(), 1u) << "the old epoch's batches are forgotten";
  EXPECT_EQ(e.batches.front().first_sequence, 0);
  EXPECT_EQ(e.batches.front().last_sequence, 1);
  EXPECT_EQ(bed.check(2, 2, 1), SequenceCheck::append);
  EXPECT_EQ(bed.check(0, 4, 0), SequenceCheck::invalid_epoch);
}

TEST(KafkaPartitionProducers, RebuildAfterTruncationForgetsTheBatchesCutAway) {
  Bed bed;
  bed.append_sequences(0, 1);  // offsets 0-1
  bed.append_sequences(2, 3);  // offsets 2-3
  bed.append_sequences(4, 5);  // offsets 4-5
  ASSERT_EQ(bed.check(2, 3), SequenceCheck::duplicate);

  bed.log().truncate_to(Offset{2});
  bed.p().rebuild_producers();

  const ProducerEntry& e = bed.p().producers().at(kPid);
  ASSERT_EQ(e.batches.size(), 1u);
  EXPECT_EQ(e.batches.front().last_sequence, 1);
  EXPECT_EQ(bed.check(2, 3), SequenceCheck::append) << "the retry is appended again";
  EXPECT_EQ(bed.check(4, 5), SequenceCheck::out_of_order);
  Offset dup{-1};
  EXPECT_EQ(bed.check(0, 1, 0, &dup), SequenceCheck::duplicate);
  EXPECT_EQ(dup, Offset{0});
}

TEST(KafkaPartitionProducers, RebuildOfAnEmptiedLogForgetsTheProducer) {
  Bed bed;
  bed.append_sequences(0, 3);
  bed.log().truncate_to(Offset{0});
  bed.p().rebuild_producers();
  EXPECT_TRUE(bed.p().producers().empty());
  EXPECT_EQ(bed.check(4, 4), SequenceCheck::out_of_order);
  EXPECT_EQ(bed.check(0, 0), SequenceCheck::append);
}

TEST(KafkaPartitionProducers, RebuildKeepsOnlyTheLastFiveBatchesAndTheLatestEpoch) {
  Bed bed;
  bed.append_sequences(0, 0, 0);  // offset 0
  // Seven one-record batches of epoch 1, each after a record from no
  // producer (batches back to back in the log would merge into one range).
  for (int32_t s = 0; s < 7; ++s) {
    bed.produce(1);
    bed.append_sequences(s, s, 1);  // offset 2 + 2s
  }
  bed.p().rebuild_producers();
  const ProducerEntry& e = bed.p().producers().at(kPid);
  EXPECT_EQ(e.epoch, 1);
  ASSERT_EQ(e.batches.size(), 5u);
  EXPECT_EQ(e.batches.front().first_sequence, 2);
  EXPECT_EQ(e.batches.front().first_offset, Offset{6});
  EXPECT_EQ(e.batches.back().last_sequence, 6);
  EXPECT_EQ(e.batches.back().first_offset, Offset{14});
}

TEST(KafkaPartitionProducers, ANewPartitionObjectRebuildsProducersFromItsLog) {
  Bed bed;
  bed.append_sequences(0, 2);
  bed.produce(1);
  bed.append_sequences(3, 4);
  bed.reopen();
  ASSERT_EQ(bed.log().log_end(), Offset{6});
  const ProducerEntry& e = bed.p().producers().at(kPid);
  ASSERT_EQ(e.batches.size(), 2u);
  Offset dup{-1};
  EXPECT_EQ(bed.check(3, 4, 0, &dup), SequenceCheck::duplicate);
  EXPECT_EQ(dup, Offset{4});
  EXPECT_EQ(bed.check(5, 5), SequenceCheck::append);
}

// --- state_version ---------------------------------------------------------------

// kafka::Invariants passes over a led partition whose state_version and log end
// are as at its last check: every change to what it reads must raise the
// version, and a fetch that reports nothing new need not.
TEST(KafkaPartitionStateVersion, RisesWithEveryChangeTheInvariantsRead) {
  Bed bed;
  bed.produce(4);
  uint64_t last = bed.p().state_version();
  auto rose = [&] {
    const uint64_t now = bed.p().state_version();
    const bool up = now > last;
    last = now;
    return up;
  };
  bed.p().make_leader(state(kLocal, LeaderEpoch{1}, {1, 2}), 1000);
  EXPECT_TRUE(rose()) << "make_leader";
  bed.p().update_follower(2, Offset{4}, 1100);
  EXPECT_TRUE(rose()) << "a follower's log end moved";
  bed.p().update_follower(2, Offset{4}, 1200);
  EXPECT_FALSE(rose()) << "the same log end again";
  bed.produce(1, LeaderEpoch{1});
  bed.p().update_follower(2, Offset{5}, 1300);
  EXPECT_TRUE(rose());
  EXPECT_TRUE(bed.p().maybe_increment_high_watermark(1300));
  EXPECT_TRUE(rose()) << "high watermark";
  EXPECT_FALSE(bed.p().maybe_increment_high_watermark(1300));
  EXPECT_FALSE(rose()) << "a high watermark that stays";
  bed.p().set_isr({1, 2, 3}, 1);
  EXPECT_TRUE(rose()) << "set_isr";
  bed.p().set_checkpointed_high_watermark(Offset{2});
  EXPECT_TRUE(rose()) << "set_checkpointed_high_watermark";
  bed.p().make_follower(state(2, LeaderEpoch{2}, {2, 3}));
  EXPECT_TRUE(rose()) << "make_follower";
  bed.p().set_follower_high_watermark(Offset{3});
  EXPECT_TRUE(rose()) << "set_follower_high_watermark";
}

}  // namespace
}  // namespace kafka
