// The Kafka model's own invariants, checked after every event (DESIGN.md,
// "Invariants"). Breaking one is a bug in kafkasim, never an outcome of a
// scenario: the check stops the run with seed, virtual time and message
// (SIM_ASSERT -> sim::InvariantViolation).
//
//  - at most one broker acts as controller per controller epoch, ever (a
//    zombie with an older epoch may still believe it is controller until
//    ZooKeeper tells it otherwise: that is allowed, two in one epoch is not);
//  - in an active controller's view, leader ∈ ISR ⊆ replicas (leader -1
//    allowed), and leader epochs never go backwards in the view of the
//    newest controller;
//  - at a broker that leads a partition: it is in the ISR, the ISR is a
//    subset of the replicas, the high watermark is at most its log end and
//    never goes down while it leads in one leader epoch of one incarnation
//    (a start of the process; a new ZooKeeper session and broker epoch is
//    not one), and (with truncation by leader epoch) never passes the
//    highest log end offset it has heard from an ISR member in that epoch
//    and incarnation (a stale fetch, delivered late after a partition heals,
//    may report a lower one, as it can to a real broker).
#pragma once

#include <map>
#include <tuple>
#include <utility>

#include "model/kafka/types.h"
#include "sim/world.h"

namespace kafka {

class Invariants {
 public:
  Invariants(const sim::World& world, std::map<BrokerId, sim::ProcessId> brokers)
      : world_(world), brokers_(std::move(brokers)) {}
  // Checks everything once; cheap enough to run after every event.
  void check();
  size_t controller_epochs_seen() const { return controllers_.size(); }

 private:
  const sim::World& world_;
  std::map<BrokerId, sim::ProcessId> brokers_;
  std::map<int64_t, BrokerId> controllers_;
  int64_t max_controller_epoch_ = -1;
  std::map<TopicPartition, int64_t> leader_epochs_;
  std::map<std::pair<BrokerId, TopicPartition>, std::pair<int64_t, int64_t>> hw_;  // epoch, hw
  std::map<std::pair<BrokerId, TopicPartition>, uint64_t> incarnations_;  // process starts
  // (leader, partition, follower) -> highest log end heard, and the
  // (process incarnation, leader epoch) it was heard in.
  std::map<std::tuple<BrokerId, TopicPartition, BrokerId>, int64_t> heard_;
  std::map<std::tuple<BrokerId, TopicPartition, BrokerId>, std::pair<int64_t, int64_t>> heard_when_;
};

}  // namespace kafka
