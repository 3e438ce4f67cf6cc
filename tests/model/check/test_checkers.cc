// Tests for model/check/checkers: each checker on small hand-written
// histories and final states (what must be reported, and what must not), then
// a rapidcheck property that on random small histories the lost and
// duplicates checkers agree with a brute-force reference written here with
// plain nested loops, straight from the definitions in checkers.h.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/check/checkers.h"
#include "sim/random.h"
#include "tests/model/check/history_builder.h"

namespace check {
namespace {

using testing::Builder;
using Replica = FinalState::Replica;
using kafka::TopicPartition;

constexpr int64_t kSecond = 1'000'000;

// A replica holding `values` at offsets log_start, log_start + 1, ...
Replica replica(kafka::BrokerId broker, bool leader, int64_t high_watermark,
                std::vector<uint64_t> values, int64_t log_start = 0) {
  Replica r;
  r.broker = broker;
  r.leader = leader;
  r.high_watermark = high_watermark;
  r.log_start = log_start;
  for (size_t i = 0; i < values.size(); ++i) {
    r.records.emplace_back(log_start + static_cast<int64_t>(i), values[i]);
  }
  return r;
}

// A final state with one partition of topic "t" whose leader holds `values`.
FinalState leader_holds(int32_t partition, std::vector<uint64_t> values) {
  FinalState fs;
  const auto n = static_cast<int64_t>(values.size());
  fs.partitions[{"t", partition}].push_back(replica(1, true, n, std::move(values)));
  return fs;
}

// --- lost ----------------------------------------------------------------------

TEST(CheckLost, AnAcknowledgedValueTheLeaderHoldsIsNotLost) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10).send(2, "p", OpType::ok, 10).at(0, 0);
  const LostResult r = check_lost(b.history(), leader_holds(0, {10}));
  EXPECT_EQ(r.acknowledged, 1u);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_TRUE(r.items.empty());
}

TEST(CheckLost, AnAcknowledgedValueNeitherSeenNorHeldIsLost) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10)
      .send(2, "p", OpType::ok, 10).at(0, 0)
      .send(3, "p", OpType::invoke, 11)
      .send(4'000, "p", OpType::ok, 11).at(0, 1);
  // The leader failed over to a replica that had only the first.
  const LostResult r = check_lost(b.history(), leader_holds(0, {10}));
  EXPECT_EQ(r.acknowledged, 2u);
  EXPECT_EQ(r.lost, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].topic, "t");
  EXPECT_EQ(r.items[0].partition, 0);
  EXPECT_EQ(r.items[0].offset, 1);
  EXPECT_EQ(r.items[0].value, 11u);
  EXPECT_EQ(r.items[0].producer, "p");
  EXPECT_EQ(r.items[0].ack_time_us, 4'000);
}

TEST(CheckLost, AValueAConsumerSawIsNotLostEvenIfTruncatedLater) {
  // Seen, then truncated away: a dirty read, reported there, not here.
  Builder b;
  b.send(1, "p", OpType::ok, 11).at(0, 1).record(2, "c", 0, 1, 11);
  EXPECT_EQ(check_lost(b.history(), leader_holds(0, {10})).lost, 0u);
}

TEST(CheckLost, InfoAndFailedSendsAreNeverLost) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10)
      .send(2, "p", OpType::info, 10).at(0).error("REQUEST_TIMED_OUT")
      .send(3, "p", OpType::invoke, 11)
      .send(4, "p", OpType::fail, 11).at(0).error("NOT_ENOUGH_REPLICAS")
      .send(5, "p", OpType::invoke, 12);  // never completed
  const LostResult r = check_lost(b.history(), leader_holds(0, {}));
  EXPECT_EQ(r.acknowledged, 0u);
  EXPECT_EQ(r.lost, 0u);
}

TEST(CheckLost, AValueHeldAtAnotherOffsetIsNotLost) {
  // Acknowledged at 3, truncated, and a retry appended it again at 1.
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 3);
  EXPECT_EQ(check_lost(b.history(), leader_holds(0, {9, 10})).lost, 0u);
}

TEST(CheckLost, AnAcknowledgementWithoutOffsetIsNotJudged) {
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0);  // acks=0
  const LostResult r = check_lost(b.history(), leader_holds(0, {}));
  EXPECT_EQ(r.acknowledged, 0u);
  EXPECT_EQ(r.lost, 0u);
}

TEST(CheckLost, OneValueAcknowledgedTwiceCountsOnce) {
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 0).send(2, "p", OpType::ok, 10).at(0, 1);
  const LostResult r = check_lost(b.history(), leader_holds(0, {}));
  EXPECT_EQ(r.acknowledged, 1u);
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.items.at(0).offset, 0);
}

TEST(CheckLost, WithoutALeaderTheLongestLiveReplicaIsTheFinalLog) {
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 0).send(2, "p", OpType::ok, 11).at(0, 1);
  FinalState fs;
  fs.partitions[{"t", 0}] = {replica(1, false, 1, {10}), replica(2, false, 1, {10, 11})};
  EXPECT_EQ(check_lost(b.history(), fs).lost, 0u);
  fs.partitions[{"t", 0}] = {replica(1, false, 1, {10}), replica(2, false, 1, {10, 12})};
  EXPECT_EQ(check_lost(b.history(), fs).lost, 1u);
}

TEST(CheckLost, WithNoLiveReplicaJepsensRuleDecides) {
  // jepsen.tests.kafka: lost if a consumer read the partition past it.
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 0)
      .send(2, "p", OpType::ok, 11).at(0, 1)
      .send(3, "p", OpType::ok, 12).at(0, 2)
      .record(4, "c", 0, 0, 10)
      .record(4, "c", 0, 1, 99);  // something else stands at 1
  const LostResult r = check_lost(b.history(), FinalState{});
  EXPECT_EQ(r.acknowledged, 3u);
  EXPECT_EQ(r.lost, 0u);  // 11: nobody read past 1
  EXPECT_EQ(r.unverifiable, 2u);
  Builder b2;
  b2.send(1, "p", OpType::ok, 11).at(0, 1).record(4, "c", 0, 2, 99);
  EXPECT_EQ(check_lost(b2.history(), FinalState{}).lost, 1u);
}

TEST(CheckLost, BelowTheLogStartIsUnverifiableNotLost) {
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 0).send(2, "p", OpType::ok, 11).at(0, 5);
  FinalState fs;
  fs.partitions[{"t", 0}] = {replica(1, true, 3, {20, 21, 22}, 3)};
  const LostResult r = check_lost(b.history(), fs);
  EXPECT_EQ(r.unverifiable, 1u);
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.items.at(0).value, 11u);
}

TEST(CheckLost, ItemsAreCappedButTheCountIsComplete) {
  Builder b;
  for (uint64_t v = 0; v < 25; ++v) {
    b.send(static_cast<int64_t>(v), "p", OpType::ok, v).at(0, static_cast<int64_t>(v));
  }
  const LostResult r = check_lost(b.history(), leader_holds(0, {}));
  EXPECT_EQ(r.lost, 25u);
  ASSERT_EQ(r.items.size(), kMaxItems);
  EXPECT_EQ(r.items.front().value, 0u);
  EXPECT_EQ(r.items.back().value, 19u);
  EXPECT_EQ(check_lost(b.history(), leader_holds(0, {}), 3).items.size(), 3u);
}

TEST(CheckLost, TopicsAndPartitionsAreKeptApart) {
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(1, 0);  // partition 1
  b.op(2, "p", OpType::ok, OpFunction::send).topic("u").at(0, 0).value(11).producer("p");
  // Partition 0 of "t" holds 10 and 11, but neither where it was acknowledged.
  FinalState fs = leader_holds(0, {10, 11});
  fs.partitions[{"t", 1}].push_back(replica(1, true, 0, {}));
  fs.partitions[{"u", 0}].push_back(replica(1, true, 0, {}));
  EXPECT_EQ(check_lost(b.history(), fs).lost, 2u);
}

// --- duplicates ----------------------------------------------------------------

