// Kafka's vocabulary: broker ids, offsets, epochs, topic-partitions and the
// error codes of the protocol, with the names Kafka itself uses
// (org.apache.kafka.common.protocol.Errors), so that a trace reads like a
// broker's log.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace kafka {

// Quantities as strong types (Redpanda's model::offset, term_id ...): an
// offset never silently becomes an epoch.
template <typename Tag>
struct Quantity {
  int64_t value = 0;
  constexpr Quantity() = default;
  constexpr explicit Quantity(int64_t v) : value(v) {}
  constexpr auto operator<=>(const Quantity&) const = default;
};

struct OffsetTag {};
struct LeaderEpochTag {};
struct ControllerEpochTag {};
using Offset = Quantity<OffsetTag>;
using LeaderEpoch = Quantity<LeaderEpochTag>;
using ControllerEpoch = Quantity<ControllerEpochTag>;

inline Offset operator+(Offset o, int64_t n) { return Offset{o.value + n}; }
inline Offset operator-(Offset o, int64_t n) { return Offset{o.value - n}; }
inline int64_t operator-(Offset a, Offset b) { return a.value - b.value; }

using BrokerId = int32_t;
inline constexpr BrokerId kNoBroker = -1;
using ProducerId = int64_t;
inline constexpr ProducerId kNoProducerId = -1;
inline constexpr LeaderEpoch kNoLeaderEpoch{-1};

// A topic's name, interned: every Topic with the same name points at the
// same string, kept for the life of the process in one table that all threads
// share. Maps keyed by TopicPartition are the model's most frequent lookups
// and nearly all their compares meet the same topic on both sides; those are
// decided by comparing two pointers. Topics of different names still order as
// their names do (std::string's order, bytes as unsigned chars), so no
// iteration order depends on where a name was stored.
class Topic {
 public:
  Topic() : name_(empty_name()) {}
  // Implicit, as a topic's name is one: `TopicPartition{"t", 0}`.
  Topic(std::string_view name) : name_(intern(name)) {}  // NOLINT(google-explicit-constructor)
  Topic(const std::string& name) : Topic(std::string_view(name)) {}  // NOLINT(google-explicit-constructor)
  Topic(const char* name) : Topic(std::string_view(name)) {}  // NOLINT(google-explicit-constructor)

  const std::string& str() const { return *name_; }
  operator const std::string&() const { return *name_; }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return *name_; }  // NOLINT(google-explicit-constructor)
  size_t size() const { return name_->size(); }
  bool empty() const { return name_->empty(); }

  friend bool operator==(const Topic& a, const Topic& b) { return a.name_ == b.name_; }
  friend std::strong_ordering operator<=>(const Topic& a, const Topic& b) {
    if (a.name_ == b.name_) return std::strong_ordering::equal;
    return *a.name_ <=> *b.name_;
  }
  // Against a plain name: compared by bytes, nothing interned.
  friend bool operator==(const Topic& a, std::string_view b) { return *a.name_ == b; }
  friend bool operator==(const Topic& a, const std::string& b) { return *a.name_ == b; }
  friend bool operator==(const Topic& a, const char* b) { return *a.name_ == b; }
  template <typename Stream>
  friend auto operator<<(Stream& os, const Topic& t) -> decltype(os << std::declval<const std::string&>()) {
    return os << *t.name_;
  }

 private:
  static const std::string* intern(std::string_view name);
  static const std::string* empty_name() {
    static const std::string* const empty = intern("");
    return empty;
  }
  const std::string* name_;
};

}  // namespace kafka

template <>
struct fmt::formatter<kafka::Topic> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const kafka::Topic& t, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(t.str()), ctx);
  }
};

