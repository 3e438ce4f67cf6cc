// Tests for what a broker and the controller write into and read out of
// ZooKeeper (model/kafka/znodes), the replica assignment of a new topic
// (model/kafka/assignment) and the request/response client over the
// simulated network (model/kafka/network_client).
//
// The JSON strings expected here are the bytes a real Kafka 2.x/3.x cluster
// leaves in its znodes, as `zookeeper-shell ... get` prints them (several are
// copied from a ZooKeeper session against a real cluster). Decoders are fed
// what real Kafka writes, including field orders and extra fields that ours
// do not produce, and malformed input, which must give nullopt and never
// throw.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/kafka/assignment.h"
#include "model/kafka/network_client.h"
#include "model/kafka/znodes.h"
#include "sim/random.h"
#include "sim/world.h"

namespace kafka {

// Readable failures: gtest finds these by argument-dependent lookup.
template <typename Tag>
[[maybe_unused]] static void PrintTo(const Quantity<Tag>& q, std::ostream* os) {
  *os << q.value;
}
[[maybe_unused]] static void PrintTo(SendError e, std::ostream* os) { *os << to_string(e); }

namespace {

using sim::Duration;
using sim::Time;

// --- paths ----------------------------------------------------------------------------

TEST(KafkaZnodes, PathsAreKafkasLayout) {
  EXPECT_EQ(znodes::broker_path(3), "/brokers/ids/3");
  EXPECT_EQ(znodes::topic_path("playground"), "/brokers/topics/playground");
  EXPECT_EQ(znodes::partitions_path("playground"), "/brokers/topics/playground/partitions");
  EXPECT_EQ(znodes::partition_path({"playground", 2}), "/brokers/topics/playground/partitions/2");
  EXPECT_EQ(znodes::partition_state_path({"playground", 2}),
            "/brokers/topics/playground/partitions/2/state");
  EXPECT_EQ(znodes::topic_config_path("playground"), "/config/topics/playground");
  EXPECT_EQ(znodes::kController, "/controller");
  EXPECT_EQ(znodes::kControllerEpoch, "/controller_epoch");
  EXPECT_EQ(znodes::kIsrChangePrefix, "/isr_change_notification/isr_change_");
  EXPECT_EQ(znodes::kLatestProducerIdBlock, "/latest_producer_id_block");
  EXPECT_EQ(znodes::kAdminDeleteTopics, "/admin/delete_topics");
}

TEST(KafkaZnodes, TopLevelPathsHoldKafkasPersistentPathsParentsFirst) {
  const std::vector<std::string>& paths = znodes::top_level_paths();
  // ZkData.PersistentZkPaths, with the config entity types.
  for (const char* p :
       {"/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
        "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block",
        "/log_dir_event_notification", "/config/topics", "/config/clients", "/config/users",
        "/config/brokers"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
  }
  std::set<std::string> seen;
  for (const std::string& p : paths) {
    EXPECT_TRUE(seen.insert(p).second) << p << " twice";
    const std::string parent = p.substr(0, p.rfind('/'));
    if (!parent.empty()) {
      EXPECT_TRUE(seen.count(parent)) << p << " before its parent " << parent;
    }
  }
}

// --- /brokers/ids/<id> -------------------------------------------------------------------

TEST(KafkaZnodes, BrokerRegistrationIsVersion4AsKafkaWritesIt) {
  znodes::BrokerRegistration b;
  b.id = 1;
  b.endpoints = {Endpoint{"PLAINTEXT", "1b9aa4ca7e24", 9092}};
  b.timestamp_ms = 1567061408756;
  EXPECT_EQ(znodes::encode_broker(b),
            R"({"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},)"
            R"("endpoints":["PLAINTEXT://1b9aa4ca7e24:9092"],"jmx_port":-1,"host":"1b9aa4ca7e24",)"
            R"("timestamp":"1567061408756","port":9092,"version":4})");
}

TEST(KafkaZnodes, BrokerRegistrationWithTwoListeners) {
  znodes::BrokerRegistration b;
  b.id = 2;
  b.endpoints = {Endpoint{"INTERNAL", "kafka-2", 19092}, Endpoint{"EXTERNAL", "10.0.0.2", 9092}};
  b.timestamp_ms = 7;
  EXPECT_EQ(znodes::encode_broker(b),
            R"({"listener_security_protocol_map":{"INTERNAL":"PLAINTEXT","EXTERNAL":"PLAINTEXT"},)"
            R"("endpoints":["INTERNAL://kafka-2:19092","EXTERNAL://10.0.0.2:9092"],"jmx_port":-1,)"
            R"("host":"kafka-2","timestamp":"7","port":19092,"version":4})");
  auto back = znodes::decode_broker(2, znodes::encode_broker(b));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, 2);
  EXPECT_EQ(back->endpoints, b.endpoints);
  EXPECT_EQ(back->timestamp_ms, 7);
}

TEST(KafkaZnodes, BrokerRegistrationDecodesWhatARealBrokerWrote) {
  auto b = znodes::decode_broker(
      1,
      R"({"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://1b9aa4ca7e24:9092"],"jmx_port":-1,"host":"1b9aa4ca7e24","timestamp":"1567061408756","port":9092,"version":4})");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->id, 1);
  EXPECT_EQ(b->timestamp_ms, 1567061408756);
  EXPECT_EQ(b->endpoints, (std::vector<Endpoint>{{"PLAINTEXT", "1b9aa4ca7e24", 9092}}));
}

TEST(KafkaZnodes, BrokerRegistrationDecodesOtherFieldOrdersAndNewerFields) {
  // Version 5 (Kafka 2.7+) with features and a rack, fields reordered.
  auto b = znodes::decode_broker(
      3,
      R"({"version":5,"rack":"r1","features":{},"port":9092,"host":"kafka-3","jmx_port":9999,)"
      R"("timestamp":"1700000000000","endpoints":["PLAINTEXT://kafka-3:9092","SSL://kafka-3:9093"],)"
      R"("listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"}})");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->id, 3);
  EXPECT_EQ(b->timestamp_ms, 1700000000000);
  EXPECT_EQ(b->endpoints, (std::vector<Endpoint>{{"PLAINTEXT", "kafka-3", 9092},
                                                 {"SSL", "kafka-3", 9093}}));
}

TEST(KafkaZnodes, BrokerRegistrationRejectsMalformedInput) {
  for (const char* json : {
           "",
           "not json",
           "[]",
           "null",
           R"({"endpoints":["PLAINTEXT://h:9092"])",      // truncated
           R"({"version":4})",                              // no endpoints
           R"({"endpoints":"PLAINTEXT://h:9092"})",         // not a list
           R"({"endpoints":[9092]})",                       // not strings
           R"({"endpoints":["PLAINTEXT//h:9092"]})",        // no scheme separator
           R"({"endpoints":["PLAINTEXT://h"]})",            // no port
           R"({"endpoints":["PLAINTEXT://h:90a2"]})",       // port not a number
           R"({"endpoints":["PLAINTEXT://h:65536"]})",      // port out of range
           R"({"endpoints":["PLAINTEXT://h:-1"]})",         // negative port
       }) {
    EXPECT_EQ(znodes::decode_broker(1, json), std::nullopt) << json;
  }
}