TEST(CheckDuplicates, AValueAtTwoOffsetsOfTheFinalLogIsADuplicate) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10)
      .send(2, "p", OpType::info, 10).error("REQUEST_TIMED_OUT")  // written anyway
      .send(3, "p", OpType::invoke, 10)
      .send(4, "p", OpType::ok, 10).at(0, 1);
  const DuplicatesResult r = check_duplicates(b.history(), leader_holds(0, {10, 10, 11}));
  EXPECT_EQ(r.duplicated, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].topic, "t");
  EXPECT_EQ(r.items[0].value, 10u);
  EXPECT_EQ(r.items[0].producer, "p");
  EXPECT_EQ(r.items[0].final_positions, (std::vector<std::pair<int32_t, int64_t>>{{0, 0}, {0, 1}}));
  EXPECT_TRUE(r.items[0].seen_positions.empty());
}

TEST(CheckDuplicates, AValueSeenAtTwoOffsetsIsADuplicate) {
  // Seen at 0 and 2 by two consumers, though the final log has it once.
  Builder b;
  b.record(1, "c1", 0, 0, 10).record(2, "c2", 0, 2, 10);
  const DuplicatesResult r = check_duplicates(b.history(), leader_holds(0, {10, 11}));
  EXPECT_EQ(r.duplicated, 1u);
  EXPECT_EQ(r.items.at(0).seen_positions,
            (std::vector<std::pair<int32_t, int64_t>>{{0, 0}, {0, 2}}));
  EXPECT_EQ(r.items.at(0).producer, "");  // no send, no producer on the records
}

TEST(CheckDuplicates, AcknowledgedAtOneOffsetAndSeenOnceAtAnotherIsNot) {
  // The ack named offset 3, later truncated; the retry landed at 1 and was
  // seen there once: one copy, not two.
  Builder b;
  b.send(1, "p", OpType::ok, 10).at(0, 3).record(2, "c", 0, 1, 10);
  EXPECT_EQ(check_duplicates(b.history(), leader_holds(0, {9, 10})).duplicated, 0u);
}

TEST(CheckDuplicates, SeenOnceHeldElsewhereIsNot) {
  // Seen at 3 (since truncated), held at 1: each source alone has one copy.
  Builder b;
  b.record(2, "c", 0, 3, 10);
  EXPECT_EQ(check_duplicates(b.history(), leader_holds(0, {9, 10})).duplicated, 0u);
}

TEST(CheckDuplicates, TheSameRecordReadTwiceIsNot) {
  Builder b;
  b.record(1, "c1", 0, 0, 10).record(2, "c2", 0, 0, 10).record(3, "c1", 0, 0, 10);
  EXPECT_EQ(check_duplicates(b.history(), leader_holds(0, {10})).duplicated, 0u);
}

TEST(CheckDuplicates, TheSameValueInTwoTopicsIsNot) {
  FinalState fs = leader_holds(0, {10});
  fs.partitions[{"u", 0}].push_back(replica(1, true, 1, {10}));
  EXPECT_EQ(check_duplicates(Builder().history(), fs).duplicated, 0u);
}

TEST(CheckDuplicates, AcrossPartitionsOfOneTopicIsADuplicate) {
  FinalState fs = leader_holds(0, {10});
  fs.partitions[{"t", 1}].push_back(replica(1, true, 1, {10}));
  Builder b;
  b.record(1, "c", 1, 0, 10).producer("p");
  const DuplicatesResult r = check_duplicates(b.history(), fs);
  EXPECT_EQ(r.duplicated, 1u);
  EXPECT_EQ(r.items.at(0).final_positions,
            (std::vector<std::pair<int32_t, int64_t>>{{0, 0}, {1, 0}}));
  EXPECT_EQ(r.items.at(0).producer, "p");  // from the record, there being no send
}

TEST(CheckDuplicates, OnlyTheFinalLogCountsNotOtherReplicas) {
  // A follower still holding a truncated copy is divergence's business.
  FinalState fs;
  fs.partitions[{"t", 0}] = {replica(1, true, 1, {10}), replica(2, false, 0, {11, 10})};
  EXPECT_EQ(check_duplicates(Builder().history(), fs).duplicated, 0u);
}

// --- order ---------------------------------------------------------------------

// Sends 10, 11, 12 in that order (invoke and ack each).
Builder three_sends() {
  Builder b;
  for (uint64_t v = 10; v <= 12; ++v) {
    const auto t = static_cast<int64_t>(v) * 10;
    b.send(t, "p", OpType::invoke, v)
        .send(t + 1, "p", OpType::ok, v)
        .at(0, static_cast<int64_t>(v) - 10);
  }
  return b;
}

TEST(CheckOrder, NothingIsCheckedWhereOrderIsNotPromised) {
  Builder b = three_sends();
  const OrderResult r = check_order(b.history(), leader_holds(0, {12, 11, 10}), OrderPromised::no);
  EXPECT_FALSE(r.checked);
  EXPECT_EQ(r.violations, 0u);
}

TEST(CheckOrder, InSendOrderIsFine) {
  Builder b = three_sends();
  const OrderResult r = check_order(b.history(), leader_holds(0, {10, 11, 12}), OrderPromised::yes);
  EXPECT_TRUE(r.checked);
  EXPECT_EQ(r.violations, 0u);
}

TEST(CheckOrder, AValueBelowAnEarlierSentOneIsAViolation) {
  // 10 failed its first batch and was retried behind 11 and 12
  // (max.in.flight > 1 without idempotence).
  Builder b = three_sends();
  const OrderResult r = check_order(b.history(), leader_holds(0, {11, 12, 10}), OrderPromised::yes);
  EXPECT_EQ(r.violations, 2u);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].producer, "p");
  EXPECT_EQ(r.items[0].earlier_value, 10u);
  EXPECT_EQ(r.items[0].earlier_offset, 2);
  EXPECT_EQ(r.items[0].later_value, 11u);
  EXPECT_EQ(r.items[0].later_offset, 0);
  EXPECT_EQ(r.items[1].later_value, 12u);
}

TEST(CheckOrder, LostValuesAndLaterDuplicatesAreNotViolations) {
  // 11 is lost (the lost checker's business); 10 appears again after 12.
  Builder b = three_sends();
  EXPECT_EQ(check_order(b.history(), leader_holds(0, {10, 12, 10}), OrderPromised::yes).violations,
            0u);
}

TEST(CheckOrder, ProducersAndPartitionsAreSeparateStreams) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10).send(2, "q", OpType::invoke, 20)
      .send(3, "p", OpType::invoke, 11).send(4, "p", OpType::invoke, 12);
  FinalState fs = leader_holds(0, {20, 10, 11});
  fs.partitions[{"t", 1}].push_back(replica(1, true, 1, {12}));
  EXPECT_EQ(check_order(b.history(), fs, OrderPromised::yes).violations, 0u);
}

TEST(CheckOrder, WithNoLiveReplicaTheAcknowledgedOffsetsStandIn) {
  Builder b;
  b.send(1, "p", OpType::invoke, 10).send(2, "p", OpType::invoke, 11)
      .send(3, "p", OpType::ok, 11).at(0, 5).send(4, "p", OpType::ok, 10).at(0, 6);
  const OrderResult r = check_order(b.history(), FinalState{}, OrderPromised::yes);
  EXPECT_EQ(r.violations, 1u);
  EXPECT_EQ(r.items.at(0).earlier_value, 10u);
  EXPECT_EQ(r.items.at(0).later_value, 11u);
}

// --- dirty reads ---------------------------------------------------------------

