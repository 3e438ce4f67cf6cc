// server.properties as a Kafka broker in ZooKeeper mode reads it: the defaults
// of each version profile, the keys the model uses, the keys it accepts without
// effect, topic-level overrides, and an error naming the key for everything
// else.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/kafka/config.h"

namespace kafka {
namespace {

using model::ConfigError;
using model::parse_properties;

// The smallest server.properties the model accepts.
const std::string kMinimal = "broker.id=0\nzookeeper.connect=localhost:2181\n";

BrokerConfig parse(const std::string& text, VersionProfile version = VersionProfile::v3_9) {
  return parse_broker_config(parse_properties(text, "server.properties"), version);
}

// The error parsing `text` gives; fails the test when there is none.
ConfigError error_of(const std::string& text, VersionProfile version = VersionProfile::v3_9) {
  try {
    parse(text, version);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError("", "", "");
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

LogConfig topic(const std::string& text, const LogConfig& defaults = LogConfig{}) {
  return apply_topic_overrides(defaults, parse_properties(text, "/config/topics/orders"));
}

ConfigError topic_error_of(const std::string& text) {
  try {
    topic(text);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for topic overrides:\n" << text;
  return ConfigError("", "", "");
}

// config/server.properties as the Kafka 3.x distribution ships it (ZooKeeper
// mode), comments shortened, commented-out lines kept.
const std::string kDistributionServerProperties =
    "############################# Server Basics #############################\n"
    "\n"
    "# The id of the broker. This must be set to a unique integer for each broker.\n"
    "broker.id=0\n"
    "\n"
    "############################# Socket Server Settings #############################\n"
    "\n"
    "# The address the socket server listens on. If not configured, the host name will be "
    "equal to the value of\n"
    "# java.net.InetAddress.getCanonicalHostName(), with PLAINTEXT listener name, and port "
    "9092.\n"
    "#   FORMAT:\n"
    "#     listeners = listener_name://host_name:port\n"
    "#   EXAMPLE:\n"
    "#     listeners = PLAINTEXT://your.host.name:9092\n"
    "#listeners=PLAINTEXT://:9092\n"
    "\n"
    "# Listener name, hostname and port the broker will advertise to clients.\n"
    "#advertised.listeners=PLAINTEXT://your.host.name:9092\n"
    "\n"
    "# Maps listener names to security protocols, the default is for them to be the same.\n"
    "#listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
    "SASL_SSL:SASL_SSL\n"
    "\n"
    "# The number of threads that the server uses for receiving requests from the network\n"
    "num.network.threads=3\n"
    "\n"
    "# The number of threads that the server uses for processing requests\n"
    "num.io.threads=8\n"
    "\n"
    "# The send buffer (SO_SNDBUF) used by the socket server\n"
    "socket.send.buffer.bytes=102400\n"
    "\n"
    "# The receive buffer (SO_RCVBUF) used by the socket server\n"
    "socket.receive.buffer.bytes=102400\n"
    "\n"
    "# The maximum size of a request that the socket server will accept\n"
    "socket.request.max.bytes=104857600\n"
    "\n"
    "############################# Log Basics #############################\n"
    "\n"
    "# A comma separated list of directories under which to store log files\n"
    "log.dirs=/tmp/kafka-logs\n"
    "\n"
    "# The default number of log partitions per topic.\n"
    "num.partitions=1\n"
    "\n"
    "# The number of threads per data directory to be used for log recovery at startup\n"
    "num.recovery.threads.per.data.dir=1\n"
    "\n"
    "############################# Internal Topic Settings  #############################\n"
    "offsets.topic.replication.factor=1\n"
    "transaction.state.log.replication.factor=1\n"
    "transaction.state.log.min.isr=1\n"
    "\n"
    "############################# Log Flush Policy #############################\n"
    "\n"
    "# The number of messages to accept before forcing a flush of data to disk\n"
    "#log.flush.interval.messages=10000\n"
    "\n"
    "# The maximum amount of time a message can sit in a log before we force a flush\n"
    "#log.flush.interval.ms=1000\n"
    "\n"
    "############################# Log Retention Policy #############################\n"
    "\n"
    "# The minimum age of a log file to be eligible for deletion due to age\n"
    "log.retention.hours=168\n"
    "\n"
    "# A size-based retention policy for logs.\n"
    "#log.retention.bytes=1073741824\n"
    "\n"
    "# The maximum size of a log segment file.\n"
    "#log.segment.bytes=1073741824\n"
    "\n"
    "# The interval at which log segments are checked to see if they can be deleted\n"
    "log.retention.check.interval.ms=300000\n"
    "\n"
    "############################# Zookeeper #############################\n"
    "\n"
    "# Zookeeper connection string (see zookeeper docs for details).\n"
    "zookeeper.connect=localhost:2181\n"
    "\n"
    "# Timeout in ms for connecting to zookeeper\n"
    "zookeeper.connection.timeout.ms=18000\n"
    "\n"
    "############################# Group Coordinator Settings #############################\n"
    "\n"
    "# The following configuration specifies the time, in milliseconds, that the "
    "GroupCoordinator will delay the initial consumer rebalance.\n"
    "group.initial.rebalance.delay.ms=0\n";

// The same file uncommented where the distribution leaves a line commented out.
std::string uncommented(std::string text) {
  for (const char* line :
       {"#listeners=", "#advertised.listeners=", "#listener.security.protocol.map=",
        "#log.flush.interval.messages=", "#log.flush.interval.ms=", "#log.retention.bytes=",
        "#log.segment.bytes="}) {
    const size_t at = text.find(line);
    EXPECT_NE(at, std::string::npos) << line;
    if (at != std::string::npos) text.erase(at, 1);
  }
  return text;
}

// --- version profiles ------------------------------------------------------------

TEST(KafkaConfigVersion, NamesAndParsing) {
  EXPECT_STREQ(to_string(VersionProfile::v2_2), "2.2");
  EXPECT_STREQ(to_string(VersionProfile::v2_3), "2.3");
  EXPECT_STREQ(to_string(VersionProfile::v2_8), "2.8");
  EXPECT_STREQ(to_string(VersionProfile::v3_1), "3.1");
  EXPECT_STREQ(to_string(VersionProfile::v3_9), "3.9");
  EXPECT_EQ(parse_version_profile("2.2", "s.json", "$.kafka.version"), VersionProfile::v2_2);
  EXPECT_EQ(parse_version_profile("2.3", "s.json", "$.kafka.version"), VersionProfile::v2_3);
  EXPECT_EQ(parse_version_profile("2.3.0", "s.json", "$.kafka.version"), VersionProfile::v2_3);
  EXPECT_EQ(parse_version_profile("2.8", "s.json", "$.kafka.version"), VersionProfile::v2_8);
  EXPECT_EQ(parse_version_profile("3.1", "s.json", "$.kafka.version"), VersionProfile::v3_1);
  EXPECT_EQ(parse_version_profile("3.1.0", "s.json", "$.kafka.version"), VersionProfile::v3_1);
  EXPECT_EQ(parse_version_profile("3.9", "s.json", "$.kafka.version"), VersionProfile::v3_9);
  EXPECT_EQ(parse_version_profile("2.2.1", "s.json", "$.kafka.version"), VersionProfile::v2_2);
  EXPECT_EQ(parse_version_profile("2.8.2", "s.json", "$.kafka.version"), VersionProfile::v2_8);
  EXPECT_EQ(parse_version_profile("3.9.0", "s.json", "$.kafka.version"), VersionProfile::v3_9);
}

TEST(KafkaConfigVersion, RejectsOtherReleasesAndMalformedVersions) {
  for (const char* bad : {"", "3", "3.0", "3.2", "3.8", "3.10", "2.20", "2.4", "22", "2.2.", ".2.2", "2.2.1.1",
                          "3.9.0-rc3", "v3.9", "3.9 ", "2.x", "4.0"}) {
    try {
      parse_version_profile(bad, "scenario.json", "$.kafka.version");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.source(), "scenario.json");
      EXPECT_EQ(e.key(), "$.kafka.version");
      EXPECT_EQ(e.message(), std::string("expected one of 2.2, 2.3, 2.8, 3.1, 3.9, got '") + bad + "'");
    }
  }
}

TEST(KafkaConfigVersion, TruncationNames) {
  EXPECT_STREQ(to_string(Truncation::leader_epoch), "leader-epoch");
  EXPECT_STREQ(to_string(Truncation::high_watermark), "high-watermark");
}

// --- defaults --------------------------------------------------------------------

TEST(KafkaConfigDefaults, KIP537ChangedTheTimeoutsIn25) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_3}) {
    const BrokerConfig c = default_broker_config(v);
    EXPECT_EQ(c.version, v);
    EXPECT_EQ(c.zookeeper_session_timeout_ms, 6000) << to_string(v);
    EXPECT_EQ(c.replica_lag_time_max_ms, 10000) << to_string(v);
  }
  for (VersionProfile v : {VersionProfile::v2_8, VersionProfile::v3_9}) {
    const BrokerConfig c = default_broker_config(v);
    EXPECT_EQ(c.version, v);
    EXPECT_EQ(c.zookeeper_session_timeout_ms, 18000) << to_string(v);
    EXPECT_EQ(c.replica_lag_time_max_ms, 30000) << to_string(v);
  }
}

TEST(KafkaConfigDefaults, KIP345RaisedTheGroupMaxSessionTimeoutIn23) {
  EXPECT_EQ(default_broker_config(VersionProfile::v2_2).group_max_session_timeout_ms, 300000);
  EXPECT_EQ(default_broker_config(VersionProfile::v2_3).group_max_session_timeout_ms, 1800000);
  EXPECT_EQ(default_broker_config(VersionProfile::v2_8).group_max_session_timeout_ms, 1800000);
  EXPECT_EQ(default_broker_config(VersionProfile::v3_9).group_max_session_timeout_ms, 1800000);
}

// 1000000 + Records.LOG_OVERHEAD in 2.2 to 2.4; 1 MiB + 12 from 2.5.
TEST(KafkaConfigDefaults, MessageMaxBytesRoseIn25) {
  EXPECT_EQ(default_broker_config(VersionProfile::v2_2).log.max_message_bytes, 1000012);
  EXPECT_EQ(default_broker_config(VersionProfile::v2_8).log.max_message_bytes, 1048588);
  EXPECT_EQ(default_broker_config(VersionProfile::v3_9).log.max_message_bytes, 1048588);
}

// KAFKA-15583 (3.7) and Replica.resetReplicaState (3.3): the 3.9 profile
// only (test_broker.cc checks that a broker's partitions follow them).
TEST(KafkaConfigDefaults, Kafka3xReplicationRulesBelongToThe39ProfileOnly) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_8}) {
    EXPECT_FALSE(default_broker_config(v).replication_rules.min_isr_holds_high_watermark) << to_string(v);
    EXPECT_FALSE(default_broker_config(v).replication_rules.new_epoch_forgets_out_of_sync_fetch) << to_string(v);
  }
  EXPECT_TRUE(default_broker_config(VersionProfile::v3_9).replication_rules.min_isr_holds_high_watermark);
  EXPECT_TRUE(default_broker_config(VersionProfile::v3_9).replication_rules.new_epoch_forgets_out_of_sync_fetch);
}