// EndPoint.createEndPoint parses with `^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)`:
// a port needs at least one digit. decode_broker's port loop runs over no
// digits at all for "PLAINTEXT://h:" and used to yield port 0.
TEST(KafkaZnodes, BrokerRegistrationRejectsAnEmptyPort) {
  EXPECT_EQ(znodes::decode_broker(1, R"({"endpoints":["PLAINTEXT://h:"]})"), std::nullopt);
}

// --- /controller and /controller_epoch ------------------------------------------------------

TEST(KafkaZnodes, ControllerIsKafkasJson) {
  EXPECT_EQ(znodes::encode_controller(2, 1567061407902),
            R"({"version":1,"brokerid":2,"timestamp":"1567061407902"})");
  EXPECT_EQ(znodes::decode_controller(R"({"version":1,"brokerid":2,"timestamp":"1567061407902"})"),
            std::optional<BrokerId>(2));
  EXPECT_EQ(znodes::decode_controller(znodes::encode_controller(17, 0)), std::optional<BrokerId>(17));
}

TEST(KafkaZnodes, ControllerDecodesOtherFieldOrders) {
  EXPECT_EQ(znodes::decode_controller(R"({"timestamp":"1","brokerid":5,"version":1})"),
            std::optional<BrokerId>(5));
  EXPECT_EQ(znodes::decode_controller(R"({"brokerid":6})"), std::optional<BrokerId>(6));
}

TEST(KafkaZnodes, ControllerRejectsMalformedInput) {
  for (const char* json : {"", "2", "{", "[1]", R"({"version":1})", R"({"brokerid":"2"})",
                           R"({"brokerid":null})", R"({"brokerid":[2]})",
                           R"({"version":1,"brokerid":2,"timestamp":"1")"}) {
    EXPECT_EQ(znodes::decode_controller(json), std::nullopt) << json;
  }
}

TEST(KafkaZnodes, ControllerEpochIsABareNumber) {
  EXPECT_EQ(znodes::decode_controller_epoch("2"), std::optional<ControllerEpoch>(ControllerEpoch{2}));
  EXPECT_EQ(znodes::decode_controller_epoch("3"), std::optional<ControllerEpoch>(ControllerEpoch{3}));
  EXPECT_EQ(znodes::decode_controller_epoch("2147483647"),
            std::optional<ControllerEpoch>(ControllerEpoch{2147483647}));
  for (const char* data : {"", "x", "1x", " 2", "2 ", "-1", "1.5", "12345678901", "{}"}) {
    EXPECT_EQ(znodes::decode_controller_epoch(data), std::nullopt) << '"' << data << '"';
  }
}

// --- /brokers/topics/<t> --------------------------------------------------------------------

TEST(KafkaZnodes, AssignmentIsVersion2AsKafkaWritesIt) {
  EXPECT_EQ(znodes::encode_assignment({{0, {1, 2}}}),
            R"({"version":2,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}})");
  EXPECT_EQ(znodes::encode_assignment({}),
            R"({"version":2,"partitions":{},"adding_replicas":{},"removing_replicas":{}})");
  EXPECT_EQ(znodes::encode_assignment({{0, {2, 1}}, {1, {1, 2}}, {2, {2, 1}}, {3, {1, 2}}}),
            R"({"version":2,"partitions":{"0":[2,1],"1":[1,2],"2":[2,1],"3":[1,2]},)"
            R"("adding_replicas":{},"removing_replicas":{}})");
}

TEST(KafkaZnodes, AssignmentRoundTrips) {
  const znodes::Assignment a = {{0, {1, 2, 3}}, {1, {2, 3, 1}}, {10, {3}}, {11, {}}};
  EXPECT_EQ(znodes::decode_assignment(znodes::encode_assignment(a)), std::optional(a));
}

TEST(KafkaZnodes, AssignmentDecodesOtherVersionsAndOrders) {
  const znodes::Assignment expected = {{0, {1, 2}}, {1, {2, 1}}};
  // Version 1 (before 2.4), partitions in hash order.
  EXPECT_EQ(znodes::decode_assignment(R"({"version":1,"partitions":{"1":[2,1],"0":[1,2]}})"),
            std::optional(expected));
  // Version 3 (2.8+) with a topic id, fields in another order, a
  // reassignment in progress.
  EXPECT_EQ(znodes::decode_assignment(
                R"({"removing_replicas":{"1":[3]},"adding_replicas":{"1":[2]},)"
                R"("partitions":{"0":[1,2],"1":[2,1]},"topic_id":"kxd2X2WlRWG1uS_j3LUxSA","version":3})"),
            std::optional(expected));
}

TEST(KafkaZnodes, AssignmentRejectsMalformedInput) {
  for (const char* json : {
           "",
           "[]",
           R"({"version":2})",
           R"({"partitions":[[1,2]]})",
           R"({"partitions":{"a":[1]}})",
           R"({"partitions":{"-1":[1]}})",
           R"({"partitions":{"":[1]}})",
           R"({"partitions":{"1234567890":[1]}})",
           R"({"partitions":{"0":1}})",
           R"({"partitions":{"0":["1"]}})",
           R"({"partitions":{"0":[1,null]}})",
           R"({"partitions":{"0":[1,2]})",
       }) {
    EXPECT_EQ(znodes::decode_assignment(json), std::nullopt) << json;
  }
}

// --- /brokers/topics/<t>/partitions/<p>/state ----------------------------------------------

TEST(KafkaZnodes, PartitionStateIsKafkasJson) {
  EXPECT_EQ(znodes::encode_partition_state({2, LeaderEpoch{0}, {2, 1}, ControllerEpoch{7}}),
            R"({"controller_epoch":7,"leader":2,"version":1,"leader_epoch":0,"isr":[2,1]})");
  EXPECT_EQ(znodes::encode_partition_state({1, LeaderEpoch{2}, {1}, ControllerEpoch{8}}),
            R"({"controller_epoch":8,"leader":1,"version":1,"leader_epoch":2,"isr":[1]})");
  // No leader: every replica is offline.
  EXPECT_EQ(znodes::encode_partition_state({kNoBroker, LeaderEpoch{3}, {1}, ControllerEpoch{8}}),
            R"({"controller_epoch":8,"leader":-1,"version":1,"leader_epoch":3,"isr":[1]})");
}

TEST(KafkaZnodes, PartitionStateDecodesWhatARealClusterWrote) {
  const std::vector<std::pair<std::string, znodes::LeaderAndIsr>> seen = {
      {R"({"controller_epoch":7,"leader":2,"version":1,"leader_epoch":0,"isr":[2,1]})",
       {2, LeaderEpoch{0}, {2, 1}, ControllerEpoch{7}}},
      {R"({"controller_epoch":7,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]})",
       {1, LeaderEpoch{0}, {1, 2}, ControllerEpoch{7}}},
      {R"({"controller_epoch":8,"leader":1,"version":1,"leader_epoch":2,"isr":[1]})",
       {1, LeaderEpoch{2}, {1}, ControllerEpoch{8}}},
  };
  for (const auto& [json, state] : seen) {
    EXPECT_EQ(znodes::decode_partition_state(json), std::optional(state)) << json;
    EXPECT_EQ(znodes::encode_partition_state(state), json);
  }
}

TEST(KafkaZnodes, PartitionStateDecodesOtherFieldOrdersAndNewerFields) {
  EXPECT_EQ(znodes::decode_partition_state(
                R"({"version":1,"isr":[3,1],"leader_epoch":12,"leader":3,"controller_epoch":4,)"
                R"("leader_recovery_state":1})"),
            std::optional(znodes::LeaderAndIsr{3, LeaderEpoch{12}, {3, 1}, ControllerEpoch{4}}));
}

TEST(KafkaZnodes, PartitionStateRejectsMalformedInput) {
  for (const char* json : {
           "",
           "{}",
           R"({"leader":2,"leader_epoch":0,"isr":[2,1]})",            // no controller epoch
           R"({"controller_epoch":7,"leader_epoch":0,"isr":[2,1]})",  // no leader
           R"({"controller_epoch":7,"leader":2,"isr":[2,1]})",        // no leader epoch
           R"({"controller_epoch":7,"leader":2,"leader_epoch":0})",   // no isr
           R"({"controller_epoch":7,"leader":"2","leader_epoch":0,"isr":[2,1]})",
           R"({"controller_epoch":7,"leader":2,"leader_epoch":"0","isr":[2,1]})",
           R"({"controller_epoch":7,"leader":2,"leader_epoch":0,"isr":"2,1"})",
           R"({"controller_epoch":7,"leader":2,"leader_epoch":0,"isr":[2,"1"]})",
           R"({"controller_epoch":7,"leader":2,"leader_epoch":0,"isr":[2,1])",
       }) {
    EXPECT_EQ(znodes::decode_partition_state(json), std::nullopt) << json;
  }
}

// --- /config/topics/<t> -----------------------------------------------------------------------

TEST(KafkaZnodes, TopicConfigIsKafkasJson) {
  EXPECT_EQ(znodes::encode_topic_config({{"retention.ms", "600000"}}),
            R"({"version":1,"config":{"retention.ms":"600000"}})");
  EXPECT_EQ(znodes::encode_topic_config({}), R"({"version":1,"config":{}})");
  const std::map<std::string, std::string> c = {{"min.insync.replicas", "2"},
                                                {"unclean.leader.election.enable", "true"}};
  EXPECT_EQ(znodes::decode_topic_config(znodes::encode_topic_config(c)), std::optional(c));
  EXPECT_EQ(znodes::decode_topic_config(R"({"config":{"segment.bytes":"1024"},"version":1})"),
            std::optional(std::map<std::string, std::string>{{"segment.bytes", "1024"}}));
}

TEST(KafkaZnodes, TopicConfigRejectsMalformedInput) {
  for (const char* json : {"", R"({"version":1})", R"({"config":[]})",
                           R"({"config":{"retention.ms":600000}})", R"({"config":"x"})"}) {
    EXPECT_EQ(znodes::decode_topic_config(json), std::nullopt) << json;
  }
}

// --- /isr_change_notification/isr_change_NNNNNNNNNN ---------------------------------------------

TEST(KafkaZnodes, IsrChangeNotificationIsKafkasJson) {
  const std::vector<TopicPartition> tps = {{"t", 0}, {"playground", 3}};
  EXPECT_EQ(znodes::encode_isr_change(tps),
            R"({"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"playground","partition":3}]})");
  EXPECT_EQ(znodes::decode_isr_change(znodes::encode_isr_change(tps)), std::optional(tps));
  EXPECT_EQ(znodes::decode_isr_change(R"({"partitions":[{"partition":1,"topic":"u"}],"version":1})"),
            std::optional(std::vector<TopicPartition>{{"u", 1}}));
  EXPECT_EQ(znodes::decode_isr_change(R"({"version":1,"partitions":[]})"),
            std::optional(std::vector<TopicPartition>{}));
}