namespace kafka {

struct TopicPartition {
  Topic topic;
  int32_t partition = 0;
  // By topic name, then partition: the order of a (std::string, int32_t)
  // pair, as Topic orders by name.
  friend std::strong_ordering operator<=>(const TopicPartition&, const TopicPartition&) = default;
  friend bool operator==(const TopicPartition&, const TopicPartition&) = default;
};
inline std::string to_string(const TopicPartition& tp) {
  return fmt::format("{}-{}", tp.topic, tp.partition);
}

// The protocol's error codes that the model produces or reacts to.
enum class ErrorCode {
  none,
  offset_out_of_range,               // OFFSET_OUT_OF_RANGE
  unknown_topic_or_partition,        // UNKNOWN_TOPIC_OR_PARTITION
  leader_not_available,              // LEADER_NOT_AVAILABLE
  not_leader_for_partition,          // NOT_LEADER_FOR_PARTITION (NOT_LEADER_OR_FOLLOWER since 2.7)
  request_timed_out,                 // REQUEST_TIMED_OUT
  replica_not_available,             // REPLICA_NOT_AVAILABLE
  stale_controller_epoch,            // STALE_CONTROLLER_EPOCH
  not_enough_replicas,               // NOT_ENOUGH_REPLICAS
  not_enough_replicas_after_append,  // NOT_ENOUGH_REPLICAS_AFTER_APPEND
  coordinator_not_available,         // COORDINATOR_NOT_AVAILABLE
  not_controller,                    // NOT_CONTROLLER
  topic_already_exists,              // TOPIC_ALREADY_EXISTS
  invalid_partitions,                // INVALID_PARTITIONS
  invalid_replication_factor,        // INVALID_REPLICATION_FACTOR
  out_of_order_sequence_number,      // OUT_OF_ORDER_SEQUENCE_NUMBER
  duplicate_sequence_number,         // DUPLICATE_SEQUENCE_NUMBER
  invalid_producer_epoch,            // INVALID_PRODUCER_EPOCH
  unknown_producer_id,               // UNKNOWN_PRODUCER_ID
  fenced_leader_epoch,               // FENCED_LEADER_EPOCH
  unknown_leader_epoch,              // UNKNOWN_LEADER_EPOCH
  broker_not_available,              // BROKER_NOT_AVAILABLE
  invalid_topic_exception,           // INVALID_TOPIC_EXCEPTION
  invalid_config,                    // INVALID_CONFIG
  coordinator_load_in_progress,      // COORDINATOR_LOAD_IN_PROGRESS
  not_coordinator,                   // NOT_COORDINATOR
  offset_not_available,              // OFFSET_NOT_AVAILABLE (KIP-207, ListOffsets v5+)
  illegal_generation,                // ILLEGAL_GENERATION
  inconsistent_group_protocol,       // INCONSISTENT_GROUP_PROTOCOL
  unknown_member_id,                 // UNKNOWN_MEMBER_ID
  invalid_session_timeout,           // INVALID_SESSION_TIMEOUT
  rebalance_in_progress,             // REBALANCE_IN_PROGRESS
  group_max_size_reached,            // GROUP_MAX_SIZE_REACHED
  member_id_required,                // MEMBER_ID_REQUIRED (KIP-394, JoinGroup v4+)
  message_too_large,                 // MESSAGE_TOO_LARGE
  record_list_too_large,             // RECORD_LIST_TOO_LARGE
  stale_broker_epoch,                // STALE_BROKER_EPOCH (KIP-380)
  invalid_update_version,            // INVALID_UPDATE_VERSION (KIP-497)
  ineligible_replica,                // INELIGIBLE_REPLICA (KIP-841)
  operation_not_attempted,           // OPERATION_NOT_ATTEMPTED
  broker_id_not_registered,          // BROKER_ID_NOT_REGISTERED (KIP-730)
  unknown_server_error,              // UNKNOWN_SERVER_ERROR
};
const char* to_string(ErrorCode e);
// Errors after which a client refreshes its metadata and retries.
bool is_retriable(ErrorCode e);

// A broker's address as it advertises it: listener name, host, port.
struct Endpoint {
  std::string listener = "PLAINTEXT";
  std::string host;
  uint16_t port = 9092;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

}  // namespace kafka