// KAFKA-9885 (2.6): group.max.size admission by the group's state.
TEST(KafkaConfigDefaults, GroupAdmissionByStateFrom26) {
  EXPECT_FALSE(default_broker_config(VersionProfile::v2_2).group_rules.join_admission_by_state);
  EXPECT_TRUE(default_broker_config(VersionProfile::v2_8).group_rules.join_admission_by_state);
  EXPECT_TRUE(default_broker_config(VersionProfile::v3_9).group_rules.join_admission_by_state);
}

TEST(KafkaConfigDefaults, The22IsrWriteHoldsThePartitionLockOnlyIn22) {
  EXPECT_TRUE(default_broker_config(VersionProfile::v2_2).replication_rules.isr_write_holds_partition_lock);
  EXPECT_FALSE(default_broker_config(VersionProfile::v2_8).replication_rules.isr_write_holds_partition_lock);
  EXPECT_FALSE(default_broker_config(VersionProfile::v3_9).replication_rules.isr_write_holds_partition_lock);
  EXPECT_EQ(parse(kMinimal).num_io_threads, 8);
  EXPECT_EQ(parse(kMinimal + "num.io.threads=3\n").num_io_threads, 3);
  EXPECT_EQ(error_of(kMinimal + "num.io.threads=0\n").key(), "num.io.threads");
}

// --- inter.broker.protocol.version ------------------------------------------------------------

std::string ibp_name(std::string_view s, VersionProfile release = VersionProfile::v3_9) {
  const auto v = find_inter_broker_protocol(s, release);
  return v ? std::string(v->name()) : "none";
}

// Kafka's reading (ApiVersion.apply, MetadataVersion.fromVersionString): the
// first two parts (three for 0.x), full or short names, a short name the
// last of its release.
TEST(KafkaInterBrokerProtocol, ReadAsKafkaReadsIt) {
  EXPECT_EQ(ibp_name("2.7"), "2.7-IV2");
  EXPECT_EQ(ibp_name("2.7.1"), "2.7-IV2");
  EXPECT_EQ(ibp_name("2.7-IV0"), "2.7-IV0");
  EXPECT_EQ(ibp_name("2.2"), "2.2-IV1");
  EXPECT_EQ(ibp_name("3.9"), "3.9-IV0");
  // 4.0's versions are not for production in 3.9: full names only
  // (MetadataVersion's IBP_VERSIONS).
  EXPECT_EQ(ibp_name("4.0"), "none");
  EXPECT_EQ(ibp_name("4.0-IV1"), "4.0-IV1");
  EXPECT_EQ(ibp_name("2.8"), "2.8-IV1");
  EXPECT_EQ(ibp_name("2.8", VersionProfile::v2_3), "none") << "a release knows its own and older";
  EXPECT_EQ(ibp_name("2.3", VersionProfile::v2_3), "2.3-IV1");
  EXPECT_EQ(ibp_name("0.10.0"), "0.10.0-IV1");
  EXPECT_EQ(ibp_name("0.10.0-IV0"), "0.10.0-IV0");
  EXPECT_EQ(ibp_name("0.8.2.1"), "0.8.2");
  EXPECT_EQ(ibp_name("1.1"), "1.1-IV0");
  for (const char* bad : {"", "2", "2.9", "2.7-IV3", "2.7-iv2", "0.10", "x.y", "3.10", "10.0"}) {
    EXPECT_EQ(ibp_name(bad), "none") << bad;
  }
  EXPECT_LT(inter_broker_protocol("2.7-IV2"), inter_broker_protocol("2.8-IV0"));
  EXPECT_LT(inter_broker_protocol("0.11.0-IV2"), inter_broker_protocol("1.0-IV0"));
}

TEST(KafkaInterBrokerProtocol, EachReleaseSpeaksItsNewestProductionVersion) {
  const std::pair<VersionProfile, const char*> expected[] = {
      {VersionProfile::v2_2, "2.2-IV1"}, {VersionProfile::v2_3, "2.3-IV1"},
      {VersionProfile::v2_8, "2.8-IV1"}, {VersionProfile::v3_1, "3.1-IV0"},
      {VersionProfile::v3_9, "3.9-IV0"}};
  for (const auto& [v, name] : expected) {
    EXPECT_EQ(default_broker_config(v).inter_broker_protocol.name(), name) << to_string(v);
    EXPECT_EQ(parse(kMinimal, v).inter_broker_protocol.name(), name) << to_string(v);
  }
  EXPECT_EQ(newest_inter_broker_protocol(VersionProfile::v3_9).name(), "4.0-IV1");
  EXPECT_EQ(parse(kMinimal + "inter.broker.protocol.version=4.0-IV1\n").inter_broker_protocol.name(), "4.0-IV1");
  EXPECT_TRUE(contains(error_of(kMinimal + "inter.broker.protocol.version=4.0\n").message(),
                       "'4.0' is not a version Kafka 3.9 knows"));
  EXPECT_EQ(parse(kMinimal + "inter.broker.protocol.version=2.7\n", VersionProfile::v2_8)
                .inter_broker_protocol.name(),
            "2.7-IV2");
}

TEST(KafkaInterBrokerProtocol, AVersionTheReleaseDoesNotKnowOrTheModelLacksIsAnError) {
  const ConfigError newer = error_of(kMinimal + "inter.broker.protocol.version=3.0\n", VersionProfile::v2_8);
  EXPECT_EQ(newer.key(), "inter.broker.protocol.version");
  EXPECT_TRUE(contains(newer.message(), "'3.0' is not a version Kafka 2.8 knows")) << newer.what();
  EXPECT_TRUE(contains(newer.message(), "to 2.8-IV1")) << newer.what();
  const ConfigError junk = error_of(kMinimal + "inter.broker.protocol.version=latest\n");
  EXPECT_TRUE(contains(junk.message(), "'latest' is not a version Kafka 3.9 knows")) << junk.what();
  for (const char* old : {"2.1-IV1", "2.1-IV0", "2.0", "0.11.0", "0.10.2"}) {
    const ConfigError e = error_of(kMinimal + "inter.broker.protocol.version=" + old + "\n", VersionProfile::v2_2);
    EXPECT_TRUE(contains(e.message(), "is not modelled: below 2.1-IV2")) << e.what();
  }
  EXPECT_EQ(parse(kMinimal + "inter.broker.protocol.version=2.1\n", VersionProfile::v2_2)
                .inter_broker_protocol.name(),
            "2.1-IV2");
}

// What a protocol switches: AlterIsr (2.7-IV2) and with it who writes the
// ISR and under which lock, AllocateProducerIds (3.0-IV0), AlterPartition by
// topic id (2.8-IV0). The release's own mechanisms stay.
TEST(KafkaInterBrokerProtocol, TheProtocolSwitchesWhoWritesTheIsrAndWhoHandsOutProducerIds) {
  const auto with = [](VersionProfile v, const char* ibp) {
    return parse(kMinimal + "inter.broker.protocol.version=" + ibp + "\n", v);
  };
  const BrokerConfig v28_zk = with(VersionProfile::v2_8, "2.7-IV1");
  EXPECT_FALSE(v28_zk.replication_rules.isr_changes_through_controller);
  EXPECT_TRUE(v28_zk.replication_rules.isr_write_holds_partition_lock) << "2.8.2 writes under the lock";
  EXPECT_TRUE(v28_zk.replication_rules.zk_isr_failure_stays_pending);
  EXPECT_TRUE(v28_zk.replication_rules.acks_count_maximal_isr);
  EXPECT_FALSE(v28_zk.replication_rules.alter_isr_by_topic_id);
  EXPECT_EQ(v28_zk.group_rules, default_broker_config(VersionProfile::v2_8).group_rules);
  const BrokerConfig v28 = with(VersionProfile::v2_8, "2.7-IV2");
  EXPECT_TRUE(v28.replication_rules.isr_changes_through_controller);
  EXPECT_FALSE(v28.replication_rules.isr_write_holds_partition_lock);

  const BrokerConfig v39_zk = with(VersionProfile::v3_9, "2.2");
  EXPECT_FALSE(v39_zk.replication_rules.isr_changes_through_controller);
  EXPECT_FALSE(v39_zk.replication_rules.isr_write_holds_partition_lock) << "3.1 on: after the lock";
  EXPECT_TRUE(v39_zk.startup_rules.producer_id_block_at_startup);
  EXPECT_TRUE(v39_zk.replication_rules.alter_partition_checks) << "a release's mechanism";
  EXPECT_TRUE(with(VersionProfile::v3_1, "2.8").startup_rules.producer_id_block_at_startup);
  EXPECT_FALSE(with(VersionProfile::v3_1, "3.0-IV0").startup_rules.producer_id_block_at_startup);
  EXPECT_FALSE(with(VersionProfile::v3_9, "2.8-IV0").replication_rules.isr_write_holds_partition_lock);
  EXPECT_TRUE(with(VersionProfile::v3_9, "2.8-IV0").replication_rules.alter_isr_by_topic_id);
  EXPECT_FALSE(with(VersionProfile::v3_9, "2.7-IV2").replication_rules.alter_isr_by_topic_id);

  // 2.2 and 2.3 write ZooKeeper at any protocol, and never AllocateProducerIds.
  const BrokerConfig v22 = with(VersionProfile::v2_2, "2.1");
  EXPECT_EQ(v22.replication_rules, default_broker_config(VersionProfile::v2_2).replication_rules);
  EXPECT_EQ(v22.startup_rules, default_broker_config(VersionProfile::v2_2).startup_rules);
}

// log.message.format.version: a version the release knows, record format v2
// where it is used; from protocol 3.0-IV1 it is ignored (KIP-724), but must
// still be a version.
TEST(KafkaInterBrokerProtocol, TheMessageFormatMustBeAVersionWithRecordFormatTwo) {
  EXPECT_NO_THROW(parse(kMinimal + "log.message.format.version=0.11.0\n", VersionProfile::v2_2));
  EXPECT_NO_THROW(parse(kMinimal + "log.message.format.version=2.2-IV1\n", VersionProfile::v2_2));
  const ConfigError v1 = error_of(kMinimal + "log.message.format.version=0.10.2\n", VersionProfile::v2_2);
  EXPECT_EQ(v1.key(), "log.message.format.version");
  EXPECT_TRUE(contains(v1.message(), "record format v1, which is not modelled")) << v1.what();
  const ConfigError v0 = error_of(kMinimal + "log.message.format.version=0.9.0\n", VersionProfile::v2_8);
  EXPECT_TRUE(contains(v0.message(), "record format v0")) << v0.what();
  const ConfigError newer = error_of(kMinimal + "log.message.format.version=2.3\n", VersionProfile::v2_2);
  EXPECT_TRUE(contains(newer.message(), "'2.3' is not a version Kafka 2.2 knows")) << newer.what();
  // Ignored on 3.x at protocol 3.0-IV1 and later, used below it.
  EXPECT_NO_THROW(parse(kMinimal + "log.message.format.version=0.10.2\n", VersionProfile::v3_9));
  EXPECT_NO_THROW(parse(kMinimal + "log.message.format.version=0.10.2\n", VersionProfile::v3_1));
  EXPECT_TRUE(contains(error_of(kMinimal + "log.message.format.version=0.10.2\n"
                                           "inter.broker.protocol.version=3.0-IV0\n")
                           .message(),
                       "record format v1"));
  EXPECT_TRUE(contains(error_of(kMinimal + "log.message.format.version=banana\n").message(),
                       "'banana' is not a version Kafka 3.9 knows"));
  // A topic's message.format.version, as a broker reads it: record format
  // v2 where it is used; a 3.x broker on protocol 3.0-IV1 ignores it.
  EXPECT_NO_THROW(topic("message.format.version=2.8\n"));
  EXPECT_EQ(topic_error_of("message.format.version=0.10.0\n").key(), "message.format.version");
  EXPECT_TRUE(contains(topic_error_of("message.format.version=0.10.0\n").message(), "record format v1"));
  EXPECT_TRUE(contains(topic_error_of("message.format.version=5.0\n").message(), "not a version Kafka 3.9 knows"));
  const auto by = [](const BrokerConfig& b, const char* value) {
    return apply_topic_overrides(LogConfig{}, parse_properties(std::string("message.format.version=") + value + "\n", "t"),
                                 false, message_format_reading(b));
  };
  EXPECT_NO_THROW(by(parse(kMinimal), "0.10.0")) << "ignored";
  EXPECT_THROW(by(parse(kMinimal + "inter.broker.protocol.version=2.8\n"), "0.10.0"), ConfigError) << "used";
  EXPECT_THROW(by(parse(kMinimal, VersionProfile::v2_8), "0.10.0"), ConfigError) << "used";
  EXPECT_THROW(by(parse(kMinimal), "banana"), ConfigError) << "ignored, but still read";
  EXPECT_THROW(by(parse(kMinimal, VersionProfile::v2_2), "2.8"), ConfigError) << "unknown to 2.2";
}