TEST(KafkaZnodes, IsrChangeNotificationRejectsMalformedInput) {
  for (const char* json : {"", R"({"version":1})", R"({"partitions":{}})", R"({"partitions":[1]})",
                           R"({"partitions":[{"topic":"t"}]})", R"({"partitions":[{"partition":0}]})",
                           R"({"partitions":[{"topic":1,"partition":0}]})",
                           R"({"partitions":[{"topic":"t","partition":"0"}]})"}) {
    EXPECT_EQ(znodes::decode_isr_change(json), std::nullopt) << json;
  }
}

// --- /latest_producer_id_block ----------------------------------------------------------------------

TEST(KafkaZnodes, ProducerIdBlockIsKafkasJson) {
  EXPECT_EQ(znodes::encode_producer_id_block({1, 0, 999}),
            R"({"version":1,"broker":1,"block_start":"0","block_end":"999"})");
  auto b = znodes::decode_producer_id_block(
      R"({"version":1,"broker":2,"block_start":"1099511627776","block_end":"1099511628775"})");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->broker, 2);
  EXPECT_EQ(b->block_start, 1099511627776);
  EXPECT_EQ(b->block_end, 1099511628775);
  auto reordered =
      znodes::decode_producer_id_block(R"({"block_end":"1999","block_start":"1000","broker":3})");
  ASSERT_TRUE(reordered.has_value());
  EXPECT_EQ(reordered->broker, 3);
  EXPECT_EQ(reordered->block_start, 1000);
  EXPECT_EQ(reordered->block_end, 1999);
}

TEST(KafkaZnodes, ProducerIdBlockRejectsMalformedInput) {
  for (const char* json : {
           "",
           R"({"version":1,"block_start":"0","block_end":"999"})",
           R"({"version":1,"broker":1,"block_end":"999"})",
           R"({"version":1,"broker":1,"block_start":"0"})",
           R"({"version":1,"broker":1,"block_start":"","block_end":"999"})",
           R"({"version":1,"broker":1,"block_start":"-","block_end":"999"})",
           R"({"version":1,"broker":1,"block_start":"0x10","block_end":"999"})",
           R"({"version":1,"broker":1,"block_start":"0","block_end":"9 9"})",
           R"({"version":1,"broker":1,"block_start":null,"block_end":"999"})",
           R"({"version":1,"broker":"1","block_start":"0","block_end":"999"})",
       }) {
    EXPECT_EQ(znodes::decode_producer_id_block(json).has_value(), false) << json;
  }
}

// string_number used to accumulate digits into an int64_t without a bound: twenty
// digits overflowed it (undefined behaviour; in practice a wrapped value came
// back instead of nullopt). Kafka's `.toLong` throws NumberFormatException on
// it. (Found by this test; fixed.)
TEST(KafkaZnodes, ProducerIdBlockRejectsNumbersBeyondInt64) {
  EXPECT_FALSE(znodes::decode_producer_id_block(
                   R"({"version":1,"broker":1,"block_start":"0","block_end":"99999999999999999999"})")
                   .has_value());
}

// --- replica assignment (AdminUtils.assignReplicasToBrokers, no racks) -------------------------------

// AdminUtils.assignReplicasToBrokersRackUnaware, transcribed for a given
// start index and replica shift (Kafka draws both with rand.nextInt(n), the
// start first). `brokers` sorted, as AdminZkClient.getBrokerMetadatas hands
// them over.
znodes::Assignment kafka_rack_unaware(const std::vector<BrokerId>& brokers, int32_t partitions,
                                      int32_t replication_factor, int64_t start_index,
                                      int64_t replica_shift, int32_t start_partition) {
  const int64_t n = static_cast<int64_t>(brokers.size());
  znodes::Assignment ret;
  int64_t current = std::max(0, start_partition);
  int64_t next_replica_shift = replica_shift;
  for (int32_t i = 0; i < partitions; ++i) {
    if (current > 0 && current % n == 0) ++next_replica_shift;
    const int64_t first = (current + start_index) % n;
    std::vector<BrokerId> replicas{brokers[static_cast<size_t>(first)]};
    for (int64_t j = 0; j < replication_factor - 1; ++j) {
      const int64_t shift = 1 + (next_replica_shift + j) % (n - 1);
      replicas.push_back(brokers[static_cast<size_t>((first + shift) % n)]);
    }
    ret[static_cast<int32_t>(current)] = std::move(replicas);
    ++current;
  }
  return ret;
}

// The first seed whose stream draws `start` and then `shift` from below(n).
std::optional<uint64_t> seed_drawing(uint64_t n, uint64_t start, uint64_t shift) {
  for (uint64_t seed = 1; seed < 100'000; ++seed) {
    sim::Rng r(seed);
    const uint64_t a = r.below(n);
    const uint64_t b = r.below(n);
    if (a == start && b == shift) return seed;
  }
  return std::nullopt;
}

