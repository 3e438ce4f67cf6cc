// Producer-id blocks (kafka.coordinator.transaction.ProducerIdManager):
// blocks of 1000 ids, each claimed from /latest_producer_id_block by a read
// and a write conditional on the version read, read again and retried while
// another claimer wins (ZkProducerIdManager.getNewProducerIdBlock; 2.2.2,
// 3.1.0, 3.9). Before 3.0, and on an inter-broker protocol below 3.0-IV0, a
// broker claims its own blocks; from then the controller claims one for the
// broker that asks it (AllocateProducerIds, KIP-730).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/kafka/types.h"
#include "model/kafka/znodes.h"
#include "model/zk/client.h"

namespace kafka {

inline constexpr int64_t kProducerIdBlockSize = 1000;

// A block as the controller hands it out (ProducerIdsBlock).
struct ProducerIdRange {
  int64_t start = 0;
  int64_t size = 0;  // ProducerIdsBlock.EMPTY: none
  int64_t last() const { return start + size - 1; }
  // ProducerIdManager.PidPrefetchThreshold: the next block is asked for
  // once 90 % of this one is handed out.
  int64_t prefetch_at() const { return start + size * 9 / 10; }
};

// Claims the block after the last one claimed, for `broker`, and calls
// `done` with it — or with the ZooKeeper error that ended the claim (a lost
// connection included; the caller decides whether to try again) and null;
// `ok` with null means the znode's content was unreadable.
using ProducerIdBlockClaimed = std::function<void(zk::Error, const znodes::ProducerIdBlock*)>;
void claim_producer_id_block(zk::Client& zk, const std::string& path, BrokerId broker,
                             ProducerIdBlockClaimed done);

}  // namespace kafka