TEST(KafkaConfigDefaults, KAFKA10706TrimsTheEpochCacheFrom28) {
  EXPECT_FALSE(default_broker_config(VersionProfile::v2_2).replication_rules.no_op_truncation_trims_epochs);
  EXPECT_FALSE(default_broker_config(VersionProfile::v2_3).replication_rules.no_op_truncation_trims_epochs);
  EXPECT_TRUE(default_broker_config(VersionProfile::v2_8).replication_rules.no_op_truncation_trims_epochs);
  EXPECT_TRUE(default_broker_config(VersionProfile::v3_9).replication_rules.no_op_truncation_trims_epochs);
}

// 2.3.0 against 2.2.2: the group.max.session.timeout.ms default (above), the
// failover's OfflineReplica step (KAFKA-3143) and the Heartbeat's member
// checks; every other rule as in 2.2, every other one of 2.8's later.
TEST(KafkaConfigDefaults, TwoThreeIsTwoTwoWithItsThreeChanges) {
  const BrokerConfig v22 = default_broker_config(VersionProfile::v2_2);
  const BrokerConfig v23 = default_broker_config(VersionProfile::v2_3);
  const BrokerConfig v28 = default_broker_config(VersionProfile::v2_8);
  EXPECT_FALSE(v22.replication_rules.failover_takes_offline_replicas_out_of_isr);
  EXPECT_TRUE(v23.replication_rules.failover_takes_offline_replicas_out_of_isr);
  EXPECT_TRUE(v28.replication_rules.failover_takes_offline_replicas_out_of_isr);
  EXPECT_FALSE(v22.group_rules.heartbeat_checks_member_first);
  EXPECT_TRUE(v23.group_rules.heartbeat_checks_member_first);
  EXPECT_FALSE(v23.group_rules.commit_checks_member_first);
  EXPECT_TRUE(v28.group_rules.commit_checks_member_first);

  ReplicationRules replication = v22.replication_rules;
  replication.failover_takes_offline_replicas_out_of_isr = true;
  EXPECT_EQ(v23.replication_rules, replication);
  GroupRules groups = v22.group_rules;
  groups.heartbeat_checks_member_first = true;
  EXPECT_EQ(v23.group_rules, groups);
  EXPECT_EQ(v23.startup_rules, v22.startup_rules);
  EXPECT_EQ(v23.log, v22.log);
  EXPECT_EQ(v23.zookeeper_session_timeout_ms, v22.zookeeper_session_timeout_ms);
}

// 3.1.0 against 2.8.2 and 3.9, rule by rule (AlterIsr: DefaultAlterIsrManager,
// Partition and KafkaController.processAlterIsr in 3.1.0): 2.8 with the
// changes of 3.0 and 3.1, none of 3.2's to 3.8's.
TEST(KafkaConfigDefaults, ThreeOneIsTwoEightWithTheChangesOf30And31) {
  const BrokerConfig v28 = default_broker_config(VersionProfile::v2_8);
  const BrokerConfig v31 = default_broker_config(VersionProfile::v3_1);
  const BrokerConfig v39 = default_broker_config(VersionProfile::v3_9);
  ReplicationRules replication = v28.replication_rules;
  replication.failed_fetch_sleeps = false;                       // KAFKA-8529 (3.1)
  replication.alter_isr_keeps_sent_change = true;                // KAFKA-12686 (3.0)
  replication.isr_commit_moves_high_watermark = true;            // KAFKA-13091 (3.1)
  replication.alter_isr_retry = AlterIsrRetry::falls_back;       // until KAFKA-14010 (3.2.1)
  EXPECT_EQ(v31.replication_rules, replication);
  GroupRules groups = v28.group_rules;
  groups.turned_away_drops_pending = true;  // 3.0
  EXPECT_EQ(v31.group_rules, groups);
  StartupRules startup = v28.startup_rules;
  startup.producer_id_block_at_startup = false;         // KIP-730 (3.0)
  startup.load_cuts_epochs_at_log_start = false;        // LogLoader (3.0)
  startup.controlled_shutdown_reads_zookeeper = false;  // KAFKA-9189 (3.0)
  EXPECT_EQ(v31.startup_rules, startup);
  EXPECT_FALSE(v31.startup_rules.listen_at_end_of_startup) << "3.5";
  EXPECT_EQ(v31.log, v28.log);
  EXPECT_EQ(v31.zookeeper_session_timeout_ms, 18000);
  EXPECT_EQ(v31.replica_lag_time_max_ms, 30000);
  EXPECT_EQ(v31.group_max_session_timeout_ms, 1800000);

  // What 3.9 has on top: 3.3's ISR checks and HW counting, 3.2.1's retry,
  // 3.4.1's diverging epoch, 3.5's late listener, 3.6's and 3.7's high
  // watermark, 3.8's fetch.
  EXPECT_EQ(v28.replication_rules.alter_isr_retry, AlterIsrRetry::stays_pending);
  EXPECT_EQ(v39.replication_rules.alter_isr_retry, AlterIsrRetry::sent_again);
  replication.alter_isr_retry = AlterIsrRetry::sent_again;
  replication.alter_partition_checks = true;
  replication.isr_join_needs_live_broker = true;
  replication.new_epoch_forgets_out_of_sync_fetch = true;
  replication.high_watermark_waits_for_eligible_only = true;
  replication.min_isr_holds_high_watermark = true;
  replication.fetch_above_end_completes = true;
  replication.diverging_epoch_skips_high_watermark = true;  // KAFKA-14704
  EXPECT_EQ(v39.replication_rules, replication);
  groups.rejoin_updates_timeouts = true;  // KAFKA-14009 (3.4)
  EXPECT_EQ(v39.group_rules, groups);
  startup.listen_at_end_of_startup = true;
  startup.producer_id_waits_for_block = false;  // KAFKA-14694 (3.6)
  startup.controller_request_timeout_capped = true;  // 3.3.2 / 3.4
  EXPECT_EQ(v39.startup_rules, startup);
}

TEST(KafkaConfigDefaults, SharedByAllProfiles) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    const BrokerConfig c = default_broker_config(v);
    EXPECT_EQ(c.broker_id, -1);
    const std::vector<Listener> plaintext = {Listener{"PLAINTEXT", "", 9092}};
    EXPECT_EQ(c.listeners, plaintext);
    EXPECT_EQ(c.advertised_listeners, plaintext);
    EXPECT_EQ(c.inter_broker_listener, "PLAINTEXT");
    EXPECT_EQ(c.log_dirs, std::vector<std::string>{"/tmp/kafka-logs"});
    EXPECT_EQ(c.zookeeper_connection_timeout_ms, -1);
    EXPECT_EQ(c.default_replication_factor, 1);
    EXPECT_EQ(c.num_partitions, 1);
    EXPECT_EQ(c.replica_fetch_wait_max_ms, 500);
    EXPECT_EQ(c.replica_fetch_min_bytes, 1);
    EXPECT_EQ(c.replica_fetch_max_bytes, 1048576);
    EXPECT_EQ(c.replica_fetch_backoff_ms, 1000);
    EXPECT_EQ(c.replica_socket_timeout_ms, 30000);
    EXPECT_EQ(c.replica_high_watermark_checkpoint_interval_ms, 5000);
    EXPECT_TRUE(c.controlled_shutdown_enable);
    EXPECT_EQ(c.controlled_shutdown_max_retries, 3);
    EXPECT_EQ(c.controlled_shutdown_retry_backoff_ms, 5000);
    EXPECT_TRUE(c.auto_leader_rebalance_enable);
    EXPECT_EQ(c.leader_imbalance_check_interval_seconds, 300);
    EXPECT_EQ(c.leader_imbalance_per_broker_percentage, 10);
    EXPECT_TRUE(c.auto_create_topics_enable);
    EXPECT_EQ(c.offsets_topic_num_partitions, 50);
    EXPECT_EQ(c.offsets_topic_replication_factor, 3);
    EXPECT_EQ(c.offsets_retention_minutes, 10080);
    EXPECT_EQ(c.log_retention_check_interval_ms, 300000);
    EXPECT_EQ(c.log_flush_scheduler_interval_ms, INT64_MAX);
    EXPECT_EQ(c.request_timeout_ms, 30000);
    EXPECT_EQ(c.controller_socket_timeout_ms, 30000);
    EXPECT_EQ(c.group_initial_rebalance_delay_ms, 3000);
    EXPECT_EQ(c.group_min_session_timeout_ms, 6000);
    EXPECT_EQ(c.transaction_state_log_replication_factor, 3);
    EXPECT_EQ(c.truncation, Truncation::leader_epoch);
    LogConfig log;
    log.max_message_bytes = c.log.max_message_bytes;  // by profile: MessageMaxBytesIn25
    EXPECT_EQ(c.log, log);
    EXPECT_EQ(c.log.segment_bytes, 1073741824);
    EXPECT_EQ(c.log.segment_ms, 168LL * 3600 * 1000);
    EXPECT_EQ(c.log.retention_ms, 168LL * 3600 * 1000);
    EXPECT_EQ(c.log.retention_bytes, -1);
    EXPECT_EQ(c.log.min_insync_replicas, 1);
    EXPECT_FALSE(c.log.unclean_leader_election);
    EXPECT_EQ(c.log.flush_interval_messages, INT64_MAX);
    EXPECT_EQ(c.log.flush_interval_ms, INT64_MAX);
  }
}