std::vector<BrokerId> iota_brokers(int n, BrokerId first = 0) {
  std::vector<BrokerId> out;
  for (int i = 0; i < n; ++i) out.push_back(first + i);
  return out;
}

TEST(KafkaAssignment, ReproducesTheExampleInAdminUtilsScaladoc) {
  // AdminUtils' scaladoc, brokers 0-4, 10 partitions, replication factor 3,
  // start index 0 and shift 0. Row r lists, per broker, the partition of
  // which the broker holds replica r / 2 (two rows per replica).
  constexpr int kTable[6][5] = {
      {0, 1, 2, 3, 4},  // 1st replica
      {5, 6, 7, 8, 9},  // 1st replica
      {4, 0, 1, 2, 3},  // 2nd replica
      {8, 9, 5, 6, 7},  // 2nd replica
      {3, 4, 0, 1, 2},  // 3rd replica
      {7, 8, 9, 5, 6},  // 3rd replica
  };
  znodes::Assignment expected;
  for (int32_t p = 0; p < 10; ++p) expected[p] = std::vector<BrokerId>(3, kNoBroker);
  for (int row = 0; row < 6; ++row) {
    for (BrokerId b = 0; b < 5; ++b) expected[kTable[row][b]][static_cast<size_t>(row / 2)] = b;
  }

  const auto seed = seed_drawing(5, 0, 0);
  ASSERT_TRUE(seed.has_value());
  sim::Rng rng(*seed);
  EXPECT_EQ(assign_replicas(iota_brokers(5), 10, 3, rng), expected) << "seed " << *seed;
}

TEST(KafkaAssignment, MatchesAdminUtilsForTheStartAndShiftItDraws) {
  for (int n = 1; n <= 6; ++n) {
    for (int rf = 1; rf <= n; ++rf) {
      for (int32_t partitions : {1, 3, 7, 12, 25}) {
        for (int32_t first_partition : {0, 4, 6}) {
          for (uint64_t seed = 1; seed <= 6; ++seed) {
            const std::vector<BrokerId> brokers = iota_brokers(n, 10);
            sim::Rng draws(seed);
            const int64_t start = static_cast<int64_t>(draws.below(static_cast<uint64_t>(n)));
            const int64_t shift = static_cast<int64_t>(draws.below(static_cast<uint64_t>(n)));
            sim::Rng rng(seed);
            ASSERT_EQ(assign_replicas(brokers, partitions, rf, rng, first_partition),
                      kafka_rack_unaware(brokers, partitions, rf, start, shift, first_partition))
                << "n=" << n << " rf=" << rf << " partitions=" << partitions
                << " first=" << first_partition << " seed=" << seed;
          }
        }
      }
    }
  }
}

// What holds whatever start and shift the Rng draws.
TEST(KafkaAssignment, PropertiesThatHoldForEverySeed) {
  for (int n = 1; n <= 7; ++n) {
    const std::vector<BrokerId> brokers = iota_brokers(n, 100);
    for (int rf = 1; rf <= n; ++rf) {
      for (int32_t partitions : {1, n, 2 * n, 3 * n + 1, 17}) {
        for (int32_t first_partition : {0, 5}) {
          for (uint64_t seed = 1; seed <= 25; ++seed) {
            SCOPED_TRACE(::testing::Message() << "n=" << n << " rf=" << rf << " partitions="
                                              << partitions << " first=" << first_partition
                                              << " seed=" << seed);
            sim::Rng rng(seed);
            const znodes::Assignment a = assign_replicas(brokers, partitions, rf, rng, first_partition);

            // Partitions first_partition .. first_partition + partitions - 1.
            ASSERT_EQ(a.size(), static_cast<size_t>(partitions));
            EXPECT_EQ(a.begin()->first, first_partition);
            EXPECT_EQ(a.rbegin()->first, first_partition + partitions - 1);

            std::map<BrokerId, int> leaders;
            std::map<BrokerId, int> replicas;
            for (const auto& [p, r] : a) {
              ASSERT_EQ(r.size(), static_cast<size_t>(rf)) << "partition " << p;
              EXPECT_EQ(std::set<BrokerId>(r.begin(), r.end()).size(), r.size())
                  << "partition " << p << " repeats a broker";
              for (BrokerId b : r) {
                EXPECT_TRUE(std::find(brokers.begin(), brokers.end(), b) != brokers.end()) << b;
                ++replicas[b];
              }
              ++leaders[r.front()];
            }
            // Leaders go round-robin over the sorted brokers from the start.
            int most = 0;
            int fewest = partitions;
            for (BrokerId b : brokers) {
              most = std::max(most, leaders[b]);
              fewest = std::min(fewest, leaders[b]);
            }
            EXPECT_LE(most - fewest, 1);
            EXPECT_EQ(most, (partitions + n - 1) / n);
            // Partitions whose ids lie in one run of n (a multiple of n
            // onwards) share a shift, and within such a full run every
            // broker holds each replica position exactly once: with whole
            // runs only, every broker holds exactly partitions * rf / n.
            if (first_partition % n == 0 && partitions % n == 0) {
              for (BrokerId b : brokers) {
                EXPECT_EQ(replicas[b], partitions * rf / n) << "broker " << b;
              }
            }
          }
        }
      }
    }
  }
}

// The structure of the scaladoc example, for any start and shift: the first
// replicas are consecutive brokers, and follower j of partition p sits
// 1 + (s + p / n + j) mod (n - 1) places after the first replica, for one
// s fixed by the draw.
TEST(KafkaAssignment, FollowersSitAtDistancesThatGrowByOneEveryNPartitions) {
  const int n = 5;
  const std::vector<BrokerId> brokers = iota_brokers(n);
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    sim::Rng rng(seed);
    const znodes::Assignment a = assign_replicas(brokers, 23, 3, rng);
    const int first0 = a.at(0)[0];
    const int s = (a.at(0)[1] - first0 + n) % n - 1;
    for (const auto& [p, r] : a) {
      EXPECT_EQ(r[0], (first0 + p) % n) << "seed " << seed << " partition " << p;
      for (int j = 0; j < 2; ++j) {
        const int distance = (r[static_cast<size_t>(j) + 1] - r[0] + n) % n;
        EXPECT_EQ(distance, 1 + (s + p / n + j) % (n - 1))
            << "seed " << seed << " partition " << p << " follower " << j;
      }
    }
  }
}

TEST(KafkaAssignment, TheStartIsRandomAcrossSeeds) {
  std::set<BrokerId> first_leaders;
  std::set<std::vector<BrokerId>> partition0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    sim::Rng rng(seed);
    const znodes::Assignment a = assign_replicas({1, 2, 3, 4}, 4, 2, rng);
    first_leaders.insert(a.at(0)[0]);
    partition0.insert(a.at(0));
  }
  EXPECT_EQ(first_leaders, (std::set<BrokerId>{1, 2, 3, 4}));
  // 4 starts times 3 follower distances.
  EXPECT_EQ(partition0.size(), 12u);
}

TEST(KafkaAssignment, IsDeterministicForASeed) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    sim::Rng a(seed);
    sim::Rng b(seed);
    EXPECT_EQ(assign_replicas({1, 2, 3, 4, 5}, 12, 3, a), assign_replicas({1, 2, 3, 4, 5}, 12, 3, b));
    // The stream moves on by exactly the two draws.
    sim::Rng c(seed);
    c.below(5);
    c.below(5);
    EXPECT_EQ(a.next_u64(), c.next_u64());
  }
}

TEST(KafkaAssignment, AnUnsortedBrokerListGivesTheSameAssignmentAsASortedOne) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    sim::Rng a(seed);
    sim::Rng b(seed);
    EXPECT_EQ(assign_replicas({104, 7, 55, 3, 12}, 9, 3, a),
              assign_replicas({3, 7, 12, 55, 104}, 9, 3, b))
        << "seed " << seed;
  }
}

