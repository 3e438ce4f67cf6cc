// The checkers: pure functions from a run's history (what the clients saw)
// and the cluster's final state (what the brokers hold) to a verdict. Each is
// deterministic: same inputs, same result, same JSON bytes. Lists of
// offending items are capped (the first `max_items` in a documented order);
// the counts are always complete.
//
// Where a checker follows Jepsen's Kafka workload (jepsen.tests.kafka) it
// says so; where it can do better because kafkasim can read the brokers'
// final logs directly, it says that too.
//
// ## What the clients record (the op shapes the checkers rely on)
//
// Every op has time_us (virtual time), process (History::process(name) of the
// client), type and f. Unset fields keep their defaults (partition -1,
// offset -1, topic/error/detail 0).
//
// Values. A value identifies one message within its topic: no two sends to
// one topic in a run may use the same value unless they are the same message
// (a retry of it). A workload with several producers on one topic must
// therefore put the producer into the value (e.g. producer number in the high
// bits), and a restarted producer must not start again at a value it already
// used. The brokers' logs hold only values, so this is the only way the final
// logs can be matched to sends; it is also what Jepsen assumes of a key's
// messages.
//
//   send      producer P sends value v to topic t:
//     invoke  topic=t, value=v, producer=P, partition if already chosen (else -1).
//             One invoke per send the application makes; a try the
//             application repeats itself (the lab producer's five tries) is a
//             new invoke of the same value. The client library's internal
//             retries are not new invokes.
//     ok      topic=t, partition, offset (of the acknowledgement; -1 with
//             acks=0), value=v, producer=P.
//     fail    value=v, producer=P, error: the broker said it was not written
//             (NOT_ENOUGH_REPLICAS, NOT_LEADER_FOR_PARTITION with acks 0 or
//             1 ...). partition if known. Only errors returned before the
//             append are fail: NOT_ENOUGH_REPLICAS_AFTER_APPEND,
//             REQUEST_TIMED_OUT from the broker's purgatory,
//             NOT_LEADER_FOR_PARTITION with acks=all (the partition moved
//             while the request waited there) and every client-side timeout
//             are info, since the record may be in the log.
//     info    value=v, producer=P, error: unknown outcome (request timed out,
//             connection lost with the request in flight, delivery timeout).
//             A completion takes the earliest pending invoke of the same
//             process and value (see pair_index in history.h).
//   poll      consumer C calls poll / fetch:
//     invoke  topic if it reads one topic (optional).
//     ok      one op per record returned, all at the same time_us and
//             consecutive among C's ops: topic, partition, offset, value,
//             producer (the producing process if the consumer can tell from
//             the record, else 0). A poll that returned nothing: one ok op
//             with partition -1 (it still counts as a success for
//             availability).
//     fail / info  error, one op.
//   commit    invoke/ok/fail/info, topic, partition, offset = the committed
//             offset (the next to read). Judged by check_skips (a group's
//             commits against what its members read) and counted by
//             availability.
//   rebalance consumer C in group G (detail tokens are space-separated):
//     invoke  detail "group=G": C starts (re)joining (JoinGroup sent).
//     ok      detail "group=G generation=N assigned=t-0,t-1": the
//             assignment C got from SyncGroup; "assigned=" (empty) when it
//             got no partition. The generation lets the group's rebalances
//             be counted once however many members record them.
//     fail / info  detail "group=G", error.
//     A member that leaves the group (LeaveGroup, or max.poll.interval.ms
//     expiry noticed by the client) records a rebalance info op whose detail
//     has the bare token "left": "group=G left".
//   connect   info only, error = "connection_refused" / "connection_reset" /
//             "timed_out" ..., detail = the broker it concerns (optional).
//   exit      info only: the client process stopped (the lab producer gave
//             up; or the harness records it when it kills the client).
//
// ## Identity and the final log
//
// A message is (topic, value). "The final log" of a partition is the log of
// FinalState::reference(): its leader, or without a leader the longest live
// replica. Offsets below that log's log_start (deleted by retention) cannot
// be judged and are counted as unverifiable, never as lost or dirty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/check/history.h"

