// The ZooKeeper ensemble's own invariants, checked after events of a run
// (the scenario runner, next to kafka::Invariants; the ZooKeeper tests):
//  - one leader per epoch: no two servers lead and serve in the same epoch;
//  - the committed transactions form one sequence: every server that commits
//    a zxid commits the same transaction there (compared by a fingerprint:
//    session, request id, time and kind);
//  - a server's committed zxid never goes down while it serves in one epoch.
// A violation is a SIM_ASSERT (sim::InvariantViolation): a kafkasim bug.
//
//   zk::EnsembleInvariants inv(world, {{1, zk1}, {2, zk2}, {3, zk3}});
//   world.set_invariant_check([&] { inv.check_after_event(); });
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "model/zk/types.h"
#include "sim/world.h"

namespace zk {

class Server;

class EnsembleInvariants {
 public:
  EnsembleInvariants(const sim::World& world, const std::vector<std::pair<ServerId, sim::ProcessId>>& servers);
  // Every server.
  void check();
  // The servers whose process ran or changed since the last look
  // (sim::World::activity); the others' state cannot have changed.
  void check_after_event();
  size_t epochs_with_leaders() const { return leaders_.size(); }

 private:
  struct Slot {
    ServerId id = 0;
    sim::ProcessId proc;
    uint64_t activity = UINT64_MAX;
    uint64_t incarnation = 0;
    uint64_t committed = 0;  // the committed zxid checked up to, in this incarnation
    bool serving = false;    // at the last check
    uint32_t epoch = 0;      // its current epoch at the last check
  };
  void check(Slot& slot);

  const sim::World& world_;
  std::vector<Slot> slots_;
  std::map<uint32_t, ServerId> leaders_;      // epoch -> the server that led it
  std::map<uint64_t, uint64_t> committed_;    // zxid -> fingerprint of the transaction
};

}  // namespace zk
