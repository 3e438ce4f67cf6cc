#include "model/kafka/wire.h"

namespace kafka {

const char* api_name(const Request& r) {
  static const char* const names[] = {
      "LeaderAndIsr", "UpdateMetadata", "StopReplica", "ControlledShutdown",
      "Fetch",        "OffsetsForLeaderEpoch", "Produce", "Metadata",
      "ListOffsets",  "CreateTopics",   "FindCoordinator", "InitProducerId",
      "JoinGroup",    "SyncGroup",      "Heartbeat",       "LeaveGroup",
      "OffsetCommit", "OffsetFetch",    "AlterIsr",        "AllocateProducerIds",
  };
  static_assert(std::size(names) == std::variant_size_v<Request>);
  return names[r.index()];
}

}  // namespace kafka
