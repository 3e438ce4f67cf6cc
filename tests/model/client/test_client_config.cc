// Producer and consumer configuration by librdkafka's key names: defaults,
// aliases (and an alias given twice), the idempotent producer's implications,
// every value check, keys without effect, keys the model refuses, and unknown
// keys with a did-you-mean.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/client/config.h"

namespace client {
namespace {

using model::ConfigError;
using Map = std::map<std::string, std::string>;

const char* const kSource = "scenario.json:$.producer.config";

// `kv` with bootstrap.servers added unless a spelling of it is there.
Map with_bootstrap(Map kv) {
  if (kv.count("bootstrap.servers") == 0 && kv.count("metadata.broker.list") == 0) {
    kv.emplace("bootstrap.servers", "kafka0:9092");
  }
  return kv;
}

ProducerConfig producer(const Map& kv, ProducerConfig defaults = {}) {
  return parse_producer_config(model::from_map(with_bootstrap(kv), kSource), std::move(defaults));
}

ConsumerConfig consumer(const Map& kv, ConsumerConfig defaults = {}) {
  return parse_consumer_config(model::from_map(with_bootstrap(kv), kSource), std::move(defaults));
}

// The error parsing `kv` gives; fails the test when there is none.
ConfigError producer_error(const Map& kv) {
  try {
    producer(kv);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for a producer with " << ::testing::PrintToString(kv);
  return ConfigError("", "", "");
}

ConfigError consumer_error(const Map& kv) {
  try {
    consumer(kv);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for a consumer with " << ::testing::PrintToString(kv);
  return ConfigError("", "", "");
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Asserts that `e` is about `key`, from kSource, and that its message holds
// each of `parts`.
void expect_error(const ConfigError& e, const std::string& key,
                  const std::vector<std::string>& parts) {
  EXPECT_EQ(e.source(), kSource);
  EXPECT_EQ(e.key(), key) << e.what();
  for (const std::string& p : parts) EXPECT_TRUE(contains(e.message(), p)) << e.what();
  EXPECT_TRUE(contains(e.what(), "key '" + key + "'")) << e.what();
}

// --- bootstrap.servers -------------------------------------------------------------

std::vector<BootstrapServer> bootstrap(const std::string& s) {
  return parse_bootstrap(s, "s.json", "bootstrap.servers");
}

ConfigError bootstrap_error(const std::string& s) {
  try {
    bootstrap(s);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for bootstrap '" << s << "'";
  return ConfigError("", "", "");
}

TEST(ClientConfigBootstrap, HostPortListsTrimmedWithDefaultPort) {
  using B = BootstrapServer;
  EXPECT_EQ(bootstrap("kafka0:9092"), (std::vector<B>{{"kafka0", 9092}}));
  EXPECT_EQ(bootstrap(" kafka0:9093 , kafka1 ,kafka2:1"),
            (std::vector<B>{{"kafka0", 9093}, {"kafka1", 9092}, {"kafka2", 1}}));
  EXPECT_EQ(bootstrap("10.0.0.1:65535"), (std::vector<B>{{"10.0.0.1", 65535}}));
  EXPECT_EQ(bootstrap("[::1]:9094,[fe80::1]"), (std::vector<B>{{"::1", 9094}, {"fe80::1", 9092}}));
  EXPECT_EQ(bootstrap("PLAINTEXT://kafka0:9092,plaintext://kafka1"),
            (std::vector<B>{{"kafka0", 9092}, {"kafka1", 9092}}));
}

TEST(ClientConfigBootstrap, Errors) {
  const struct {
    const char* value;
    const char* message;
  } cases[] = {
      {"", "expected host:port[,host:port...], got ''"},
      {"  ", "expected host:port[,host:port...]"},
      {"a:1,,b:2", "empty entry in 'a:1,,b:2'"},
      {"a:1,", "empty entry in 'a:1,'"},
      {",a:1", "empty entry"},
      {"a:", "port must be from 1 to 65535, got '' in 'a:'"},
      {"a:0", "port must be from 1 to 65535, got '0'"},
      {"a:65536", "port must be from 1 to 65535, got '65536'"},
      {"a:123456", "port must be from 1 to 65535"},
      {"a:-1", "port must be from 1 to 65535"},
      {"a:x", "port must be from 1 to 65535, got 'x'"},
      {"a:90 92", "port must be from 1 to 65535"},
      {":9092", "no host in ':9092'"},
      {"a:1:2", "more than one ':'"},
      {"::1", "more than one ':'"},
      {"[::1", "unclosed '['"},
      {"[::1]x", "bad entry '[::1]x'"},
      {"[]:9092", "no host"},
      {"ssl://a:9093", "only plaintext:// is modelled"},
      {"sasl_ssl://a:9093", "only plaintext:// is modelled"},
      {"a b:9092", "invalid host 'a b'"},
  };
  for (const auto& c : cases) {
    const ConfigError e = bootstrap_error(c.value);
    EXPECT_EQ(e.source(), "s.json") << c.value;
    EXPECT_EQ(e.key(), "bootstrap.servers") << c.value;
    EXPECT_TRUE(contains(e.message(), c.message)) << c.value << ": " << e.what();
  }
}

TEST(ClientConfigBootstrap, RequiredForBothClients) {
  const model::Properties empty = model::from_map({}, kSource);
  for (int client = 0; client < 2; ++client) {
    try {
      if (client == 0) {
        parse_producer_config(empty);
      } else {
        parse_consumer_config(empty);
      }
      ADD_FAILURE() << "no ConfigError without bootstrap.servers";
    } catch (const ConfigError& e) {
      expect_error(e, "bootstrap.servers", {"required"});
    }
  }
  // Servers the defaults carry (a workload's) are enough.
  ProducerConfig defaults;
  defaults.bootstrap = {{"kafka9", 9092}};
  EXPECT_EQ(parse_producer_config(empty, defaults).bootstrap, defaults.bootstrap);
}

TEST(ClientConfigBootstrap, ErrorsNameTheSpellingUsed) {
  expect_error(producer_error({{"metadata.broker.list", "a:0"}}), "metadata.broker.list",
               {"port must be from 1 to 65535"});
  expect_error(consumer_error({{"bootstrap.servers", "a,,b"}}), "bootstrap.servers",
               {"empty entry"});
}

// --- defaults ------------------------------------------------------------------------

TEST(ClientConfigProducer, DefaultsAreLibrdkafkas) {
  const ProducerConfig c = producer({});
  EXPECT_EQ(c.bootstrap, (std::vector<BootstrapServer>{{"kafka0", 9092}}));
  EXPECT_EQ(c.acks, -1);
  EXPECT_EQ(c.retries, 2147483647);
  EXPECT_EQ(c.retry_backoff_ms, 100);
  EXPECT_EQ(c.request_timeout_ms, 30000);
  EXPECT_EQ(c.socket_timeout_ms, 60000);
  EXPECT_FALSE(c.single_request_timeout);
  EXPECT_EQ(c.message_timeout_ms, 300000);
  EXPECT_EQ(c.linger_ms, 5);
  EXPECT_EQ(c.batch_size, 1000000);
  EXPECT_EQ(c.message_max_bytes, 1000000);
  EXPECT_EQ(c.max_in_flight, 1000000);
  EXPECT_FALSE(c.enable_idempotence);
  EXPECT_EQ(c.null_key, NullKeyPartitioning::random);  // consistent_random
  EXPECT_EQ(c.metadata_max_age_ms, 900000);
  EXPECT_EQ(c.metadata_refresh_interval_ms, 300000);
  EXPECT_EQ(c.reconnect_backoff_ms, 100);
  EXPECT_EQ(c.reconnect_backoff_max_ms, 10000);
  EXPECT_EQ(c.client_id, "rdkafka");
}

TEST(ClientConfigConsumer, DefaultsAreLibrdkafkas) {
  const ConsumerConfig c = consumer({{"group.id", "g"}});
  EXPECT_EQ(c.bootstrap, (std::vector<BootstrapServer>{{"kafka0", 9092}}));
  EXPECT_EQ(c.group_id, "g");
  EXPECT_EQ(c.auto_offset_reset, ConsumerConfig::Reset::latest);
  EXPECT_EQ(c.fetch_min_bytes, 1);
  EXPECT_EQ(c.fetch_wait_max_ms, 500);
  EXPECT_EQ(c.fetch_max_bytes, 52428800);
  EXPECT_EQ(c.max_partition_fetch_bytes, 1048576);
  EXPECT_EQ(c.request_timeout_ms, 30000);
  EXPECT_EQ(c.retry_backoff_ms, 100);
  EXPECT_TRUE(c.enable_auto_commit);
  EXPECT_EQ(c.auto_commit_interval_ms, 5000);
  EXPECT_EQ(c.session_timeout_ms, 45000);
  EXPECT_EQ(c.heartbeat_interval_ms, 3000);
  EXPECT_EQ(c.max_poll_interval_ms, 300000);
  EXPECT_EQ(c.partition_assignment_strategy, "range");
  EXPECT_EQ(c.max_in_flight, 1000000);  // librdkafka's max.in.flight applies to consumers too
  EXPECT_EQ(c.metadata_max_age_ms, 900000);
  EXPECT_EQ(c.metadata_refresh_interval_ms, 300000);
  EXPECT_EQ(c.reconnect_backoff_ms, 100);
  EXPECT_EQ(c.reconnect_backoff_max_ms, 10000);
  EXPECT_EQ(c.connection_setup_timeout_ms, 30000);
  EXPECT_TRUE(c.wait_for_connection);  // librdkafka's fetcher waits for the connection
  EXPECT_EQ(c.client_id, "rdkafka");
}

TEST(ClientConfigProducer, StartsFromTheGivenDefaults) {
  ProducerConfig defaults;
  defaults.linger_ms = 0;
  defaults.max_in_flight = 5;
  defaults.client_id = "aiokafka-0.10";
  const ProducerConfig c = producer({{"batch.size", "16384"}}, defaults);
  EXPECT_EQ(c.linger_ms, 0);
  EXPECT_EQ(c.max_in_flight, 5);
  EXPECT_EQ(c.client_id, "aiokafka-0.10");
  EXPECT_EQ(c.batch_size, 16384);
}

TEST(ClientConfigConsumer, StartsFromTheGivenDefaults) {
  ConsumerConfig defaults;
  defaults.auto_offset_reset = ConsumerConfig::Reset::earliest;
  defaults.group_id = "workload";
  const ConsumerConfig c = consumer({}, defaults);
  EXPECT_EQ(c.auto_offset_reset, ConsumerConfig::Reset::earliest);
  EXPECT_EQ(c.group_id, "workload");
  EXPECT_TRUE(c.enable_auto_commit);
}

TEST(ClientConfigProducer, ReadsAPropertiesFile) {
  const ProducerConfig c = parse_producer_config(model::parse_properties(
      "# librdkafka producer\n"
      "bootstrap.servers = kafka0:9092, kafka1:9092\n"
      "client.id = orders\n"
      "acks = 1\n"
      "linger.ms = 20\n"
      "compression.type = lz4\n",
      "producer.properties"));
  EXPECT_EQ(c.bootstrap.size(), 2u);
  EXPECT_EQ(c.client_id, "orders");
  EXPECT_EQ(c.acks, 1);
  EXPECT_EQ(c.linger_ms, 20);
}

// --- every key with effect -------------------------------------------------------------

TEST(ClientConfigProducer, EveryKeyWithEffect) {
  const ProducerConfig c = producer({
      {"bootstrap.servers", "a:1,b:2"},
      {"client.id", "p1"},
      {"acks", "1"},
      {"retries", "3"},
      {"retry.backoff.ms", "250"},
      {"request.timeout.ms", "15000"},
      {"socket.timeout.ms", "20000"},
      {"message.timeout.ms", "60000"},
      {"linger.ms", "0"},
      {"batch.size", "16384"},
      {"max.in.flight", "1"},
      {"enable.idempotence", "false"},
      {"partitioner", "sticky"},
      {"metadata.max.age.ms", "60000"},
      {"topic.metadata.refresh.interval.ms", "-1"},
      {"reconnect.backoff.ms", "0"},
      {"socket.connection.setup.timeout.ms", "5000"},
      {"reconnect.backoff.max.ms", "2000"},
  });
  EXPECT_EQ(c.bootstrap, (std::vector<BootstrapServer>{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(c.client_id, "p1");
  EXPECT_EQ(c.acks, 1);
  EXPECT_EQ(c.retries, 3);
  EXPECT_EQ(c.retry_backoff_ms, 250);
  EXPECT_EQ(c.request_timeout_ms, 15000);
  EXPECT_EQ(c.socket_timeout_ms, 20000);
  EXPECT_EQ(c.message_timeout_ms, 60000);
  EXPECT_EQ(c.linger_ms, 0);
  EXPECT_EQ(c.batch_size, 16384);
  EXPECT_EQ(c.max_in_flight, 1);
  EXPECT_FALSE(c.enable_idempotence);
  EXPECT_EQ(c.null_key, NullKeyPartitioning::sticky);
  EXPECT_EQ(c.metadata_max_age_ms, 60000);
  EXPECT_EQ(c.metadata_refresh_interval_ms, -1);
  EXPECT_EQ(c.reconnect_backoff_ms, 0);
  EXPECT_EQ(c.connection_setup_timeout_ms, 5000);
  EXPECT_EQ(c.reconnect_backoff_max_ms, 2000);
}

TEST(ClientConfigConsumer, EveryKeyWithEffect) {
  const ConsumerConfig c = consumer({
      {"bootstrap.servers", "a:1"},
      {"client.id", "c1"},
      {"group.id", "readers"},
      {"auto.offset.reset", "earliest"},
      {"fetch.min.bytes", "1024"},
      {"fetch.wait.max.ms", "100"},
      {"fetch.max.bytes", "1048576"},
      {"fetch.message.max.bytes", "65536"},
      {"request.timeout.ms", "20000"},
      {"retry.backoff.ms", "50"},
      {"enable.auto.commit", "false"},
      {"auto.commit.interval.ms", "1000"},
      {"session.timeout.ms", "10000"},
      {"heartbeat.interval.ms", "1000"},
      {"max.poll.interval.ms", "60000"},
      {"partition.assignment.strategy", "roundrobin,range"},
      {"max.in.flight", "3"},
      {"metadata.max.age.ms", "30000"},
      {"topic.metadata.refresh.interval.ms", "20000"},
      {"reconnect.backoff.ms", "10"},
      {"socket.connection.setup.timeout.ms", "7000"},
      {"reconnect.backoff.max.ms", "20"},
  });
  EXPECT_EQ(c.bootstrap, (std::vector<BootstrapServer>{{"a", 1}}));
  EXPECT_EQ(c.client_id, "c1");
  EXPECT_EQ(c.group_id, "readers");
  EXPECT_EQ(c.auto_offset_reset, ConsumerConfig::Reset::earliest);
  EXPECT_EQ(c.fetch_min_bytes, 1024);
  EXPECT_EQ(c.fetch_wait_max_ms, 100);
  EXPECT_EQ(c.fetch_max_bytes, 1048576);
  EXPECT_EQ(c.max_partition_fetch_bytes, 65536);
  EXPECT_EQ(c.request_timeout_ms, 20000);
  EXPECT_EQ(c.retry_backoff_ms, 50);
  EXPECT_FALSE(c.enable_auto_commit);
  EXPECT_EQ(c.auto_commit_interval_ms, 1000);
  EXPECT_EQ(c.session_timeout_ms, 10000);
  EXPECT_EQ(c.heartbeat_interval_ms, 1000);
  EXPECT_EQ(c.max_poll_interval_ms, 60000);
  EXPECT_EQ(c.partition_assignment_strategy, "roundrobin");
  EXPECT_EQ(c.max_in_flight, 3);
  EXPECT_EQ(c.metadata_max_age_ms, 30000);
  EXPECT_EQ(c.metadata_refresh_interval_ms, 20000);
  EXPECT_EQ(c.reconnect_backoff_ms, 10);
  EXPECT_EQ(c.connection_setup_timeout_ms, 7000);
  EXPECT_EQ(c.reconnect_backoff_max_ms, 20);
}

// --- aliases -------------------------------------------------------------------------

TEST(ClientConfigAliases, ProducerAliases) {
  EXPECT_EQ(producer({{"metadata.broker.list", "m:7"}}).bootstrap,
            (std::vector<BootstrapServer>{{"m", 7}}));
  EXPECT_EQ(producer({{"request.required.acks", "0"}}).acks, 0);
  EXPECT_EQ(producer({{"message.send.max.retries", "7"}}).retries, 7);
  EXPECT_EQ(producer({{"delivery.timeout.ms", "120000"}}).message_timeout_ms, 120000);
  EXPECT_EQ(producer({{"queue.buffering.max.ms", "50"}}).linger_ms, 50);
  EXPECT_EQ(producer({{"max.in.flight.requests.per.connection", "2"}}).max_in_flight, 2);
  // message.max.bytes has librdkafka's range (1000 .. 1000000000),
  // max.request.size Java's (atLeast(0)).
  EXPECT_EQ(producer({{"message.max.bytes", "1000"}}).message_max_bytes, 1000);
  EXPECT_EQ(producer({{"max.request.size", "0"}}).message_max_bytes, 0);
  EXPECT_EQ(producer({{"max.request.size", "2000000000"}}).message_max_bytes, 2000000000);
  expect_error(producer_error({{"message.max.bytes", "999"}}), "message.max.bytes",
               {"from 1000 to 1000000000", "got '999'"});
  expect_error(producer_error({{"message.max.bytes", "1000000001"}}), "message.max.bytes",
               {"from 1000 to 1000000000", "got '1000000001'"});
  expect_error(producer_error({{"max.request.size", "1000"}, {"message.max.bytes", "1000"}}),
               "max.request.size", {"set twice through an alias"});
  // An alias among the keys without effect.
  EXPECT_NO_THROW(producer({{"compression.codec", "gzip"}}));
  EXPECT_NO_THROW(producer({{"compression.type", "gzip"}}));
}

TEST(ClientConfigAliases, ConsumerAliases) {
  EXPECT_EQ(consumer({{"metadata.broker.list", "m:7"}}).bootstrap,
            (std::vector<BootstrapServer>{{"m", 7}}));
  EXPECT_EQ(consumer({{"fetch.max.wait.ms", "250"}}).fetch_wait_max_ms, 250);
  EXPECT_EQ(consumer({{"socket.timeout.ms", "60000"}}).request_timeout_ms, 60000);
  EXPECT_EQ(consumer({{"fetch.error.backoff.ms", "500"}}).retry_backoff_ms, 500);
  EXPECT_EQ(consumer({{"max.partition.fetch.bytes", "2048"}}).max_partition_fetch_bytes, 2048);
  EXPECT_EQ(consumer({{"max.in.flight.requests.per.connection", "2"}}).max_in_flight, 2);
  // max.partition.fetch.bytes has Java's range (atLeast(0)), fetch.message.max.bytes
  // librdkafka's (1 .. 1000000000).
  EXPECT_EQ(consumer({{"max.partition.fetch.bytes", "0"}}).max_partition_fetch_bytes, 0);
  EXPECT_EQ(consumer({{"max.partition.fetch.bytes", "2000000000"}}).max_partition_fetch_bytes,
            2000000000);
  expect_error(consumer_error({{"max.partition.fetch.bytes", "-1"}}), "max.partition.fetch.bytes",
               {"non-negative", "got '-1'"});
  expect_error(consumer_error({{"fetch.message.max.bytes", "0"}}), "fetch.message.max.bytes",
               {"expected a positive integer (bytes, at most 1000000000)", "got '0'"});
  expect_error(consumer_error({{"fetch.message.max.bytes", "1000000001"}}), "fetch.message.max.bytes",
               {"at most 1000000000", "got '1000000001'"});
  // fetch.error.backoff.ms takes 0, retry.backoff.ms does not (librdkafka's ranges).
  EXPECT_EQ(consumer({{"fetch.error.backoff.ms", "0"}}).retry_backoff_ms, 0);
  expect_error(consumer_error({{"retry.backoff.ms", "0"}}), "retry.backoff.ms",
               {"expected a positive integer", "got '0'"});
  // socket.timeout.ms has librdkafka's range, 10 .. 300000.
  expect_error(consumer_error({{"socket.timeout.ms", "9"}}), "socket.timeout.ms",
               {"from 10 to 300000", "got '9'"});
  expect_error(consumer_error({{"socket.timeout.ms", "300001"}}), "socket.timeout.ms",
               {"from 10 to 300000"});
}

TEST(ClientConfigAliases, BothSpellingsAreAnError) {
  const struct {
    const char* key;
    const char* alias;
    const char* value;
  } producer_pairs[] = {
      {"bootstrap.servers", "metadata.broker.list", "a:1"},
      {"acks", "request.required.acks", "1"},
      {"retries", "message.send.max.retries", "1"},
      {"message.timeout.ms", "delivery.timeout.ms", "60000"},
      {"linger.ms", "queue.buffering.max.ms", "1"},
      {"max.in.flight", "max.in.flight.requests.per.connection", "1"},
      {"compression.codec", "compression.type", "lz4"},
  };
  for (const auto& p : producer_pairs) {
    // Even with the same value on both.
    const ConfigError e = producer_error({{p.key, p.value}, {p.alias, p.value}});
    expect_error(e, p.alias, {"set twice through an alias", p.key});
  }
  const struct {
    const char* key;
    const char* alias;
    const char* value;
  } consumer_pairs[] = {
      {"bootstrap.servers", "metadata.broker.list", "a:1"},
      {"fetch.wait.max.ms", "fetch.max.wait.ms", "100"},
      {"fetch.message.max.bytes", "max.partition.fetch.bytes", "1048576"},
      {"request.timeout.ms", "socket.timeout.ms", "30000"},
      {"retry.backoff.ms", "fetch.error.backoff.ms", "100"},
  };
  for (const auto& p : consumer_pairs) {
    const ConfigError e = consumer_error({{p.key, p.value}, {p.alias, p.value}});
    expect_error(e, p.alias, {"set twice through an alias", p.key});
  }
}

TEST(ClientConfigAliases, ErrorsNameTheAliasUsed) {
  expect_error(producer_error({{"request.required.acks", "2"}}), "request.required.acks",
               {"expected 0, 1, -1 or all", "got '2'"});
  expect_error(producer_error({{"message.send.max.retries", "-1"}}), "message.send.max.retries",
               {"non-negative"});
  expect_error(producer_error({{"delivery.timeout.ms", "0"}}), "delivery.timeout.ms",
               {"0 (no timeout) is not modelled"});
  expect_error(producer_error({{"queue.buffering.max.ms", "900001"}}), "queue.buffering.max.ms",
               {"at most 900000"});
  expect_error(producer_error({{"max.in.flight.requests.per.connection", "0"}}),
               "max.in.flight.requests.per.connection", {"positive"});
  expect_error(consumer_error({{"fetch.max.wait.ms", "300001"}}), "fetch.max.wait.ms",
               {"at most 300000"});
}

// --- acks, partitioner, auto.offset.reset, strategy ----------------------------------------

TEST(ClientConfigProducer, Acks) {
  EXPECT_EQ(producer({{"acks", "0"}}).acks, 0);
  EXPECT_EQ(producer({{"acks", "1"}}).acks, 1);
  EXPECT_EQ(producer({{"acks", "-1"}}).acks, -1);
  EXPECT_EQ(producer({{"acks", "all"}}).acks, -1);
  EXPECT_EQ(producer({{"acks", "ALL"}}).acks, -1);  // librdkafka's S2I ignores case
  for (const char* bad : {"2", "-2", "1000", "", "one", "1.0", "al"}) {
    expect_error(producer_error({{"acks", bad}}), "acks",
                 {"expected 0, 1, -1 or all", std::string("got '") + bad + "'"});
  }
}

TEST(ClientConfigProducer, Partitioners) {
  const auto parsed = [](const char* p) {
    const ProducerConfig c = producer({{"partitioner", p}});
    return std::make_pair(c.key_hash, c.null_key);
  };
  using P = std::pair<KeyHash, NullKeyPartitioning>;
  // librdkafka's names (rdkafka_topic.c), each a key hash and a null-key rule.
  EXPECT_EQ(parsed("random"), P(KeyHash::none, NullKeyPartitioning::random));
  EXPECT_EQ(parsed("consistent"), P(KeyHash::crc32, NullKeyPartitioning::hashed));
  EXPECT_EQ(parsed("consistent_random"), P(KeyHash::crc32, NullKeyPartitioning::random));
  EXPECT_EQ(parsed("murmur2"), P(KeyHash::murmur2, NullKeyPartitioning::hashed));
  EXPECT_EQ(parsed("murmur2_random"), P(KeyHash::murmur2, NullKeyPartitioning::random));
  EXPECT_EQ(parsed("fnv1a"), P(KeyHash::fnv1a, NullKeyPartitioning::hashed));
  EXPECT_EQ(parsed("fnv1a_random"), P(KeyHash::fnv1a, NullKeyPartitioning::random));
  // Java's, which hash keys with murmur2.
  EXPECT_EQ(parsed("sticky"), P(KeyHash::murmur2, NullKeyPartitioning::sticky));
  EXPECT_EQ(parsed("round_robin"), P(KeyHash::murmur2, NullKeyPartitioning::round_robin));
  // The default is librdkafka's consistent_random.
  EXPECT_EQ(producer({}).key_hash, KeyHash::crc32);
  EXPECT_EQ(producer({}).null_key, NullKeyPartitioning::random);
  // Case matters, as librdkafka compares with strcmp.
  for (const char* bad : {"Random", "murmur", "default", "", "uniform_sticky", "Consistent"}) {
    expect_error(producer_error({{"partitioner", bad}}), "partitioner",
                 {"expected one of random, consistent", std::string("got '") + bad + "'"});
  }
}

TEST(ClientConfigConsumer, AutoOffsetReset) {
  using R = ConsumerConfig::Reset;
  const auto reset = [](const char* v) {
    return consumer({{"auto.offset.reset", v}}).auto_offset_reset;
  };
  for (const char* v : {"earliest", "smallest", "beginning", "EARLIEST"}) {
    EXPECT_EQ(reset(v), R::earliest) << v;
  }
  for (const char* v : {"latest", "largest", "end", "Latest"}) EXPECT_EQ(reset(v), R::latest) << v;
  for (const char* v : {"none", "error"}) EXPECT_EQ(reset(v), R::none) << v;
  for (const char* bad : {"first", "", "earlist"}) {
    expect_error(consumer_error({{"auto.offset.reset", bad}}), "auto.offset.reset",
                 {"expected one of earliest, smallest, beginning, latest, largest, end, none",
                  std::string("got '") + bad + "'"});
  }
}

TEST(ClientConfigConsumer, PartitionAssignmentStrategy) {
  const auto strategy = [](const char* v) {
    return consumer({{"partition.assignment.strategy", v}}).partition_assignment_strategy;
  };
  EXPECT_EQ(strategy("range"), "range");
  EXPECT_EQ(strategy("roundrobin"), "roundrobin");
  EXPECT_EQ(strategy("range,roundrobin"), "range");  // librdkafka's default list
  EXPECT_EQ(strategy(" roundrobin , range"), "roundrobin");
  expect_error(consumer_error({{"partition.assignment.strategy", "cooperative-sticky"}}),
               "partition.assignment.strategy", {"cooperative-sticky", "not modelled"});
  expect_error(consumer_error({{"partition.assignment.strategy", "range,cooperative-sticky"}}),
               "partition.assignment.strategy", {"not modelled"});
  for (const char* bad : {"", "sticky", "round_robin", "range,", "Range",
                          "org.apache.kafka.clients.consumer.RangeAssignor"}) {
    expect_error(consumer_error({{"partition.assignment.strategy", bad}}),
                 "partition.assignment.strategy",
                 {"expected a comma-separated list of range and roundrobin",
                  std::string("got '") + bad + "'"});
  }
}

// --- idempotence ---------------------------------------------------------------------

TEST(ClientConfigIdempotence, ImpliesAcksAllAndAtMostFiveInFlight) {
  const ProducerConfig c = producer({{"enable.idempotence", "true"}});
  EXPECT_TRUE(c.enable_idempotence);
  EXPECT_EQ(c.acks, -1);
  EXPECT_EQ(c.max_in_flight, 5);
  EXPECT_EQ(c.retries, 2147483647);
}

TEST(ClientConfigIdempotence, AdjustsDefaultsThatWereNotGiven) {
  ProducerConfig defaults;
  defaults.acks = 1;
  defaults.retries = 0;
  defaults.max_in_flight = 3;
  const ProducerConfig c = producer({{"enable.idempotence", "true"}}, defaults);
  EXPECT_EQ(c.acks, -1);
  EXPECT_EQ(c.retries, 2147483647);
  EXPECT_EQ(c.max_in_flight, 3);  // already below 5
  // A positive retries default is kept.
  defaults.retries = 10;
  EXPECT_EQ(producer({{"enable.idempotence", "true"}}, defaults).retries, 10);
  // Idempotence from the defaults has the same implications.
  ProducerConfig idempotent;
  idempotent.enable_idempotence = true;
  idempotent.acks = 0;
  const ProducerConfig d = producer({}, idempotent);
  EXPECT_EQ(d.acks, -1);
  EXPECT_EQ(d.max_in_flight, 5);
}

TEST(ClientConfigIdempotence, AcceptsCompatibleExplicitValues) {
  const ProducerConfig c = producer({{"enable.idempotence", "true"},
                                     {"acks", "all"},
                                     {"max.in.flight", "5"},
                                     {"retries", "1"}});
  EXPECT_EQ(c.acks, -1);
  EXPECT_EQ(c.max_in_flight, 5);
  EXPECT_EQ(c.retries, 1);
  EXPECT_EQ(producer({{"enable.idempotence", "true"}, {"acks", "-1"}, {"max.in.flight", "1"}})
                .max_in_flight,
            1);
}

TEST(ClientConfigIdempotence, RejectsIncompatibleExplicitValues) {
  for (const char* acks : {"0", "1"}) {
    expect_error(producer_error({{"enable.idempotence", "true"}, {"acks", acks}}), "acks",
                 {"must be all (-1) when enable.idempotence is true",
                  std::string("got '") + acks + "'"});
  }
  expect_error(producer_error({{"enable.idempotence", "true"}, {"request.required.acks", "1"}}),
               "request.required.acks", {"enable.idempotence"});
  expect_error(producer_error({{"enable.idempotence", "true"}, {"max.in.flight", "6"}}),
               "max.in.flight", {"at most 5 when enable.idempotence is true", "got '6'"});
  expect_error(producer_error({{"enable.idempotence", "true"},
                               {"max.in.flight.requests.per.connection", "1000000"}}),
               "max.in.flight.requests.per.connection", {"at most 5"});
  expect_error(producer_error({{"enable.idempotence", "true"}, {"retries", "0"}}), "retries",
               {"at least 1 when enable.idempotence is true", "got '0'"});
  expect_error(producer_error({{"enable.idempotence", "true"}, {"message.send.max.retries", "0"}}),
               "message.send.max.retries", {"at least 1"});
  // Without idempotence, the same values are fine.
  const ProducerConfig c = producer({{"acks", "0"}, {"max.in.flight", "6"}, {"retries", "0"}});
  EXPECT_EQ(c.acks, 0);
  EXPECT_EQ(c.max_in_flight, 6);
  EXPECT_EQ(c.retries, 0);
}

// --- ranges and types ------------------------------------------------------------------

TEST(ClientConfigProducer, RangeErrorsNameTheKey) {
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } cases[] = {
      {"retries", "-1", "expected a non-negative integer (retries"},
      {"retries", "2147483648", "got '2147483648'"},
      {"retry.backoff.ms", "0", "expected a positive integer (milliseconds, at most 300000)"},
      {"retry.backoff.ms", "300001", "at most 300000"},
      {"request.timeout.ms", "0", "expected a positive integer (milliseconds, at most 900000)"},
      {"request.timeout.ms", "x", "got 'x'"},
      {"socket.timeout.ms", "9", "from 10 to 300000"},
      {"socket.timeout.ms", "300001", "from 10 to 300000"},
      {"message.timeout.ms", "0", "0 (no timeout) is not modelled"},
      {"message.timeout.ms", "-5", "expected a positive integer"},
      {"linger.ms", "-1", "expected a non-negative integer (milliseconds, at most 900000)"},
      {"linger.ms", "900001", "at most 900000"},
      {"linger.ms", "0.5", "got '0.5'"},
      {"batch.size", "0", "expected a positive integer (bytes"},
      {"max.in.flight", "0", "expected a positive integer (requests, at most 1000000)"},
      {"max.in.flight", "1000001", "at most 1000000"},
      {"enable.idempotence", "yes", "expected true or false, got 'yes'"},
      {"metadata.max.age.ms", "0", "positive"},
      {"metadata.max.age.ms", "86400001", "at most 86400000"},
      {"reconnect.backoff.ms", "-1", "non-negative"},
      {"reconnect.backoff.ms", "3600001", "at most 3600000"},
      {"socket.connection.setup.timeout.ms", "999", "expected an integer (milliseconds, from 1000 to 2147483647), got '999'"},
      {"reconnect.backoff.max.ms", "3600001", "expected a non-negative integer (milliseconds, at most 3600000), got '3600001'"},
  };
  for (const auto& c : cases) {
    expect_error(producer_error({{c.key, c.value}}), c.key, {c.message});
  }
}

TEST(ClientConfigConsumer, RangeErrorsNameTheKey) {
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } cases[] = {
      {"fetch.min.bytes", "0", "expected a positive integer (bytes, at most 100000000)"},
      {"fetch.min.bytes", "100000001", "at most 100000000"},
      {"fetch.wait.max.ms", "-1", "non-negative"},
      {"fetch.wait.max.ms", "300001", "at most 300000"},
      {"fetch.max.bytes", "-1", "non-negative"},
      {"fetch.max.bytes", "2147483136", "at most 2147483135"},
      {"request.timeout.ms", "0", "positive"},
      {"retry.backoff.ms", "300001", "at most 300000"},
      {"enable.auto.commit", "maybe", "expected true or false, got 'maybe'"},
      {"auto.commit.interval.ms", "0", "set enable.auto.commit=false instead"},
      {"auto.commit.interval.ms", "-1", "positive"},
      {"session.timeout.ms", "0", "positive"},
      {"session.timeout.ms", "3600001", "at most 3600000"},
      {"heartbeat.interval.ms", "0", "positive"},
      {"max.poll.interval.ms", "0", "positive"},
      {"max.poll.interval.ms", "86400001", "at most 86400000"},
      {"metadata.max.age.ms", "0", "positive"},
      {"topic.metadata.refresh.interval.ms", "-2", "from -1 to 3600000"},
      {"topic.metadata.refresh.interval.ms", "3600001", "from -1 to 3600000"},
      {"max.in.flight", "0", "positive"},
      {"max.in.flight", "1000001", "at most 1000000"},
      {"reconnect.backoff.ms", "-1", "non-negative"},
      {"socket.connection.setup.timeout.ms", "999", "expected an integer (milliseconds, from 1000 to 2147483647), got '999'"},
      {"reconnect.backoff.max.ms", "3600001", "expected a non-negative integer (milliseconds, at most 3600000), got '3600001'"},
  };
  for (const auto& c : cases) {
    ConfigError e = consumer_error({{"group.id", "g"}, {c.key, c.value}});
    expect_error(e, c.key, {c.message});
  }
}

TEST(ClientConfigProducer, Booleans) {
  for (const char* t : {"true", "TRUE", "True", "t", "T", "1"}) {
    EXPECT_TRUE(producer({{"enable.idempotence", t}}).enable_idempotence) << t;
  }
  for (const char* f : {"false", "FALSE", "f", "F", "0"}) {
    EXPECT_FALSE(producer({{"enable.idempotence", f}}).enable_idempotence) << f;
  }
  for (const char* bad : {"", "yes", "no", "on", "2", "truthy"}) {
    expect_error(producer_error({{"enable.idempotence", bad}}), "enable.idempotence",
                 {"expected true or false"});
  }
}

TEST(ClientConfigProducer, MessageTimeoutMustExceedLinger) {
  expect_error(producer_error({{"linger.ms", "1000"}, {"message.timeout.ms", "1000"}}), "linger.ms",
               {"message.timeout.ms (1000 ms) must be greater than linger.ms (1000 ms)"});
  expect_error(
      producer_error({{"queue.buffering.max.ms", "2000"}, {"delivery.timeout.ms", "1000"}}),
      "queue.buffering.max.ms", {"must be greater than linger.ms"});
  // linger.ms not given: lowered below message.timeout.ms, as librdkafka does.
  EXPECT_EQ(producer({{"message.timeout.ms", "3"}}).linger_ms, 2);
  EXPECT_EQ(producer({{"message.timeout.ms", "1"}}).linger_ms, 0);
  EXPECT_EQ(producer({{"message.timeout.ms", "6"}}).linger_ms, 5);
  EXPECT_EQ(producer({{"linger.ms", "999"}, {"message.timeout.ms", "1000"}}).linger_ms, 999);
}

TEST(ClientConfigConsumer, HeartbeatMustBeLowerThanSessionTimeout) {
  expect_error(consumer_error({{"heartbeat.interval.ms", "45000"}}), "heartbeat.interval.ms",
               {"heartbeat.interval.ms (45000 ms) must be lower than "
                "session.timeout.ms (45000 ms)"});
  expect_error(consumer_error({{"session.timeout.ms", "2000"}}), "session.timeout.ms",
               {"heartbeat.interval.ms (3000 ms) must be lower than session.timeout.ms (2000 ms)"});
  expect_error(consumer_error({{"session.timeout.ms", "2000"}, {"heartbeat.interval.ms", "2500"}}),
               "heartbeat.interval.ms", {"must be lower than"});
  EXPECT_EQ(consumer({{"session.timeout.ms", "2000"}, {"heartbeat.interval.ms", "1999"}})
                .heartbeat_interval_ms,
            1999);
}

TEST(ClientConfigConsumer, MaxPollIntervalAtLeastSessionTimeout) {
  expect_error(consumer_error({{"max.poll.interval.ms", "10000"}}), "max.poll.interval.ms",
               {"max.poll.interval.ms (10000 ms) must be at least session.timeout.ms (45000 ms)"});
  expect_error(consumer_error({{"session.timeout.ms", "400000"}}), "session.timeout.ms",
               {"must be at least session.timeout.ms (400000 ms)"});
  EXPECT_EQ(consumer({{"max.poll.interval.ms", "45000"}}).max_poll_interval_ms, 45000);
}

// librdkafka refuses a reconnect.backoff.max.ms below reconnect.backoff.ms;
// the error names the key given (the cap, when both are).
TEST(ClientConfigKeys, TheReconnectBackoffCapIsAtLeastTheBackoff) {
  expect_error(producer_error({{"reconnect.backoff.ms", "500"}, {"reconnect.backoff.max.ms", "200"}}),
               "reconnect.backoff.max.ms",
               {"reconnect.backoff.max.ms (200 ms) must be at least reconnect.backoff.ms (500 ms)"});
  expect_error(consumer_error({{"group.id", "g"}, {"reconnect.backoff.ms", "20000"}}), "reconnect.backoff.ms",
               {"reconnect.backoff.max.ms (10000 ms) must be at least reconnect.backoff.ms (20000 ms)"});
  expect_error(consumer_error({{"group.id", "g"}, {"reconnect.backoff.max.ms", "50"}}),
               "reconnect.backoff.max.ms", {"must be at least reconnect.backoff.ms (100 ms)"});
  EXPECT_EQ(producer({{"reconnect.backoff.ms", "0"}, {"reconnect.backoff.max.ms", "0"}}).reconnect_backoff_max_ms, 0);
}

TEST(ClientConfigConsumer, RequestTimeoutMustExceedFetchWait) {
  expect_error(consumer_error({{"request.timeout.ms", "500"}}), "request.timeout.ms",
               {"request.timeout.ms (500 ms) must be greater than fetch.wait.max.ms (500 ms)"});
  expect_error(consumer_error({{"fetch.max.wait.ms", "40000"}}), "fetch.max.wait.ms",
               {"request.timeout.ms (30000 ms) must be greater than fetch.max.wait.ms (40000 ms)"});
  expect_error(consumer_error({{"socket.timeout.ms", "100"}}), "socket.timeout.ms",
               {"socket.timeout.ms (100 ms) must be greater than"});
}

TEST(ClientConfigConsumer, NoGroupMeansNoAutoCommit) {
  EXPECT_FALSE(consumer({}).enable_auto_commit);
  EXPECT_EQ(consumer({}).group_id, "");
  EXPECT_FALSE(consumer({{"enable.auto.commit", "false"}}).enable_auto_commit);
  expect_error(consumer_error({{"enable.auto.commit", "true"}}), "enable.auto.commit",
               {"without a group.id"});
  EXPECT_TRUE(consumer({{"group.id", "g"}, {"enable.auto.commit", "true"}}).enable_auto_commit);
}

// --- keys without effect, keys refused, unknown keys -------------------------------------------

TEST(ClientConfigKeys, WithoutEffectAreAcceptedAndTypeChecked) {
  const Map common = {
      {"api.version.request", "true"},
      {"broker.version.fallback", "0.10.0"},
      {"client.rack", "rack-a"},
      {"debug", "broker, topic,MSG"},
      {"log.connection.close", "false"},
      {"log_level", "7"},
      {"security.protocol", "PLAINTEXT"},
      {"socket.keepalive.enable", "true"},
      {"socket.nagle.disable", "t"},
      {"socket.receive.buffer.bytes", "0"},
      {"socket.send.buffer.bytes", "100000000"},
      {"statistics.interval.ms", "60000"},
  };
  Map p = common;
  p.emplace("compression.type", "ZSTD");
  p.emplace("sticky.partitioning.linger.ms", "0");
  const ProducerConfig pc = producer(p);
  EXPECT_EQ(pc.null_key, NullKeyPartitioning::random);
  EXPECT_EQ(pc.linger_ms, 5);
  Map c = common;
  c.emplace("check.crcs", "true");
  c.emplace("enable.partition.eof", "false");
  c.emplace("group.protocol", "classic");
  c.emplace("isolation.level", "read_committed");
  EXPECT_NO_THROW(consumer(c));

  const struct {
    const char* key;
    const char* value;
    const char* message;
  } bad[] = {
      {"api.version.request", "sometimes", "expected true or false"},
      {"debug", "broker,everything", "expected a comma-separated list of generic, broker"},
      {"log_level", "8", "at most 7"},
      {"socket.receive.buffer.bytes", "-1", "non-negative"},
      {"socket.send.buffer.bytes", "100000001", "at most 100000000"},
      {"statistics.interval.ms", "86400001", "at most 86400000"},
      {"socket.keepalive.enable", "on", "expected true or false"},
      {"security.protocol", "ssl", "SSL and SASL are not modelled; expected plaintext, got 'ssl'"},
      {"security.protocol", "SASL_SSL", "not modelled"},
      {"security.protocol", "tls", "expected one of plaintext, got 'tls'"},
  };
  for (const auto& b : bad) {
    expect_error(producer_error({{b.key, b.value}}), b.key, {b.message});
    expect_error(consumer_error({{b.key, b.value}}), b.key, {b.message});
  }
  expect_error(producer_error({{"compression.codec", "brotli"}}), "compression.codec",
               {"expected one of none, gzip, snappy, lz4, zstd, got 'brotli'"});
  expect_error(producer_error({{"sticky.partitioning.linger.ms", "900001"}}),
               "sticky.partitioning.linger.ms", {"at most 900000"});
  expect_error(consumer_error({{"isolation.level", "serializable"}}), "isolation.level",
               {"expected one of read_uncommitted, read_committed"});
  expect_error(consumer_error({{"group.protocol", "consumer"}}), "group.protocol",
               {"KIP-848", "not modelled"});
  expect_error(consumer_error({{"check.crcs", "x"}}), "check.crcs", {"expected true or false"});
}

TEST(ClientConfigKeys, NotModelledAreRefusedWithTheReason) {
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } producer_cases[] = {
      {"transactional.id", "tx", "transactions"},
      {"transaction.timeout.ms", "60000", "transactions"},
      {"queue.buffering.max.messages", "100000", "producer queue is unbounded"},
      {"queue.buffering.max.kbytes", "1048576", "producer queue is unbounded"},
      {"retry.backoff.max.ms", "1000", "exponential retry backoff"},
      {"ssl.ca.location", "/etc/ca.pem", "SSL and SASL are not modelled"},
      {"sasl.mechanisms", "PLAIN", "SSL and SASL are not modelled"},
  };
  for (const auto& c : producer_cases) {
    expect_error(producer_error({{c.key, c.value}}), c.key, {c.message});
  }
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } consumer_cases[] = {
      {"group.instance.id", "i1", "static group membership"},
      {"sasl.username", "u", "SSL and SASL are not modelled"},
  };
  for (const auto& c : consumer_cases) {
    expect_error(consumer_error({{c.key, c.value}}), c.key, {c.message});
  }
}

// librdkafka refreshes every topic.metadata.refresh.interval.ms, and its
// metadata.max.age.ms bounds how long an entry is used; Java's and
// aiokafka's metadata.max.age.ms is their refresh period. The model asks
// again after the shorter of the two.
TEST(ClientConfigKeys, TheMetadataRefreshIsTheShorterOfIntervalAndMaxAge) {
  EXPECT_EQ(metadata_refresh_ms(300000, 900000), 300000);  // librdkafka's defaults
  EXPECT_EQ(metadata_refresh_ms(300000, 60000), 60000);
  EXPECT_EQ(metadata_refresh_ms(-1, 900000), 900000);  // no periodic refresh: the max age
  EXPECT_EQ(metadata_refresh_ms(0, 900000), 900000);   // nor with 0 (librdkafka starts no timer)
}

// librdkafka: given a refresh interval and no max age, the max age is three
// intervals (rd_kafka_conf_finalize), so a long interval is not cut short.
TEST(ClientConfigKeys, AGivenRefreshIntervalSetsTheMaxAgeToThreeIntervals) {
  const ConsumerConfig c = consumer({{"topic.metadata.refresh.interval.ms", "1800000"}});
  EXPECT_EQ(c.metadata_max_age_ms, 5400000);
  EXPECT_EQ(metadata_refresh_ms(c.metadata_refresh_interval_ms, c.metadata_max_age_ms), 1800000);
  const ProducerConfig p = producer({{"topic.metadata.refresh.interval.ms", "1800000"}, {"metadata.max.age.ms", "600000"}});
  EXPECT_EQ(p.metadata_max_age_ms, 600000);  // given: kept
  EXPECT_EQ(metadata_refresh_ms(p.metadata_refresh_interval_ms, p.metadata_max_age_ms), 600000);
  EXPECT_EQ(consumer({{"topic.metadata.refresh.interval.ms", "-1"}}).metadata_max_age_ms, 900000);
}

TEST(ClientConfigKeys, TheOtherClientsKeysAreErrors) {
  for (const char* key : {"group.id", "auto.offset.reset", "fetch.min.bytes", "session.timeout.ms",
                          "enable.auto.commit", "fetch.error.backoff.ms", "isolation.level",
                          "group.instance.id"}) {
    expect_error(producer_error({{key, "1"}}), key,
                 {"a consumer key; a producer does not take it"});
  }
  for (const char* key : {"acks", "linger.ms", "batch.size", "enable.idempotence", "partitioner",
                          "compression.type", "delivery.timeout.ms", "transactional.id",
                          "queue.buffering.max.messages"}) {
    expect_error(consumer_error({{key, "1"}}), key,
                 {"a producer key; a consumer does not take it"});
  }
}

TEST(ClientConfigKeys, UnknownKeysSuggestTheNearest) {
  expect_error(producer_error({{"linger.sm", "5"}}), "linger.sm",
               {"unknown key; did you mean 'linger.ms'?"});
  expect_error(producer_error({{"enable.idempotency", "true"}}), "enable.idempotency",
               {"did you mean 'enable.idempotence'?"});
  expect_error(producer_error({{"batch_size", "1"}}), "batch_size",
               {"did you mean 'batch.size'?"});
  expect_error(consumer_error({{"group.ids", "g"}}), "group.ids", {"did you mean 'group.id'?"});
  expect_error(consumer_error({{"auto.offset.rest", "earliest"}}), "auto.offset.rest",
               {"did you mean 'auto.offset.reset'?"});
  expect_error(consumer_error({{"fetch.wait.max.m", "1"}}), "fetch.wait.max.m",
               {"did you mean 'fetch.wait.max.ms'?"});
  const ConfigError e = producer_error({{"frobnicate", "1"}});
  expect_error(e, "frobnicate", {"unknown key"});
  EXPECT_FALSE(contains(e.message(), "did you mean"));
}

}  // namespace
}  // namespace client