TEST(CheckDirtyReads, ARecordReadThenTruncatedAwayIsDirtyAndAttributed) {
  Builder b;
  b.record(5 * kSecond, "c", 0, 0, 10).record(5 * kSecond, "c", 0, 1, 11);
  FinalState fs = leader_holds(0, {10});
  fs.truncations.push_back({1 * kSecond, 2, {"t", 0}, 3, 1});  // before the read: not it
  fs.truncations.push_back({9 * kSecond, 3, {"t", 0}, 2, 1});
  fs.truncations.push_back({7 * kSecond, 1, {"t", 0}, 2, 1});  // the first after the read
  fs.truncations.push_back({6 * kSecond, 1, {"t", 1}, 2, 1});  // another partition
  const DirtyReadsResult r = check_dirty_reads(b.history(), fs);
  EXPECT_EQ(r.reads_checked, 2u);
  EXPECT_EQ(r.dirty, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  const auto& item = r.items[0];
  EXPECT_EQ(item.offset, 1);
  EXPECT_EQ(item.value, 11u);
  EXPECT_EQ(item.consumer, "c");
  EXPECT_EQ(item.read_time_us, 5 * kSecond);
  EXPECT_EQ(item.final_value, std::nullopt);
  ASSERT_TRUE(item.truncation.has_value());
  EXPECT_EQ(item.truncation->broker, 1);
  EXPECT_EQ(item.truncation->time_us, 7 * kSecond);
}

TEST(CheckDirtyReads, ARecordReplacedByAnotherIsDirtyWithWhatReplacedIt) {
  Builder b;
  b.record(1, "c", 0, 1, 11);
  const DirtyReadsResult r = check_dirty_reads(b.history(), leader_holds(0, {10, 12}));
  EXPECT_EQ(r.dirty, 1u);
  EXPECT_EQ(r.items.at(0).final_value, 12u);
  EXPECT_EQ(r.items.at(0).truncation, std::nullopt);  // none recorded
}

TEST(CheckDirtyReads, CleanReadsAndRereadsAreNotDirty) {
  Builder b;
  b.record(1, "c", 0, 0, 10).record(2, "c", 0, 0, 10).record(3, "d", 0, 1, 11);
  const DirtyReadsResult r = check_dirty_reads(b.history(), leader_holds(0, {10, 11}));
  EXPECT_EQ(r.reads_checked, 2u);
  EXPECT_EQ(r.dirty, 0u);
}

TEST(CheckDirtyReads, WithoutAFinalLogOrBelowItsStartReadsAreUnverifiable) {
  Builder b;
  b.record(1, "c", 0, 0, 10).record(1, "c", 1, 0, 10);
  FinalState fs;
  fs.partitions[{"t", 0}].push_back(replica(1, true, 5, {}, 5));
  const DirtyReadsResult r = check_dirty_reads(b.history(), fs);
  EXPECT_EQ(r.unverifiable, 2u);
  EXPECT_EQ(r.dirty, 0u);
}

// --- divergence ----------------------------------------------------------------

TEST(CheckDivergence, ReplicasAgreeingBelowTheirHighWatermarksAreFine) {
  FinalState fs;
  // They differ only above broker 2's high watermark (2): not yet committed there.
  fs.partitions[{"t", 0}] = {replica(1, true, 3, {10, 11, 12}), replica(2, false, 2, {10, 11, 99})};
  const DivergenceResult r = check_divergence(fs);
  EXPECT_EQ(r.pairs_compared, 1u);
  EXPECT_EQ(r.divergent_pairs, 0u);
}

TEST(CheckDivergence, ReplicasDisagreeingBelowBothHighWatermarksAreReported) {
  FinalState fs;
  fs.partitions[{"t", 0}] = {replica(3, false, 3, {10, 98, 99}), replica(1, true, 3, {10, 11, 12}),
                             replica(2, false, 3, {10, 11, 12})};
  const DivergenceResult r = check_divergence(fs);
  EXPECT_EQ(r.pairs_compared, 3u);
  EXPECT_EQ(r.divergent_pairs, 2u);
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].tp, (TopicPartition{"t", 0}));
  EXPECT_EQ(r.items[0].broker_a, 1);
  EXPECT_EQ(r.items[0].broker_b, 3);
  EXPECT_EQ(r.items[0].first_offset, 1);
  EXPECT_EQ(r.items[0].value_a, 11u);
  EXPECT_EQ(r.items[0].value_b, 98u);
  EXPECT_EQ(r.items[0].offsets, 2u);
  EXPECT_EQ(r.items[1].broker_a, 2);
  EXPECT_EQ(r.items[1].broker_b, 3);
}

TEST(CheckDivergence, AMissingCommittedRecordIsDivergence) {
  FinalState fs;
  Replica holed = replica(2, false, 3, {10});
  holed.records.emplace_back(2, 12);  // no record at 1, yet high watermark 3
  fs.partitions[{"t", 0}] = {replica(1, true, 3, {10, 11, 12}), holed};
  const DivergenceResult r = check_divergence(fs);
  EXPECT_EQ(r.divergent_pairs, 1u);
  EXPECT_EQ(r.items.at(0).first_offset, 1);
  EXPECT_EQ(r.items.at(0).value_b, std::nullopt);
}

TEST(CheckDivergence, OnlyOffsetsBothStillHoldAreCompared) {
  FinalState fs;
  fs.partitions[{"t", 0}] = {replica(1, true, 4, {10, 11, 12, 13}),
                             replica(2, false, 4, {12, 13}, 2)};
  EXPECT_EQ(check_divergence(fs).divergent_pairs, 0u);
}

// --- availability --------------------------------------------------------------

