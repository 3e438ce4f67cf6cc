// A partition replica as one broker holds it (kafka.cluster.Partition): its
// log, its role, and — at the leader — the ISR, the followers' progress and
// the high watermark.
//
// The leader's rules (Kafka 2.x/3.x, kafka.cluster.Partition and
// kafka.cluster.Replica):
//   - a follower's fetch at offset `o` tells the leader its log end offset;
//     it counts as caught up at the fetch time if `o` reached the leader's
//     log end offset, or at the time of its previous fetch if `o` reached
//     what the leader's log end offset was then (Replica.updateFetchState);
//   - the high watermark is the smallest log end offset in the ISR and never
//     goes down at a leader (and, under ReplicationRules::min_isr_holds_high_watermark,
//     does not move while the ISR is below min.insync.replicas);
//   - a follower out of the ISR rejoins once a fetch of its own puts its log
//     end offset at both the high watermark and the start of the current
//     leader epoch;
//   - a follower in the ISR that has not been caught up for
//     replica.lag.time.max.ms leaves it.
// The broker carries the ISR decisions out in ZooKeeper; this class decides.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "model/kafka/log.h"
#include "model/kafka/wire.h"
#include "sim/flat_map.h"

namespace kafka {

struct FollowerState {
  Offset log_end{-1};  // -1: not heard from since this broker became leader
  int64_t last_caught_up_ms = 0;
  Offset last_fetch_leader_log_end{-1};
  int64_t last_fetch_ms = 0;
};

// Idempotent-producer state for one producer id on one partition
// (kafka.log.ProducerStateEntry): its epoch and its last five batches.
struct ProducerEntry {
  struct Batch {
    int32_t first_sequence = 0;
    int32_t last_sequence = 0;
    Offset first_offset;
  };
  int16_t epoch = -1;
  std::deque<Batch> batches;  // oldest first, at most 5
};

enum class SequenceCheck { append, duplicate, out_of_order, invalid_epoch };

class Partition {
 public:
  Partition(TopicPartition tp, std::unique_ptr<PartitionLog> log, BrokerId local);

  const TopicPartition& tp() const { return tp_; }
  PartitionLog& log() { return *log_; }
  const PartitionLog& log() const { return *log_; }
  BrokerId local() const { return local_; }

  // --- state from the controller --------------------------------------------
  BrokerId leader() const { return leader_; }
  bool is_leader() const { return leader_ == local_; }
  LeaderEpoch leader_epoch() const { return leader_epoch_; }
  ControllerEpoch controller_epoch() const { return controller_epoch_; }
  int32_t zk_version() const { return zk_version_; }
  const std::vector<BrokerId>& replicas() const { return replicas_; }
  const std::vector<BrokerId>& isr() const { return isr_; }
  // The offset where the current leader epoch began at this leader.
  Offset leader_epoch_start() const { return leader_epoch_start_; }
  // The leader epoch in which this broker last became the leader (it keeps
  // what its followers reported through later epochs while it stays leader).
  LeaderEpoch leading_since() const { return leading_since_; }

  // Applies a LeaderAndIsr state naming this broker the leader.
  void make_leader(const PartitionState& s, int64_t now_ms);
  // Applies a LeaderAndIsr state naming another broker (or none).
  void make_follower(const PartitionState& s);
  // After this broker's own successful conditional write of a new ISR.
  void set_isr(std::vector<BrokerId> isr, int32_t zk_version);
  // While a write of a new ISR is in flight, the high watermark advances
  // over the "maximal" ISR: the current one plus the members being added
  // (KIP-497). Without it, a follower being added could find the high
  // watermark already past its log end when the write lands.
  void set_pending_isr(std::vector<BrokerId> isr) { pending_isr_ = std::move(isr); }
  void clear_pending_isr() { pending_isr_.clear(); }

  // --- high watermark --------------------------------------------------------
  Offset high_watermark() const { return high_watermark_; }
  // A follower sets it from the leader's, capped by its own log end.
  void set_follower_high_watermark(Offset leader_hw);
  // At start, from replication-offset-checkpoint.
  void set_checkpointed_high_watermark(Offset hw);
  // Leader: recomputes it at `now_ms`; true when it moved up. It is the
  // smallest log end among the leader, the ISR members (and those being
  // added), and the followers outside the ISR caught up within
  // replica.lag.time.max.ms (from 3.6 only those that may join the ISR):
  // a follower catching up holds it, so that the high watermark does not
  // run ahead of a follower that would then never reach it
  // (Partition.maybeIncrementLeaderHW).
  bool maybe_increment_high_watermark(int64_t now_ms);
  // What differs between Kafka releases (BrokerConfig::replication_rules).
  void set_rules(const ReplicationRules& rules) { rules_ = rules; }
  void set_replica_lag_time_max_ms(int64_t ms) { lag_max_ms_ = ms; }
  // Whether a broker is alive in this broker's metadata cache (for the 3.3+
  // ISR eligibility rules); every broker is, unless set.
  void set_liveness(std::function<bool(BrokerId)> is_live) { is_live_ = std::move(is_live); }
  // min.insync.replicas as an acks=all write is checked against: the topic's
  // value, capped at the replication factor where KAFKA-15583 applies
  // (Partition.effectiveMinIsr).
  int32_t effective_min_isr() const;
  // Fewer ISR members than that (Partition.isUnderMinIsr): what a write is
  // checked against before it is appended.
  bool under_min_isr() const { return static_cast<int32_t>(isr_.size()) < effective_min_isr(); }
  // The check of an acks=all write the high watermark has passed
  // (Partition.checkEnoughReplicasReachOffset): from 2.7, with the ISR
  // changed through the controller, over the maximal ISR, so a member whose
  // addition is pending counts (2.8.2, 3.1.0, 3.9); before, over the ISR.
  bool under_min_isr_after_append() const;

