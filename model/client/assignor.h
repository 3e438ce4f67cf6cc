// The consumer group's partition assignors, run by the group's leader over
// every member's subscription (the eager "consumer" protocol): pure
// functions, so that an assignment can be checked on its own.
//
//   range       Kafka's RangeAssignor (and librdkafka's
//               rdkafka_range_assignor.c): topic by topic, the members
//               subscribed to the topic, sorted by member id, each take a
//               contiguous range of its partitions; when the partitions do
//               not divide evenly, the first members take one more.
//   roundrobin  Kafka's RoundRobinAssignor (librdkafka's
//               rdkafka_roundrobin_assignor.c): every subscribed
//               topic-partition, sorted by topic then partition, is dealt in
//               turn to the members sorted by member id; a member not
//               subscribed to the partition's topic is skipped.
//
// A topic the leader's metadata does not know (absent from
// `partitions_per_topic`) has no partitions to hand out, as in Kafka.
// Every member appears in the result, with an empty list when it gets
// nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/kafka/types.h"

namespace client {

// member id -> the topics it subscribed to.
using Subscriptions = std::map<std::string, std::vector<std::string>>;
// member id -> its partitions, sorted by (topic, partition).
using GroupAssignment = std::map<std::string, std::vector<kafka::TopicPartition>>;

GroupAssignment range_assign(const std::map<std::string, int32_t>& partitions_per_topic,
                             const Subscriptions& subscriptions);
GroupAssignment round_robin_assign(const std::map<std::string, int32_t>& partitions_per_topic,
                                   const Subscriptions& subscriptions);
// By protocol name ("range", "roundrobin"); throws std::invalid_argument for
// any other name.
GroupAssignment assign_partitions(const std::string& strategy,
                                  const std::map<std::string, int32_t>& partitions_per_topic,
                                  const Subscriptions& subscriptions);

// The subscription a member sends as its JoinGroup protocol metadata (the
// consumer protocol's Subscription, here as text): "topics=a,b".
std::string encode_subscription(const std::vector<std::string>& topics);
// nullopt when `metadata` is not of that form.
std::optional<std::vector<std::string>> decode_subscription(const std::string& metadata);

}  // namespace client
