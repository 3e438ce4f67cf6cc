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
//
// Cost: the check runs after every event, so it keeps what it tracks in
// flat vectors. Each topic-partition gets a dense index the first time it is
// seen; per broker, the checker remembers which index the i-th entry of the
// broker's partition map had, valid while the broker's partition generation
// (raised on every create and delete) stays the same, and which index the
// i-th entry of its controller's map had, confirmed with one equality
// compare; so a check does no map lookups unless a set of partitions changed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "model/kafka/types.h"
#include "sim/world.h"

namespace kafka {

class Broker;
class Controller;
class Partition;

class Invariants {
 public:
  Invariants(const sim::World& world, const std::map<BrokerId, sim::ProcessId>& brokers);
  // Checks everything once.
  void check() { run(/*all=*/true); }
  // The same, after an event of a run, skipping what that event cannot have
  // changed (the after-event hook of a scenario run). A broker's own
  // partitions are checked again only if its process's code ran or its
  // lifecycle changed since the last look (sim::World::activity) — those
  // checks depend on nothing else, and repeating them on unchanged state
  // finds nothing new. Within a touched broker, a led partition whose object,
  // Partition::state_version and log end are as at its last full check is
  // passed over: the same inputs give the same verdict (host power losses
  // only ever relax a check). A controller's view is checked again when its
  // partitions changed (Controller::partitions_version, or another controller)
  // or when the record it is compared with (the highest leader
  // epochs seen, the newest controller epoch) moved since its last check;
  // otherwise the check would repeat itself exactly. The first
  // event of every run_until/step call checks everything, since code outside
  // the loop may have touched a broker directly.
  void check_after_event();
  size_t controller_epochs_seen() const { return controllers_.size(); }

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  void run(bool all);
  // What a leader has heard from one ISR member: the highest log end, and
  // the (process incarnation, leader epoch) it was heard in.
  struct Heard {
    BrokerId follower = kNoBroker;
    int64_t log_end = 0;
    int64_t incarnation = 0;
    int64_t leading_since = 0;  // Partition::leading_since
  };
  // One (broker, partition) while the broker leads it: the leader epoch and
  // high watermark at the last check, in which incarnation, and what it has
  // heard from its followers (a handful: a flat vector).
  struct Led {
    int64_t leader_epoch = 0;
    int64_t hw = 0;
    uint64_t incarnation = 0;
    std::vector<Heard> heard;
    // The partition object, its Partition::state_version and its log end
    // when last checked in full (object null: not since the broker's
    // partitions last came or went). The same three again: nothing to check.
    const Partition* checked = nullptr;
    uint64_t checked_version = 0;
    int64_t checked_log_end = -1;
  };
  struct Slot {
    BrokerId id = kNoBroker;
    sim::ProcessId proc;
    // The live broker object as of the last check, and the incarnation it
    // belongs to (a new object only comes with a new incarnation).
    const sim::Process* process = nullptr;
    uint64_t process_incarnation = 0;
    const Broker* broker = nullptr;
    // The controller epoch this broker is already on record for, if any.
    bool controller_recorded = false;
    int64_t recorded_controller_epoch = 0;
    // Its controller view was checked when view_version_ was this.
    bool controller_checked = false;
    uint64_t checked_view_version = 0;
    // Which controller view that was: the object, its epoch (a new controller
    // always has a new one) and Controller::partitions_version.
    const Controller* checked_controller = nullptr;
    int64_t checked_controller_epoch = -1;
    uint64_t checked_partitions_version = 0;
    // Dense index of the i-th entry of partition_map() / the controller's
    // partitions() at the last check (kUnknown: not yet known).
    std::vector<uint32_t> partition_order;
    std::vector<uint32_t> controller_order;
    // Broker::partitions_generation when partition_order was last confirmed
    // whole: while it holds, the map has the same keys in the same order.
    uint64_t partition_generation = UINT64_MAX;
    // The partitions that led here at the last full walk of partition_map()
    // (position in it, object), and Broker::roles_version then: while that
    // and the generation hold, the same partitions lead, and only they are
    // looked at.
    std::vector<std::pair<uint32_t, const Partition*>> leading;
    uint64_t leading_roles_version = UINT64_MAX;
    // Whether the host lost power in this run, as of the current check.
    bool lost_power = false;
    std::vector<Led> led;  // by partition index
    // sim::World::activity of the broker's process at the last look, and
    // whether it changed since (its partitions need checking again).
    uint64_t activity = 0;
    bool touched = true;
  };

  // Whether broker `id`'s host has lost power (and unsynced writes) in this run,
  // as recorded at the start of the current check.
  bool lost_power(BrokerId id) const;
  // The dense index of `tp` (interning it on first sight).
  uint32_t index_of(const TopicPartition& tp);
  // The index of the i-th entry `tp` of a partition map, from `order` when
  // still right.
  uint32_t cached_index(std::vector<uint32_t>& order, size_t i, const TopicPartition& tp);

  const sim::World& world_;
  std::vector<Slot> slots_;  // by broker id, ascending
  std::map<int64_t, BrokerId> controllers_;
  int64_t max_controller_epoch_ = -1;
  std::vector<TopicPartition> partitions_;  // by index
  std::map<TopicPartition, uint32_t> index_;
  std::vector<int64_t> leader_epochs_;  // by partition index
  // Bumped whenever leader_epochs_ or max_controller_epoch_ rises: what a
  // controller view is compared with.
  uint64_t view_version_ = 0;
  std::optional<uint64_t> runs_;  // sim::World::runs at the last check_after_event
};

}  // namespace kafka