  // --- followers (leader only) ------------------------------------------------
  // Records a fetch from `replica` at `fetch_offset`.
  void update_follower(BrokerId replica, Offset fetch_offset, int64_t now_ms);
  const sim::FlatMap<BrokerId, FollowerState>& followers() const { return followers_; }
  // Whether `replica`, an assigned follower outside the ISR, qualifies to
  // join it: at least at the high watermark and at the start of the leader
  // epoch, and from 3.3 alive (isr_join_needs_live_broker). Kafka asks this
  // of the follower whose fetch just arrived (Partition.maybeExpandIsr),
  // never of the others.
  bool can_join_isr(BrokerId replica) const;
  // ISR members (other than the leader) that have lagged for too long; one
  // at the leader's log end never has (Partition.getOutOfSyncReplicas).
  std::vector<BrokerId> out_of_sync(int64_t now_ms, int64_t lag_max_ms) const;

  // --- idempotent producers -----------------------------------------------------
  // What to do with a batch from an idempotent producer; for a duplicate,
  // the first offset the original batch got.
  SequenceCheck check_sequence(ProducerId pid, int16_t epoch, int32_t first_seq,
                               int32_t last_seq, Offset* duplicate_offset) const;
  // Updates producer state from records just appended (leader or follower).
  void record_producers(const std::vector<Record>& records);
  // The same for this replica's log from `from` to its end, read in place.
  void record_producers_from(Offset from);
  // Rebuilds producer state from the whole log (after a truncation or a load).
  void rebuild_producers();
  const std::map<ProducerId, ProducerEntry>& producers() const { return producers_; }

  // Raised by every change to what kafka::Invariants reads here: the role,
  // leader epoch, replicas, ISR, high watermark and the followers' log end
  // offsets (the log's own end is read directly). A check that finds the
  // same object at the same version and log end has nothing new to check.
  uint64_t state_version() const { return state_version_; }

  // A ZooKeeper write of this partition's ISR is in flight.
  bool isr_write_in_flight = false;
  // A ZooKeeper write of its ISR failed and the change stays pending until
  // the next LeaderAndIsr (ReplicationRules::zk_isr_failure_stays_pending).
  bool isr_change_given_up = false;
  // Which proposal that is, when it went to the controller (AlterIsr): an
  // answer to an older one, or to one a LeaderAndIsr has replaced, is not
  // applied (Partition.handleAlterIsrResponse compares the states).
  uint64_t isr_proposal = 0;
  // The follower's fetch position and whether it must truncate first.
  bool needs_truncation = false;

 private:
  // record_producers over records(0) .. records(n - 1).
  template <typename At>
  void record_producers_by(size_t n, At records);
  TopicPartition tp_;
  std::unique_ptr<PartitionLog> log_;
  BrokerId local_;
  BrokerId leader_ = kNoBroker;
  LeaderEpoch leader_epoch_{-1};
  ControllerEpoch controller_epoch_{-1};
  int32_t zk_version_ = -1;
  std::vector<BrokerId> replicas_;
  std::vector<BrokerId> isr_;
  std::vector<BrokerId> pending_isr_;
  Offset leader_epoch_start_{0};
  LeaderEpoch leading_since_{-1};
  // Partition.isReplicaIsrEligible: from 3.3 its broker is alive.
  bool isr_eligible(BrokerId replica) const;
  ReplicationRules rules_;
  int64_t lag_max_ms_ = 30000;
  std::function<bool(BrokerId)> is_live_;
  Offset high_watermark_{0};
  // Looked up on every follower fetch and every watermark check: a few
  // entries, filled by make_leader and cleared by make_follower.
  sim::FlatMap<BrokerId, FollowerState> followers_;
  std::map<ProducerId, ProducerEntry> producers_;
  uint64_t state_version_ = 0;
};

}  // namespace kafka