TEST(KafkaAssignment, SparseBrokerIdsAreUsedInSortedOrder) {
  const auto seed = seed_drawing(3, 0, 0);
  ASSERT_TRUE(seed.has_value());
  sim::Rng rng(*seed);
  EXPECT_EQ(assign_replicas({101, 7, 55}, 4, 2, rng),
            (znodes::Assignment{{0, {7, 55}}, {1, {55, 101}}, {2, {101, 7}}, {3, {7, 101}}}));
}

TEST(KafkaAssignment, OneBrokerHoldsEverything) {
  sim::Rng rng(3);
  EXPECT_EQ(assign_replicas({9}, 3, 1, rng), (znodes::Assignment{{0, {9}}, {1, {9}}, {2, {9}}}));
}

TEST(KafkaAssignment, AddedPartitionsContinueTheNumbering) {
  // Adding partitions 6-8 to a topic on three brokers: the first of them is
  // at a multiple of n, so its shift has already moved by one.
  const auto seed = seed_drawing(3, 1, 0);
  ASSERT_TRUE(seed.has_value());
  sim::Rng rng(*seed);
  EXPECT_EQ(assign_replicas({1, 2, 3}, 3, 2, rng, 6),
            (znodes::Assignment{{6, {2, 1}}, {7, {3, 2}}, {8, {1, 3}}}));
}

// --- NetworkClient ----------------------------------------------------------------------------------

constexpr uint16_t kPort = 9092;
constexpr Duration kLatency = Duration::millis(1);
const NodeAddress kBroker1{"10.0.0.2", kPort};
const NodeAddress kBroker2{"10.0.0.3", kPort};

Time at_ms(int64_t ms) { return Time::zero() + Duration::millis(ms); }
Time at_us(int64_t us) { return Time::from_us(us); }

// A request as a server saw it.
struct Received {
  Time at;
  sim::SocketId socket;
  int32_t correlation_id = 0;
  std::string key;
};

// What one server process (across its incarnations) saw and how it answers.
struct ServerJournal {
  bool answer = true;  // answer each request at once; otherwise hold it
  std::vector<Received> received;
  std::vector<Received> held;
  int accepts = 0;
  int closes = 0;
};

// A broker in miniature: answers FindCoordinator(key) with a response whose
// host is the key, at once or when the test says.
class Server final : public sim::Process {
 public:
  explicit Server(ServerJournal* journal) : journal_(journal) {}
  void on_start() override { ctx().listen(kPort); }
  void on_accept(sim::SocketId, uint16_t) override { ++journal_->accepts; }
  void on_message(sim::SocketId socket, sim::Payload& payload) override {
    const auto& frame = *sim::payload_cast<RequestFrame>(&payload);
    const Received r{ctx().now(), socket, frame.correlation_id,
                     std::get<FindCoordinatorRequest>(frame.body).key};
    journal_->received.push_back(r);
    if (journal_->answer) {
      reply(r);
    } else {
      journal_->held.push_back(r);
    }
  }
  void on_closed(sim::SocketId socket, sim::CloseReason) override {
    ++journal_->closes;
    ctx().close(socket);
  }
  void reply(const Received& r, std::optional<int32_t> correlation_id = std::nullopt) {
    FindCoordinatorResponse body;
    body.host = r.key;
    ctx().send(r.socket, ResponseFrame{correlation_id.value_or(r.correlation_id), body});
  }

 private:
  ServerJournal* journal_;
};

// A process that owns a NetworkClient and routes its socket callbacks to it.
class Client final : public sim::Process {
 public:
  explicit Client(NetworkClient::Options options) : options_(options) {}
  void on_start() override { client_ = std::make_unique<NetworkClient>(ctx(), options_); }
  NetworkClient& client() { return *client_; }
  int unrouted() const { return unrouted_; }

  void on_connected(sim::SocketId s) override { count(client_->on_connected(s)); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override {
    count(client_->on_connect_failed(s, e));
  }
  void on_message(sim::SocketId s, sim::Payload& p) override { count(client_->on_message(s, p)); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { count(client_->on_closed(s, r)); }

 private:
  void count(bool routed) { unrouted_ += routed ? 0 : 1; }
  NetworkClient::Options options_;
  std::unique_ptr<NetworkClient> client_;
  int unrouted_ = 0;
};

// How one request ended, as its completion saw it.
struct Outcome {
  Time at;
  std::string tag;
  SendError error = SendError::none;
  std::string answer;  // the response's host: the server echoes the tag
  bool had_response = false;
};

sim::WorldOptions exact_network() {
  sim::WorldOptions o;
  o.network.latency = sim::LatencyModel::constant(kLatency);
  return o;
}

// A client host and two broker hosts, each broker running a Server on 9092,
// with a constant one-way latency of 1 ms: a request on a fresh connection
// is answered 4 ms after it is sent (SYN, SYN-ACK, request, response).
class Rig {
 public:
  explicit Rig(NetworkClient::Options options = {}) : world(1, exact_network()) {
    client_host = world.add_host("client", "10.0.0.1");
    b1 = world.add_host("broker1", kBroker1.host);
    b2 = world.add_host("broker2", kBroker2.host);
    client_process = world.add_process(client_host, "client",
                                       [options] { return std::make_unique<Client>(options); });
    s1 = world.add_process(b1, "server1", [this] { return std::make_unique<Server>(&j1); });
    s2 = world.add_process(b2, "server2", [this] { return std::make_unique<Server>(&j2); });
    world.boot();
  }

  NetworkClient& client() { return world.process_as<Client>(client_process)->client(); }
  Server& server1() { return *world.process_as<Server>(s1); }
  int unrouted() { return world.process_as<Client>(client_process)->unrouted(); }

  // Sends FindCoordinator(tag) to `node`; `then` runs inside the completion.
  void send(const std::string& tag, int32_t node = 1, const NodeAddress& address = kBroker1,
            std::function<void(SendError)> then = {}) {
    client().send(node, address, FindCoordinatorRequest{tag},
                  [this, tag, then](SendError error, const Response* response) {
                    Outcome o{world.now(), tag, error, "", response != nullptr};
                    if (response != nullptr) o.answer = std::get<FindCoordinatorResponse>(*response).host;
                    outcomes.push_back(o);
                    if (then) then(error);
                  });
  }
  void run_until(Time t) { world.run_until(t); }

  std::vector<std::string> tags() const {
    std::vector<std::string> out;
    for (const Outcome& o : outcomes) out.push_back(o.tag);
    return out;
  }
  std::vector<int32_t> received_ids(const ServerJournal& j) const {
    std::vector<int32_t> out;
    for (const Received& r : j.received) out.push_back(r.correlation_id);
    return out;
  }

  sim::World world;
  sim::HostId client_host, b1, b2;
  sim::ProcessId client_process, s1, s2;
  ServerJournal j1, j2;
  std::vector<Outcome> outcomes;
};

NetworkClient::Options options(int32_t request_timeout_ms, int32_t max_in_flight = 1) {
  NetworkClient::Options o;
  o.request_timeout_ms = request_timeout_ms;
  o.max_in_flight = max_in_flight;
  return o;
}

TEST(KafkaNetworkClient, AnswersARequestOverANewConnection) {
  Rig rig;
  rig.send("a");
  EXPECT_EQ(rig.client().pending(1), 1u);
  EXPECT_FALSE(rig.client().connected(1));
  rig.run_until(at_ms(10));

  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(4));
  EXPECT_EQ(rig.outcomes[0].error, SendError::none);
  EXPECT_TRUE(rig.outcomes[0].had_response);
  EXPECT_EQ(rig.outcomes[0].answer, "a");
  ASSERT_EQ(rig.j1.received.size(), 1u);
  EXPECT_EQ(rig.j1.received[0].at, at_ms(3));
  EXPECT_EQ(rig.j1.accepts, 1);
  EXPECT_TRUE(rig.client().connected(1));
  EXPECT_EQ(rig.client().pending(1), 0u);
  EXPECT_EQ(rig.unrouted(), 0);
}

TEST(KafkaNetworkClient, ReusesTheConnectionWithIncreasingCorrelationIds) {
  Rig rig;
  rig.send("a");
  rig.send("b");
  rig.run_until(at_ms(10));
  rig.send("c");
  rig.run_until(at_ms(20));
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a", "b", "c"}));
  for (const Outcome& o : rig.outcomes) EXPECT_EQ(o.answer, o.tag);
  EXPECT_EQ(rig.received_ids(rig.j1), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(rig.j1.accepts, 1);
  // b went out when a's answer came back (4 ms) and was answered 2 ms later;
  // c on the open connection takes one round trip.
  EXPECT_EQ(rig.outcomes[1].at, at_ms(6));
  EXPECT_EQ(rig.outcomes[2].at, at_ms(12));
}

TEST(KafkaNetworkClient, MatchesResponsesByCorrelationIdNotByArrivalOrder) {
  Rig rig(options(30000, /*max_in_flight=*/3));
  rig.j1.answer = false;
  rig.send("a");
  rig.send("b");
  rig.send("c");
  rig.run_until(at_ms(10));
  ASSERT_EQ(rig.j1.held.size(), 3u);
  EXPECT_TRUE(rig.outcomes.empty());

  rig.server1().reply(rig.j1.held[2]);
  rig.server1().reply(rig.j1.held[0]);
  rig.server1().reply(rig.j1.held[1]);
  rig.run_until(at_ms(20));
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"c", "a", "b"}));
  for (const Outcome& o : rig.outcomes) {
    EXPECT_EQ(o.error, SendError::none);
    EXPECT_EQ(o.answer, o.tag);
  }
}

