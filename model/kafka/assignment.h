// Replica assignment for a new topic without racks, the way Kafka's
// AdminUtils.assignReplicasToBrokers does it: partition i's first replica is
// broker (start + i) mod n in sorted broker order, with `start` drawn at
// random; the followers come after it at a distance that starts at a random
// shift and grows by one every n partitions, so that followers spread out
// instead of all following the same broker.
#pragma once

#include <vector>

#include "model/kafka/znodes.h"
#include "sim/random.h"

namespace kafka {

// `brokers` need not be sorted. Requires 1 <= replication_factor <=
// brokers.size() and partitions >= 1 (SIM_ASSERT; the caller answers
// INVALID_REPLICATION_FACTOR / INVALID_PARTITIONS first).
znodes::Assignment assign_replicas(std::vector<BrokerId> brokers, int32_t partitions,
                                   int32_t replication_factor, sim::Rng& rng,
                                   int32_t first_partition = 0);

}  // namespace kafka
