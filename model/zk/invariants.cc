#include "model/zk/invariants.h"


#include "model/zk/server.h"
#include "sim/assert.h"

namespace zk {

namespace {

// A fingerprint of a transaction: who proposed it for which request, when,
// and what kind it is. Two different transactions at one zxid — the
// violation — differ in these (encoding each whole transaction cost 1 % of
// a seed-000 run).
uint64_t fingerprint(const Txn& t) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const uint64_t v : {t.session.value, static_cast<uint64_t>(t.cxid), static_cast<uint64_t>(t.time_ms),
                           static_cast<uint64_t>(t.body.index())}) {
    h ^= v;
    h *= 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return h;
}

}  // namespace

EnsembleInvariants::EnsembleInvariants(const sim::World& world,
                                       const std::vector<std::pair<ServerId, sim::ProcessId>>& servers)
    : world_(world) {
  for (const auto& [id, proc] : servers) slots_.push_back(Slot{.id = id, .proc = proc});
}

void EnsembleInvariants::check() {
  for (Slot& slot : slots_) check(slot);
}

void EnsembleInvariants::check_after_event() {
  for (Slot& slot : slots_) {
    const uint64_t activity = world_.activity(slot.proc);
    if (activity == slot.activity) continue;
    slot.activity = activity;
    check(slot);
  }
}

void EnsembleInvariants::check(Slot& slot) {
  const auto* s = dynamic_cast<const Server*>(world_.process(slot.proc));
  if (s == nullptr) return;
  const uint64_t incarnation = world_.incarnation(slot.proc);
  if (incarnation != slot.incarnation) {
    // A restarted server reloads its log; its committed point starts again.
    slot.incarnation = incarnation;
    slot.committed = 0;
    slot.serving = false;
  }
  if (s->state() == PeerState::leading && s->serving()) {
    const auto [it, inserted] = leaders_.emplace(s->current_epoch(), slot.id);
    SIM_ASSERT(inserted || it->second == slot.id, "ZooKeeper: two leaders in epoch {}: servers {} and {}",
               s->current_epoch(), it->second, slot.id);
  }
  const uint64_t committed = s->last_committed().value;
  // While a server serves in one epoch its commits only go forward. Outside
  // that it may go back: on start it applies every logged transaction, as
  // ZKDatabase.loadDataBase does, and a TRUNC from the next leader cuts the
  // ones that were never committed (their zxids, of an old epoch, are never
  // reused).
  const bool serving = s->serving();
  if (serving && slot.serving && slot.epoch == s->current_epoch()) {
    SIM_ASSERT(committed >= slot.committed, "ZooKeeper: server {}'s committed zxid went down from {} to {}", slot.id,
               to_string(Zxid{slot.committed}), to_string(s->last_committed()));
  }
  slot.serving = serving;
  slot.epoch = s->current_epoch();
  if (committed == slot.committed) return;
  // The transactions newly applied: the tail of the log above what was checked.
  const std::vector<Txn>& log = s->log();
  for (auto t = log.rbegin(); t != log.rend() && t->zxid.value > slot.committed; ++t) {
    if (t->zxid.value > committed) continue;
    const uint64_t h = fingerprint(*t);
    const auto [it, inserted] = committed_.emplace(t->zxid.value, h);
    SIM_ASSERT(inserted || it->second == h, "ZooKeeper: server {} committed another transaction at {}", slot.id,
               to_string(t->zxid));
  }
  slot.committed = committed;
}

}  // namespace zk