TEST(KafkaNetworkClient, IgnoresAResponseWithAnUnknownCorrelationId) {
  Rig rig;
  rig.j1.answer = false;
  rig.send("a");
  rig.run_until(at_ms(10));
  ASSERT_EQ(rig.j1.held.size(), 1u);
  rig.server1().reply(rig.j1.held[0], 999);
  rig.run_until(at_ms(20));
  EXPECT_TRUE(rig.outcomes.empty());
  EXPECT_EQ(rig.client().pending(1), 1u);
  EXPECT_TRUE(rig.client().connected(1));

  rig.server1().reply(rig.j1.held[0]);
  rig.run_until(at_ms(30));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].answer, "a");
}

TEST(KafkaNetworkClient, KeepsAtMostMaxInFlightRequestsOnTheWire) {
  for (int32_t max_in_flight : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "max_in_flight=" << max_in_flight);
    Rig rig(options(30000, max_in_flight));
    rig.j1.answer = false;
    for (const char* tag : {"a", "b", "c", "d", "e"}) rig.send(tag);
    rig.run_until(at_ms(10));
    EXPECT_EQ(rig.j1.received.size(), static_cast<size_t>(max_in_flight));
    EXPECT_EQ(rig.client().pending(1), 5u);

    // Each answer lets exactly one more request out.
    rig.server1().reply(rig.j1.held[0]);
    rig.run_until(at_ms(20));
    EXPECT_EQ(rig.j1.received.size(), static_cast<size_t>(max_in_flight) + 1);
    EXPECT_EQ(rig.client().pending(1), 4u);
    EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a"}));

    rig.j1.answer = true;
    for (size_t i = 1; i < rig.j1.held.size(); ++i) rig.server1().reply(rig.j1.held[i]);
    rig.run_until(at_ms(40));
    EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
    EXPECT_EQ(rig.received_ids(rig.j1), (std::vector<int32_t>{1, 2, 3, 4, 5}));
  }
}

TEST(KafkaNetworkClient, ARequestTimeoutFailsThatRequestAndClosesTheOthers) {
  Rig rig(options(100));
  rig.j1.answer = false;
  rig.send("a");
  rig.send("b");
  rig.send("c");
  rig.run_until(at_ms(99));
  EXPECT_TRUE(rig.outcomes.empty());
  rig.run_until(at_ms(200));

  ASSERT_EQ(rig.outcomes.size(), 3u);
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(rig.outcomes[0].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].error, SendError::closed);
  EXPECT_EQ(rig.outcomes[2].error, SendError::closed);
  for (const Outcome& o : rig.outcomes) {
    EXPECT_EQ(o.at, at_ms(100));
    EXPECT_FALSE(o.had_response);
  }
  EXPECT_FALSE(rig.client().connected(1));
  EXPECT_EQ(rig.client().pending(1), 0u);
  EXPECT_EQ(rig.j1.closes, 1) << "the client closed its connection";

  // The next request opens a new connection.
  rig.j1.answer = true;
  rig.send("d");
  rig.run_until(at_ms(300));
  ASSERT_EQ(rig.outcomes.size(), 4u);
  EXPECT_EQ(rig.outcomes[3].error, SendError::none);
  EXPECT_EQ(rig.outcomes[3].at, at_ms(204));
  EXPECT_EQ(rig.j1.accepts, 2);
}

TEST(KafkaNetworkClient, TheTimeoutRunsFromWhenTheRequestWasQueued) {
  Rig rig(options(100));
  rig.j1.answer = false;
  rig.send("a");
  rig.send("b");  // queued behind a (max_in_flight 1)
  rig.run_until(at_ms(50));
  rig.server1().reply(rig.j1.held[0]);  // b goes out at 51 ms and is held
  rig.run_until(at_ms(300));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::none);
  EXPECT_EQ(rig.outcomes[1].tag, "b");
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(100));
}

// One timer serves every request's timeout: an answered request leaves no
// timeout behind, and each unanswered one expires at its own deadline,
// whatever connection it is on.
TEST(KafkaNetworkClient, EachRequestTimesOutAtItsOwnDeadline) {
  Rig rig(options(100));
  rig.send("a");  // answered at 4 ms
  rig.run_until(at_ms(60));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::none);
  rig.j1.answer = false;
  rig.j2.answer = false;
  rig.send("b");  // held by broker 1: expires at 160 ms, not at a's 100 ms
  rig.run_until(at_ms(90));
  rig.send("c", 2, kBroker2);  // held by broker 2: expires at 190 ms
  rig.run_until(at_ms(159));
  EXPECT_EQ(rig.outcomes.size(), 1u) << "nothing expires at a's old deadline";
  rig.run_until(at_ms(400));
  ASSERT_EQ(rig.outcomes.size(), 3u);
  EXPECT_EQ(rig.outcomes[1].tag, "b");
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(160));
  EXPECT_EQ(rig.outcomes[2].tag, "c");
  EXPECT_EQ(rig.outcomes[2].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[2].at, at_ms(190));
  EXPECT_FALSE(rig.client().connected(1));
  EXPECT_FALSE(rig.client().connected(2));
}