TEST(KafkaConfigDefaults, MinimalFileGivesTheProfileDefaults) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    const BrokerConfig c = parse(kMinimal, v);
    BrokerConfig expected = default_broker_config(v);
    EXPECT_EQ(c.broker_id, 0);
    EXPECT_EQ(c.zookeeper_connect, "localhost:2181");
    EXPECT_EQ(c.zookeeper_session_timeout_ms, expected.zookeeper_session_timeout_ms);
    EXPECT_EQ(c.replica_lag_time_max_ms, expected.replica_lag_time_max_ms);
    EXPECT_EQ(c.group_max_session_timeout_ms, expected.group_max_session_timeout_ms);
    EXPECT_EQ(c.listeners, expected.listeners);
    EXPECT_EQ(c.advertised_listeners, expected.advertised_listeners);
    EXPECT_EQ(c.log, expected.log);
  }
}

TEST(KafkaConfigDefaults, ExplicitValuesOverrideTheProfile) {
  const BrokerConfig c = parse(kMinimal +
                                   "zookeeper.session.timeout.ms=18000\n"
                                   "replica.lag.time.max.ms=30000\n",
                               VersionProfile::v2_2);
  EXPECT_EQ(c.zookeeper_session_timeout_ms, 18000);
  EXPECT_EQ(c.replica_lag_time_max_ms, 30000);
}

// --- whole files -------------------------------------------------------------------

TEST(KafkaConfig, DistributionServerPropertiesParsesAsShipped) {
  for (VersionProfile v : kVersionProfiles) {
    SCOPED_TRACE(to_string(v));
    const BrokerConfig c = parse(kDistributionServerProperties, v);
    EXPECT_EQ(c.broker_id, 0);
    EXPECT_EQ(c.log_dirs, std::vector<std::string>{"/tmp/kafka-logs"});
    EXPECT_EQ(c.num_partitions, 1);
    EXPECT_EQ(c.offsets_topic_replication_factor, 1);
    EXPECT_EQ(c.transaction_state_log_replication_factor, 1);
    EXPECT_EQ(c.log.retention_ms, 168LL * 3600 * 1000);
    EXPECT_EQ(c.log_retention_check_interval_ms, 300000);
    EXPECT_EQ(c.zookeeper_connect, "localhost:2181");
    EXPECT_EQ(c.zookeeper_connection_timeout_ms, 18000);
    EXPECT_EQ(c.group_initial_rebalance_delay_ms, 0);
    const std::vector<Listener> plaintext = {Listener{"PLAINTEXT", "", 9092}};
    EXPECT_EQ(c.listeners, plaintext);
    EXPECT_EQ(c.advertised_listeners, plaintext);
    EXPECT_EQ(c.advertised_endpoint("10.0.0.7"), (Endpoint{"PLAINTEXT", "10.0.0.7", 9092}));
  }
}

TEST(KafkaConfig, DistributionServerPropertiesWithTheCommentedLinesEnabled) {
  const BrokerConfig c = parse(uncommented(kDistributionServerProperties));
  EXPECT_EQ(c.listeners, (std::vector<Listener>{{"PLAINTEXT", "", 9092}}));
  EXPECT_EQ(c.advertised_listeners, (std::vector<Listener>{{"PLAINTEXT", "your.host.name", 9092}}));
  EXPECT_EQ(c.advertised_endpoint("10.0.0.7"), (Endpoint{"PLAINTEXT", "your.host.name", 9092}));
  EXPECT_EQ(c.log.flush_interval_messages, 10000);
  EXPECT_EQ(c.log.flush_interval_ms, 1000);
  EXPECT_EQ(c.log.retention_bytes, 1073741824);
  EXPECT_EQ(c.log.segment_bytes, 1073741824);
}

TEST(KafkaConfig, Kafka22DistributionFile) {
  // 2.2 shipped log.segment.bytes uncommented and a 6 s connection timeout.
  const BrokerConfig c = parse(
      "broker.id=0\nnum.network.threads=3\nnum.io.threads=8\n"
      "socket.send.buffer.bytes=102400\nsocket.receive.buffer.bytes=102400\n"
      "socket.request.max.bytes=104857600\nlog.dirs=/tmp/kafka-logs\nnum.partitions=1\n"
      "num.recovery.threads.per.data.dir=1\noffsets.topic.replication.factor=1\n"
      "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
      "log.retention.hours=168\nlog.segment.bytes=1073741824\n"
      "log.retention.check.interval.ms=300000\nzookeeper.connect=localhost:2181\n"
      "zookeeper.connection.timeout.ms=6000\ngroup.initial.rebalance.delay.ms=0\n",
      VersionProfile::v2_2);
  EXPECT_EQ(c.zookeeper_session_timeout_ms, 6000);
  EXPECT_EQ(c.zookeeper_connection_timeout_ms, 6000);
  EXPECT_EQ(c.replica_lag_time_max_ms, 10000);
}

TEST(KafkaConfig, EveryModelledKeyIsRead) {
  const BrokerConfig c = parse(
      "broker.id=7\n"
      "listeners=PLAINTEXT://0.0.0.0:9092\n"
      "advertised.listeners=PLAINTEXT://10.0.0.7:9092\n"
      "log.dirs=/data/a, /data/b\n"
      "zookeeper.connect=zk1:2181,zk2:2181,zk3:2181/kafka\n"
      "zookeeper.session.timeout.ms=9000\n"
      "zookeeper.connection.timeout.ms=12000\n"
      "default.replication.factor=3\n"
      "num.partitions=6\n"
      "min.insync.replicas=2\n"
      "unclean.leader.election.enable=TRUE\n"
      "replica.lag.time.max.ms=20000\n"
      "replica.fetch.wait.max.ms=250\n"
      "replica.fetch.min.bytes=10\n"
      "replica.fetch.max.bytes=2097152\n"
      "replica.fetch.backoff.ms=200\n"
      "replica.socket.timeout.ms=15000\n"
      "replica.high.watermark.checkpoint.interval.ms=2500\n"
      "controlled.shutdown.enable=false\n"
      "controlled.shutdown.max.retries=5\n"
      "controlled.shutdown.retry.backoff.ms=1000\n"
      "auto.leader.rebalance.enable=false\n"
      "leader.imbalance.check.interval.seconds=60\n"
      "leader.imbalance.per.broker.percentage=0\n"
      "auto.create.topics.enable=false\n"
      "offsets.topic.num.partitions=10\n"
      "offsets.topic.replication.factor=2\n"
      "offsets.retention.minutes=1440\n"
      "log.segment.bytes=1048576\n"
      "log.roll.hours=1\n"
      "log.retention.minutes=30\n"
      "log.retention.bytes=5000000\n"
      "log.retention.check.interval.ms=1000\n"
      "log.flush.interval.messages=1\n"
      "log.flush.scheduler.interval.ms=100\n"
      "request.timeout.ms=40000\n"
      "controller.socket.timeout.ms=20000\n"
      "group.initial.rebalance.delay.ms=100\n"
      "group.min.session.timeout.ms=1000\n"
      "group.max.session.timeout.ms=60000\n"
      "transaction.state.log.replication.factor=2\n"
      "kafkasim.truncation=high-watermark\n");
  EXPECT_EQ(c.broker_id, 7);
  EXPECT_EQ(c.listeners, (std::vector<Listener>{{"PLAINTEXT", "0.0.0.0", 9092}}));
  EXPECT_EQ(c.advertised_listeners, (std::vector<Listener>{{"PLAINTEXT", "10.0.0.7", 9092}}));
  EXPECT_EQ(c.log_dirs, (std::vector<std::string>{"/data/a", "/data/b"}));
  EXPECT_EQ(c.zookeeper_connect, "zk1:2181,zk2:2181,zk3:2181/kafka");
  EXPECT_EQ(c.zookeeper_session_timeout_ms, 9000);
  EXPECT_EQ(c.zookeeper_connection_timeout_ms, 12000);
  EXPECT_EQ(c.default_replication_factor, 3);
  EXPECT_EQ(c.num_partitions, 6);
  EXPECT_EQ(c.log.min_insync_replicas, 2);
  EXPECT_TRUE(c.log.unclean_leader_election);
  EXPECT_EQ(c.replica_lag_time_max_ms, 20000);
  EXPECT_EQ(c.replica_fetch_wait_max_ms, 250);
  EXPECT_EQ(c.replica_fetch_min_bytes, 10);
  EXPECT_EQ(c.replica_fetch_max_bytes, 2097152);
  EXPECT_EQ(c.replica_fetch_backoff_ms, 200);
  EXPECT_EQ(c.replica_socket_timeout_ms, 15000);
  EXPECT_EQ(c.replica_high_watermark_checkpoint_interval_ms, 2500);
  EXPECT_FALSE(c.controlled_shutdown_enable);
  EXPECT_EQ(c.controlled_shutdown_max_retries, 5);
  EXPECT_EQ(c.controlled_shutdown_retry_backoff_ms, 1000);
  EXPECT_FALSE(c.auto_leader_rebalance_enable);
  EXPECT_EQ(c.leader_imbalance_check_interval_seconds, 60);
  EXPECT_EQ(c.leader_imbalance_per_broker_percentage, 0);
  EXPECT_FALSE(c.auto_create_topics_enable);
  EXPECT_EQ(c.offsets_topic_num_partitions, 10);
  EXPECT_EQ(c.offsets_topic_replication_factor, 2);
  EXPECT_EQ(c.offsets_retention_minutes, 1440);
  EXPECT_EQ(c.log.segment_bytes, 1048576);
  EXPECT_EQ(c.log.segment_ms, 3600 * 1000);
  EXPECT_EQ(c.log.retention_ms, 30 * 60 * 1000);
  EXPECT_EQ(c.log.retention_bytes, 5000000);
  EXPECT_EQ(c.log_retention_check_interval_ms, 1000);
  EXPECT_EQ(c.log.flush_interval_messages, 1);
  EXPECT_EQ(c.log_flush_scheduler_interval_ms, 100);
  // log.flush.interval.ms not given: it takes log.flush.scheduler.interval.ms.
  EXPECT_EQ(c.log.flush_interval_ms, 100);
  EXPECT_EQ(c.request_timeout_ms, 40000);
  EXPECT_EQ(c.controller_socket_timeout_ms, 20000);
  EXPECT_EQ(c.group_initial_rebalance_delay_ms, 100);
  EXPECT_EQ(c.group_min_session_timeout_ms, 1000);
  EXPECT_EQ(c.group_max_session_timeout_ms, 60000);
  EXPECT_EQ(c.transaction_state_log_replication_factor, 2);
  EXPECT_EQ(c.truncation, Truncation::high_watermark);
  EXPECT_EQ(c.advertised_endpoint("10.9.9.9"), (Endpoint{"PLAINTEXT", "10.0.0.7", 9092}));
}

TEST(KafkaConfig, InlineConfigNamesItsJsonPath) {
  const model::Properties p = model::from_map(
      {{"broker.id", "1"}, {"zookeeper.connect", "zk:2181"}, {"num.partitions", "many"}},
      "scenario.json:$.brokers[0].config");
  try {
    parse_broker_config(p);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.source(), "scenario.json:$.brokers[0].config");
    EXPECT_EQ(e.key(), "num.partitions");
  }
}

// --- listeners ---------------------------------------------------------------------