TEST(CheckAvailability, AStallIsReportedWithTheFaultThatCausedIt) {
  // The lab producer: acknowledged every 10 ms, then node1 powered off just
  // after an ack; it stalls 12 s until its retries find the new leader.
  Builder b;
  int64_t t = 0;
  for (uint64_t v = 0; v < 5; ++v, t += 10'000) {
    b.send(t, "producer", OpType::invoke, v).send(t + 5'000, "producer", OpType::ok, v).at(0, 0);
  }
  const int64_t last_ok = t - 5'000;  // 45 ms
  b.send(t, "producer", OpType::invoke, 5)
      .send(last_ok + 12 * kSecond, "producer", OpType::ok, 5)
      .at(0, 5);
  const std::vector<FaultWindow> faults = {
      {0, 10'000, "pause node3"},  // over before the stall
      {last_ok + 3'000, 40 * kSecond, "power off node1"},
      {50 * kSecond, 60 * kSecond, "partition {1}|{2,3}"},  // after the run
  };
  const AvailabilityResult r =
      check_availability(b.history(), faults, last_ok + 12 * kSecond + 500'000, kSecond);
  EXPECT_EQ(r.threshold_us, kSecond);
  EXPECT_EQ(r.windows, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  const auto& w = r.items[0];
  EXPECT_EQ(w.process, "producer");
  EXPECT_EQ(w.start_us, last_ok);
  EXPECT_EQ(w.end_us, last_ok + 12 * kSecond);
  EXPECT_EQ(w.duration_us, 12 * kSecond);
  EXPECT_FALSE(w.until_end);
  EXPECT_EQ(w.causes, (std::vector<std::string>{"power off node1"}));
  ASSERT_TRUE(r.longest.has_value());
  EXPECT_EQ(r.longest->duration_us, 12 * kSecond);
  ASSERT_EQ(r.per_process.size(), 1u);
  EXPECT_EQ(r.per_process[0].successes, 6u);
  EXPECT_EQ(r.per_process[0].windows, 1u);
  EXPECT_EQ(r.per_process[0].longest_us, 12 * kSecond);
}

TEST(CheckAvailability, AClientThatGaveUpStaysUnavailableToTheEnd) {
  // Two nodes of three off: five tries, then the producer exits.
  Builder b;
  b.send(0, "producer", OpType::invoke, 0).send(1'000, "producer", OpType::ok, 0).at(0, 0);
  for (int i = 0; i < 5; ++i) {
    const int64_t t = 2 * kSecond + i * 10 * kSecond;
    b.send(t, "producer", OpType::invoke, 1)
        .send(t + 10 * kSecond, "producer", OpType::info, 1).error("REQUEST_TIMED_OUT");
  }
  b.op(52 * kSecond, "producer", OpType::info, OpFunction::exit);
  const AvailabilityResult r = check_availability(
      b.history(), {{kSecond, std::numeric_limits<int64_t>::max(), "power off node1, node2"}},
      100 * kSecond);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].start_us, 1'000);
  EXPECT_EQ(r.items[0].end_us, 100 * kSecond);
  EXPECT_TRUE(r.items[0].until_end);
  EXPECT_EQ(r.items[0].causes, (std::vector<std::string>{"power off node1, node2"}));
}

TEST(CheckAvailability, AClientThatNeverSucceededIsOneWindowFromItsFirstOp) {
  Builder b;
  b.poll(3 * kSecond, "consumer", OpType::invoke)
      .poll(4 * kSecond, "consumer", OpType::fail).error("connection_refused");
  const AvailabilityResult r = check_availability(b.history(), {}, 10 * kSecond);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].start_us, 3 * kSecond);
  EXPECT_EQ(r.items[0].duration_us, 7 * kSecond);
  EXPECT_TRUE(r.items[0].causes.empty());
}

TEST(CheckAvailability, ShortGapsAreNotListedButTheLongestIsAlwaysKnown) {
  // An empty poll is a success: the cluster answered.
  Builder b;
  b.poll(0, "consumer", OpType::invoke).poll(100'000, "consumer", OpType::ok)
      .poll(200'000, "consumer", OpType::invoke).poll(900'000, "consumer", OpType::ok);
  b.send(0, "producer", OpType::invoke, 1).send(400'000, "producer", OpType::ok, 1).at(0, 0);
  const AvailabilityResult r = check_availability(b.history(), {}, kSecond);
  EXPECT_EQ(r.windows, 0u);
  EXPECT_TRUE(r.items.empty());
  ASSERT_TRUE(r.longest.has_value());
  EXPECT_EQ(r.longest->process, "consumer");
  EXPECT_EQ(r.longest->duration_us, 800'000);
  ASSERT_EQ(r.per_process.size(), 2u);  // by process index: consumer first
  EXPECT_EQ(r.per_process[0].process, "consumer");
  EXPECT_EQ(r.per_process[0].longest_us, 800'000);
  EXPECT_EQ(r.per_process[1].process, "producer");
  EXPECT_EQ(r.per_process[1].longest_us, 600'000);
  EXPECT_EQ(check_availability(b.history(), {}, kSecond, 500'000).windows, 2u);
}

// --- latency -------------------------------------------------------------------

TEST(CheckLatency, PercentilesByNearestRank) {
  Builder b;
  // Ten sends taking 1..10 ms, out of order, from two producers.
  const int64_t ms[] = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  for (uint64_t i = 0; i < 10; ++i) {
    const char* p = i % 2 == 0 ? "p" : "q";
    const auto t = static_cast<int64_t>(i) * 100'000;
    b.send(t, p, OpType::invoke, i).send(t + ms[i] * 1'000, p, OpType::ok, i).at(0, 0);
  }
  const LatencyResult r = check_latency(b.history());
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(r.min_us, 1'000);
  EXPECT_EQ(r.p50_us, 5'000);   // rank ceil(5.0) = 5
  EXPECT_EQ(r.p90_us, 9'000);   // rank 9
  EXPECT_EQ(r.p99_us, 10'000);  // rank ceil(9.9) = 10
  EXPECT_EQ(r.max_us, 10'000);
}

TEST(CheckLatency, EachTryIsMeasuredFromItsOwnInvoke) {
  Builder b;
  b.send(0, "p", OpType::invoke, 1)
      .send(10 * kSecond, "p", OpType::info, 1)
      .send(10 * kSecond + 10'000, "p", OpType::invoke, 1)
      .send(10 * kSecond + 13'000, "p", OpType::ok, 1).at(0, 0)
      .send(11 * kSecond, "p", OpType::ok, 2).at(0, 1);  // no invoke recorded
  const LatencyResult r = check_latency(b.history());
  EXPECT_EQ(r.count, 1u);
  EXPECT_EQ(r.unpaired, 1u);
  EXPECT_EQ(r.p50_us, 3'000);
  EXPECT_EQ(r.p99_us, 3'000);
}

// The percentiles are selected, not sorted for: any count and any repeats
// must give what sorting and taking the nearest rank gives.
RC_GTEST_PROP(CheckLatencyProperty, PercentilesAgreeWithSortingEveryLatency, ()) {
  const auto ms = *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, 40));
  Builder b;
  for (size_t i = 0; i < ms.size(); ++i) {
    const auto t = static_cast<int64_t>(i) * kSecond;
    b.send(t, "p", OpType::invoke, i).send(t + ms[i] * 1'000, "p", OpType::ok, i).at(0, static_cast<int64_t>(i));
  }
  const LatencyResult r = check_latency(b.history());
  RC_ASSERT(r.count == ms.size());
  if (ms.empty()) return;
  std::vector<int64_t> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  auto rank = [&](uint64_t p) { return sorted[std::max<uint64_t>(1, (p * sorted.size() + 99) / 100) - 1] * 1'000; };
  RC_ASSERT(r.min_us == sorted.front() * 1'000);
  RC_ASSERT(r.p50_us == rank(50));
  RC_ASSERT(r.p90_us == rank(90));
  RC_ASSERT(r.p99_us == rank(99));
  RC_ASSERT(r.max_us == sorted.back() * 1'000);
}

TEST(CheckLatency, NoAcknowledgementsGiveZeros) {
  const LatencyResult r = check_latency(Builder().history());
  EXPECT_EQ(r.count, 0u);
  EXPECT_EQ(r.max_us, 0);
}

// --- consumer groups -----------------------------------------------------------

TEST(CheckGroups, TwoConsumersOwnTwoPartitionsAndTheThirdIsIdle) {
  // Seed 002: three members of one group on a two-partition topic.
  Builder b;
  for (const char* c : {"c1", "c2", "c3"}) {
    b.op(0, c, OpType::invoke, OpFunction::rebalance).detail("group=g");
  }
  b.op(3 * kSecond, "c1", OpType::ok, OpFunction::rebalance)
      .detail("group=g generation=1 assigned=t-0")
      .op(3 * kSecond, "c2", OpType::ok, OpFunction::rebalance)
      .detail("group=g generation=1 assigned=t-1")
      .op(3'100'000, "c3", OpType::ok, OpFunction::rebalance)
      .detail("group=g generation=1 assigned=");
  const GroupResult r = check_groups(b.history());
  ASSERT_EQ(r.groups.size(), 1u);
  const auto& g = r.groups[0];
  EXPECT_EQ(g.group, "g");
  EXPECT_EQ(g.rebalances, 1u);
  EXPECT_EQ(g.failed, 0u);
  EXPECT_EQ(g.longest_us, 3'100'000);
  EXPECT_EQ(g.total_us, 9'100'000);
  ASSERT_EQ(g.durations.size(), 3u);
  EXPECT_EQ(g.durations[2].consumer, "c3");
  EXPECT_EQ(g.assignment, (std::map<std::string, std::vector<std::string>>{
                              {"c1", {"t-0"}}, {"c2", {"t-1"}}, {"c3", {}}}));
  EXPECT_EQ(g.idle, (std::vector<std::string>{"c3"}));
}

TEST(CheckGroups, MembersThatLeaveOrExitAreNoLongerCounted) {
  Builder b;
  b.op(0, "c1", OpType::invoke, OpFunction::rebalance).detail("group=g")
      .op(1, "c1", OpType::ok, OpFunction::rebalance)
      .detail("group=g generation=1 assigned=t-0,t-1")
      .op(2, "c2", OpType::invoke, OpFunction::rebalance).detail("group=g")
      .op(3, "c1", OpType::invoke, OpFunction::rebalance).detail("group=g")
      .op(4, "c2", OpType::ok, OpFunction::rebalance).detail("group=g generation=2 assigned=t-1")
      .op(4, "c1", OpType::ok, OpFunction::rebalance).detail("group=g generation=2 assigned=t-0")
      .op(5, "c2", OpType::info, OpFunction::rebalance).detail("group=g left")
      .op(6, "c1", OpType::invoke, OpFunction::rebalance).detail("group=g")
      .op(7, "c1", OpType::fail, OpFunction::rebalance)
      .detail("group=g")
      .error("COORDINATOR_NOT_AVAILABLE")
      .op(8, "c1", OpType::invoke, OpFunction::rebalance).detail("group=g")
      .op(9, "c1", OpType::ok, OpFunction::rebalance)
      .detail("group=g generation=3 assigned=t-1,t-0")
      .op(10, "c3", OpType::invoke, OpFunction::rebalance).detail("group=h")
      .op(11, "c3", OpType::ok, OpFunction::rebalance).detail("group=h generation=1 assigned=t-0")
      .op(12, "c3", OpType::info, OpFunction::exit);
  const GroupResult r = check_groups(b.history());
  ASSERT_EQ(r.groups.size(), 2u);
  const auto& g = r.groups[0];
  EXPECT_EQ(g.rebalances, 3u);
  EXPECT_EQ(g.failed, 1u);
  EXPECT_EQ(g.assignment,
            (std::map<std::string, std::vector<std::string>>{{"c1", {"t-0", "t-1"}}}));
  EXPECT_TRUE(g.idle.empty());
  EXPECT_EQ(r.groups[1].group, "h");
  EXPECT_TRUE(r.groups[1].assignment.empty());
}

// --- skips ----------------------------------------------------------------------

// Members c1 and c2 of group g; c1 reads offsets 0-2 of t-0 and commits 3,
// then c2 takes the partition over.
Builder group_history() {
  Builder b;
  b.op(0, "c1", OpType::ok, OpFunction::rebalance).detail("group=g generation=1 assigned=t-0")
      .op(0, "c2", OpType::ok, OpFunction::rebalance).detail("group=g generation=1 assigned=")
      .op(1, "c1", OpType::ok, OpFunction::commit).topic("t").at(0, 0)
      .record(2, "c1", 0, 0, 10)
      .record(2, "c1", 0, 1, 11)
      .record(2, "c1", 0, 2, 12)
      .op(3, "c1", OpType::ok, OpFunction::commit).topic("t").at(0, 3)
      .op(4, "c2", OpType::ok, OpFunction::rebalance).detail("group=g generation=2 assigned=t-0");
  return b;
}

TEST(CheckSkips, CommitsPastRecordsTheGroupReadAreFine) {
  Builder b = group_history();
  b.record(5, "c2", 0, 3, 13).record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {"g"});
  EXPECT_EQ(r.commits_checked, 2u);
  EXPECT_EQ(r.skipped, 0u);
  EXPECT_TRUE(r.items.empty());
}

TEST(CheckSkips, ACommitPastARecordNoMemberReadIsASkip) {
  Builder b = group_history();
  // c2 starts at 4: offset 3 was never delivered, yet committed past.
  b.record(5, "c2", 0, 4, 14).op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {"g"});
  EXPECT_EQ(r.skipped, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].group, "g");
  EXPECT_EQ(r.items[0].topic, "t");
  EXPECT_EQ(r.items[0].partition, 0);
  EXPECT_EQ(r.items[0].offset, 3);
  EXPECT_EQ(r.items[0].value, 13u);
  EXPECT_EQ(r.items[0].consumer, "c2");
  EXPECT_EQ(r.items[0].from, 3);
  EXPECT_EQ(r.items[0].to, 5);
  EXPECT_EQ(r.items[0].commit_time_us, 6);
}

TEST(CheckSkips, ARecordThatReplacedOneTheGroupReadIsSkipped) {
  Builder b = group_history();
  // c2 read 13 at offset 3, then a truncation put 23 there: the group never
  // delivered 23 (and 13 is a dirty read).
  b.record(5, "c2", 0, 3, 13).record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 23, 14}), {"g"});
  EXPECT_EQ(r.skipped, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].value, 23u);
}

TEST(CheckSkips, ARecordReadAfterAResetIsNotSkipped) {
  // A truncation left the commit 5 beyond the log: c2 resets to the
  // earliest offset and reads the new records, then commits again.
  Builder b = group_history();
  b.record(5, "c2", 0, 3, 13).record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5)
      .record(7, "c2", 0, 0, 10).record(7, "c2", 0, 1, 11).record(7, "c2", 0, 2, 12)
      .record(7, "c2", 0, 3, 23)
      .op(8, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 4);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 23}), {"g"});
  EXPECT_EQ(r.commits_checked, 3u);
  EXPECT_EQ(r.skipped, 0u);
  // Without the reads after the reset, 23 was never delivered.
  Builder before = group_history();
  before.record(5, "c2", 0, 3, 13).record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  EXPECT_EQ(check_skips(before.history(), leader_holds(0, {10, 11, 12, 23}), {"g"}).skipped, 1u);
}

TEST(CheckSkips, ReadsOfOtherGroupsAndFailedCommitsDoNotCount) {
  Builder b = group_history();
  b.op(4, "x", OpType::ok, OpFunction::rebalance).detail("group=h generation=1 assigned=t-0")
      .record(5, "x", 0, 3, 13)  // group h read it, not g
      .record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::fail, OpFunction::commit).topic("t").at(0, 9).error("ILLEGAL_GENERATION")
      .op(6, "c2", OpType::info, OpFunction::commit).topic("t").at(0, 9).error("REQUEST_TIMED_OUT")
      .op(7, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {"g", "h"});
  EXPECT_EQ(r.commits_checked, 2u);
  EXPECT_EQ(r.skipped, 1u);
}

TEST(CheckSkips, ACommitThatGoesBackIsJudgedFromTheLowerOffset) {
  Builder b = group_history();
  // A late commit of 1, then 5: [1, 5) is judged; c1 read 1 and 2, c2 reads 4.
  b.op(4, "c1", OpType::ok, OpFunction::commit).topic("t").at(0, 1)
      .record(5, "c2", 0, 4, 14)
      .op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  const SkipsResult r = check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {"g"});
  EXPECT_EQ(r.commits_checked, 3u);
  EXPECT_EQ(r.skipped, 1u);
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].offset, 3);
  EXPECT_EQ(r.items[0].from, 1);
}

TEST(CheckSkips, GroupsNotNamedAndPartitionsWithoutAReplicaAreNotJudged) {
  Builder b = group_history();
  b.record(5, "c2", 0, 4, 14).op(6, "c2", OpType::ok, OpFunction::commit).topic("t").at(0, 5);
  EXPECT_EQ(check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {}).skipped, 0u);
  EXPECT_EQ(check_skips(b.history(), leader_holds(0, {10, 11, 12, 13, 14}), {"h"}).commits_checked, 0u);
  const SkipsResult none = check_skips(b.history(), FinalState{}, {"g"});
  EXPECT_EQ(none.skipped, 0u);
  EXPECT_EQ(none.unverifiable, 2u);
  // Offsets the final log no longer holds (deleted, truncated) are not skips.
  FinalState fs;
  fs.partitions[{"t", 0}].push_back(replica(1, true, 5, {14}, 4));
  EXPECT_EQ(check_skips(b.history(), fs, {"g"}).skipped, 0u);
}

// --- the verdict ---------------------------------------------------------------

TEST(CheckVerdict, AggregatesEveryCheckerAndWritesJson) {
  Builder b;
  b.send(0, "p", OpType::invoke, 10).send(2'000, "p", OpType::ok, 10).at(0, 0)
      .send(3'000, "p", OpType::invoke, 11).send(2 * kSecond, "p", OpType::ok, 11).at(0, 1)
      .record(3 * kSecond, "c", 0, 0, 10).producer("p");
  CheckOptions options;
  options.order_promised = OrderPromised::yes;
  options.end_time_us = 4 * kSecond;
  options.faults = {{kSecond, 3 * kSecond, "power off node1"}};
  const Verdict v = check_all(b.history(), leader_holds(0, {10}), options);
  EXPECT_EQ(v.lost.lost, 1u);
  EXPECT_EQ(v.duplicates.duplicated, 0u);
  EXPECT_TRUE(v.order.checked);
  EXPECT_EQ(v.latency.count, 2u);
  EXPECT_EQ(v.summary(),
            "lost=1 duplicates=0 order=0 dirty=0 divergent=0 skipped=0 max_stall=2s p50=2ms p99=1997ms");
  const nlohmann::json j = v.to_json();
  EXPECT_EQ(j["lost"]["items"][0]["value"], 11);
  EXPECT_EQ(j["lost"]["items"][0]["producer"], "p");
  EXPECT_EQ(j["availability"]["longest"]["process"], "p");
  EXPECT_EQ(j["availability"]["longest"]["causes"][0], "power off node1");
  EXPECT_EQ(j["latency"]["p99_us"], 1'997'000);
  // Deterministic bytes: the same inputs give the same text.
  EXPECT_EQ(j.dump(), check_all(b.history(), leader_holds(0, {10}), options).to_json().dump());
  std::vector<std::string> keys;
  for (const auto& [k, _] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"availability", "dirty_reads", "divergence",
                                            "duplicates", "groups", "latency", "lost", "order", "skips"}));
}

// --- the property: agreement with a brute-force reference -----------------------------

// Random small worlds: one or two topics, two partitions, two producers whose
// values are unique per topic (producer * 100 + k, k < 6), logs of up to six
// records drawn from the same values (so that duplicates, losses and
// foreign values all happen), zero to three replicas per partition with a
// random leader flag, and up to 40 ops of every shape that matters.
struct World {
  History h;
  FinalState fs;
};

World random_world(uint64_t seed) {
  sim::Rng rng(seed);
  World w;
  const char* topics[] = {"t", "u"};
  const int n_topics = 1 + static_cast<int>(rng.below(2));
  auto value = [&] { return (1 + rng.below(2)) * 100 + rng.below(6); };
  for (int t = 0; t < n_topics; ++t) {
    for (int32_t p = 0; p < 2; ++p) {
      const int replicas = static_cast<int>(rng.below(4));
      std::vector<Replica>& rs = w.fs.partitions[{topics[t], p}];
      for (int r = 0; r < replicas; ++r) {
        std::vector<uint64_t> values;
        const int n = static_cast<int>(rng.below(7));
        for (int i = 0; i < n; ++i) values.push_back(value());
        rs.push_back(replica(r + 1, rng.chance(1, 3), static_cast<int64_t>(rng.below(7)), values,
                             static_cast<int64_t>(rng.below(3))));
      }
    }
  }
  const char* producers[] = {"", "p1", "p2"};
  const int n_ops = static_cast<int>(rng.below(41));
  for (int i = 0; i < n_ops; ++i) {
    Op op;
    op.time_us = i;
    op.topic = w.h.intern(topics[rng.below(static_cast<uint64_t>(n_topics))]);
    op.value = value();
    switch (rng.below(6)) {
      case 0:
      case 1:  // acknowledged send (sometimes without an offset)
        op.process = w.h.process(producers[op.value / 100]);
        op.producer = op.process;
        op.type = OpType::ok;
        op.partition = static_cast<int32_t>(rng.below(2));
        op.offset = rng.chance(1, 8) ? -1 : static_cast<int64_t>(rng.below(9));
        break;
      case 2:  // a send of unknown or failed outcome, maybe with an offset it never got
        op.process = w.h.process(producers[op.value / 100]);
        op.producer = op.process;
        op.type = rng.chance(1, 2) ? OpType::info : OpType::fail;
        op.partition = rng.chance(1, 2) ? -1 : static_cast<int32_t>(rng.below(2));
        op.offset = static_cast<int64_t>(rng.below(9));
        break;
      case 3:
      case 4:  // a record read
        op.process = w.h.process(rng.chance(1, 2) ? "c1" : "c2");
        op.f = OpFunction::poll;
        op.type = OpType::ok;
        op.partition = static_cast<int32_t>(rng.below(2));
        op.offset = static_cast<int64_t>(rng.below(9));
        if (rng.chance(1, 2)) op.producer = w.h.process(producers[op.value / 100]);
        break;
      default:  // an empty poll, or a poll invoke
        op.process = w.h.process("c1");
        op.f = OpFunction::poll;
        op.type = rng.chance(1, 2) ? OpType::ok : OpType::invoke;
        op.value = 0;
        break;
    }
    w.h.add(op);
  }
  return w;
}

// The final log, by the definition: the first replica marked leader, else
// the first with the greatest log end; none when there is no replica.
const Replica* reference_by_hand(const FinalState& fs, const std::string& topic,
                                 int32_t partition) {
  for (const auto& [tp, replicas] : fs.partitions) {
    if (tp.topic != topic || tp.partition != partition) continue;
    for (const Replica& r : replicas) {
      if (r.leader) return &r;
    }
    const Replica* best = nullptr;
    int64_t best_end = -1;
    for (const Replica& r : replicas) {
      int64_t end = r.log_start;
      for (const auto& rec : r.records) end = rec.first + 1;
      if (end > best_end) {
        best = &r;
        best_end = end;
      }
    }
    return best;
  }
  return nullptr;
}

LostResult lost_by_hand(const History& h, const FinalState& fs) {
  LostResult r;
  const std::vector<Op>& ops = h.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& a = ops[i];
    if (a.f != OpFunction::send || a.type != OpType::ok) continue;
    if (a.partition < 0 || a.offset < 0) continue;
    bool earlier = false;
    for (size_t j = 0; j < i; ++j) {
      const Op& e = ops[j];
      if (e.f == OpFunction::send && e.type == OpType::ok && e.partition >= 0 && e.offset >= 0 &&
          e.topic == a.topic && e.partition == a.partition && e.value == a.value) {
        earlier = true;
      }
    }
    if (earlier) continue;
    ++r.acknowledged;
    bool seen = false;
    bool read_past = false;
    for (const Op& c : ops) {
      if (c.f != OpFunction::poll || c.type != OpType::ok) continue;
      if (c.partition < 0 || c.offset < 0) continue;
      if (c.topic != a.topic || c.partition != a.partition) continue;
      if (c.value == a.value) seen = true;
      if (c.offset > a.offset) read_past = true;
    }
    if (seen) continue;
    const Replica* ref = reference_by_hand(fs, h.string(a.topic), a.partition);
    bool lost = false;
    if (ref != nullptr) {
      bool held = false;
      for (const auto& rec : ref->records) {
        if (rec.second == a.value) held = true;
      }
      if (held) continue;
      if (a.offset < ref->log_start) {
        ++r.unverifiable;
        continue;
      }
      lost = true;
    } else if (read_past) {
      lost = true;
    } else {
      ++r.unverifiable;
    }
    if (!lost) continue;
    ++r.lost;
    r.items.push_back({h.string(a.topic), a.partition, a.offset, a.value,
                       h.process_name(a.producer), a.time_us});
  }
  return r;
}

// Duplicated messages, as (topic, value), in order.
std::vector<std::pair<std::string, uint64_t>> duplicates_by_hand(const History& h,
                                                                 const FinalState& fs) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const std::string topic : {"t", "u"}) {
    for (uint64_t v = 0; v < 300; ++v) {
      // Distinct positions in the final logs of the topic's partitions ...
      std::vector<std::pair<int32_t, int64_t>> in_final;
      for (int32_t p = 0; p < 2; ++p) {
        const Replica* ref = reference_by_hand(fs, topic, p);
        if (ref == nullptr) continue;
        for (const auto& rec : ref->records) {
          if (rec.second == v) in_final.emplace_back(p, rec.first);
        }
      }
      // ... and seen by consumers, counting each position once.
      std::vector<std::pair<int32_t, int64_t>> seen;
      for (const Op& c : h.ops()) {
        if (c.f != OpFunction::poll || c.type != OpType::ok) continue;
        if (c.partition < 0 || c.offset < 0) continue;
        if (h.string(c.topic) != topic || c.value != v) continue;
        bool again = false;
        for (const auto& s : seen) {
          if (s == std::make_pair(c.partition, c.offset)) again = true;
        }
        if (!again) seen.emplace_back(c.partition, c.offset);
      }
      if (in_final.size() > 1 || seen.size() > 1) out.emplace_back(topic, v);
    }
  }
  return out;
}

RC_GTEST_PROP(CheckProperty, LostAndDuplicatesAgreeWithBruteForce, (uint64_t seed)) {
  const World w = random_world(seed);
  const LostResult fast = check_lost(w.h, w.fs, 1'000);
  const LostResult slow = lost_by_hand(w.h, w.fs);
  RC_ASSERT(fast.acknowledged == slow.acknowledged);
  RC_ASSERT(fast.lost == slow.lost);
  RC_ASSERT(fast.unverifiable == slow.unverifiable);
  RC_ASSERT(fast.items.size() == slow.items.size());
  for (size_t i = 0; i < fast.items.size(); ++i) {
    const auto& a = fast.items[i];
    const auto& b = slow.items[i];
    RC_ASSERT(std::tie(a.topic, a.partition, a.offset, a.value, a.producer, a.ack_time_us) ==
              std::tie(b.topic, b.partition, b.offset, b.value, b.producer, b.ack_time_us));
  }
  const DuplicatesResult dups = check_duplicates(w.h, w.fs, 1'000);
  std::vector<std::pair<std::string, uint64_t>> found;
  for (const auto& item : dups.items) found.emplace_back(item.topic, item.value);
  RC_ASSERT(dups.duplicated == found.size());
  RC_ASSERT(found == duplicates_by_hand(w.h, w.fs));
}

// The generator must reach the interesting cases, or agreement proves little.
TEST(CheckProperty, RandomWorldsReachLossesDuplicatesAndUnverifiables) {
  uint64_t lost = 0, unverifiable = 0, duplicated = 0, kept = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const World w = random_world(seed);
    const LostResult r = check_lost(w.h, w.fs);
    lost += r.lost;
    unverifiable += r.unverifiable;
    kept += r.acknowledged - r.lost - r.unverifiable;
    duplicated += check_duplicates(w.h, w.fs).duplicated;
  }
  EXPECT_GT(lost, 20u);
  EXPECT_GT(unverifiable, 20u);
  EXPECT_GT(kept, 20u);
  EXPECT_GT(duplicated, 20u);
}


// --- orders and ties the fast paths must keep ----------------------------------

TEST(CheckDuplicates, ItemsAreByTopicNameThenValueWhateverTheInternOrder) {
  // "u" is interned before "t", and values come in descending order: the
  // items are still by topic name, then by value.
  Builder b;
  b.op(1, "c", OpType::ok, OpFunction::poll).topic("u").at(0, 0).value(7);
  b.op(2, "c", OpType::ok, OpFunction::poll).topic("u").at(0, 1).value(7);
  b.record(3, "c", 0, 2, 20).record(4, "c", 0, 3, 20);
  b.record(5, "c", 0, 0, 10).record(6, "c", 0, 1, 10);
  const DuplicatesResult r = check_duplicates(b.history(), FinalState{});
  EXPECT_EQ(r.duplicated, 3u);
  ASSERT_EQ(r.items.size(), 3u);
  EXPECT_EQ(std::make_pair(r.items[0].topic, r.items[0].value), std::make_pair(std::string("t"), uint64_t{10}));
  EXPECT_EQ(std::make_pair(r.items[1].topic, r.items[1].value), std::make_pair(std::string("t"), uint64_t{20}));
  EXPECT_EQ(std::make_pair(r.items[2].topic, r.items[2].value), std::make_pair(std::string("u"), uint64_t{7}));
  // Capped: the first in that order.
  const DuplicatesResult capped = check_duplicates(b.history(), FinalState{}, 1);
  EXPECT_EQ(capped.duplicated, 3u);
  ASSERT_EQ(capped.items.size(), 1u);
  EXPECT_EQ(capped.items[0].value, 10u);
}

TEST(CheckDuplicates, TheProducerIsThatOfTheFirstSendElseOfTheFirstRecordNamingOne) {
  Builder b;
  // 10: first sent (an info try) by p2, then by p1; a record names p3.
  b.send(1, "p2", OpType::info, 10).send(2, "p1", OpType::ok, 10).at(0, 0);
  b.record(3, "c", 0, 0, 10).producer("p3").record(4, "c", 0, 1, 10).producer("p3");
  // 11: never sent; the first record naming a producer wins, one naming none is skipped.
  b.record(5, "c", 0, 2, 11).record(6, "c", 0, 3, 11).producer("p4");
  b.record(7, "c", 0, 4, 11).producer("p5");
  const DuplicatesResult r = check_duplicates(b.history(), FinalState{});
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].producer, "p2");
  EXPECT_EQ(r.items[1].producer, "p4");
}

TEST(CheckLost, ItemsAreInOrderOfFirstAcknowledgementAcrossPartitions) {
  Builder b;
  b.send(1, "p", OpType::ok, 30).at(1, 0)
      .send(2, "p", OpType::ok, 20).at(0, 0)
      .send(3, "p", OpType::ok, 30).at(1, 1)   // again: judged once, at its first
      .send(4, "p", OpType::ok, 20).at(1, 2)   // the same value in another partition
      .send(5, "p", OpType::ok, 10).at(0, 1);
  FinalState fs = leader_holds(0, {});
  fs.partitions[{"t", 1}].push_back(replica(1, true, 0, {}));
  const LostResult r = check_lost(b.history(), fs);
  EXPECT_EQ(r.acknowledged, 4u);
  EXPECT_EQ(r.lost, 4u);
  ASSERT_EQ(r.items.size(), 4u);
  std::vector<std::tuple<uint64_t, int32_t, int64_t, int64_t>> got;
  for (const auto& i : r.items) got.emplace_back(i.value, i.partition, i.offset, i.ack_time_us);
  EXPECT_EQ(got, (std::vector<std::tuple<uint64_t, int32_t, int64_t, int64_t>>{
                     {30, 1, 0, 1}, {20, 0, 0, 2}, {20, 1, 2, 4}, {10, 0, 1, 5}}));
}

TEST(CheckDirtyReads, ItemsAreInOrderOfFirstReadAndCappedWithCompleteCounts) {
  Builder b;
  // Read in descending offset order, some twice; the final log holds none of them.
  for (int64_t o = 5; o >= 0; --o) b.record(10 - o, "c", 0, o, 100 + static_cast<uint64_t>(o));
  b.record(20, "d", 0, 3, 103).record(21, "d", 0, 3, 999);  // a reread, then another value there
  const FinalState fs = leader_holds(0, {0, 1, 2, 3, 4, 5});
  const DirtyReadsResult r = check_dirty_reads(b.history(), fs, 4);
  EXPECT_EQ(r.reads_checked, 7u);
  EXPECT_EQ(r.dirty, 7u);
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.items[0].offset, 5);
  EXPECT_EQ(r.items[3].offset, 2);
  EXPECT_EQ(r.items[0].final_value, 5u);
  const DirtyReadsResult all = check_dirty_reads(b.history(), fs, 100);
  ASSERT_EQ(all.items.size(), 7u);
  EXPECT_EQ(all.items[6].value, 999u);
  EXPECT_EQ(all.items[6].consumer, "d");
  EXPECT_EQ(all.items[6].read_time_us, 21);
}

TEST(CheckAvailability, ProcessesAreListedByIndexNotByNameOrFirstOp) {
  History h;
  const uint32_t z = h.process("z");
  const uint32_t a = h.process("a");
  h.process("never");  // no op: not listed
  auto ok = [&](int64_t t, uint32_t p) {
    Op op;
    op.time_us = t;
    op.process = p;
    op.type = OpType::ok;
    op.f = OpFunction::commit;
    h.add(op);
  };
  ok(1, a);
  ok(5, z);
  ok(3, a);  // out of time order: still measured in time order
  const AvailabilityResult r = check_availability(h, {}, 10, 0);
  ASSERT_EQ(r.per_process.size(), 2u);
  EXPECT_EQ(r.per_process[0].process, "z");
  EXPECT_EQ(r.per_process[1].process, "a");
  EXPECT_EQ(r.per_process[1].successes, 2u);
  EXPECT_EQ(r.per_process[1].longest_us, 7);  // from 3 to the end at 10
  EXPECT_EQ(r.windows, 3u);  // z: 5..10; a: 1..3, 3..10
  ASSERT_EQ(r.items.size(), 3u);
  EXPECT_EQ(r.items[0].process, "z");
}

// --- the property: dirty reads, duplicates' items and divergence by definition ---

// Up to four random truncations of the world's partitions.
void add_truncations(World& w, uint64_t seed) {
  sim::Rng rng(seed ^ 0x5eed);
  const int n = static_cast<int>(rng.below(5));
  for (int i = 0; i < n; ++i) {
    const int64_t to = static_cast<int64_t>(rng.below(6));
    w.fs.truncations.push_back({static_cast<int64_t>(rng.below(45)),
                                static_cast<kafka::BrokerId>(1 + rng.below(3)),
                                {rng.chance(1, 2) ? "t" : "u", static_cast<int32_t>(rng.below(2))},
                                to + 1 + static_cast<int64_t>(rng.below(4)), to});
  }
}

std::optional<uint64_t> value_by_hand(const Replica& r, int64_t offset) {
  for (const auto& rec : r.records) {
    if (rec.first == offset) return rec.second;
  }
  return std::nullopt;
}

DirtyReadsResult dirty_by_hand(const History& h, const FinalState& fs) {
  DirtyReadsResult r;
  const std::vector<Op>& ops = h.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& a = ops[i];
    if (a.f != OpFunction::poll || a.type != OpType::ok || a.partition < 0 || a.offset < 0) continue;
    bool earlier = false;
    for (size_t j = 0; j < i; ++j) {
      const Op& e = ops[j];
      if (e.f == OpFunction::poll && e.type == OpType::ok && e.topic == a.topic &&
          e.partition == a.partition && e.offset == a.offset && e.value == a.value) {
        earlier = true;
      }
    }
    if (earlier) continue;
    const Replica* ref = reference_by_hand(fs, h.string(a.topic), a.partition);
    if (ref == nullptr || a.offset < ref->log_start) {
      ++r.unverifiable;
      continue;
    }
    ++r.reads_checked;
    const std::optional<uint64_t> now = value_by_hand(*ref, a.offset);
    if (now == a.value) continue;
    ++r.dirty;
    DirtyReadsResult::Item item{h.string(a.topic), a.partition, a.offset, a.value,
                                h.process_name(a.process), a.time_us, now, std::nullopt};
    for (const FinalState::Truncation& t : fs.truncations) {
      if (t.tp.topic != item.topic || t.tp.partition != a.partition) continue;
      if (t.time_us < a.time_us || a.offset < t.to || a.offset >= t.from) continue;
      if (!item.truncation || t.time_us < item.truncation->time_us) item.truncation = t;
    }
    r.items.push_back(item);
  }
  return r;
}