// A request may carry its own timeout (a librdkafka ProduceRequest cut to its
// first record's message timeout): a later request with a shorter one
// expires first, failing the older one on its connection with it.
TEST(KafkaNetworkClient, ARequestWithItsOwnShorterTimeoutExpiresFirst) {
  Rig rig(options(100, /*max_in_flight=*/5));
  rig.j1.answer = false;
  rig.send("a");  // the client's 100 ms: due at 100 ms
  rig.run_until(at_ms(10));
  rig.client().send(1, kBroker1, FindCoordinatorRequest{"b"},
                    [&rig](SendError error, const Response*) {
                      rig.outcomes.push_back({rig.world.now(), "b", error, "", false});
                    },
                    /*expect_response=*/true, sim::Duration::millis(30));  // due at 40 ms
  rig.run_until(at_ms(200));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  std::map<std::string, Outcome> by_tag;
  for (const Outcome& o : rig.outcomes) by_tag[o.tag] = o;
  EXPECT_EQ(by_tag["b"].error, SendError::request_timed_out);
  EXPECT_EQ(by_tag["b"].at, at_ms(40));
  EXPECT_EQ(by_tag["a"].error, SendError::closed);
  EXPECT_EQ(by_tag["a"].at, at_ms(40));
}

TEST(KafkaNetworkClient, ConnectionRefusedWhenNothingListens) {
  Rig rig;
  rig.world.kill(rig.s1);
  rig.send("a");
  rig.send("b");
  rig.run_until(at_ms(10));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  for (const Outcome& o : rig.outcomes) {
    EXPECT_EQ(o.error, SendError::refused);
    EXPECT_EQ(o.at, at_ms(2));
  }
  EXPECT_FALSE(rig.client().connected(1));
  EXPECT_EQ(rig.client().pending(1), 0u);

  // And on a port where nothing listens on a live host.
  rig.send("c", 2, NodeAddress{kBroker2.host, 9093});
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 3u);
  EXPECT_EQ(rig.outcomes[2].error, SendError::refused);
  EXPECT_EQ(rig.j2.accepts, 0);
}

TEST(KafkaNetworkClient, ConnectionResetWhenTheServerProcessIsKilled) {
  Rig rig;
  rig.j1.answer = false;
  rig.send("a");
  rig.send("b");
  rig.run_until(at_ms(10));
  ASSERT_EQ(rig.j1.held.size(), 1u);
  rig.world.kill(rig.s1);
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  for (const Outcome& o : rig.outcomes) {
    EXPECT_EQ(o.error, SendError::reset);
    EXPECT_EQ(o.at, at_ms(11));
  }
  EXPECT_FALSE(rig.client().connected(1));
}

TEST(KafkaNetworkClient, RequestTimedOutWhenTheServerHostIsPoweredOff) {
  Rig rig(options(1000));
  rig.world.power_off(rig.b1);
  rig.send("a");
  rig.run_until(at_ms(5000));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(1000));
}

TEST(KafkaNetworkClient, ConnectTimedOutWhenTheKernelGivesUpFirst) {
  // Linux retransmits a SYN after 1, 2, 4 ... 64 s and gives up 127 s after
  // the first attempt, long before a ten-minute request timeout.
  Rig rig(options(600'000));
  rig.world.power_off(rig.b1);
  rig.send("a");
  rig.run_until(at_ms(200'000));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::connect_timed_out);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(127'001));
}

TEST(KafkaNetworkClient, RequestTimedOutWhenAPartitionCutsTheServerOffBeforeConnecting) {
  Rig rig(options(3000));
  rig.world.network().partition({{rig.client_host}, {rig.b1}});
  rig.send("a");
  rig.send("b", 2, kBroker2);  // broker 2 is on neither side: still reachable
  rig.run_until(at_ms(5000));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[0].tag, "b");
  EXPECT_EQ(rig.outcomes[0].error, SendError::none);
  EXPECT_EQ(rig.outcomes[1].tag, "a");
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(3000));
}

TEST(KafkaNetworkClient, ConnectTimedOutWhenAPartitionOutlastsTheSynRetries) {
  Rig rig(options(600'000));
  rig.world.network().isolate(rig.b1);
  rig.send("a");
  rig.run_until(at_ms(200'000));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::connect_timed_out);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(127'001));
}

TEST(KafkaNetworkClient, RequestTimedOutWhenAPartitionCutsAnOpenConnection) {
  Rig rig(options(3000));
  rig.send("a");
  rig.run_until(at_ms(10));
  ASSERT_TRUE(rig.client().connected(1));
  rig.world.network().partition({{rig.client_host}, {rig.b1}});
  rig.send("b");
  rig.run_until(at_ms(5000));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(3010));
  EXPECT_EQ(rig.j1.received.size(), 1u);
}

TEST(KafkaNetworkClient, RequestTimedOutWhenTheServerHostLosesPowerUnderAnOpenConnection) {
  Rig rig(options(1000));
  rig.send("a");
  rig.run_until(at_ms(10));
  rig.world.power_off(rig.b1);
  rig.send("b");
  rig.run_until(at_ms(5000));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(1010));
}

TEST(KafkaNetworkClient, AConnectionTheKernelTimesOutFailsAsRequestTimedOut) {
  // The request timeout is longer than TCP's retransmission limit
  // (tcp_retries2: 924.6 s), so the kernel reports the dead connection first.
  Rig rig(options(2'000'000));
  rig.send("a");
  rig.run_until(at_ms(10));
  rig.world.network().isolate(rig.b1);
  rig.send("b");  // reaches the cut at 11 ms and stalls
  rig.run_until(at_ms(1'500'000));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[1].error, SendError::request_timed_out);
  EXPECT_EQ(rig.outcomes[1].at, at_us(11'000 + 924'600'000));
}

TEST(KafkaNetworkClient, ACompletionMaySendAgain) {
  Rig rig;
  rig.send("a", 1, kBroker1, [&rig](SendError) { rig.send("b"); });
  rig.send("c");
  rig.run_until(at_ms(20));
  // c was queued before the completion of a ran, so it goes first.
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a", "c", "b"}));
  for (const Outcome& o : rig.outcomes) EXPECT_EQ(o.answer, o.tag);
  EXPECT_EQ(rig.outcomes[2].at, at_ms(8));
  EXPECT_EQ(rig.j1.accepts, 1);
}

TEST(KafkaNetworkClient, AFailedCompletionMaySendAgainOnANewConnection) {
  Rig rig;
  const NodeAddress wrong_port{kBroker1.host, 9093};
  rig.send("a", 1, wrong_port, [&rig](SendError e) {
    if (e == SendError::refused) rig.send("b");
  });
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::refused);
  EXPECT_EQ(rig.outcomes[1].error, SendError::none);
  EXPECT_EQ(rig.outcomes[1].answer, "b");
  EXPECT_EQ(rig.outcomes[1].at, at_ms(6));
}

TEST(KafkaNetworkClient, ATimedOutCompletionMaySendAgain) {
  Rig rig(options(100));
  rig.j1.answer = false;
  rig.send("a", 1, kBroker1, [&rig](SendError e) {
    if (e == SendError::request_timed_out) rig.send("b", 2, kBroker2);
  });
  rig.run_until(at_ms(200));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[1].tag, "b");
  EXPECT_EQ(rig.outcomes[1].error, SendError::none);
  EXPECT_EQ(rig.outcomes[1].at, at_ms(104));
}

TEST(KafkaNetworkClient, CloseCancelsEverythingQueuedOrInFlight) {
  Rig rig;
  rig.j1.answer = false;
  rig.send("a");
  rig.send("b");
  rig.run_until(at_ms(10));
  rig.client().close(1);
  ASSERT_EQ(rig.outcomes.size(), 2u);
  for (const Outcome& o : rig.outcomes) {
    EXPECT_EQ(o.error, SendError::cancelled);
    EXPECT_EQ(o.at, at_ms(10));
  }
  EXPECT_FALSE(rig.client().connected(1));
  EXPECT_EQ(rig.client().pending(1), 0u);
  rig.run_until(at_ms(20));
  EXPECT_EQ(rig.j1.closes, 1);
  EXPECT_EQ(rig.outcomes.size(), 2u) << "nothing completes twice";
}

