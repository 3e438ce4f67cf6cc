#include "model/kafka/assignment.h"

#include <algorithm>

#include "sim/assert.h"

namespace kafka {

znodes::Assignment assign_replicas(std::vector<BrokerId> brokers, int32_t partitions,
                                   int32_t replication_factor, sim::Rng& rng,
                                   int32_t first_partition) {
  SIM_ASSERT(partitions >= 1, "assign_replicas: {} partitions", partitions);
  SIM_ASSERT(replication_factor >= 1 && static_cast<size_t>(replication_factor) <= brokers.size(),
             "assign_replicas: replication factor {} with {} brokers", replication_factor,
             brokers.size());
  std::sort(brokers.begin(), brokers.end());
  const int64_t n = static_cast<int64_t>(brokers.size());
  const int64_t start = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
  int64_t shift = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
  int64_t current = first_partition;
  znodes::Assignment out;
  for (int32_t i = 0; i < partitions; ++i) {
    if (current > 0 && current % n == 0) ++shift;
    const int64_t first = (current + start) % n;
    std::vector<BrokerId> replicas{brokers[static_cast<size_t>(first)]};
    for (int32_t j = 0; j < replication_factor - 1; ++j) {
      // The j-th follower sits 1 + (shift + j) mod (n - 1) places after the first.
      const int64_t distance = 1 + (shift + j) % (n - 1);
      replicas.push_back(brokers[static_cast<size_t>((first + distance) % n)]);
    }
    out[first_partition + i] = std::move(replicas);
    ++current;
  }
  return out;
}

}  // namespace kafka
