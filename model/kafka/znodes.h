// Kafka's ZooKeeper layout and the JSON each znode holds, as a real cluster
// writes them (kafka.zk.ZkData: BrokerIdZNode, ControllerZNode,
// ControllerEpochZNode, TopicZNode, TopicPartitionStateZNode,
// ConfigEntityZNode, IsrChangeNotificationSequenceZNode,
// ProducerIdBlockZNode). Paths are relative to the chroot of
// zookeeper.connect; the ZooKeeper client adds it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/kafka/types.h"
#include "model/kafka/wire.h"

namespace kafka::znodes {

inline const std::string kBrokerIds = "/brokers/ids";
inline const std::string kBrokerTopics = "/brokers/topics";
inline const std::string kBrokerSeqId = "/brokers/seqid";
inline const std::string kController = "/controller";
inline const std::string kControllerEpoch = "/controller_epoch";
inline const std::string kIsrChangeNotification = "/isr_change_notification";
inline const std::string kIsrChangePrefix = "/isr_change_notification/isr_change_";
inline const std::string kConfigTopics = "/config/topics";
inline const std::string kConfigChanges = "/config/changes";
inline const std::string kLatestProducerIdBlock = "/latest_producer_id_block";
inline const std::string kAdminDeleteTopics = "/admin/delete_topics";
// The persistent paths a broker creates at start if they are missing
// (KafkaZkClient.createTopLevelPaths), parents first.
const std::vector<std::string>& top_level_paths();

std::string broker_path(BrokerId id);
std::string topic_path(const std::string& topic);
std::string partitions_path(const std::string& topic);
std::string partition_path(const TopicPartition& tp);
std::string partition_state_path(const TopicPartition& tp);
std::string topic_config_path(const std::string& topic);

// /brokers/ids/<id>, version 4 (Kafka 2.x/3.x).
struct BrokerRegistration {
  BrokerId id = kNoBroker;
  std::vector<Endpoint> endpoints;
  int64_t timestamp_ms = 0;
};
std::string encode_broker(const BrokerRegistration& b);
std::optional<BrokerRegistration> decode_broker(BrokerId id, const std::string& json);

// /controller: {"version":1,"brokerid":N,"timestamp":"..."}
std::string encode_controller(BrokerId id, int64_t timestamp_ms);
std::optional<BrokerId> decode_controller(const std::string& json);

// /controller_epoch: the epoch as a bare number.
std::optional<ControllerEpoch> decode_controller_epoch(const std::string& data);

// /brokers/topics/<t>: {"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}
using Assignment = std::map<int32_t, std::vector<BrokerId>>;
std::string encode_assignment(const Assignment& a);
std::optional<Assignment> decode_assignment(const std::string& json);

// .../partitions/<p>/state: {"controller_epoch":7,"leader":2,"version":1,"leader_epoch":0,"isr":[2,1]}
struct LeaderAndIsr {
  BrokerId leader = kNoBroker;
  LeaderEpoch leader_epoch;
  std::vector<BrokerId> isr;
  ControllerEpoch controller_epoch;
  friend bool operator==(const LeaderAndIsr&, const LeaderAndIsr&) = default;
};
std::string encode_partition_state(const LeaderAndIsr& s);
std::optional<LeaderAndIsr> decode_partition_state(const std::string& json);

// /config/topics/<t>: {"version":1,"config":{"retention.ms":"600000"}}
std::string encode_topic_config(const std::map<std::string, std::string>& config);
std::optional<std::map<std::string, std::string>> decode_topic_config(const std::string& json);

// /isr_change_notification/isr_change_NNNNNNNNNN: {"version":1,"partitions":[{"topic":"t","partition":0}]}
std::string encode_isr_change(const std::vector<TopicPartition>& partitions);
std::optional<std::vector<TopicPartition>> decode_isr_change(const std::string& json);

// /latest_producer_id_block: {"version":1,"broker":1,"block_start":"0","block_end":"999"}
struct ProducerIdBlock {
  BrokerId broker = kNoBroker;
  int64_t block_start = 0;
  int64_t block_end = 0;
};
std::string encode_producer_id_block(const ProducerIdBlock& b);
std::optional<ProducerIdBlock> decode_producer_id_block(const std::string& json);

}  // namespace kafka::znodes