TEST(KafkaConfigListeners, SeveralListenersAndAnInterBrokerOne) {
  const BrokerConfig c = parse(kMinimal +
                               "listeners=INTERNAL://:9092,EXTERNAL://0.0.0.0:9093,"
                               "REPLICATION://[::1]:9094\n"
                               "advertised.listeners=INTERNAL://broker1.internal:9092,"
                               "EXTERNAL://kafka.example.com:9093\n"
                               "listener.security.protocol.map=INTERNAL:PLAINTEXT,"
                               "EXTERNAL:PLAINTEXT,REPLICATION:PLAINTEXT\n"
                               "inter.broker.listener.name=INTERNAL\n");
  const std::vector<Listener> listeners = {
      {"INTERNAL", "", 9092}, {"EXTERNAL", "0.0.0.0", 9093}, {"REPLICATION", "::1", 9094}};
  EXPECT_EQ(c.listeners, listeners);
  const std::vector<Listener> advertised = {{"INTERNAL", "broker1.internal", 9092},
                                            {"EXTERNAL", "kafka.example.com", 9093}};
  EXPECT_EQ(c.advertised_listeners, advertised);
  EXPECT_EQ(c.inter_broker_listener, "INTERNAL");
  EXPECT_EQ(c.advertised_endpoint("10.0.0.1"), (Endpoint{"INTERNAL", "broker1.internal", 9092}));
}

TEST(KafkaConfigListeners, AdvertisedListenersDefaultToListeners) {
  const BrokerConfig c = parse(kMinimal + "listeners=PLAINTEXT://broker1:19092\n");
  EXPECT_EQ(c.advertised_listeners, c.listeners);
  EXPECT_EQ(c.advertised_endpoint("10.0.0.1"), (Endpoint{"PLAINTEXT", "broker1", 19092}));
}

TEST(KafkaConfigListeners, AnEmptyHostIsResolvedToTheHostAddress) {
  const BrokerConfig c = parse(kMinimal + "listeners=PLAINTEXT://:9092\n");
  EXPECT_EQ(c.advertised_endpoint("46.183.113.89"), (Endpoint{"PLAINTEXT", "46.183.113.89", 9092}));
  // A hand-built configuration may carry 0.0.0.0; it resolves the same way.
  BrokerConfig built = default_broker_config(VersionProfile::v3_9);
  built.advertised_listeners = {Listener{"PLAINTEXT", "0.0.0.0", 9092}};
  EXPECT_EQ(built.advertised_endpoint("10.1.1.1"), (Endpoint{"PLAINTEXT", "10.1.1.1", 9092}));
}

TEST(KafkaConfigListeners, NamesAreNormalisedToUpperCase) {
  const BrokerConfig c = parse(kMinimal +
                               "listeners=plaintext://:9092,Internal://:9093\n"
                               "listener.security.protocol.map=plaintext:plaintext,"
                               "internal:Plaintext\n"
                               "inter.broker.listener.name=internal\n");
  EXPECT_EQ(c.listeners[0].name, "PLAINTEXT");
  EXPECT_EQ(c.listeners[1].name, "INTERNAL");
  EXPECT_EQ(c.inter_broker_listener, "INTERNAL");
}

TEST(KafkaConfigListeners, WhitespaceAndEmptyItemsInLists) {
  const BrokerConfig c =
      parse(kMinimal +
            "listeners = PLAINTEXT://:9092 , ,INTERNAL://h:9093,\n"
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT, INTERNAL : PLAINTEXT\n");
  EXPECT_EQ(c.listeners.size(), 2u);
  EXPECT_EQ(c.listeners[1], (Listener{"INTERNAL", "h", 9093}));
}

TEST(KafkaConfigListeners, ProtocolMapEntriesForUnusedListenersChangeNothing) {
  // The distribution's own (commented-out) default map.
  EXPECT_NO_THROW(parse(kMinimal +
                        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,"
                        "SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL\n"));
}

TEST(KafkaConfigListeners, SecurityInterBrokerProtocolPlaintext) {
  const BrokerConfig c = parse(kMinimal + "security.inter.broker.protocol=PLAINTEXT\n");
  EXPECT_EQ(c.inter_broker_listener, "PLAINTEXT");
}

TEST(KafkaConfigListeners, HostNameAndPortBeforeKafka30) {
  for (VersionProfile v : {VersionProfile::v2_2, VersionProfile::v2_8}) {
    SCOPED_TRACE(to_string(v));
    const BrokerConfig c = parse(kMinimal + "host.name=10.0.0.5\nport=9093\n", v);
    EXPECT_EQ(c.listeners, (std::vector<Listener>{{"PLAINTEXT", "10.0.0.5", 9093}}));
    EXPECT_EQ(c.advertised_listeners, c.listeners);
    const BrokerConfig adv =
        parse(kMinimal + "port=9093\nadvertised.host.name=public.example\n", v);
    EXPECT_EQ(adv.listeners, (std::vector<Listener>{{"PLAINTEXT", "", 9093}}));
    EXPECT_EQ(adv.advertised_listeners,
              (std::vector<Listener>{{"PLAINTEXT", "public.example", 9093}}));
    const BrokerConfig adv_port = parse(kMinimal + "advertised.port=19092\n", v);
    EXPECT_EQ(adv_port.advertised_endpoint("10.0.0.5"), (Endpoint{"PLAINTEXT", "10.0.0.5", 19092}));
    // listeners wins over host.name/port, as in Kafka.
    const BrokerConfig both = parse(kMinimal + "listeners=PLAINTEXT://:9094\nport=9093\n", v);
    EXPECT_EQ(both.listeners, (std::vector<Listener>{{"PLAINTEXT", "", 9094}}));
  }
}

TEST(KafkaConfigListeners, HostNameAndPortWereRemovedIn30) {
  for (VersionProfile v : {VersionProfile::v3_1, VersionProfile::v3_9}) {
    for (const char* key : {"host.name", "port", "advertised.host.name", "advertised.port"}) {
      const ConfigError e = error_of(kMinimal + key + "=9093\n", v);
      EXPECT_EQ(e.key(), key) << to_string(v);
      EXPECT_TRUE(contains(e.message(), "removed in Kafka 3.0")) << e.what();
    }
  }
  EXPECT_TRUE(contains(error_of(kMinimal + "port=9093\n").message(), "use listeners"));
  EXPECT_TRUE(contains(error_of(kMinimal + "advertised.port=9093\n").message(),
                       "use advertised.listeners"));
}

TEST(KafkaConfigListeners, AdvertisedListenerMustNameAListener) {
  const ConfigError e = error_of(kMinimal +
                                 "listeners=PLAINTEXT://:9092\n"
                                 "advertised.listeners=EXTERNAL://kafka.example.com:9093\n"
                                 "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,"
                                 "EXTERNAL:PLAINTEXT\n");
  EXPECT_EQ(e.key(), "advertised.listeners");
  EXPECT_EQ(e.message(), "listener EXTERNAL is not among the listeners (PLAINTEXT)");
}

TEST(KafkaConfigListeners, AdvertisedListenerMayNotBeTheWildcardAddress) {
  // Kafka refuses to start with listeners=...0.0.0.0 and no advertised.listeners.
  const ConfigError defaulted = error_of(kMinimal + "listeners=PLAINTEXT://0.0.0.0:9092\n");
  EXPECT_EQ(defaulted.key(), "advertised.listeners");
  EXPECT_TRUE(contains(defaulted.message(), "0.0.0.0")) << defaulted.what();
  EXPECT_TRUE(contains(defaulted.message(), "takes from listeners")) << defaulted.what();
  const ConfigError given = error_of(kMinimal + "advertised.listeners=PLAINTEXT://0.0.0.0:9092\n");
  EXPECT_EQ(given.key(), "advertised.listeners");
  EXPECT_FALSE(contains(given.message(), "takes from listeners")) << given.what();
  EXPECT_EQ(error_of(kMinimal + "advertised.host.name=0.0.0.0\n", VersionProfile::v2_8).key(),
            "advertised.host.name");
}

TEST(KafkaConfigListeners, InterBrokerListenerMustBeAdvertised) {
  const ConfigError named = error_of(kMinimal + "inter.broker.listener.name=REPLICATION\n");
  EXPECT_EQ(named.key(), "inter.broker.listener.name");
  EXPECT_EQ(named.message(), "REPLICATION is not among the advertised listeners (PLAINTEXT)");
  // The default, PLAINTEXT, when no listener has that name.
  const ConfigError defaulted = error_of(kMinimal +
                                         "listeners=INTERNAL://:9092\n"
                                         "listener.security.protocol.map=INTERNAL:PLAINTEXT\n");
  EXPECT_EQ(defaulted.key(), "inter.broker.listener.name");
  EXPECT_EQ(defaulted.message(),
            "PLAINTEXT is not among the advertised listeners (INTERNAL); it defaults to PLAINTEXT");
  // A listener that is bound but not advertised is not enough.
  const ConfigError unadvertised =
      error_of(kMinimal +
               "listeners=PLAINTEXT://:9092,INTERNAL://:9093\n"
               "advertised.listeners=PLAINTEXT://h:9092\n"
               "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT\n"
               "inter.broker.listener.name=INTERNAL\n");
  EXPECT_EQ(unadvertised.key(), "inter.broker.listener.name");
}

TEST(KafkaConfigListeners, OnlyPlaintextIsModelled) {
  const ConfigError ssl_listener = error_of(kMinimal + "listeners=PLAINTEXT://:9092,SSL://:9093\n");
  EXPECT_EQ(ssl_listener.key(), "listeners");
  EXPECT_EQ(ssl_listener.message(), "listener SSL uses security protocol SSL; only PLAINTEXT is "
                                    "modelled");
  const ConfigError mapped = error_of(kMinimal +
                                      "listeners=PLAINTEXT://:9092,CLIENT://:9093\n"
                                      "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,"
                                      "CLIENT:SASL_SSL\n");
  EXPECT_EQ(mapped.key(), "listeners");
  EXPECT_TRUE(contains(mapped.message(), "SASL_SSL; only PLAINTEXT is modelled")) << mapped.what();
  // The default listener, PLAINTEXT, mapped to SSL.
  const ConfigError remapped =
      error_of(kMinimal + "listener.security.protocol.map=PLAINTEXT:SSL\n");
  EXPECT_EQ(remapped.key(), "listener.security.protocol.map");
  EXPECT_TRUE(contains(remapped.message(), "only PLAINTEXT is modelled")) << remapped.what();
  const ConfigError inter = error_of(kMinimal + "security.inter.broker.protocol=SSL\n");
  EXPECT_EQ(inter.key(), "security.inter.broker.protocol");
  EXPECT_EQ(inter.message(), "only PLAINTEXT is modelled, got 'SSL'");
  const ConfigError ssl_key = error_of(kMinimal + "ssl.keystore.location=/etc/kafka/ks.jks\n");
  EXPECT_EQ(ssl_key.key(), "ssl.keystore.location");
  EXPECT_TRUE(contains(ssl_key.message(), "SSL and SASL are not modelled")) << ssl_key.what();
  EXPECT_EQ(error_of(kMinimal + "sasl.enabled.mechanisms=PLAIN\n").key(),
            "sasl.enabled.mechanisms");
}

TEST(KafkaConfigListeners, ListenerWithoutAProtocol) {
  const ConfigError e = error_of(kMinimal + "listeners=PLAINTEXT://:9092,INTERNAL://:9093\n");
  EXPECT_EQ(e.key(), "listeners");
  EXPECT_EQ(e.message(), "listener INTERNAL has no security protocol in "
                         "listener.security.protocol.map");
}

TEST(KafkaConfigListeners, MalformedProtocolMap) {
  for (const char* map : {"", "PLAINTEXT", "PLAINTEXT:", ":PLAINTEXT", "PLAINTEXT:TLS",
                          "PLAINTEXT:PLAINTEXT,plaintext:PLAINTEXT"}) {
    const ConfigError e = error_of(kMinimal + "listener.security.protocol.map=" + map + "\n");
    EXPECT_EQ(e.key(), "listener.security.protocol.map") << map << " -> " << e.what();
  }
  EXPECT_EQ(error_of(kMinimal + "listener.security.protocol.map=A:TLS\n").message(),
            "unknown security protocol 'TLS' for listener A (expected one of PLAINTEXT, SSL, "
            "SASL_PLAINTEXT, SASL_SSL)");
}

TEST(KafkaConfigListeners, BothInterBrokerKeysAreAnError) {
  const ConfigError e = error_of(kMinimal +
                                 "inter.broker.listener.name=PLAINTEXT\n"
                                 "security.inter.broker.protocol=PLAINTEXT\n");
  EXPECT_EQ(e.key(), "security.inter.broker.protocol");
  EXPECT_TRUE(contains(e.message(), "only one of")) << e.what();
}

TEST(KafkaConfigListeners, MalformedListeners) {
  struct Case {
    std::string value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "expected NAME://host:port[,NAME://host:port...], got ''"},
      {"localhost:9092", "expected NAME://host:port[,NAME://host:port...], got 'localhost:9092'"},
      {"://:9092", "expected NAME://host:port[,NAME://host:port...], got '://:9092'"},
      {"PLAINTEXT://host",
       "expected NAME://host:port[,NAME://host:port...], got 'PLAINTEXT://host'"},
      {"PLAINTEXT://[::1:9092", "expected NAME://host:port[,NAME://host:port...], got "
                                "'PLAINTEXT://[::1:9092'"},
      {"PLAINTEXT://:0", "port must be from 1 to 65535, got '0' in 'PLAINTEXT://:0'"},
      {"PLAINTEXT://:65536", "port must be from 1 to 65535, got '65536' in 'PLAINTEXT://:65536'"},
      {"PLAINTEXT://:-1", "port must be from 1 to 65535, got '-1' in 'PLAINTEXT://:-1'"},
      {"PLAINTEXT://h:", "port must be from 1 to 65535, got '' in 'PLAINTEXT://h:'"},
      {"PLAINTEXT://h:x", "port must be from 1 to 65535, got 'x' in 'PLAINTEXT://h:x'"},
      {"PLAINTEXT://bad/host:9092", "invalid host 'bad/host' in 'PLAINTEXT://bad/host:9092'"},
      {"PLAINTEXT://:9092,plaintext://:9093",
       "listener name PLAINTEXT is given twice in 'PLAINTEXT://:9092,plaintext://:9093'"},
      {"PLAINTEXT://a:9092,INTERNAL://b:9092", "port 9092 is used by both PLAINTEXT and INTERNAL"},
  };
  for (const Case& c : cases) {
    const ConfigError e = error_of(kMinimal + "listeners=" + c.value +
                                   "\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,"
                                   "INTERNAL:PLAINTEXT\n");
    EXPECT_EQ(e.key(), "listeners") << c.value;
    EXPECT_EQ(e.message(), c.message) << c.value;
  }
  // Advertised listeners may share a port (different hosts behind a proxy).
  EXPECT_NO_THROW(parse(kMinimal +
                        "listeners=PLAINTEXT://:9092,INTERNAL://:9093\n"
                        "advertised.listeners=PLAINTEXT://a:9092,INTERNAL://b:9092\n"
                        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT\n"));
  EXPECT_EQ(error_of(kMinimal + "advertised.listeners=PLAINTEXT://h:99999\n").key(),
            "advertised.listeners");
}

// --- log settings --------------------------------------------------------------------

TEST(KafkaConfigLog, RollMsWinsOverHours) {
  EXPECT_EQ(parse(kMinimal + "log.roll.hours=2\n").log.segment_ms, 2 * 3600 * 1000);
  EXPECT_EQ(parse(kMinimal + "log.roll.ms=60000\n").log.segment_ms, 60000);
  EXPECT_EQ(parse(kMinimal + "log.roll.hours=2\nlog.roll.ms=60000\n").log.segment_ms, 60000);
  // The value that loses is still checked.
  EXPECT_EQ(error_of(kMinimal + "log.roll.hours=0\nlog.roll.ms=60000\n").key(), "log.roll.hours");
  EXPECT_EQ(error_of(kMinimal + "log.roll.ms=0\n").key(), "log.roll.ms");
}

TEST(KafkaConfigLog, RetentionMsWinsOverMinutesOverHours) {
  constexpr int64_t kHour = 3600 * 1000;
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=24\n").log.retention_ms, 24 * kHour);
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=24\nlog.retention.minutes=90\n").log.retention_ms,
            90 * 60 * 1000);
  EXPECT_EQ(parse(kMinimal +
                  "log.retention.hours=24\nlog.retention.minutes=90\nlog.retention.ms=1234\n")
                .log.retention_ms,
            1234);
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=24\nlog.retention.ms=1234\n").log.retention_ms,
            1234);
  // A large hour count does not overflow.
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=2147483647\n").log.retention_ms,
            2147483647LL * kHour);
}

