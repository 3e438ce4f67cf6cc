// The Kafka protocol, as the model's processes exchange it: one struct per
// request and response (the fields the model needs, named as Kafka's JSON
// message definitions under clients/src/main/resources/common/message name
// them), carried in frames with a correlation id. A connection is handled in
// order, one request at a time, as a broker mutes a channel until it has
// answered the request in progress (kafka.network.SocketServer).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/kafka/log.h"
#include "model/kafka/types.h"

namespace kafka {

// --- controller to broker -------------------------------------------------------

// A partition's state as the controller sends it (LeaderAndIsr and
// UpdateMetadata share it).
struct PartitionState {
  TopicPartition tp;
  ControllerEpoch controller_epoch;  // the epoch of the controller that last wrote the state
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch;
  std::vector<BrokerId> isr;
  int32_t zk_version = 0;
  std::vector<BrokerId> replicas;
  bool is_new = false;
  friend bool operator==(const PartitionState&, const PartitionState&) = default;
};

struct LiveBroker {
  BrokerId id = kNoBroker;
  Endpoint endpoint;
};

struct LeaderAndIsrRequest {
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch;
  std::vector<PartitionState> partitions;
  std::vector<LiveBroker> live_leaders;
};
struct LeaderAndIsrResponse {
  ErrorCode error = ErrorCode::none;
  std::vector<std::pair<TopicPartition, ErrorCode>> partitions;
};

struct UpdateMetadataRequest {
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch;
  std::vector<PartitionState> partitions;
  std::vector<LiveBroker> live_brokers;
};
struct UpdateMetadataResponse {
  ErrorCode error = ErrorCode::none;
};

struct StopReplicaRequest {
  BrokerId controller_id = kNoBroker;
  ControllerEpoch controller_epoch;
  bool delete_partitions = false;
  std::vector<TopicPartition> partitions;
};
struct StopReplicaResponse {
  ErrorCode error = ErrorCode::none;
};

// --- broker to controller -------------------------------------------------------

struct ControlledShutdownRequest {
  BrokerId broker_id = kNoBroker;
  int64_t broker_epoch = -1;
};
struct ControlledShutdownResponse {
  ErrorCode error = ErrorCode::none;
  std::vector<TopicPartition> remaining;  // partitions the broker still leads
};

// A leader's ISR change, proposed to the controller (AlterIsr, KIP-497; named
// AlterPartition from 3.2, KIP-841). `zk_version` is the partition state's
// version the leader knows (currentIsrVersion / partitionEpoch).
struct AlterIsrPartition {
  TopicPartition tp;
  LeaderEpoch leader_epoch;
  std::vector<BrokerId> new_isr;
  int32_t zk_version = 0;
};
struct AlterIsrRequest {
  BrokerId broker_id = kNoBroker;
  int64_t broker_epoch = -1;
  std::vector<AlterIsrPartition> partitions;
  // Topics named by id: AlterPartition version 2 or later
  // (ReplicationRules::alter_isr_by_topic_id).
  bool by_topic_id = true;
};
struct AlterIsrPartitionResponse {
  TopicPartition tp;
  ErrorCode error = ErrorCode::none;
  // The state as the controller now holds it (when error is none).
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch;
  std::vector<BrokerId> isr;
  int32_t zk_version = 0;
};
struct AlterIsrResponse {
  ErrorCode error = ErrorCode::none;  // NOT_CONTROLLER, STALE_BROKER_EPOCH
  std::vector<AlterIsrPartitionResponse> partitions;
};

// A broker asking the controller for a block of producer ids (KIP-730,
// from 3.0 on inter-broker protocol 3.0-IV0).
struct AllocateProducerIdsRequest {
  BrokerId broker_id = kNoBroker;
  int64_t broker_epoch = -1;
};
struct AllocateProducerIdsResponse {
  // NOT_CONTROLLER, BROKER_ID_NOT_REGISTERED, STALE_BROKER_EPOCH,
  // UNKNOWN_SERVER_ERROR (the write failed)
  ErrorCode error = ErrorCode::none;
  ProducerId producer_id_start = kNoProducerId;
  int32_t producer_id_len = 0;
};

// --- data plane -------------------------------------------------------------------

inline constexpr BrokerId kConsumerReplicaId = -1;

struct FetchPartition {
  TopicPartition tp;
  Offset fetch_offset;
  LeaderEpoch current_leader_epoch{-1};  // KIP-320; -1: not checked
  Offset log_start_offset{-1};           // the follower's (for the leader's bookkeeping)
  // This partition's limit (KIP-74): replica.fetch.max.bytes, a consumer's
  // max.partition.fetch.bytes. The first partition with data still gets its
  // first batch whole (minOneMessage).
  int32_t max_bytes = 1048576;
  // A follower's: its log's latest epoch (KAFKA-10554,
  // ReplicationRules::truncation_on_fetch); -1: not sent.
  LeaderEpoch last_fetched_epoch{-1};
};
struct FetchRequest {
  BrokerId replica_id = kConsumerReplicaId;
  int32_t max_wait_ms = 500;
  int32_t min_bytes = 1;
  // The whole answer's limit (KIP-74): replica.fetch.response.max.bytes, a
  // consumer's fetch.max.bytes.
  int32_t max_bytes = 52428800;
  std::vector<FetchPartition> partitions;
};
struct FetchPartitionResponse {
  TopicPartition tp;
  ErrorCode error = ErrorCode::none;
  Offset high_watermark{-1};
  Offset log_start_offset{-1};
  Offset log_end_offset{-1};  // the leader's, for a follower's out-of-range handling
  std::vector<Record> records;
  // Where the follower's log leaves the leader's, as the leader's epoch cache
  // answers for last_fetched_epoch (LeaderEpochFileCache.endOffsetFor): an
  // epoch and where it ends (-1: none).
  LeaderEpoch diverging_epoch{-1};
  Offset diverging_end_offset{-1};
};
struct FetchResponse {
  ErrorCode error = ErrorCode::none;
  std::vector<FetchPartitionResponse> partitions;
};

// KIP-101 / KIP-279: where does the leader's log end for this epoch?
struct EpochQuery {
  TopicPartition tp;
  LeaderEpoch current_leader_epoch{-1};
  LeaderEpoch leader_epoch;
};
struct OffsetsForLeaderEpochRequest {
  BrokerId replica_id = kNoBroker;
  std::vector<EpochQuery> partitions;
};
struct EpochEndOffset {
  TopicPartition tp;
  ErrorCode error = ErrorCode::none;
  LeaderEpoch leader_epoch{-1};  // -1: UNDEFINED_EPOCH
  Offset end_offset{-1};         // -1: UNDEFINED_EPOCH_OFFSET
};
struct OffsetsForLeaderEpochResponse {
  std::vector<EpochEndOffset> partitions;
};

// A producer's batch for one partition. Offsets, leader epoch and timestamp
// of the records are assigned by the leader.
struct ProduceBatch {
  TopicPartition tp;
  ProducerId producer_id = kNoProducerId;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  std::vector<Record> records;
};
struct ProduceRequest {
  int16_t acks = 1;  // 0, 1 or -1 (all)
  int32_t timeout_ms = 30000;
  std::vector<ProduceBatch> batches;
};
struct ProducePartitionResponse {
  TopicPartition tp;
  ErrorCode error = ErrorCode::none;
  Offset base_offset{-1};
};
struct ProduceResponse {
  std::vector<ProducePartitionResponse> partitions;
};

struct MetadataRequest {
  std::optional<std::vector<std::string>> topics;  // nullopt: every topic
  bool allow_auto_topic_creation = true;
};
struct PartitionMetadata {
  int32_t partition = 0;
  ErrorCode error = ErrorCode::none;
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch{-1};
  std::vector<BrokerId> replicas;
  std::vector<BrokerId> isr;
  std::vector<BrokerId> offline_replicas;
};
struct TopicMetadata {
  std::string name;
  ErrorCode error = ErrorCode::none;
  bool internal = false;
  std::vector<PartitionMetadata> partitions;
};
struct BrokerMetadata {
  BrokerId id = kNoBroker;
  std::string host;
  uint16_t port = 0;
};
struct MetadataResponse {
  std::vector<BrokerMetadata> brokers;
  BrokerId controller_id = kNoBroker;
  std::vector<TopicMetadata> topics;
};

inline constexpr int64_t kEarliestTimestamp = -2;
inline constexpr int64_t kLatestTimestamp = -1;
struct ListOffsetsPartition {
  TopicPartition tp;
  int64_t timestamp = kLatestTimestamp;
};
struct ListOffsetsRequest {
  BrokerId replica_id = kConsumerReplicaId;
  std::vector<ListOffsetsPartition> partitions;
};
struct ListOffsetsPartitionResponse {
  TopicPartition tp;
  ErrorCode error = ErrorCode::none;
  Offset offset{-1};
};
struct ListOffsetsResponse {
  std::vector<ListOffsetsPartitionResponse> partitions;
};

struct NewTopic {
  std::string name;
  int32_t num_partitions = -1;      // -1: num.partitions
  int16_t replication_factor = -1;  // -1: default.replication.factor
  std::map<int32_t, std::vector<BrokerId>> assignment;  // explicit, or empty
  std::map<std::string, std::string> configs;
};
struct CreateTopicsRequest {
  std::vector<NewTopic> topics;
  int32_t timeout_ms = 30000;
};
struct CreateTopicResult {
  std::string name;
  ErrorCode error = ErrorCode::none;
  std::string message;
};
struct CreateTopicsResponse {
  std::vector<CreateTopicResult> topics;
};

struct FindCoordinatorRequest {
  std::string key;  // a group id
};
struct FindCoordinatorResponse {
  ErrorCode error = ErrorCode::none;
  BrokerId node = kNoBroker;
  std::string host;
  uint16_t port = 0;
};

struct InitProducerIdRequest {
  int32_t transaction_timeout_ms = 60000;
};
struct InitProducerIdResponse {
  ErrorCode error = ErrorCode::none;
  ProducerId producer_id = kNoProducerId;
  int16_t producer_epoch = -1;
};

// --- consumer groups (kafka.coordinator.group.GroupCoordinator) -----------------------
// Member metadata and assignments are opaque to the coordinator, as in Kafka:
// the consumer protocol's subscription travels as `metadata` (the client
// encodes it, see model/client/group.h); the assignment the leader computes
// is carried as topic-partitions, which is what the consumer protocol's
// bytes hold.

struct JoinGroupProtocol {
  std::string name;      // "range", "roundrobin"
  std::string metadata;  // the subscription, opaque to the coordinator
};
struct JoinGroupRequest {
  std::string group_id;
  int32_t session_timeout_ms = 10000;
  int32_t rebalance_timeout_ms = 300000;  // max.poll.interval.ms (KIP-62)
  std::string member_id;                  // "" on the first join
  std::string client_id;
  std::string protocol_type = "consumer";
  std::vector<JoinGroupProtocol> protocols;  // in the member's order of preference
};
struct JoinGroupMember {
  std::string member_id;
  std::string metadata;  // for the protocol the coordinator chose
};
struct JoinGroupResponse {
  ErrorCode error = ErrorCode::none;
  int32_t generation_id = -1;
  std::string protocol_name;
  std::string leader;  // the leader's member id
  std::string member_id;
  std::vector<JoinGroupMember> members;  // only in the leader's response
};

struct SyncGroupAssignment {
  std::string member_id;
  std::vector<TopicPartition> partitions;
};
struct SyncGroupRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::vector<SyncGroupAssignment> assignments;  // only from the leader
};
struct SyncGroupResponse {
  ErrorCode error = ErrorCode::none;
  std::vector<TopicPartition> assignment;
};

