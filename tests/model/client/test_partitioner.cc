// The producer's partitioners: librdkafka's hashes (rd_crc32, rd_murmur2,
// rd_fnv1a, with the test vectors of librdkafka's own unit tests) and where
// records without a key go under each `partitioner`, on a real cluster.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "client/harness.h"
#include "kafka/cluster.h"
#include "model/client/config.h"
#include "model/client/producer.h"

namespace kafka::testing {
namespace {

using client::KeyHash;
using client::NullKeyPartitioning;
using sim::Duration;

TEST(Partitioner, HashesMatchLibrdkafkasTestVectors) {
  // rdmurmur2.c unittest_murmur2 (the Java client's values), masked positive.
  EXPECT_EQ(client::murmur2("kafka"), 0xd067cf64u & 0x7fffffffu);
  EXPECT_EQ(client::murmur2("giberish123456789"), 0x8f552b0cu & 0x7fffffffu);
  EXPECT_EQ(client::murmur2("1234"), 0x9fc97b14u & 0x7fffffffu);
  EXPECT_EQ(client::murmur2(""), 0x106e08d9u);
  // rdfnv1a.c unittest_fnv1a (Go's hash/fnv, made positive).
  EXPECT_EQ(client::fnv1a("kafka"), 0x0d33c4e1u);
  EXPECT_EQ(client::fnv1a("giberish123456789"), 0x77a58295u);
  EXPECT_EQ(client::fnv1a("1234"), 0x023bdd03u);
  EXPECT_EQ(client::fnv1a(""), 0x7ee3623bu);
  // CRC-32 (zlib's, which rd_crc32 is): the standard check value.
  EXPECT_EQ(client::crc32("123456789"), 0xcbf43926u);
  EXPECT_EQ(client::crc32("kafka"), 0x5bbc7517u);
  EXPECT_EQ(client::crc32(""), 0u);
}

TEST(Partitioner, NullKeyPartitionIsTheHashOfZeroBytes) {
  // consistent: always partition 0; murmur2: 0x106e08d9 % n; fnv1a: 0x7ee3623b % n.
  for (int32_t n = 1; n <= 12; ++n) {
    EXPECT_EQ(client::null_key_partition(KeyHash::crc32, n), 0) << n;
    EXPECT_EQ(client::null_key_partition(KeyHash::murmur2, n), static_cast<int32_t>(0x106e08d9u % n)) << n;
    EXPECT_EQ(client::null_key_partition(KeyHash::fnv1a, n), static_cast<int32_t>(0x7ee3623bu % n)) << n;
  }
  EXPECT_EQ(client::null_key_partition(KeyHash::murmur2, 4), 1);
  EXPECT_EQ(client::null_key_partition(KeyHash::fnv1a, 4), 3);
  EXPECT_EQ(client::key_partition(KeyHash::murmur2, "kafka", 4), 0);
  EXPECT_EQ(client::key_partition(KeyHash::crc32, "kafka", 4), 3);
  EXPECT_EQ(client::key_partition(KeyHash::fnv1a, "kafka", 4), 1);
}

// Sends 40 records (with `key`, or none) through a producer configured with
// `partitioner` and returns the partitions they were acknowledged on.
std::map<int32_t, int> partitions_used(const std::string& partitioner,
                                       const std::optional<std::string>& key) {
  Cluster c({.zookeepers = 1, .brokers = 3, .seed = 7});
  c.start();
  EXPECT_TRUE(c.await_ready());
  EXPECT_EQ(c.create_topic("t", 4, 3), ErrorCode::none);
  SendingProcess* p = start_sending_process(
      c, {{"bootstrap.servers", "10.0.1.1:9092,10.0.1.2:9092"}, {"partitioner", partitioner}, {"linger.ms", "0"}});
  std::map<int32_t, int> used;
  int acked = 0;
  for (uint64_t v = 1; v <= 40; ++v) {
    p->producer().send("t", key, v, 70, [&](const client::DeliveryReport& r) {
      EXPECT_EQ(r.outcome, client::Outcome::ok) << r.error;
      ++used[r.partition];
      ++acked;
    });
    c.run_for(Duration::millis(20));
  }
  c.run_for(Duration::seconds(5));
  EXPECT_EQ(acked, 40);
  return used;
}

TEST(Partitioner, NullKeysGoToOnePartitionUnderConsistentMurmur2AndFnv1a) {
  // Four partitions: consistent -> 0, murmur2 -> 0x106e08d9 % 4 = 1,
  // fnv1a -> 0x7ee3623b % 4 = 3.
  EXPECT_EQ(partitions_used("consistent", std::nullopt), (std::map<int32_t, int>{{0, 40}}));
  EXPECT_EQ(partitions_used("murmur2", std::nullopt), (std::map<int32_t, int>{{1, 40}}));
  EXPECT_EQ(partitions_used("fnv1a", std::nullopt), (std::map<int32_t, int>{{3, 40}}));
  // consistent treats an empty key like none: CRC-32 of zero bytes, 0.
  EXPECT_EQ(partitions_used("consistent", std::string()), (std::map<int32_t, int>{{0, 40}}));
}

TEST(Partitioner, NullKeysSpreadUnderTheRandomPartitioners) {
  for (const char* p : {"random", "consistent_random", "murmur2_random", "fnv1a_random"}) {
    const std::map<int32_t, int> used = partitions_used(p, std::nullopt);
    EXPECT_EQ(used.size(), 4u) << p;  // 40 random draws over 4 partitions
  }
  // consistent_random: an empty key is random too (rd_kafka_msg_partitioner);
  // murmur2_random hashes it (only a NULL key is random there).
  EXPECT_EQ(partitions_used("consistent_random", std::string()).size(), 4u);
  EXPECT_EQ(partitions_used("murmur2_random", std::string()), (std::map<int32_t, int>{{1, 40}}));
}

TEST(Partitioner, KeysAreHashedByThePartitionersHash) {
  EXPECT_EQ(partitions_used("murmur2_random", "kafka"), (std::map<int32_t, int>{{0, 40}}));
  EXPECT_EQ(partitions_used("sticky", "kafka"), (std::map<int32_t, int>{{0, 40}}));
  EXPECT_EQ(partitions_used("consistent_random", "kafka"), (std::map<int32_t, int>{{3, 40}}));
  EXPECT_EQ(partitions_used("fnv1a", "kafka"), (std::map<int32_t, int>{{1, 40}}));
  // random ignores the key.
  EXPECT_EQ(partitions_used("random", "kafka").size(), 4u);
}

}  // namespace
}  // namespace kafka::testing