TEST(KafkaConfigLog, RetentionMinusOneIsUnlimited) {
  EXPECT_EQ(parse(kMinimal + "log.retention.ms=-1\n").log.retention_ms, -1);
  EXPECT_EQ(parse(kMinimal + "log.retention.minutes=-1\n").log.retention_ms, -1);
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=-1\n").log.retention_ms, -1);
  EXPECT_EQ(parse(kMinimal + "log.retention.hours=-1\nlog.retention.ms=5000\n").log.retention_ms,
            5000);
  EXPECT_EQ(parse(kMinimal + "log.retention.bytes=-1\n").log.retention_bytes, -1);
  EXPECT_EQ(parse(kMinimal + "log.retention.bytes=0\n").log.retention_bytes, 0);
  for (const char* key : {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}) {
    for (const char* value : {"0", "-2", "x"}) {
      const ConfigError e = error_of(kMinimal + key + "=" + value + "\n");
      EXPECT_EQ(e.key(), key) << value;
      EXPECT_TRUE(contains(e.message(), "expected -1 (unlimited) or a positive integer"))
          << e.what();
    }
  }
  EXPECT_EQ(error_of(kMinimal + "log.retention.hours=-2\n").message(),
            "expected -1 (unlimited) or a positive integer (hours, at most 2147483647), got '-2'");
  EXPECT_EQ(error_of(kMinimal + "log.retention.bytes=-2\n").key(), "log.retention.bytes");
}

TEST(KafkaConfigLog, SegmentBytesAtLeastTheRecordOverhead) {
  EXPECT_EQ(parse(kMinimal + "log.segment.bytes=14\n").log.segment_bytes, 14);
  EXPECT_EQ(error_of(kMinimal + "log.segment.bytes=13\n").key(), "log.segment.bytes");
  EXPECT_EQ(error_of(kMinimal + "log.segment.bytes=2147483648\n").key(), "log.segment.bytes");
}

TEST(KafkaConfigLog, FlushIntervals) {
  const BrokerConfig never = parse(kMinimal);
  EXPECT_EQ(never.log.flush_interval_ms, INT64_MAX);
  EXPECT_EQ(never.log.flush_interval_messages, INT64_MAX);
  EXPECT_EQ(parse(kMinimal + "log.flush.interval.ms=1000\n").log.flush_interval_ms, 1000);
  EXPECT_EQ(parse(kMinimal + "log.flush.interval.ms=1000\nlog.flush.scheduler.interval.ms=50\n")
                .log.flush_interval_ms,
            1000);
  EXPECT_EQ(parse(kMinimal + "log.flush.scheduler.interval.ms=50\n").log.flush_interval_ms, 50);
  EXPECT_EQ(error_of(kMinimal + "log.flush.interval.messages=0\n").key(),
            "log.flush.interval.messages");
}

TEST(KafkaConfigLog, LogDirsWinsOverLogDir) {
  EXPECT_EQ(parse(kMinimal + "log.dir=/var/kafka\n").log_dirs,
            std::vector<std::string>{"/var/kafka"});
  EXPECT_EQ(parse(kMinimal + "log.dir=/var/kafka\nlog.dirs=/d1,/d2\n").log_dirs,
            (std::vector<std::string>{"/d1", "/d2"}));
  EXPECT_EQ(error_of(kMinimal + "log.dirs=\n").key(), "log.dirs");
  EXPECT_EQ(error_of(kMinimal + "log.dirs= , \n").key(), "log.dirs");
  EXPECT_EQ(error_of(kMinimal + "log.dir=\nlog.dirs=/d1\n").key(), "log.dir");
  const ConfigError twice = error_of(kMinimal + "log.dirs=/d1,/d2,/d1\n");
  EXPECT_EQ(twice.key(), "log.dirs");
  EXPECT_EQ(twice.message(), "directory '/d1' is given twice");
}

// --- other errors ----------------------------------------------------------------------

TEST(KafkaConfigErrors, UnknownKeyWithSuggestion) {
  const ConfigError e = error_of(kMinimal + "zookeeper.session.tmeout.ms=18000\n");
  EXPECT_EQ(e.source(), "server.properties");
  EXPECT_EQ(e.key(), "zookeeper.session.tmeout.ms");
  EXPECT_STREQ(e.what(),
               "server.properties: key 'zookeeper.session.tmeout.ms': unknown key; did you mean "
               "'zookeeper.session.timeout.ms'?");
  EXPECT_EQ(error_of(kMinimal + "num.partition=3\n").message(),
            "unknown key; did you mean 'num.partitions'?");
  EXPECT_EQ(error_of(kMinimal + "log.retention.hour=1\n").message(),
            "unknown key; did you mean 'log.retention.hours'?");
  EXPECT_EQ(error_of(kMinimal + "num.io.thread=8\n").message(),
            "unknown key; did you mean 'num.io.threads'?");
  EXPECT_EQ(error_of(kMinimal + "completely.unrelated=1\n").message(), "unknown key");
}

TEST(KafkaConfigErrors, KRaftIsNotModelled) {
  for (const char* key : {"process.roles", "node.id", "controller.quorum.voters",
                          "controller.listener.names", "zookeeper.metadata.migration.enable"}) {
    const ConfigError e = error_of(kMinimal + key + "=1\n");
    EXPECT_EQ(e.key(), key);
    EXPECT_TRUE(contains(e.message(), "KRaft")) << e.what();
  }
}

TEST(KafkaConfigErrors, BrokerIdIsRequired) {
  const ConfigError missing = error_of("zookeeper.connect=localhost:2181\n");
  EXPECT_EQ(missing.key(), "broker.id");
  EXPECT_TRUE(contains(missing.message(), "required")) << missing.what();
  const ConfigError generated = error_of("broker.id=-1\nzookeeper.connect=localhost:2181\n");
  EXPECT_EQ(generated.key(), "broker.id");
  EXPECT_TRUE(contains(generated.message(), "generation")) << generated.what();
  EXPECT_EQ(error_of("broker.id=one\nzookeeper.connect=localhost:2181\n").message(),
            "expected a non-negative integer (a broker id, at most 2147483647), got 'one'");
}