DivergenceResult divergence_by_hand(const FinalState& fs) {
  DivergenceResult r;
  for (const auto& [tp, replicas] : fs.partitions) {
    for (kafka::BrokerId a = 0; a <= 4; ++a) {
      for (kafka::BrokerId b = a + 1; b <= 4; ++b) {
        const Replica* ra = nullptr;
        const Replica* rb = nullptr;
        for (const Replica& x : replicas) {
          if (x.broker == a && ra == nullptr) ra = &x;
          if (x.broker == b && rb == nullptr) rb = &x;
        }
        if (ra == nullptr || rb == nullptr) continue;
        ++r.pairs_compared;
        DivergenceResult::Item item{tp, a, b, -1, std::nullopt, std::nullopt, 0};
        for (int64_t o = std::max(ra->log_start, rb->log_start);
             o < std::min(ra->high_watermark, rb->high_watermark); ++o) {
          const auto va = value_by_hand(*ra, o);
          const auto vb = value_by_hand(*rb, o);
          if (va == vb) continue;
          if (item.offsets++ == 0) {
            item.first_offset = o;
            item.value_a = va;
            item.value_b = vb;
          }
        }
        if (item.offsets == 0) continue;
        ++r.divergent_pairs;
        r.items.push_back(item);
      }
    }
  }
  return r;
}