namespace check {

inline constexpr size_t kMaxItems = 20;

// --- lost ----------------------------------------------------------------------
// An acknowledged send (an ok send with partition and offset) is lost when no
// consumer saw its value in that partition (at any offset) and the final log
// of the partition does not hold it (at any offset: a retry that landed
// elsewhere is a duplicate, not a loss). When the partition has no live
// replica at the end, the final log cannot speak and Jepsen's rule decides
// (jepsen.tests.kafka, analysis 3): lost if some consumer read that partition
// past the acknowledged offset without seeing the value; otherwise
// unverifiable. Only ok sends count: fail never happened, info may or may not
// have, so neither can be lost.
struct LostResult {
  struct Item {
    std::string topic;
    int32_t partition = -1;
    int64_t offset = -1;  // where it was acknowledged
    uint64_t value = 0;
    std::string producer;
    int64_t ack_time_us = 0;
  };
  uint64_t acknowledged = 0;  // distinct (topic, partition, value) acknowledged with an offset
  uint64_t lost = 0;
  uint64_t unverifiable = 0;
  std::vector<Item> items;  // in order of acknowledgement
};
LostResult check_lost(const History& h, const FinalState& fs, size_t max_items = kMaxItems);

// --- duplicates ------------------------------------------------------------
// A message present at more than one position (partition, offset) of its
// topic in the final logs, or seen by consumers (all together) at more than
// one position. The two are judged separately: a value acknowledged at one
// offset and seen at another is not a duplicate by that alone (the ack may
// name a record later truncated), nor is a value seen once at an offset the
// final log now holds elsewhere.
struct DuplicatesResult {
  struct Item {
    std::string topic;
    uint64_t value = 0;
    std::string producer;  // from its sends, else from a consumer's record, else ""
    std::vector<std::pair<int32_t, int64_t>> final_positions;  // ascending
    std::vector<std::pair<int32_t, int64_t>> seen_positions;   // ascending
  };
  uint64_t duplicated = 0;  // messages
  std::vector<Item> items;  // by topic, then value
};
DuplicatesResult check_duplicates(const History& h, const FinalState& fs,
                                  size_t max_items = kMaxItems);

// --- order -----------------------------------------------------------------
// Kafka promises that records one producer sends to one partition are
// appended in send order only with max.in.flight.requests.per.connection = 1,
// or with idempotence and at most 5 in flight (KIP-98 / KAFKA-5494); the
// caller knows the configuration and says whether order was promised.
//
// For each producer and partition, the producer's values are taken in the
// order of their first send invoke and placed where the final log holds them
// (their first offset there); a value the final log does not hold is left out
// (it is lost, reported above), unless the partition has no live replica, in
// which case its acknowledged offset stands in. Every value placed below an
// earlier-sent one is a violation. Duplicates further up the log are not
// order violations: like Jepsen's version order (log->value->first-index in
// jepsen.tests.kafka), a value stands where it first appears.
enum class OrderPromised : bool { no = false, yes = true };
struct OrderResult {
  struct Item {
    std::string topic;
    int32_t partition = -1;
    std::string producer;
    uint64_t earlier_value = 0;  // sent first ...
    int64_t earlier_offset = -1;
    uint64_t later_value = 0;  // ... sent after it, yet at a lower offset
    int64_t later_offset = -1;
  };
  bool checked = false;  // false when order was not promised
  uint64_t violations = 0;
  std::vector<Item> items;  // by producer, topic, partition, then send order
};
OrderResult check_order(const History& h, const FinalState& fs, OrderPromised promised,
                        size_t max_items = kMaxItems);

// --- dirty reads -------------------------------------------------------------
// A record a consumer saw at (partition, offset) that the final log does not
// hold at that offset: it was truncated away after being read (an acks=1
// leader failing over, an unclean election). Each is attributed to the first
// recorded truncation at or after the read that removed that offset, when
// there is one.
struct DirtyReadsResult {
  struct Item {
    std::string topic;
    int32_t partition = -1;
    int64_t offset = -1;
    uint64_t value = 0;
    std::string consumer;  // the first to read it
    int64_t read_time_us = 0;
    std::optional<uint64_t> final_value;  // what the final log holds there now
    std::optional<FinalState::Truncation> truncation;
  };
  uint64_t reads_checked = 0;  // distinct (partition, offset, value) read and judged
  uint64_t dirty = 0;
  uint64_t unverifiable = 0;  // no live replica, or below its log start
  std::vector<Item> items;    // in order of first read
};
DirtyReadsResult check_dirty_reads(const History& h, const FinalState& fs,
                                   size_t max_items = kMaxItems);

// --- divergence ------------------------------------------------------------
// Two live replicas of a partition that hold different records (or one holds
// a record and the other none) at an offset below both of their high
// watermarks and at or above both log starts: committed data that differs,
// which replication must never allow.
struct DivergenceResult {
  struct Item {
    kafka::TopicPartition tp;
    kafka::BrokerId broker_a = kafka::kNoBroker;  // the lower id
    kafka::BrokerId broker_b = kafka::kNoBroker;
    int64_t first_offset = -1;
    std::optional<uint64_t> value_a;
    std::optional<uint64_t> value_b;
    uint64_t offsets = 0;  // how many offsets differ
  };
  uint64_t pairs_compared = 0;
  uint64_t divergent_pairs = 0;
  std::vector<Item> items;  // by partition, then broker pair
};
DivergenceResult check_divergence(const FinalState& fs, size_t max_items = kMaxItems);

// --- availability --------------------------------------------------------------
// A fault of the schedule, as the scenario runner knows it: [start_us, end_us)
// (end_us = the end of the run, or INT64_MAX, for a fault never repaired).
struct FaultWindow {
  int64_t start_us = 0;
  int64_t end_us = 0;
  std::string description;  // "power off node2", "partition {1}|{2,3}"
};
// Per client process, the windows in which none of its operations succeeded:
// from its first op to its first ok, between successive oks, and from its
// last ok to `end_time_us` (a client that exited stays unavailable to the
// end). Any ok op counts (a send acknowledged, a poll answered even with no
// records, a commit, a rebalance). The cause of a window is every fault
// overlapping it: the usual stall starts at the last success, a moment before
// the fault that causes it, so "active at the window's start" alone would
// miss it.
struct AvailabilityResult {
  struct Window {
    std::string process;
    int64_t start_us = 0;
    int64_t end_us = 0;
    int64_t duration_us = 0;
    bool until_end = false;  // no success after it before the end of the run
    std::vector<std::string> causes;
  };
  struct PerProcess {
    std::string process;
    uint64_t successes = 0;
    uint64_t windows = 0;  // longer than the threshold
    int64_t longest_us = 0;
  };
  int64_t threshold_us = 0;
  uint64_t windows = 0;  // longer than the threshold, over all processes
  std::optional<Window> longest;  // over every window, listed or not
  std::vector<PerProcess> per_process;  // every process with an op, by process index
  std::vector<Window> items;  // longer than the threshold, by process index then time
};
AvailabilityResult check_availability(const History& h, const std::vector<FaultWindow>& faults,
                                      int64_t end_time_us, int64_t threshold_us = 1'000'000,
                                      size_t max_items = kMaxItems);

// --- latency ---------------------------------------------------------------------
// Acknowledged sends, ok time minus the time of the invoke it pairs with
// (pair_index: same process and value). Percentiles by nearest rank, exact,
// in integer microseconds: the p-th percentile of n sorted latencies is the
// one at rank ceil(p * n / 100).
struct LatencyResult {
  uint64_t count = 0;
  uint64_t unpaired = 0;  // ok sends with no invoke to measure from
  int64_t min_us = 0;
  int64_t p50_us = 0;
  int64_t p90_us = 0;
  int64_t p99_us = 0;
  int64_t max_us = 0;
};
LatencyResult check_latency(const History& h);

// --- consumer groups -------------------------------------------------------------
// From the rebalance ops (shapes above): per group, how many rebalances it
// went through (distinct generations; an ok without a generation counts on
// its own), how long members waited in them (invoke to ok), each current
// member's last assignment, and the members assigned nothing. A member stops
// being current when it records "left" or exits.
struct GroupResult {
  struct Rebalance {
    std::string consumer;
    int64_t start_us = 0;
    int64_t duration_us = 0;
  };
  struct Group {
    std::string group;
    uint64_t rebalances = 0;
    uint64_t failed = 0;  // rebalance fail / info completions (not counting "left")
    int64_t longest_us = 0;
    int64_t total_us = 0;
    std::vector<Rebalance> durations;  // capped, in order of completion
    std::map<std::string, std::vector<std::string>> assignment;  // current members only
    std::vector<std::string> idle;  // current members assigned nothing, by name
  };
  std::vector<Group> groups;  // by name
};
GroupResult check_groups(const History& h, size_t max_items = kMaxItems);

// --- skips -------------------------------------------------------------------------
// A consumer group delivers every record at least once: a member commits the
// position after the records poll returned (librdkafka's auto commit stores
// an offset when its record reaches the application), and the next owner of
// the partition starts from the commit. So every record of the final log
// that the group committed past — from its first commit on the partition up
// to the highest — was read (that offset with that value) by some member of
// the group. A record none of them ever read is skipped: the group will not
// deliver it. A member that read another record at that offset, later
// truncated away, did not read it; one that reset after the truncation
// (OFFSET_OUT_OF_RANGE, auto.offset.reset) and read it did. Records below
// the group's first commit are not judged: where it started is the reset
// policy's choice.
//
// A member's group is the group of its rebalance ops. Only `groups` are
// judged: a member that resets to the latest offset when its commit is out of
// range (auto.offset.reset=latest) skips records as Kafka documents, so the
// caller names the groups whose members reset to the earliest. A partition
// with no live replica cannot be judged (unverifiable, per commit).
struct SkipsResult {
  struct Item {
    std::string group;
    std::string topic;
    int32_t partition = -1;
    int64_t offset = -1;  // the record skipped
    uint64_t value = 0;
    std::string consumer;  // who first committed past it
    int64_t from = -1;     // the group's commit before ...
    int64_t to = -1;       // ... and the first commit that passed it
    int64_t commit_time_us = 0;
  };
  uint64_t commits_checked = 0;  // commits judged against an earlier one
  uint64_t skipped = 0;          // records
  uint64_t unverifiable = 0;     // commits on a partition with no live replica
  std::vector<Item> items;       // by group, topic, partition, then offset
};
SkipsResult check_skips(const History& h, const FinalState& fs, const std::set<std::string>& groups,
                        size_t max_items = kMaxItems);

// --- all together ----------------------------------------------------------------
struct CheckOptions {
  OrderPromised order_promised = OrderPromised::no;
  std::vector<FaultWindow> faults;
  int64_t end_time_us = 0;
  int64_t stall_threshold_us = 1'000'000;
  size_t max_items = kMaxItems;
  // The groups check_skips judges (see there).
  std::set<std::string> skip_checked_groups;
};

struct Verdict {
  LostResult lost;
  DuplicatesResult duplicates;
  OrderResult order;
  DirtyReadsResult dirty_reads;
  DivergenceResult divergence;
  AvailabilityResult availability;
  LatencyResult latency;
  GroupResult groups;
  SkipsResult skips;

  // Machine output: one object, keys sorted, every count and item list.
  nlohmann::json to_json() const;
  // One line for a human: "lost=0 duplicates=0 order=0 dirty=0 divergent=0
  // skipped=0 max_stall=12.5s p50=3ms p99=1s".
  std::string summary() const;
};
Verdict check_all(const History& h, const FinalState& fs, const CheckOptions& options);

}  // namespace check
