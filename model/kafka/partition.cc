#include "model/kafka/partition.h"

#include <algorithm>

#include "sim/assert.h"

namespace kafka {

namespace {
bool contains(const std::vector<BrokerId>& v, BrokerId b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}
constexpr size_t kProducerBatchesKept = 5;  // ProducerStateEntry.NumBatchesToRetain
}  // namespace

Partition::Partition(TopicPartition tp, std::unique_ptr<PartitionLog> log, BrokerId local)
    : tp_(std::move(tp)), log_(std::move(log)), local_(local) {
  rebuild_producers();
}

void Partition::make_leader(const PartitionState& s, int64_t now_ms) {
  ++state_version_;
  pending_isr_.clear();
  const bool new_leader = leader_ != local_;
  const bool new_epoch = s.leader_epoch != leader_epoch_ || new_leader;
  if (new_leader) leading_since_ = s.leader_epoch;
  leader_ = local_;
  leader_epoch_ = s.leader_epoch;
  controller_epoch_ = s.controller_epoch;
  zk_version_ = s.zk_version;
  replicas_ = s.replicas;
  isr_ = s.isr;
  if (new_epoch) {
    // The leader epoch starts at our log end (LeaderEpochFileCache.assign).
    leader_epoch_start_ = log_->log_end();
    log_->assign_epoch(leader_epoch_, leader_epoch_start_);
    // Partition.makeLeader (2.2 resetLastCaughtUpTime, 3.x
    // Replica.resetReplicaState): every follower in the ISR counts as caught
    // up now, the others not at all. A broker that becomes leader forgets
    // what its followers had (learnt again from their next fetch); one that
    // was leader already and only got a new epoch (an ISR member removed by
    // the controller) keeps their log ends, and counts this instant as each
    // follower's last fetch at its own log end (3.3+: each ISR follower's;
    // one outside the ISR has not fetched) — so the high watermark does not
    // wait for every follower to fetch again, and a follower still at the
    // log end is not shrunk from the ISR for being silent.
    const Offset leader_end = log_->log_end();
    sim::FlatMap<BrokerId, FollowerState> followers;
    for (BrokerId r : replicas_) {
      if (r == local_) continue;
      FollowerState f;
      if (const FollowerState* old = new_leader ? nullptr : followers_.find(r)) {
        f.log_end = old->log_end;
        f.last_fetch_leader_log_end = leader_end;
        const bool forgets = rules_.new_epoch_forgets_out_of_sync_fetch && !contains(isr_, r);
        f.last_fetch_ms = forgets ? 0 : now_ms;
      }
      f.last_caught_up_ms = contains(isr_, r) ? now_ms : 0;
      followers[r] = f;
    }
    followers_ = std::move(followers);
  }
  needs_truncation = false;
  if (high_watermark_ > log_->log_end()) high_watermark_ = log_->log_end();
  maybe_increment_high_watermark(now_ms);
}

void Partition::make_follower(const PartitionState& s) {
  ++state_version_;
  pending_isr_.clear();
  leader_ = s.leader;
  leader_epoch_ = s.leader_epoch;
  controller_epoch_ = s.controller_epoch;
  zk_version_ = s.zk_version;
  replicas_ = s.replicas;
  isr_ = s.isr;
  followers_.clear();
  needs_truncation = true;
}

void Partition::set_isr(std::vector<BrokerId> isr, int32_t zk_version) {
  ++state_version_;
  isr_ = std::move(isr);
  zk_version_ = zk_version;
}

void Partition::set_follower_high_watermark(Offset leader_hw) {
  ++state_version_;
  high_watermark_ = std::min(leader_hw, log_->log_end());
}

void Partition::set_checkpointed_high_watermark(Offset hw) {
  ++state_version_;
  high_watermark_ = std::min(hw, log_->log_end());
}

int32_t Partition::effective_min_isr() const {
  const int32_t configured = log_->config().min_insync_replicas;
  if (!rules_.min_isr_holds_high_watermark) return configured;
  return std::min(configured, static_cast<int32_t>(std::max<size_t>(replicas_.size(), 1)));
}

bool Partition::under_min_isr_after_append() const {
  if (!rules_.acks_count_maximal_isr) return under_min_isr();
  size_t maximal = isr_.size();
  for (BrokerId r : pending_isr_) maximal += contains(isr_, r) ? 0 : 1;
  return static_cast<int32_t>(maximal) < effective_min_isr();
}

bool Partition::isr_eligible(BrokerId replica) const {
  return !rules_.isr_join_needs_live_broker || !is_live_ || is_live_(replica);
}

bool Partition::maybe_increment_high_watermark(int64_t now_ms) {
  if (!is_leader()) return false;
  // Kafka 3.7+ (KAFKA-15583): nothing is committed while the ISR is below
  // min.insync.replicas, whatever acks the writes asked for.
  if (rules_.min_isr_holds_high_watermark && under_min_isr()) return false;
  Offset candidate = log_->log_end();
  // Over the maximal ISR: the ISR and the members a pending expansion adds.
  auto hold = [&](BrokerId r) {
    if (r == local_) return true;
    const FollowerState* f = followers_.find(r);
    // An ISR member not yet heard from holds the watermark where it is.
    const Offset leo = f == nullptr ? Offset{-1} : f->log_end;
    if (leo.value < 0) return false;
    candidate = std::min(candidate, leo);
    return true;
  };
  for (BrokerId r : isr_) {
    if (!hold(r)) return false;
  }
  for (BrokerId r : pending_isr_) {
    if (!contains(isr_, r) && !hold(r)) return false;
  }
  // A follower outside that ISR, caught up within replica.lag.time.max.ms
  // (never, while last_caught_up_ms is 0), holds it at its log end.
  for (const auto& [r, f] : followers_) {
    if (f.log_end.value < 0 || f.log_end >= candidate || f.last_caught_up_ms <= 0 ||
        now_ms - f.last_caught_up_ms > lag_max_ms_ || contains(isr_, r) || contains(pending_isr_, r)) {
      continue;
    }
    if (rules_.high_watermark_waits_for_eligible_only && !isr_eligible(r)) continue;
    candidate = f.log_end;
  }
  if (candidate > high_watermark_) {
    high_watermark_ = candidate;
    ++state_version_;
    return true;
  }
  return false;
}

void Partition::update_follower(BrokerId replica, Offset fetch_offset, int64_t now_ms) {
  FollowerState* found = followers_.find(replica);
  if (found == nullptr) return;  // not an assigned replica
  FollowerState& f = *found;
  const Offset leader_end = log_->log_end();
  if (fetch_offset >= leader_end) {
    f.last_caught_up_ms = now_ms;
  } else if (f.last_fetch_leader_log_end.value >= 0 && fetch_offset >= f.last_fetch_leader_log_end) {
    f.last_caught_up_ms = std::max(f.last_caught_up_ms, f.last_fetch_ms);
  }
  if (f.log_end != fetch_offset) ++state_version_;
  f.log_end = fetch_offset;
  f.last_fetch_leader_log_end = leader_end;
  f.last_fetch_ms = now_ms;
}

bool Partition::can_join_isr(BrokerId replica) const {
  if (!is_leader() || contains(isr_, replica) || !contains(replicas_, replica)) return false;
  const FollowerState* f = followers_.find(replica);
  return f != nullptr && f->log_end.value >= 0 && f->log_end >= high_watermark_ &&
         f->log_end >= leader_epoch_start_ && isr_eligible(replica);
}

std::vector<BrokerId> Partition::out_of_sync(int64_t now_ms, int64_t lag_max_ms) const {
  std::vector<BrokerId> out;
  if (!is_leader()) return out;
  for (BrokerId r : isr_) {
    if (r == local_) continue;
    const FollowerState* f = followers_.find(r);
    if (f != nullptr && f->log_end == log_->log_end()) continue;
    const int64_t caught_up = f == nullptr ? 0 : f->last_caught_up_ms;
    if (now_ms - caught_up > lag_max_ms) out.push_back(r);
  }
  return out;
}

SequenceCheck Partition::check_sequence(ProducerId pid, int16_t epoch, int32_t first_seq,
                                        int32_t last_seq, Offset* duplicate_offset) const {
  auto it = producers_.find(pid);
  if (it == producers_.end()) {
    // No state for the producer: from 2.5 any sequence is taken (ReplicationRules).
    return first_seq == 0 || rules_.unknown_producer_any_sequence ? SequenceCheck::append
                                                                  : SequenceCheck::out_of_order;
  }
  const ProducerEntry& e = it->second;
  if (epoch < e.epoch) return SequenceCheck::invalid_epoch;
  if (epoch > e.epoch) return first_seq == 0 ? SequenceCheck::append : SequenceCheck::out_of_order;
  for (const ProducerEntry::Batch& b : e.batches) {
    // Batches that reached a follower in one fetch are merged into one range
    // here, so a retried batch is a duplicate when it lies within a range.
    if (b.first_sequence <= first_seq && last_seq <= b.last_sequence) {
      if (duplicate_offset != nullptr) *duplicate_offset = b.first_offset + (first_seq - b.first_sequence);
      return SequenceCheck::duplicate;
    }
  }
  const int32_t last = e.batches.empty() ? -1 : e.batches.back().last_sequence;
  return first_seq == last + 1 ? SequenceCheck::append : SequenceCheck::out_of_order;
}

template <typename At>
void Partition::record_producers_by(size_t n, At records) {
  for (size_t i = 0; i < n;) {
    const Record& r = records(i);
    if (r.producer_id == kNoProducerId) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < n && records(j).producer_id == r.producer_id &&
           records(j).producer_epoch == r.producer_epoch &&
           records(j).sequence == records(j - 1).sequence + 1) {
      ++j;
    }
    ProducerEntry& e = producers_[r.producer_id];
    if (r.producer_epoch != e.epoch) {
      e.epoch = r.producer_epoch;
      e.batches.clear();
    }
    e.batches.push_back({r.sequence, records(j - 1).sequence, r.offset});
    while (e.batches.size() > kProducerBatchesKept) e.batches.pop_front();
    i = j;
  }
}

void Partition::record_producers(const std::vector<Record>& records) {
  record_producers_by(records.size(), [&records](size_t i) -> const Record& { return records[i]; });
}

void Partition::record_producers_from(Offset from) {
  const Offset start = std::max(from, log_->log_start());
  const int64_t n = log_->log_end() - start;
  if (n <= 0) return;
  record_producers_by(static_cast<size_t>(n),
                      [this, start](size_t i) -> const Record& { return *log_->at(start + static_cast<int64_t>(i)); });
}

void Partition::rebuild_producers() {
  producers_.clear();
  if (log_->empty()) return;
  record_producers_from(log_->log_start());
}

}  // namespace kafka