RC_GTEST_PROP(CheckProperty, DirtyReadsDuplicatesAndDivergenceAgreeWithBruteForce, (uint64_t seed)) {
  World w = random_world(seed);
  add_truncations(w, seed);
  const DirtyReadsResult fast = check_dirty_reads(w.h, w.fs, 1'000);
  const DirtyReadsResult slow = dirty_by_hand(w.h, w.fs);
  RC_ASSERT(fast.reads_checked == slow.reads_checked);
  RC_ASSERT(fast.dirty == slow.dirty);
  RC_ASSERT(fast.unverifiable == slow.unverifiable);
  RC_ASSERT(fast.items.size() == slow.items.size());
  for (size_t i = 0; i < fast.items.size(); ++i) {
    const auto& a = fast.items[i];
    const auto& b = slow.items[i];
    RC_ASSERT(std::tie(a.topic, a.partition, a.offset, a.value, a.consumer, a.read_time_us,
                       a.final_value) == std::tie(b.topic, b.partition, b.offset, b.value,
                                                  b.consumer, b.read_time_us, b.final_value));
    RC_ASSERT(a.truncation.has_value() == b.truncation.has_value());
    if (a.truncation) {
      RC_ASSERT(std::tie(a.truncation->time_us, a.truncation->broker, a.truncation->from) ==
                std::tie(b.truncation->time_us, b.truncation->broker, b.truncation->from));
    }
  }
  // Duplicates: every item's positions and producer, by the definitions.
  const DuplicatesResult dups = check_duplicates(w.h, w.fs, 1'000);
  for (const auto& item : dups.items) {
    std::vector<std::pair<int32_t, int64_t>> in_final;
    std::vector<std::pair<int32_t, int64_t>> seen;
    for (int32_t p = 0; p < 2; ++p) {
      if (const Replica* ref = reference_by_hand(w.fs, item.topic, p)) {
        for (const auto& rec : ref->records) {
          if (rec.second == item.value) in_final.emplace_back(p, rec.first);
        }
      }
    }
    std::string producer;
    bool from_send = false;
    bool from_record = false;
    std::string record_producer;
    for (const Op& c : w.h.ops()) {
      if (w.h.string(c.topic) != item.topic || c.value != item.value) continue;
      if (c.f == OpFunction::send && !from_send) {
        from_send = true;
        producer = w.h.process_name(c.producer != 0 ? c.producer : c.process);
      }
      if (c.f != OpFunction::poll || c.type != OpType::ok || c.partition < 0 || c.offset < 0) continue;
      seen.emplace_back(c.partition, c.offset);
      if (c.producer != 0 && !from_record) {
        from_record = true;
        record_producer = w.h.process_name(c.producer);
      }
    }
    if (!from_send && from_record) producer = record_producer;
    std::sort(in_final.begin(), in_final.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    RC_ASSERT(item.final_positions == in_final);
    RC_ASSERT(item.seen_positions == seen);
    RC_ASSERT(item.producer == producer);
  }
  // Divergence (brokers are 1..3 and distinct per partition in these worlds).
  const DivergenceResult div = check_divergence(w.fs, 1'000);
  const DivergenceResult div_slow = divergence_by_hand(w.fs);
  RC_ASSERT(div.pairs_compared == div_slow.pairs_compared);
  RC_ASSERT(div.divergent_pairs == div_slow.divergent_pairs);
  RC_ASSERT(div.items.size() == div_slow.items.size());
  for (size_t i = 0; i < div.items.size(); ++i) {
    const auto& a = div.items[i];
    const auto& b = div_slow.items[i];
    RC_ASSERT(std::tie(a.tp, a.broker_a, a.broker_b, a.first_offset, a.value_a, a.value_b,
                       a.offsets) == std::tie(b.tp, b.broker_a, b.broker_b, b.first_offset,
                                              b.value_a, b.value_b, b.offsets));
  }
}

// The generator must reach dirty reads with and without a truncation to blame.
TEST(CheckProperty, RandomWorldsReachDirtyReadsAndDivergence) {
  uint64_t dirty = 0, attributed = 0, divergent = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    World w = random_world(seed);
    add_truncations(w, seed);
    const DirtyReadsResult r = check_dirty_reads(w.h, w.fs, 1'000);
    dirty += r.dirty;
    for (const auto& item : r.items) attributed += item.truncation ? 1 : 0;
    divergent += check_divergence(w.fs).divergent_pairs;
  }
  EXPECT_GT(dirty, 20u);
  EXPECT_GT(attributed, 5u);
  EXPECT_LT(attributed, dirty);
  EXPECT_GT(divergent, 20u);
}
}  // namespace
}  // namespace check