TEST(KafkaNetworkClient, CloseAllClosesEveryNode) {
  Rig rig;
  rig.j1.answer = false;
  rig.j2.answer = false;
  rig.send("a", 1, kBroker1);
  rig.send("b", 2, kBroker2);
  rig.run_until(at_ms(10));
  rig.client().close_all();
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"a", "b"}));
  for (const Outcome& o : rig.outcomes) EXPECT_EQ(o.error, SendError::cancelled);
  EXPECT_EQ(rig.client().pending(1) + rig.client().pending(2), 0u);
}

TEST(KafkaNetworkClient, AChangedAddressDropsTheOldConnection) {
  Rig rig;
  rig.j1.answer = false;
  rig.send("a", 1, kBroker1);
  rig.run_until(at_ms(10));
  rig.send("b", 1, kBroker2);  // broker 1 now advertises another address
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].tag, "a");
  EXPECT_EQ(rig.outcomes[0].error, SendError::cancelled);
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 2u);
  EXPECT_EQ(rig.outcomes[1].answer, "b");
  EXPECT_EQ(rig.outcomes[1].at, at_ms(14));
  ASSERT_EQ(rig.j2.received.size(), 1u);
  EXPECT_EQ(rig.j2.received[0].key, "b");
}

TEST(KafkaNetworkClient, NodesHaveTheirOwnConnectionsAndLimits) {
  Rig rig;
  rig.j1.answer = false;
  rig.send("a", 1, kBroker1);
  rig.send("b", 2, kBroker2);
  rig.send("c", 2, kBroker2);
  rig.run_until(at_ms(20));
  EXPECT_EQ(rig.tags(), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(rig.client().pending(1), 1u);
  EXPECT_EQ(rig.client().pending(2), 0u);
  EXPECT_TRUE(rig.client().connected(1));
  EXPECT_TRUE(rig.client().connected(2));
}

// A request that times out while its connection is still being opened
// leaves the connect attempt running: fail() closes the socket only
// `if (ctx_.is_open(...))`, and a socket that is still connecting is not
// open. The kernel keeps retransmitting the SYN; when the broker comes back
// the handshake completes and the broker holds a connection that the client
// has forgotten and never closes (its process gets on_connected for a socket
// the NetworkClient no longer knows). Closing unconditionally would abandon
// the handshake (Network::close handles a connecting socket). (Found by
// this test; fixed.)
TEST(KafkaNetworkClient, ATimedOutConnectAttemptIsAbandoned) {
  Rig rig(options(5000));
  rig.world.power_off(rig.b1);
  rig.send("a");
  rig.run_until(at_ms(5000));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  ASSERT_EQ(rig.outcomes[0].error, SendError::request_timed_out);
  rig.world.power_on(rig.b1);  // server1 starts again and listens
  rig.run_until(at_ms(200'000));
  EXPECT_EQ(rig.j1.accepts, 0) << "a connection the client no longer wants";
  EXPECT_EQ(rig.unrouted(), 0);
  EXPECT_EQ(rig.world.network().open_connections(), 0u);
}

// After a refused connect or a reset, NetworkClient forgets the socket
// without closing it (again the `is_open` guard in fail()), so the network
// keeps the connection's record until the client process dies: one more per
// failed attempt, e.g. per retry of a replica fetcher against a dead broker.
// (Found by this test; fixed.)
TEST(KafkaNetworkClient, FailedConnectionsAreReleased) {
  Rig rig;
  rig.world.kill(rig.s1);
  for (int i = 0; i < 3; ++i) {
    rig.send("a");
    rig.run_until(at_ms(10 * (i + 1)));
  }
  ASSERT_EQ(rig.outcomes.size(), 3u);
  EXPECT_EQ(rig.outcomes[2].error, SendError::refused);
  EXPECT_EQ(rig.world.network().open_connections(), 0u);
}

// connect(): a connection opened ahead of any request, for a client that
// holds its requests until the node is ready.
struct ConnectFailure {
  Time at;
  SendError error = SendError::none;
  bool reported = false;
};

TEST(KafkaNetworkClient, ConnectOpensAConnectionAndSaysWhenItIsUp) {
  Rig rig;
  std::vector<ConnectFailure> failures;
  const auto failed = [&](SendError e, bool reported) { failures.push_back({rig.world.now(), e, reported}); };
  EXPECT_FALSE(rig.client().connect(1, kBroker1, failed));
  EXPECT_TRUE(rig.client().connecting(1));
  rig.run_until(at_ms(10));
  EXPECT_TRUE(rig.client().connect(1, kBroker1, failed));
  EXPECT_FALSE(rig.client().connecting(1));
  EXPECT_EQ(rig.j1.accepts, 1);
  // A request then goes out on it, and its answer comes one round trip later.
  rig.send("a");
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(12));
  EXPECT_TRUE(failures.empty());
}

TEST(KafkaNetworkClient, AFailedConnectIsReportedOnceAndSaysWhetherRequestsToldOfIt) {
  Rig rig;
  rig.world.kill(rig.s1);
  std::vector<ConnectFailure> failures;
  const auto failed = [&](SendError e, bool reported) { failures.push_back({rig.world.now(), e, reported}); };
  // Refused with nothing queued: only connect's caller hears of it.
  int second_caller = 0;
  rig.client().connect(1, kBroker1, failed);
  rig.client().connect(1, kBroker1, [&](SendError, bool) { ++second_caller; });  // the first `failed` stands
  rig.run_until(at_ms(10));
  EXPECT_EQ(second_caller, 0);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].error, SendError::refused);
  EXPECT_EQ(failures[0].at, at_ms(2));
  EXPECT_FALSE(failures[0].reported);
  // Refused with a request queued: the request fails first, then the caller
  // hears that it was reported.
  rig.client().connect(1, kBroker1, failed);
  rig.send("a");
  rig.run_until(at_ms(20));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::refused);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_TRUE(failures[1].reported);
  // Closed by its owner while connecting: not reported.
  rig.world.start(rig.s1);
  rig.world.power_off(rig.b2);
  rig.client().connect(2, kBroker2, failed);
  rig.client().close(2);
  rig.run_until(at_ms(200'000));
  EXPECT_EQ(failures.size(), 2u);
}

TEST(KafkaNetworkClient, AConnectionUpInTimeOutlivesItsSetupTimeout) {
  NetworkClient::Options o = options(600'000);
  o.connection_setup_timeout_ms = 5000;
  Rig rig(o);
  int failures = 0;
  rig.client().connect(1, kBroker1, [&](SendError, bool) { ++failures; });
  rig.run_until(at_ms(20'000));
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(rig.client().connected(1));
  rig.send("a");
  rig.run_until(at_ms(20'010));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::none);
}

TEST(KafkaNetworkClient, AConnectionNotUpWithinItsSetupTimeoutIsGivenUp) {
  NetworkClient::Options o = options(600'000);
  o.connection_setup_timeout_ms = 5000;
  Rig rig(o);
  rig.world.power_off(rig.b1);  // SYNs go unanswered
  std::vector<ConnectFailure> failures;
  rig.client().connect(1, kBroker1, [&](SendError e, bool reported) {
    failures.push_back({rig.world.now(), e, reported});
  });
  rig.run_until(at_ms(20'000));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].error, SendError::connect_timed_out);
  EXPECT_EQ(failures[0].at, at_ms(5000));
  EXPECT_FALSE(rig.client().connecting(1));
  // A request queued on a connection that never comes up fails with it.
  rig.send("a");
  rig.run_until(at_ms(40'000));
  ASSERT_EQ(rig.outcomes.size(), 1u);
  EXPECT_EQ(rig.outcomes[0].error, SendError::connect_timed_out);
  EXPECT_EQ(rig.outcomes[0].at, at_ms(25'000));
}

}  // namespace
}  // namespace kafka