TEST(KafkaConfigErrors, BrokerIdAboveTheReservedRange) {
  const std::string zk = "zookeeper.connect=localhost:2181\n";
  EXPECT_EQ(parse("broker.id=1000\n" + zk).broker_id, 1000);
  const ConfigError e = error_of("broker.id=1001\n" + zk);
  EXPECT_EQ(e.key(), "broker.id");
  EXPECT_TRUE(contains(e.message(), "reserved.broker.max.id (1000)")) << e.what();
  EXPECT_EQ(parse("broker.id=1001\nreserved.broker.max.id=2000\n" + zk).broker_id, 1001);
  EXPECT_EQ(parse("broker.id=5000\nbroker.id.generation.enable=false\n" + zk).broker_id, 5000);
}

TEST(KafkaConfigErrors, ZookeeperConnectIsRequiredAndChecked) {
  const ConfigError missing = error_of("broker.id=0\n");
  EXPECT_EQ(missing.key(), "zookeeper.connect");
  EXPECT_TRUE(contains(missing.message(), "required")) << missing.what();
  for (const char* bad : {"", "zk1:2181,,zk2:2181", "zk1:99999", ":2181", "zk1:2181/kafka/"}) {
    const ConfigError e = error_of(std::string("broker.id=0\nzookeeper.connect=") + bad + "\n");
    EXPECT_EQ(e.key(), "zookeeper.connect") << bad;
    EXPECT_EQ(e.source(), "server.properties") << bad;
  }
  EXPECT_EQ(parse("broker.id=0\nzookeeper.connect=zk1,zk2:2182/kafka\n").zookeeper_connect,
            "zk1,zk2:2182/kafka");
}

TEST(KafkaConfigErrors, ReplicaSocketTimeoutBelowFetchWait) {
  const ConfigError e = error_of(kMinimal + "replica.socket.timeout.ms=400\n");
  EXPECT_EQ(e.key(), "replica.socket.timeout.ms");
  EXPECT_EQ(e.message(), "replica.socket.timeout.ms (400 ms) must be at least "
                         "replica.fetch.wait.max.ms (500 ms), or fetches time out while the "
                         "leader waits");
  // Only the fetch wait given: it is the one to blame.
  EXPECT_EQ(error_of(kMinimal + "replica.fetch.wait.max.ms=40000\n").key(),
            "replica.fetch.wait.max.ms");
  EXPECT_NO_THROW(parse(kMinimal + "replica.socket.timeout.ms=500\n"));
}

TEST(KafkaConfigErrors, FetchWaitAboveReplicaLagTime) {
  const ConfigError e =
      error_of(kMinimal + "replica.lag.time.max.ms=400\n", VersionProfile::v2_2);
  EXPECT_EQ(e.key(), "replica.lag.time.max.ms");
  EXPECT_TRUE(contains(e.message(), "must not be larger than replica.lag.time.max.ms (400 ms)"))
      << e.what();
}

TEST(KafkaConfigErrors, GroupSessionTimeoutBounds) {
  const ConfigError e = error_of(kMinimal + "group.min.session.timeout.ms=2000000\n");
  EXPECT_EQ(e.key(), "group.min.session.timeout.ms");
  EXPECT_EQ(e.message(), "group.min.session.timeout.ms (2000000 ms) must not be larger than "
                         "group.max.session.timeout.ms (1800000 ms)");
  EXPECT_EQ(error_of(kMinimal + "group.max.session.timeout.ms=5000\n").key(),
            "group.max.session.timeout.ms");
  // 2.2's 5-minute maximum.
  EXPECT_EQ(
      error_of(kMinimal + "group.min.session.timeout.ms=400000\n", VersionProfile::v2_2).key(),
      "group.min.session.timeout.ms");
  EXPECT_NO_THROW(parse(kMinimal + "group.min.session.timeout.ms=400000\n"));
}

TEST(KafkaConfigErrors, CompactionIsNotModelled) {
  const ConfigError e = error_of(kMinimal + "log.cleanup.policy=compact\n");
  EXPECT_EQ(e.key(), "log.cleanup.policy");
  EXPECT_EQ(e.message(),
            "log compaction is not modelled; only 'delete' is accepted, got 'compact'");
  EXPECT_EQ(error_of(kMinimal + "log.cleanup.policy=delete,compact\n").key(), "log.cleanup.policy");
  EXPECT_EQ(error_of(kMinimal + "log.cleanup.policy=purge\n").message(),
            "expected delete (or compact, which is not modelled), got 'purge'");
  EXPECT_NO_THROW(parse(kMinimal + "log.cleanup.policy=delete\n"));
  EXPECT_TRUE(topic("cleanup.policy=delete\n").retention_deletes);
  EXPECT_EQ(topic_error_of("cleanup.policy=compact\n").key(), "cleanup.policy");
}

// Kafka creates __consumer_offsets with cleanup.policy=compact: for that
// topic alone compact is accepted, and without delete beside it, retention
// by time and size stops (compaction itself is not modelled).
TEST(KafkaConfig, TheOffsetsTopicAloneMayBeCompacted) {
  const auto internal = [](const std::string& text) {
    return apply_topic_overrides(LogConfig{}, parse_properties(text, "/config/topics/__consumer_offsets"),
                                 /*internal=*/true);
  };
  EXPECT_FALSE(internal("cleanup.policy=compact\n").retention_deletes);
  EXPECT_TRUE(internal("cleanup.policy=compact,delete\n").retention_deletes);
  EXPECT_TRUE(internal("segment.bytes=1048576\n").retention_deletes);
  EXPECT_THROW(internal("cleanup.policy=purge\n"), ConfigError);
  EXPECT_EQ(parse(kMinimal + "offsets.topic.segment.bytes=1048576\n").offsets_topic_segment_bytes, 1048576);
  EXPECT_EQ(parse(kMinimal).offsets_topic_segment_bytes, 104857600);
  EXPECT_EQ(error_of(kMinimal + "offsets.topic.segment.bytes=0\n").key(), "offsets.topic.segment.bytes");
}

TEST(KafkaConfigErrors, MalformedValuesNameTheirKey) {
  struct Case {
    std::string text;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"num.partitions=0\n", "num.partitions"},
      {"num.partitions=abc\n", "num.partitions"},
      {"num.partitions=2147483648\n", "num.partitions"},
      {"default.replication.factor=0\n", "default.replication.factor"},
      {"min.insync.replicas=0\n", "min.insync.replicas"},
      {"unclean.leader.election.enable=yes\n", "unclean.leader.election.enable"},
      {"unclean.leader.election.enable=1\n", "unclean.leader.election.enable"},
      {"zookeeper.session.timeout.ms=0\n", "zookeeper.session.timeout.ms"},
      {"zookeeper.connection.timeout.ms=-1\n", "zookeeper.connection.timeout.ms"},
      {"replica.lag.time.max.ms=0\n", "replica.lag.time.max.ms"},
      {"replica.fetch.wait.max.ms=-1\n", "replica.fetch.wait.max.ms"},
      {"replica.fetch.min.bytes=-1\n", "replica.fetch.min.bytes"},
      {"replica.fetch.max.bytes=1MB\n", "replica.fetch.max.bytes"},
      {"replica.fetch.backoff.ms=-5\n", "replica.fetch.backoff.ms"},
      {"replica.socket.timeout.ms=0\n", "replica.socket.timeout.ms"},
      {"replica.high.watermark.checkpoint.interval.ms=0\n",
       "replica.high.watermark.checkpoint.interval.ms"},
      {"controlled.shutdown.enable=on\n", "controlled.shutdown.enable"},
      {"controlled.shutdown.max.retries=-1\n", "controlled.shutdown.max.retries"},
      {"controlled.shutdown.retry.backoff.ms=-1\n", "controlled.shutdown.retry.backoff.ms"},
      {"auto.leader.rebalance.enable=maybe\n", "auto.leader.rebalance.enable"},
      {"leader.imbalance.check.interval.seconds=0\n", "leader.imbalance.check.interval.seconds"},
      {"leader.imbalance.per.broker.percentage=101\n", "leader.imbalance.per.broker.percentage"},
      {"leader.imbalance.per.broker.percentage=-1\n", "leader.imbalance.per.broker.percentage"},
      {"auto.create.topics.enable=\n", "auto.create.topics.enable"},
      {"offsets.topic.num.partitions=0\n", "offsets.topic.num.partitions"},
      {"offsets.topic.replication.factor=0\n", "offsets.topic.replication.factor"},
      {"offsets.topic.replication.factor=32768\n", "offsets.topic.replication.factor"},
      {"offsets.retention.minutes=0\n", "offsets.retention.minutes"},
      {"log.retention.check.interval.ms=0\n", "log.retention.check.interval.ms"},
      {"log.flush.interval.ms=-1\n", "log.flush.interval.ms"},
      {"log.flush.scheduler.interval.ms=0\n", "log.flush.scheduler.interval.ms"},
      {"request.timeout.ms=0\n", "request.timeout.ms"},
      {"controller.socket.timeout.ms=0\n", "controller.socket.timeout.ms"},
      {"group.initial.rebalance.delay.ms=-1\n", "group.initial.rebalance.delay.ms"},
      {"group.min.session.timeout.ms=0\n", "group.min.session.timeout.ms"},
      {"group.max.session.timeout.ms=0\n", "group.max.session.timeout.ms"},
      {"transaction.state.log.replication.factor=0\n", "transaction.state.log.replication.factor"},
      {"kafkasim.truncation=latest\n", "kafkasim.truncation"},
      {"reserved.broker.max.id=-1\n", "reserved.broker.max.id"},
      {"broker.id.generation.enable=0\n", "broker.id.generation.enable"},
  };
  for (const Case& c : cases) {
    const ConfigError e = error_of(kMinimal + c.text);
    EXPECT_EQ(e.key(), c.key) << c.text << " -> " << e.what();
    EXPECT_EQ(e.source(), "server.properties");
    EXPECT_TRUE(contains(e.what(), "'" + c.key + "'")) << e.what();
    EXPECT_TRUE(contains(e.message(), "expected")) << e.what();
  }
}

TEST(KafkaConfigErrors, Messages) {
  EXPECT_STREQ(error_of(kMinimal + "num.partitions=abc\n").what(),
               "server.properties: key 'num.partitions': expected a positive integer (partitions, "
               "at most 2147483647), got 'abc'");
  EXPECT_EQ(error_of(kMinimal + "unclean.leader.election.enable=yes\n").message(),
            "expected true or false, got 'yes'");
  EXPECT_EQ(error_of(kMinimal + "kafkasim.truncation=latest\n").message(),
            "expected leader-epoch or high-watermark, got 'latest'");
  EXPECT_EQ(error_of(kMinimal + "leader.imbalance.per.broker.percentage=101\n").message(),
            "expected a non-negative integer (percent, at most 100), got '101'");
}

TEST(KafkaConfigErrors, BooleansAreCaseInsensitive) {
  EXPECT_TRUE(
      parse(kMinimal + "unclean.leader.election.enable=True\n").log.unclean_leader_election);
  EXPECT_FALSE(parse(kMinimal + "auto.create.topics.enable=FALSE\n").auto_create_topics_enable);
}

// --- keys without effect ---------------------------------------------------------------