struct HeartbeatRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
};
struct HeartbeatResponse {
  ErrorCode error = ErrorCode::none;
};

struct LeaveGroupRequest {
  std::string group_id;
  std::string member_id;
};
struct LeaveGroupResponse {
  ErrorCode error = ErrorCode::none;
};

struct OffsetCommitPartition {
  TopicPartition tp;
  int64_t offset = -1;  // the next offset to consume
};
struct OffsetCommitRequest {
  std::string group_id;
  int32_t generation_id = -1;  // -1 with member "": a commit from outside the group's protocol
  std::string member_id;
  std::vector<OffsetCommitPartition> partitions;
};
struct OffsetCommitResponse {
  std::vector<std::pair<TopicPartition, ErrorCode>> partitions;
};

struct OffsetFetchRequest {
  std::string group_id;
  std::vector<TopicPartition> partitions;
};
struct OffsetFetchPartition {
  TopicPartition tp;
  int64_t offset = -1;  // -1: nothing committed
  ErrorCode error = ErrorCode::none;
};
struct OffsetFetchResponse {
  ErrorCode error = ErrorCode::none;  // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS ...
  std::vector<OffsetFetchPartition> partitions;
};

using Request =
    std::variant<LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest,
                 ControlledShutdownRequest, FetchRequest, OffsetsForLeaderEpochRequest,
                 ProduceRequest, MetadataRequest, ListOffsetsRequest, CreateTopicsRequest,
                 FindCoordinatorRequest, InitProducerIdRequest, JoinGroupRequest,
                 SyncGroupRequest, HeartbeatRequest, LeaveGroupRequest, OffsetCommitRequest,
                 OffsetFetchRequest, AlterIsrRequest, AllocateProducerIdsRequest>;
using Response =
    std::variant<LeaderAndIsrResponse, UpdateMetadataResponse, StopReplicaResponse,
                 ControlledShutdownResponse, FetchResponse, OffsetsForLeaderEpochResponse,
                 ProduceResponse, MetadataResponse, ListOffsetsResponse, CreateTopicsResponse,
                 FindCoordinatorResponse, InitProducerIdResponse, JoinGroupResponse,
                 SyncGroupResponse, HeartbeatResponse, LeaveGroupResponse, OffsetCommitResponse,
                 OffsetFetchResponse, AlterIsrResponse, AllocateProducerIdsResponse>;

// The API's name, as Kafka's request log prints it ("LeaderAndIsr", "Fetch" ...).
const char* api_name(const Request& r);

struct RequestFrame {
  int32_t correlation_id = 0;
  Request body;
};
struct ResponseFrame {
  int32_t correlation_id = 0;
  Response body;
};

}  // namespace kafka
