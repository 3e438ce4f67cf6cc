#include "model/kafka/invariants.h"

#include <algorithm>

#include "model/kafka/broker.h"
#include "sim/assert.h"

namespace kafka {

Invariants::Invariants(const sim::World& world, const std::map<BrokerId, sim::ProcessId>& brokers)
    : world_(world) {
  slots_.reserve(brokers.size());
  for (const auto& [id, proc] : brokers) {
    Slot s;
    s.id = id;
    s.proc = proc;
    slots_.push_back(std::move(s));
  }
}

uint32_t Invariants::index_of(const TopicPartition& tp) {
  auto [it, inserted] = index_.emplace(tp, static_cast<uint32_t>(partitions_.size()));
  if (inserted) {
    partitions_.push_back(tp);
    leader_epochs_.push_back(0);
  }
  return it->second;
}

uint32_t Invariants::cached_index(std::vector<uint32_t>& order, size_t i, const TopicPartition& tp) {
  // Equal topics compare by pointer (kafka::Topic is interned).
  if (i < order.size() && order[i] != kUnknown && partitions_[order[i]] == tp) return order[i];
  if (i >= order.size()) order.resize(i + 1, kUnknown);
  order[i] = index_of(tp);
  return order[i];
}

void Invariants::check_after_event() {
  const bool all = runs_ != world_.runs();
  runs_ = world_.runs();
  bool any = all;
  for (Slot& slot : slots_) {
    const uint64_t activity = world_.activity(slot.proc);
    slot.touched = all || activity != slot.activity;
    slot.activity = activity;
    any = any || slot.touched;
  }
  // The first event of a run checks everything, version skips included:
  // code outside the loop may have changed a broker behind them.
  if (any) run(all);
}

bool Invariants::lost_power(BrokerId id) const {
  for (const Slot& slot : slots_) {
    if (slot.id == id) return slot.lost_power;
  }
  return false;
}

void Invariants::run(bool all) {
  // Looked up once per check: every leader's ISR members ask for it.
  for (Slot& slot : slots_) slot.lost_power = world_.disk(world_.host_of(slot.proc)).generation() > 0;
  for (Slot& slot : slots_) {
    // Untouched, and no controller view of its to compare with a moved
    // record: nothing of this broker can read differently (its process and
    // object are as last seen, or it would have been touched).
    if (!all && !slot.touched &&
        (!slot.controller_checked || slot.checked_view_version == view_version_)) {
      continue;
    }
    const BrokerId id = slot.id;
    const sim::Process* raw = world_.process(slot.proc);
    if (raw == nullptr) continue;
    const uint64_t incarnation = world_.incarnation(slot.proc);
    // A process gets a new object only when it starts again, with a new
    // incarnation: the same address and incarnation is the same object.
    if (raw != slot.process || incarnation != slot.process_incarnation) {
      slot.process = raw;
      slot.process_incarnation = incarnation;
      slot.broker = dynamic_cast<const Broker*>(raw);
      slot.partition_generation = UINT64_MAX;  // a new object counts its own generations
    }
    const Broker* b = slot.broker;
    if (b == nullptr) continue;
    const Controller* ctl = b->controller();
    // A controller view checked against the same record (no leader epoch
    // raised, no newer controller since) would pass the same way again if
    // its broker was not touched, or if it is the same controller (object
    // and epoch) with its partitions unchanged (Controller::partitions_version).
    const bool same_record = !all && slot.controller_checked && slot.checked_view_version == view_version_;
    const bool same_view =
        same_record && (!slot.touched || (ctl != nullptr && slot.checked_controller == ctl &&
                                          slot.checked_controller_epoch == ctl->epoch().value &&
                                          slot.checked_partitions_version == ctl->partitions_version()));
    if (ctl != nullptr && !same_view) {
      // Entries of controllers_ never change: once this broker is on record
      // for its epoch, looking again would find itself.
      if (!slot.controller_recorded || ctl->epoch().value != slot.recorded_controller_epoch) {
        auto [it, inserted] = controllers_.emplace(ctl->epoch().value, id);
        SIM_ASSERT(inserted || it->second == id, "two controllers in epoch {}: {} and {}",
                   ctl->epoch().value, it->second, id);
        slot.controller_recorded = true;
        slot.recorded_controller_epoch = ctl->epoch().value;
      }
      size_t i = 0;
      for (const auto& [tp, info] : ctl->partitions()) {
        const size_t pos = i++;
        if (!info.state) continue;
        const auto& s = *info.state;
        SIM_ASSERT(s.leader == kNoBroker ||
                       std::find(s.isr.begin(), s.isr.end(), s.leader) != s.isr.end(),
                   "controller {}: leader {} of {} not in its ISR", id, s.leader, to_string(tp));
        for (BrokerId r : s.isr) {
          SIM_ASSERT(std::find(info.replicas.begin(), info.replicas.end(), r) != info.replicas.end(),
                     "controller {}: ISR member {} of {} is not a replica", id, r, to_string(tp));
        }
        int64_t& seen = leader_epochs_[cached_index(slot.controller_order, pos, tp)];
        SIM_ASSERT(s.leader_epoch.value >= seen || ctl->epoch().value < max_controller_epoch_,
                   "leader epoch of {} went back from {} to {}", to_string(tp), seen,
                   s.leader_epoch.value);
        if (s.leader_epoch.value > seen) {
          seen = s.leader_epoch.value;
          ++view_version_;
        }
      }
      if (ctl->epoch().value > max_controller_epoch_) {
        max_controller_epoch_ = ctl->epoch().value;
        ++view_version_;
      }
      slot.controller_checked = true;
      slot.checked_view_version = view_version_;
      slot.checked_controller = ctl;
      slot.checked_controller_epoch = ctl->epoch().value;
      slot.checked_partitions_version = ctl->partitions_version();
    } else if (ctl == nullptr) {
      slot.controller_checked = false;
    }
    if (!all && !slot.touched) continue;  // its partitions are as last checked
    const bool by_leader_epoch = b->config().truncation == Truncation::leader_epoch;
    // With no partition created or deleted since the last check, the map
    // holds the same keys in the same order: the remembered indices stand.
    const bool same_keys = b->partitions_generation() == slot.partition_generation &&
                           slot.partition_order.size() >= b->partition_map().size();
    if (!same_keys) {
      // Positions remembered under another generation may name other
      // partitions now: each is looked up again when its partition leads.
      std::fill(slot.partition_order.begin(), slot.partition_order.end(), kUnknown);
      slot.partition_order.resize(b->partition_map().size(), kUnknown);
      slot.partition_generation = b->partitions_generation();
      // A partition object may have gone and another taken its address.
      for (Led& l : slot.led) l.checked = nullptr;
    }
    // The partitions leading here: the ones found by the last walk of the
    // map while its keys and their roles are unchanged, or a new walk.
    if (all || !same_keys || slot.leading_roles_version != b->roles_version()) {
      slot.leading.clear();
      uint32_t i = 0;
      for (const auto& [tp, owned] : b->partition_map()) {
        const uint32_t pos = i++;
        if (owned->is_leader()) slot.leading.emplace_back(pos, owned.get());
      }
      slot.leading_roles_version = b->roles_version();
    }
    for (const auto& [pos, p] : slot.leading) {
      uint32_t& index = slot.partition_order[pos];
      if (index == kUnknown) index = index_of(p->tp());
      if (index >= slot.led.size()) slot.led.resize(partitions_.size());
      Led& led = slot.led[index];
      const uint64_t version = p->state_version();
      const int64_t log_end = p->log().log_end().value;
      // Passed over first: the role and ISR asserted below raise the state
      // version when they change, so they hold as they did at the last check
      // (a partition that stopped leading without a roles_version bump still
      // raised its state version, and is caught below).
      if (!all && led.checked == p && led.checked_version == version && led.checked_log_end == log_end) {
        continue;
      }
      SIM_ASSERT(p->is_leader(), "broker {}: {} no longer leads but its role version did not move",
                 id, to_string(p->tp()));
      const TopicPartition& tp = p->tp();
      const auto& isr = p->isr();
      SIM_ASSERT(std::find(isr.begin(), isr.end(), id) != isr.end(),
                 "broker {} leads {} but is not in its ISR", id, to_string(tp));
      const int64_t leader_epoch = p->leader_epoch().value;
      const int64_t leading_since = p->leading_since().value;
      const bool replica_lost_power = std::any_of(p->replicas().begin(), p->replicas().end(),
                                                  [this](BrokerId r) { return lost_power(r); });
      for (BrokerId r : isr) {
        SIM_ASSERT(std::find(p->replicas().begin(), p->replicas().end(), r) != p->replicas().end(),
                   "broker {}: ISR member {} of {} is not a replica", id, r, to_string(tp));
        if (r == id) continue;
        const FollowerState* f = p->followers().find(r);
        if (f == nullptr || f->log_end.value < 0) continue;
        // The highest log end offset the leader has heard from this member
        // since it became leader in this incarnation (a new leader epoch
        // while it stays leader keeps what it heard, as Partition.makeLeader
        // does: Partition::leading_since). Not the latest: a fetch
        // the follower gave up on can still arrive after a heal (the kernel
        // delivers what was sent before the socket was closed) and report an
        // old offset, as it would to a real broker.
        // "Incarnation" is the process's, not its broker epoch: a broker
        // whose ZooKeeper session expired registers again with a new broker
        // epoch (KafkaController.processRegisterBrokerAndReelect) but keeps
        // its partitions, high watermarks and followers' states
        // (Partition.makeLeader resets those only when it becomes leader), so
        // what it heard before the new registration still counts.
        auto h = std::find_if(led.heard.begin(), led.heard.end(),
                              [r](const Heard& x) { return x.follower == r; });
        if (h == led.heard.end()) {
          led.heard.push_back(Heard{.follower = r, .log_end = 0, .incarnation = 0, .leading_since = 0});
          h = led.heard.end() - 1;
        }
        if (h->incarnation != static_cast<int64_t>(incarnation) || h->leading_since != leading_since) {
          h->incarnation = static_cast<int64_t>(incarnation);
          h->leading_since = leading_since;
          h->log_end = -1;
        }
        h->log_end = std::max(h->log_end, f->log_end.value);
        // Truncating to the high watermark (the pre-KIP-101 what-if) can
        // legitimately put an ISR member below it: that is the anomaly. So
        // can a power loss: a follower whose host lost power comes back with
        // only what reached its disk and may still be in the ISR (nothing in
        // ZooKeeper mode takes it out before it lags replica.lag.time.max.ms;
        // KIP-966's motivation) — found by `kafkasim fuzz`, docs/fidelity.md.
        // And a power loss of another replica: one that came back short and
        // led for a moment made this member truncate to its shorter log,
        // below the high watermark the next leader still holds (found by a
        // review's fuzzing).
        if (by_leader_epoch && !replica_lost_power) {
          SIM_ASSERT(p->high_watermark().value <= h->log_end,
                     "broker {}: high watermark {} of {} above ISR member {}'s log end {}", id,
                     p->high_watermark().value, to_string(tp), r, h->log_end);
        }
      }
      SIM_ASSERT(p->high_watermark() <= p->log().log_end(), "broker {}: hw above log end for {}",
                 id, to_string(tp));
      // A restarted broker may lead again in the same leader epoch (the
      // controller saw no change) from its checkpointed high watermark.
      if (led.incarnation != incarnation) {
        led.incarnation = incarnation;
        led.leader_epoch = -1;
      }
      if (led.leader_epoch == leader_epoch) {
        SIM_ASSERT(p->high_watermark().value >= led.hw, "broker {}: hw of {} went down from {} to {}",
                   id, to_string(tp), led.hw, p->high_watermark().value);
      }
      led.leader_epoch = leader_epoch;
      led.hw = p->high_watermark().value;
      led.checked = p;
      led.checked_version = version;
      led.checked_log_end = log_end;
    }
  }
}

}  // namespace kafka
