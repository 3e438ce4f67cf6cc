#include "model/kafka/invariants.h"

#include <algorithm>

#include "model/kafka/broker.h"
#include "sim/assert.h"

namespace kafka {

void Invariants::check() {
  for (const auto& [id, proc] : brokers_) {
    const Broker* b = world_.process_as<Broker>(proc);
    if (b == nullptr) continue;
    if (const Controller* ctl = b->controller()) {
      auto [it, inserted] = controllers_.emplace(ctl->epoch().value, id);
      SIM_ASSERT(inserted || it->second == id, "two controllers in epoch {}: {} and {}",
                 ctl->epoch().value, it->second, id);
      for (const auto& [tp, info] : ctl->partitions()) {
        if (!info.state) continue;
        const auto& s = *info.state;
        SIM_ASSERT(s.leader == kNoBroker ||
                       std::find(s.isr.begin(), s.isr.end(), s.leader) != s.isr.end(),
                   "controller {}: leader {} of {} not in its ISR", id, s.leader, to_string(tp));
        for (BrokerId r : s.isr) {
          SIM_ASSERT(std::find(info.replicas.begin(), info.replicas.end(), r) != info.replicas.end(),
                     "controller {}: ISR member {} of {} is not a replica", id, r, to_string(tp));
        }
        int64_t& seen = leader_epochs_[tp];
        SIM_ASSERT(s.leader_epoch.value >= seen || ctl->epoch().value < max_controller_epoch_,
                   "leader epoch of {} went back from {} to {}", to_string(tp), seen,
                   s.leader_epoch.value);
        seen = std::max(seen, s.leader_epoch.value);
      }
      max_controller_epoch_ = std::max(max_controller_epoch_, ctl->epoch().value);
    }
    const uint64_t incarnation = world_.incarnation(proc);
    for (const auto& [tp, owned] : b->partition_map()) {
      const Partition* p = owned.get();
      if (!p->is_leader()) continue;
      const auto& isr = p->isr();
      SIM_ASSERT(std::find(isr.begin(), isr.end(), id) != isr.end(),
                 "broker {} leads {} but is not in its ISR", id, to_string(tp));
      for (BrokerId r : isr) {
        SIM_ASSERT(std::find(p->replicas().begin(), p->replicas().end(), r) != p->replicas().end(),
                   "broker {}: ISR member {} of {} is not a replica", id, r, to_string(tp));
        if (r == id) continue;
        auto f = p->followers().find(r);
        if (f == p->followers().end() || f->second.log_end.value < 0) continue;
        // The highest log end offset the leader has heard from this member
        // in this leader epoch of this incarnation. Not the latest: a fetch
        // the follower gave up on can still arrive after a heal (the kernel
        // delivers what was sent before the socket was closed) and report an
        // old offset, as it would to a real broker.
        // "Incarnation" is the process's, not its broker epoch: a broker
        // whose ZooKeeper session expired registers again with a new broker
        // epoch (KafkaController.processRegisterBrokerAndReelect) but keeps
        // its partitions, high watermarks and followers' states
        // (Partition.makeLeader resets those only in a new leader epoch), so
        // what it heard before the new registration still counts.
        int64_t& heard = heard_[{id, tp, r}];
        const std::pair<int64_t, int64_t> when{static_cast<int64_t>(incarnation),
                                               p->leader_epoch().value};
        auto& heard_when = heard_when_[{id, tp, r}];
        if (heard_when != when) {
          heard_when = when;
          heard = -1;
        }
        heard = std::max(heard, f->second.log_end.value);
        // Truncating to the high watermark (the pre-KIP-101 what-if) can
        // legitimately put an ISR member below it: that is the anomaly.
        if (b->config().truncation == Truncation::leader_epoch) {
          SIM_ASSERT(p->high_watermark().value <= heard,
                     "broker {}: high watermark {} of {} above ISR member {}'s log end {}", id,
                     p->high_watermark().value, to_string(tp), r, heard);
        }
      }
      SIM_ASSERT(p->high_watermark() <= p->log().log_end(), "broker {}: hw above log end for {}",
                 id, to_string(tp));
      // A restarted broker may lead again in the same leader epoch (the
      // controller saw no change) from its checkpointed high watermark.
      auto& [epoch, hw] = hw_[{id, tp}];
      auto& last_incarnation = incarnations_[{id, tp}];
      if (last_incarnation != incarnation) {
        last_incarnation = incarnation;
        epoch = -1;
      }
      if (epoch == p->leader_epoch().value) {
        SIM_ASSERT(p->high_watermark().value >= hw, "broker {}: hw of {} went down from {} to {}",
                   id, to_string(tp), hw, p->high_watermark().value);
      }
      epoch = p->leader_epoch().value;
      hw = p->high_watermark().value;
    }
  }
}


}  // namespace kafka