TEST(KafkaConfigKeysWithoutEffect, SortedUniqueAndDisjointFromTheModelledKeys) {
  EXPECT_TRUE(std::is_sorted(kBrokerKeysWithoutEffect.begin(), kBrokerKeysWithoutEffect.end()));
  EXPECT_EQ(std::adjacent_find(kBrokerKeysWithoutEffect.begin(), kBrokerKeysWithoutEffect.end()),
            kBrokerKeysWithoutEffect.end());
  for (const char* modelled : {"broker.id", "listeners", "num.partitions", "log.retention.hours",
                               "group.initial.rebalance.delay.ms", "zookeeper.connect",
                               "num.io.threads", "offsets.topic.segment.bytes",
                               "message.max.bytes", "inter.broker.protocol.version"}) {
    EXPECT_EQ(std::count(kBrokerKeysWithoutEffect.begin(), kBrokerKeysWithoutEffect.end(),
                         std::string(modelled)),
              0)
        << modelled;
  }
  for (const char* expected :
       {"num.network.threads", "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes", "socket.request.max.bytes",
        "num.recovery.threads.per.data.dir", "num.replica.fetchers", "background.threads",
        "compression.type", "log.cleaner.enable", "log.cleanup.policy",
        "delete.topic.enable", "transaction.state.log.min.isr", "zookeeper.set.acl",
        "log.message.format.version", "log.index.size.max.bytes",
        "log.index.interval.bytes", "queued.max.requests", "num.replica.alter.log.dirs.threads",
        "broker.rack"}) {
    EXPECT_EQ(std::count(kBrokerKeysWithoutEffect.begin(), kBrokerKeysWithoutEffect.end(),
                         std::string(expected)),
              1)
        << expected;
  }
}

TEST(KafkaConfigKeysWithoutEffect, EveryListedKeyIsAccepted) {
  // A plausible value for each key, by its kind.
  auto value_for = [](const std::string& key) -> std::string {
    if (key == "compression.type") return "producer";
    if (key == "log.cleanup.policy") return "delete";
    if (key == "log.message.timestamp.type") return "LogAppendTime";
    if (key == "metrics.recording.level") return "DEBUG";
    if (key == "log.roll.jitter.ms" || key == "log.roll.jitter.hours") return "0";
    if (key.find(".enable") != std::string::npos || key == "zookeeper.set.acl" ||
        key == "log.preallocate") {
      return "true";
    }
    if (key == "broker.rack") return "eu-west-1a";
    if (key == "log.index.size.max.bytes") return "10485760";
    if (key.find("version") != std::string::npos) return "2.8";
    if (key.find("reporters") != std::string::npos) return "";
    return "1";
  };
  std::string all = kMinimal;
  for (const std::string& key : kBrokerKeysWithoutEffect) {
    EXPECT_NO_THROW(parse(kMinimal + key + "=" + value_for(key) + "\n")) << key;
    all += key + "=" + value_for(key) + "\n";
  }
  // Together, they change nothing.
  const BrokerConfig c = parse(all);
  const BrokerConfig plain = parse(kMinimal);
  EXPECT_EQ(c.log, plain.log);
  EXPECT_EQ(c.listeners, plain.listeners);
  EXPECT_EQ(c.zookeeper_session_timeout_ms, plain.zookeeper_session_timeout_ms);
}

TEST(KafkaConfigKeysWithoutEffect, ValuesAreStillChecked) {
  struct Case {
    std::string text;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"num.network.threads=0\n", "num.network.threads"},
      {"num.io.threads=eight\n", "num.io.threads"},
      {"socket.send.buffer.bytes=-2\n", "socket.send.buffer.bytes"},
      {"socket.request.max.bytes=0\n", "socket.request.max.bytes"},
      {"num.replica.fetchers=0\n", "num.replica.fetchers"},
      {"message.max.bytes=1e6\n", "message.max.bytes"},
      {"delete.topic.enable=yes\n", "delete.topic.enable"},
      {"log.cleaner.enable=sometimes\n", "log.cleaner.enable"},
      {"compression.type=brotli\n", "compression.type"},
      {"log.message.timestamp.type=createtime\n", "log.message.timestamp.type"},
      {"transaction.state.log.min.isr=0\n", "transaction.state.log.min.isr"},
      {"zookeeper.set.acl=1\n", "zookeeper.set.acl"},
      {"log.index.size.max.bytes=3\n", "log.index.size.max.bytes"},
      {"queued.max.requests=0\n", "queued.max.requests"},
      {"offsets.commit.required.acks=-2\n", "offsets.commit.required.acks"},
  };
  for (const Case& c : cases) {
    const ConfigError e = error_of(kMinimal + c.text);
    EXPECT_EQ(e.key(), c.key) << c.text << " -> " << e.what();
  }
  EXPECT_EQ(error_of(kMinimal + "compression.type=brotli\n").message(),
            "expected one of uncompressed, zstd, lz4, snappy, gzip, producer, got 'brotli'");
  EXPECT_EQ(error_of(kMinimal + "log.roll.jitter.ms=1000\n").message(),
            "segment roll jitter is not modelled; only 0 is accepted, got '1000'");
  EXPECT_NO_THROW(parse(kMinimal + "socket.send.buffer.bytes=-1\n"));  // the OS default
}

// --- topic overrides -----------------------------------------------------------------

TEST(KafkaConfigTopic, KeysAreSortedAndIncludeTheModelledOnes) {
  EXPECT_TRUE(std::is_sorted(kTopicConfigKeys.begin(), kTopicConfigKeys.end()));
  EXPECT_EQ(std::adjacent_find(kTopicConfigKeys.begin(), kTopicConfigKeys.end()),
            kTopicConfigKeys.end());
  for (const char* key : {"segment.ms", "segment.bytes", "retention.ms", "retention.bytes",
                          "min.insync.replicas", "unclean.leader.election.enable",
                          "flush.messages", "flush.ms", "cleanup.policy", "compression.type",
                          "max.message.bytes", "message.timestamp.type", "segment.jitter.ms",
                          "file.delete.delay.ms"}) {
    EXPECT_EQ(std::count(kTopicConfigKeys.begin(), kTopicConfigKeys.end(), std::string(key)), 1)
        << key;
  }
}

TEST(KafkaConfigTopic, NoOverridesKeepTheBrokerDefaults) {
  const LogConfig broker = parse(kMinimal + "log.retention.hours=1\nmin.insync.replicas=2\n").log;
  EXPECT_EQ(topic("", broker), broker);
}

TEST(KafkaConfigTopic, OverridesAreApplied) {
  const LogConfig broker = parse(kMinimal + "min.insync.replicas=2\n").log;
  const LogConfig c = topic(
      "segment.ms=60000\n"
      "segment.bytes=1048576\n"
      "retention.ms=3600000\n"
      "retention.bytes=10485760\n"
      "min.insync.replicas=3\n"
      "unclean.leader.election.enable=true\n"
      "flush.messages=1\n"
      "flush.ms=0\n"
      "max.message.bytes=2000000\n",
      broker);
  EXPECT_EQ(c.max_message_bytes, 2000000);
  EXPECT_EQ(c.segment_ms, 60000);
  EXPECT_EQ(c.segment_bytes, 1048576);
  EXPECT_EQ(c.retention_ms, 3600000);
  EXPECT_EQ(c.retention_bytes, 10485760);
  EXPECT_EQ(c.min_insync_replicas, 3);
  EXPECT_TRUE(c.unclean_leader_election);
  EXPECT_EQ(c.flush_interval_messages, 1);
  EXPECT_EQ(c.flush_interval_ms, 0);
  // Only the given keys change.
  const LogConfig partial = topic("retention.ms=-1\n", broker);
  LogConfig expected = broker;
  expected.retention_ms = -1;
  EXPECT_EQ(partial, expected);
  // A topic may keep nothing at all (retention.ms=0), unlike log.retention.ms.
  EXPECT_EQ(topic("retention.ms=0\n").retention_ms, 0);
}

TEST(KafkaConfigTopic, KeysWithoutEffectAreAccepted) {
  const LogConfig c = topic(
      "cleanup.policy=delete\n"
      "compression.type=lz4\n"
      "message.timestamp.type=CreateTime\n"
      "segment.jitter.ms=0\n"
      "file.delete.delay.ms=60000\n"
      "segment.index.bytes=10485760\n"
      "index.interval.bytes=4096\n"
      "preallocate=false\n"
      "message.downconversion.enable=true\n"
      "message.format.version=2.8\n"
      "leader.replication.throttled.replicas=\n");
  EXPECT_EQ(c, LogConfig{});
  for (const std::string& key : kTopicConfigKeys) {
    std::string value = "1";
    if (key == "cleanup.policy") value = "delete";
    if (key == "compression.type") value = "producer";
    if (key == "message.timestamp.type") value = "LogAppendTime";
    if (key == "segment.jitter.ms") value = "0";
    if (key == "segment.index.bytes") value = "4096";
    if (key == "unclean.leader.election.enable" || key == "preallocate" ||
        key == "message.downconversion.enable") {
      value = "false";
    }
    if (key == "segment.bytes") value = "1024";
    if (key == "message.format.version") value = "2.8";
    EXPECT_NO_THROW(topic(key + "=" + value + "\n")) << key;
  }
}

TEST(KafkaConfigTopic, RejectedOverrides) {
  struct Case {
    std::string text;
    std::string key;
    std::string message;  // empty: not checked
  };
  const std::vector<Case> cases = {
      {"retention.mss=1000\n", "retention.mss", "unknown key; did you mean 'retention.ms'?"},
      {"segmentms=1000\n", "segmentms", "unknown key; did you mean 'segment.ms'?"},
      {"log.retention.ms=1000\n", "log.retention.ms", ""},
      {"cleanup.policy=compact\n", "cleanup.policy",
       "log compaction is not modelled; only 'delete' is accepted, got 'compact'"},
      {"cleanup.policy=compact,delete\n", "cleanup.policy", ""},
      {"segment.bytes=13\n", "segment.bytes", ""},
      {"segment.ms=0\n", "segment.ms", ""},
      {"retention.ms=-2\n", "retention.ms",
       "expected -1 (unlimited) or a non-negative integer (milliseconds, at most "
       "9223372036854775807), got '-2'"},
      {"retention.bytes=lots\n", "retention.bytes", ""},
      {"min.insync.replicas=0\n", "min.insync.replicas", ""},
      {"unclean.leader.election.enable=yes\n", "unclean.leader.election.enable",
       "expected true or false, got 'yes'"},
      {"flush.messages=0\n", "flush.messages", ""},
      {"flush.ms=-1\n", "flush.ms", ""},
      {"segment.jitter.ms=100\n", "segment.jitter.ms",
       "segment roll jitter is not modelled; only 0 is accepted, got '100'"},
      {"compression.type=brotli\n", "compression.type", ""},
      {"message.timestamp.type=Now\n", "message.timestamp.type", ""},
      {"max.message.bytes=-1\n", "max.message.bytes", ""},
      {"file.delete.delay.ms=x\n", "file.delete.delay.ms", ""},
  };
  for (const Case& c : cases) {
    const ConfigError e = topic_error_of(c.text);
    EXPECT_EQ(e.source(), "/config/topics/orders");
    EXPECT_EQ(e.key(), c.key) << c.text << " -> " << e.what();
    if (!c.message.empty()) {
      EXPECT_EQ(e.message(), c.message) << c.text;
    }
  }
}

}  // namespace
}  // namespace kafka
