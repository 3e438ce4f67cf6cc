#include "model/kafka/types.h"

#include <mutex>
#include <set>

namespace kafka {

namespace {
// Every name ever interned, for the life of the process: std::set's nodes do
// not move, so the pointers handed out stay valid. A sweep's threads share it
// (a name must have one address in all of them), behind a mutex; each thread
// keeps the few names it has used in a cache of its own, looked at first.
struct TopicNames {
  std::mutex mutex;
  std::set<std::string, std::less<>> names;
};
TopicNames& topic_names() {
  // Never destroyed: a static destructor elsewhere may still name a topic.
  static TopicNames* const t = new TopicNames;
  return *t;
}
}  // namespace

const std::string* Topic::intern(std::string_view name) {
  // Plain pointers, so nothing here is destroyed at thread exit (a name made
  // later, by a thread_local's destructor, still finds a usable cache). A
  // run uses a handful of topics; past kRecent names, the oldest makes room.
  constexpr size_t kRecent = 32;
  thread_local const std::string* recent[kRecent] = {};
  thread_local size_t next = 0;
  for (const std::string* s : recent) {
    if (s != nullptr && *s == name) return s;
  }
  TopicNames& t = topic_names();
  const std::string* s;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.names.find(name);
    if (it == t.names.end()) it = t.names.emplace(name).first;
    s = &*it;
  }
  recent[next] = s;
  next = (next + 1) % kRecent;
  return s;
}

const char* to_string(ErrorCode e) {
  switch (e) {
    case ErrorCode::none: return "NONE";
    case ErrorCode::offset_out_of_range: return "OFFSET_OUT_OF_RANGE";
    case ErrorCode::unknown_topic_or_partition: return "UNKNOWN_TOPIC_OR_PARTITION";
    case ErrorCode::leader_not_available: return "LEADER_NOT_AVAILABLE";
    case ErrorCode::not_leader_for_partition: return "NOT_LEADER_FOR_PARTITION";
    case ErrorCode::request_timed_out: return "REQUEST_TIMED_OUT";
    case ErrorCode::replica_not_available: return "REPLICA_NOT_AVAILABLE";
    case ErrorCode::stale_controller_epoch: return "STALE_CONTROLLER_EPOCH";
    case ErrorCode::not_enough_replicas: return "NOT_ENOUGH_REPLICAS";
    case ErrorCode::not_enough_replicas_after_append: return "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    case ErrorCode::coordinator_not_available: return "COORDINATOR_NOT_AVAILABLE";
    case ErrorCode::not_controller: return "NOT_CONTROLLER";
    case ErrorCode::topic_already_exists: return "TOPIC_ALREADY_EXISTS";
    case ErrorCode::invalid_partitions: return "INVALID_PARTITIONS";
    case ErrorCode::invalid_replication_factor: return "INVALID_REPLICATION_FACTOR";
    case ErrorCode::out_of_order_sequence_number: return "OUT_OF_ORDER_SEQUENCE_NUMBER";
    case ErrorCode::duplicate_sequence_number: return "DUPLICATE_SEQUENCE_NUMBER";
    case ErrorCode::invalid_producer_epoch: return "INVALID_PRODUCER_EPOCH";
    case ErrorCode::unknown_producer_id: return "UNKNOWN_PRODUCER_ID";
    case ErrorCode::fenced_leader_epoch: return "FENCED_LEADER_EPOCH";
    case ErrorCode::unknown_leader_epoch: return "UNKNOWN_LEADER_EPOCH";
    case ErrorCode::broker_not_available: return "BROKER_NOT_AVAILABLE";
    case ErrorCode::invalid_topic_exception: return "INVALID_TOPIC_EXCEPTION";
    case ErrorCode::invalid_config: return "INVALID_CONFIG";
    case ErrorCode::coordinator_load_in_progress: return "COORDINATOR_LOAD_IN_PROGRESS";
    case ErrorCode::not_coordinator: return "NOT_COORDINATOR";
    case ErrorCode::offset_not_available: return "OFFSET_NOT_AVAILABLE";
    case ErrorCode::illegal_generation: return "ILLEGAL_GENERATION";
    case ErrorCode::inconsistent_group_protocol: return "INCONSISTENT_GROUP_PROTOCOL";
    case ErrorCode::unknown_member_id: return "UNKNOWN_MEMBER_ID";
    case ErrorCode::invalid_session_timeout: return "INVALID_SESSION_TIMEOUT";
    case ErrorCode::rebalance_in_progress: return "REBALANCE_IN_PROGRESS";
    case ErrorCode::group_max_size_reached: return "GROUP_MAX_SIZE_REACHED";
    case ErrorCode::member_id_required: return "MEMBER_ID_REQUIRED";
    case ErrorCode::message_too_large: return "MESSAGE_TOO_LARGE";
    case ErrorCode::record_list_too_large: return "RECORD_LIST_TOO_LARGE";
    case ErrorCode::stale_broker_epoch: return "STALE_BROKER_EPOCH";
    case ErrorCode::invalid_update_version: return "INVALID_UPDATE_VERSION";
    case ErrorCode::ineligible_replica: return "INELIGIBLE_REPLICA";
    case ErrorCode::operation_not_attempted: return "OPERATION_NOT_ATTEMPTED";
    case ErrorCode::broker_id_not_registered: return "BROKER_ID_NOT_REGISTERED";
    case ErrorCode::unknown_server_error: return "UNKNOWN_SERVER_ERROR";
  }
  return "?";
}

bool is_retriable(ErrorCode e) {
  switch (e) {
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::leader_not_available:
    case ErrorCode::not_leader_for_partition:
    case ErrorCode::request_timed_out:
    case ErrorCode::replica_not_available:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::coordinator_not_available:
    case ErrorCode::coordinator_load_in_progress:
    case ErrorCode::not_coordinator:
    case ErrorCode::not_controller:
    case ErrorCode::fenced_leader_epoch:
    case ErrorCode::unknown_leader_epoch:
    case ErrorCode::broker_not_available:
    case ErrorCode::offset_not_available:
      return true;
    default:
      return false;
  }
}

}  // namespace kafka
