// server.properties, read as Kafka's KafkaConfig reads it (ZooKeeper mode), but
// strict: a key the model does not know is an error with a did-you-mean, where
// Kafka only logs "was supplied but isn't a known config".
//
// Sources: KafkaConfig.scala (Defaults, configDef, validateValues) and
// LogConfig of the 2.2, 2.3, 2.8, 3.1 and 3.9 branches of apache/kafka, and the
// broker and topic configuration references of those releases
// (kafka.apache.org/<22|23|28|31|39>/documentation/#brokerconfigs, #topicconfigs).
//
// Defaults that differ between the profiles, for the keys of BrokerConfig:
//
//   key                            2.2      2.3      2.8/3.1/3.9  why
//   zookeeper.session.timeout.ms   6000     6000     18000        KIP-537 (2.5)
//   replica.lag.time.max.ms        10000    10000    30000        KIP-537 (2.5)
//   group.max.session.timeout.ms   300000   1800000  1800000      KIP-345 (2.3, KAFKA-7862)
//   message.max.bytes              1000012  1000012  1048588      KAFKA-4203 (2.5)
//
// Every other default is the same in all five releases (3.1.0's checked
// against 3.9 field by field): among them
// offsets.retention.minutes 10080 (KIP-186, since 2.0), unclean.leader.election
// .enable false (KIP-106, since 0.11), group.initial.rebalance.delay.ms 3000
// (KIP-134, since 0.11), log.segment.bytes 1 GiB, log.roll.hours and
// log.retention.hours 168, listeners PLAINTEXT://:9092 (in 2.x the fallback
// PLAINTEXT://host.name:port with host.name "" and port 9092).
//
// Where the model departs from Kafka, on purpose:
//   - broker.id is required: broker.id generation (a ZooKeeper sequence) is
//     not modelled.
//   - only PLAINTEXT listeners: a listener that maps to SSL or SASL_* in
//     listener.security.protocol.map is an error, as is any ssl.* or sasl.*
//     key. Mappings for listeners that are not configured (the distribution's
//     own commented-out map lists SSL:SSL) are accepted: they change nothing.
//   - log.cleanup.policy / cleanup.policy must be delete: compaction is not
//     modelled. The one exception is __consumer_offsets, which Kafka itself
//     creates compacted: there compact is accepted and stops retention by
//     time and size, and every record is kept.
//   - KRaft keys (process.roles, node.id, controller.*) are errors.
//   - a negative log.retention.{ms,minutes,hours} other than -1 is an error
//     (Kafka takes every negative value as "unlimited").
//   - booleans are true/false only (any case), as Kafka's ConfigDef parses
//     them; yes/no, which zoo.cfg takes, is an error here.
#include "model/kafka/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/zk/client.h"
#include "sim/assert.h"

namespace kafka {
namespace {

using model::Properties;
using model::lower;
using model::trim;

constexpr int64_t kMaxInt16 = std::numeric_limits<int16_t>::max();
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinInt64 = std::numeric_limits<int64_t>::min();

// LegacyRecord.RECORD_OVERHEAD_V0: the smallest segment.bytes Kafka accepts.
constexpr int64_t kMinSegmentBytes = 14;

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Kafka's Csv.parseCsvList: split at commas, trim each item, drop empty items.
std::vector<std::string> split_csv(std::string_view s) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view item = trim(s.substr(start, end - start));
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Java's Long.parseLong: one optional leading sign.
std::optional<int64_t> parse_long(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Kafka's ConfigDef BOOLEAN: "true" or "false" in any case, nothing else.
bool get_bool(const Properties& props, const std::string& key, bool default_value) {
  const std::optional<std::string> v = props.get(key);
  if (!v) return default_value;
  const std::string l = lower(*v);
  if (l == "true") return true;
  if (l == "false") return false;
  throw props.error(key, fmt::format("expected true or false, got '{}'", *v));
}

// A value that is -1 ("unlimited") or in [min, max].
int64_t get_int_or_unlimited(const Properties& props, const std::string& key, int64_t default_value,
                             int64_t min, int64_t max, std::string_view unit) {
  const std::optional<std::string> text = props.get(key);
  if (!text) return default_value;
  const std::optional<int64_t> v = parse_long(*text);
  if (!v || (*v != -1 && (*v < min || *v > max))) {
    const char* kind = min == 1 ? "a positive integer" : "a non-negative integer";
    throw props.error(key, fmt::format("expected -1 (unlimited) or {} ({}, at most {}), got '{}'",
                                       kind, unit, max, *text));
  }
  return *v;
}

// --- keys without effect ------------------------------------------------------

enum class Kind {
  integer,         // an integer in [min, max]
  boolean,         // true/false
  text,            // any string
  choice,          // one of `choices` ("a|b|c"), case-sensitive as in Kafka
  zero_only,       // an integer that must be 0 (a feature the model lacks)
  cleanup_policy,  // a list of delete/compact that must be just delete
};

struct KeyRule {
  std::string_view key;
  Kind kind = Kind::text;
  int64_t min = 0;
  int64_t max = kMaxInt32;
  std::string_view choices = {};
  std::string_view note = {};  // for zero_only: what is not modelled
};

// Ranges follow Kafka's own validators where it has one (atLeast(1) ...) and
// otherwise what makes sense for the value (a thread count is positive).
// Sorted by key.
constexpr KeyRule kBrokerRules[] = {
    {.key = "background.threads", .kind = Kind::integer, .min = 1},
    // Rack awareness (rack-aware replica assignment, KIP-36; follower
    // fetching, KIP-392) is not modelled: the rack is accepted and ignored.
    {.key = "broker.rack", .kind = Kind::text},
    {.key = "compression.type",
     .kind = Kind::choice,
     .choices = "uncompressed|zstd|lz4|snappy|gzip|producer"},
    {.key = "connections.max.idle.ms", .kind = Kind::integer, .min = -1, .max = kMaxInt64},
    {.key = "delete.topic.enable", .kind = Kind::boolean},
    {.key = "fetch.purgatory.purge.interval.requests", .kind = Kind::integer},
    {.key = "kafka.metrics.polling.interval.secs", .kind = Kind::integer, .min = 1},
    {.key = "kafka.metrics.reporters", .kind = Kind::text},
    {.key = "log.cleaner.enable", .kind = Kind::boolean},
    {.key = "log.cleaner.threads", .kind = Kind::integer},
    {.key = "log.cleanup.policy", .kind = Kind::cleanup_policy},
    {.key = "log.flush.offset.checkpoint.interval.ms", .kind = Kind::integer},
    {.key = "log.flush.start.offset.checkpoint.interval.ms", .kind = Kind::integer},
    {.key = "log.index.interval.bytes", .kind = Kind::integer},
    {.key = "log.index.size.max.bytes", .kind = Kind::integer, .min = 4},
    {.key = "log.message.downconversion.enable", .kind = Kind::boolean},
    {.key = "log.message.format.version", .kind = Kind::text},
    {.key = "log.message.timestamp.difference.max.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "log.message.timestamp.type",
     .kind = Kind::choice,
     .choices = "CreateTime|LogAppendTime"},
    {.key = "log.preallocate", .kind = Kind::boolean},
    {.key = "log.roll.jitter.hours", .kind = Kind::zero_only, .note = "segment roll jitter"},
    {.key = "log.roll.jitter.ms", .kind = Kind::zero_only, .note = "segment roll jitter"},
    {.key = "log.segment.delete.delay.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "max.connections", .kind = Kind::integer},
    {.key = "max.connections.per.ip", .kind = Kind::integer},
    {.key = "max.incremental.fetch.session.cache.slots", .kind = Kind::integer},
    {.key = "metric.reporters", .kind = Kind::text},
    {.key = "metrics.num.samples", .kind = Kind::integer, .min = 1},
    {.key = "metrics.recording.level", .kind = Kind::choice, .choices = "INFO|DEBUG|TRACE"},
    {.key = "metrics.sample.window.ms", .kind = Kind::integer, .min = 1, .max = kMaxInt64},
    {.key = "num.network.threads", .kind = Kind::integer, .min = 1},
    {.key = "num.recovery.threads.per.data.dir", .kind = Kind::integer, .min = 1},
    {.key = "num.replica.alter.log.dirs.threads", .kind = Kind::integer, .min = 1},
    {.key = "num.replica.fetchers", .kind = Kind::integer, .min = 1},
    {.key = "offset.metadata.max.bytes", .kind = Kind::integer},
    {.key = "offsets.load.buffer.size", .kind = Kind::integer, .min = 1},
    {.key = "offsets.retention.check.interval.ms",
     .kind = Kind::integer,
     .min = 1,
     .max = kMaxInt64},
    {.key = "offsets.topic.compression.codec", .kind = Kind::integer, .max = 4},
    {.key = "producer.purgatory.purge.interval.requests", .kind = Kind::integer},
    {.key = "queued.max.request.bytes", .kind = Kind::integer, .min = -1, .max = kMaxInt64},
    {.key = "queued.max.requests", .kind = Kind::integer, .min = 1},
    {.key = "replica.socket.receive.buffer.bytes", .kind = Kind::integer, .min = -1},
    {.key = "socket.receive.buffer.bytes", .kind = Kind::integer, .min = -1},
    {.key = "socket.request.max.bytes", .kind = Kind::integer, .min = 1},
    {.key = "socket.send.buffer.bytes", .kind = Kind::integer, .min = -1},
    {.key = "transaction.abort.timed.out.transaction.cleanup.interval.ms",
     .kind = Kind::integer,
     .min = 1},
    {.key = "transaction.max.timeout.ms", .kind = Kind::integer, .min = 1},
    {.key = "transaction.remove.expired.transaction.cleanup.interval.ms",
     .kind = Kind::integer,
     .min = 1},
    {.key = "transaction.state.log.load.buffer.size", .kind = Kind::integer, .min = 1},
    {.key = "transaction.state.log.min.isr", .kind = Kind::integer, .min = 1},
    {.key = "transaction.state.log.num.partitions", .kind = Kind::integer, .min = 1},
    {.key = "transaction.state.log.segment.bytes", .kind = Kind::integer, .min = 1},
    {.key = "transactional.id.expiration.ms", .kind = Kind::integer, .min = 1},
    {.key = "zookeeper.max.in.flight.requests", .kind = Kind::integer, .min = 1},
    {.key = "zookeeper.set.acl", .kind = Kind::boolean},
};

// Topic-level keys accepted without effect (LogConfig's names). Sorted.
constexpr KeyRule kTopicRules[] = {
    {.key = "cleanup.policy", .kind = Kind::cleanup_policy},
    {.key = "compression.type",
     .kind = Kind::choice,
     .choices = "uncompressed|zstd|lz4|snappy|gzip|producer"},
    {.key = "delete.retention.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "file.delete.delay.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "follower.replication.throttled.replicas", .kind = Kind::text},
    {.key = "index.interval.bytes", .kind = Kind::integer},
    {.key = "leader.replication.throttled.replicas", .kind = Kind::text},
    {.key = "max.compaction.lag.ms", .kind = Kind::integer, .min = 1, .max = kMaxInt64},
    {.key = "message.downconversion.enable", .kind = Kind::boolean},
    // Checked by apply_topic_overrides (check_message_format).
    {.key = "message.format.version", .kind = Kind::text},
    {.key = "message.timestamp.difference.max.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "message.timestamp.type", .kind = Kind::choice, .choices = "CreateTime|LogAppendTime"},
    {.key = "min.compaction.lag.ms", .kind = Kind::integer, .max = kMaxInt64},
    {.key = "preallocate", .kind = Kind::boolean},
    {.key = "segment.index.bytes", .kind = Kind::integer, .min = 4},
    {.key = "segment.jitter.ms", .kind = Kind::zero_only, .note = "segment roll jitter"},
};

template <size_t N>
std::vector<std::string> keys_of(const KeyRule (&rules)[N]) {
  std::vector<std::string> keys;
  for (const KeyRule& r : rules) keys.emplace_back(r.key);
  return keys;
}

std::vector<std::string_view> split_choices(std::string_view choices) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t bar = choices.find('|', start);
    out.push_back(choices.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
}

// cleanup.policy / log.cleanup.policy: a list of delete and compact. With
// `compact_allowed` (the internal offsets topic), returns whether delete is
// among them.
bool check_cleanup_policy(const Properties& props, const std::string& key,
                          bool compact_allowed = false) {
  const std::string& value = props.values.at(key);
  const std::vector<std::string> policies = split_csv(value);
  if (policies.empty()) throw props.error(key, fmt::format("expected delete, got '{}'", value));
  bool deletes = false;
  for (const std::string& p : policies) {
    deletes = deletes || p == "delete";
    if (p == "compact" && compact_allowed) continue;
    if (p == "compact") {
      throw props.error(key, fmt::format("log compaction is not modelled; only 'delete' is "
                                         "accepted, got '{}'",
                                         value));
    }
    if (p != "delete") {
      throw props.error(key, fmt::format("expected delete (or compact, which is not modelled), "
                                         "got '{}'",
                                         value));
    }
  }
  return deletes;
}

// A message format version (log.message.format.version, a topic's
// message.format.version): a version the broker's release knows and, when
// the broker uses it, one whose record format is v2. The older formats (v0,
// v1: no producer ids, sequence numbers or leader epochs in a batch, and a
// broker converting between formats) are not modelled.
void check_message_format(const Properties& props, const std::string& key, MessageFormatReading reading) {
  const std::string& value = props.values.at(key);
  const std::optional<InterBrokerProtocol> v = find_inter_broker_protocol(value, reading.release);
  if (!v) {
    throw props.error(key, fmt::format("'{}' is not a version Kafka {} knows (expected one from 0.8.0 "
                                       "to {}, such as 0.11.0 or 2.2-IV1)",
                                       value, to_string(reading.release),
                                       newest_inter_broker_protocol(reading.release).name()));
  }
  const bool used = reading.used;
  if (used && *v < inter_broker_protocol("0.11.0-IV0")) {
    throw props.error(key, fmt::format("'{}' asks for record format v{}, which is not modelled; "
                                       "only record format v2 (0.11.0 and later) is",
                                       value, *v < inter_broker_protocol("0.10.0-IV0") ? 0 : 1));
  }
}

void check_rule(const Properties& props, const KeyRule& rule) {
  const std::string key(rule.key);
  if (!props.has(key)) return;
  const std::string& value = props.values.at(key);
  switch (rule.kind) {
    case Kind::integer:
      props.get_int(key, 0, rule.min, rule.max);
      break;
    case Kind::boolean:
      get_bool(props, key, false);
      break;
    case Kind::text:
      break;
    case Kind::choice: {
      const std::vector<std::string_view> choices = split_choices(rule.choices);
      if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
        throw props.error(key, fmt::format("expected one of {}, got '{}'", fmt::join(choices, ", "),
                                           value));
      }
      break;
    }
    case Kind::zero_only:
      if (props.get_int(key, 0, kMinInt64, kMaxInt64) != 0) {
        throw props.error(key, fmt::format("{} is not modelled; only 0 is accepted, got '{}'",
                                           rule.note, value));
      }
      break;
    case Kind::cleanup_policy:
      check_cleanup_policy(props, key);
      break;
  }
}

// --- keys with effect ---------------------------------------------------------

const std::vector<std::string>& broker_keys_with_effect() {
  static const std::vector<std::string> keys = {
      "advertised.listeners",
      "auto.create.topics.enable",
      "auto.leader.rebalance.enable",
      "broker.id",
      "broker.id.generation.enable",
      "controlled.shutdown.enable",
      "controlled.shutdown.max.retries",
      "controlled.shutdown.retry.backoff.ms",
      "controller.socket.timeout.ms",
      "default.replication.factor",
      "group.initial.rebalance.delay.ms",
      "group.max.session.timeout.ms",
      "group.max.size",
      "group.min.session.timeout.ms",
      "inter.broker.listener.name",
      "inter.broker.protocol.version",
      "kafkasim.truncation",
      "leader.imbalance.check.interval.seconds",
      "leader.imbalance.per.broker.percentage",
      "listener.security.protocol.map",
      "listeners",
      "log.dir",
      "log.dirs",
      "log.flush.interval.messages",
      "log.flush.interval.ms",
      "log.flush.scheduler.interval.ms",
      "log.retention.bytes",
      "log.retention.check.interval.ms",
      "log.retention.hours",
      "log.retention.minutes",
      "log.retention.ms",
      "log.roll.hours",
      "log.roll.ms",
      "log.segment.bytes",
      "message.max.bytes",
      "min.insync.replicas",
      "num.io.threads",
      "num.partitions",
      "offsets.commit.required.acks",
      "offsets.commit.timeout.ms",
      "offsets.retention.minutes",
      "offsets.topic.num.partitions",
      "offsets.topic.replication.factor",
      "offsets.topic.segment.bytes",
      "replica.fetch.backoff.ms",
      "replica.fetch.max.bytes",
      "replica.fetch.min.bytes",
      "replica.fetch.response.max.bytes",
      "replica.fetch.wait.max.ms",
      "replica.high.watermark.checkpoint.interval.ms",
      "replica.lag.time.max.ms",
      "replica.socket.timeout.ms",
      "request.timeout.ms",
      "reserved.broker.max.id",
      "security.inter.broker.protocol",
      "transaction.state.log.replication.factor",
      "unclean.leader.election.enable",
      "zookeeper.connect",
      "zookeeper.connection.timeout.ms",
      "zookeeper.session.timeout.ms",
  };
  return keys;
}

// The pre-3.0 listener keys (removed by KAFKA-12945 in 3.0).
const std::vector<std::string>& legacy_listener_keys() {
  static const std::vector<std::string> keys = {"advertised.host.name", "advertised.port",
                                                "host.name", "port"};
  return keys;
}

std::vector<std::string> known_broker_keys(VersionProfile version) {
  std::vector<std::string> keys = broker_keys_with_effect();
  keys.insert(keys.end(), kBrokerKeysWithoutEffect.begin(), kBrokerKeysWithoutEffect.end());
  if (version < VersionProfile::v3_1) {  // removed in 3.0 (KAFKA-12945)
    keys.insert(keys.end(), legacy_listener_keys().begin(), legacy_listener_keys().end());
  }
  return keys;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Keys a real broker knows but that configure something the model refuses.
void reject_not_modelled(const Properties& props, VersionProfile version) {
  static const std::set<std::string> kraft = {
      "controller.listener.names",  "controller.quorum.bootstrap.servers",
      "controller.quorum.voters",   "node.id",
      "process.roles",              "zookeeper.metadata.migration.enable",
  };
  for (const auto& [key, value] : props.values) {
    if (kraft.count(key) != 0) {
      throw props.error(key, "KRaft (and the migration to it) is not modelled; kafkasim brokers "
                             "run in ZooKeeper mode");
    }
    if (starts_with(key, "ssl.") || starts_with(key, "sasl.")) {
      throw props.error(key, "SSL and SASL are not modelled; only PLAINTEXT listeners are");
    }
    if (version >= VersionProfile::v3_1) {
      const auto& legacy = legacy_listener_keys();
      if (std::find(legacy.begin(), legacy.end(), key) != legacy.end()) {
        throw props.error(key, fmt::format("removed in Kafka 3.0 (KAFKA-12945); use {}",
                                           starts_with(key, "advertised.") ? "advertised.listeners"
                                                                           : "listeners"));
      }
    }
  }
}

// --- listeners ------------------------------------------------------------------

const std::set<std::string>& security_protocols() {
  static const std::set<std::string> protocols = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT",
                                                  "SASL_SSL"};
  return protocols;
}

// listener.security.protocol.map, names normalised to upper case as Kafka's
// ListenerName.normalised does. Kafka's default maps each protocol to itself.
std::map<std::string, std::string> parse_protocol_map(const Properties& props) {
  const std::string key = "listener.security.protocol.map";
  std::map<std::string, std::string> map;
  if (!props.has(key)) {
    for (const std::string& p : security_protocols()) map.emplace(p, p);
    return map;
  }
  const std::string& value = props.values.at(key);
  const std::string expected =
      fmt::format("expected NAME:PROTOCOL[,NAME:PROTOCOL...], got '{}'", value);
  const std::vector<std::string> entries = split_csv(value);
  if (entries.empty()) throw props.error(key, expected);
  for (const std::string& entry : entries) {
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) throw props.error(key, expected);
    const std::string name = upper(trim(std::string_view(entry).substr(0, colon)));
    const std::string protocol = upper(trim(std::string_view(entry).substr(colon + 1)));
    if (name.empty() || protocol.empty()) throw props.error(key, expected);
    if (security_protocols().count(protocol) == 0) {
      throw props.error(key, fmt::format("unknown security protocol '{}' for listener {} (expected "
                                         "one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)",
                                         protocol, name));
    }
    if (!map.emplace(name, protocol).second) {
      throw props.error(key, fmt::format("listener {} is mapped twice in '{}'", name, value));
    }
  }
  return map;
}

bool valid_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '%' || c == '.' ||
         c == '_' || c == ':';
}

// NAME://host:port or NAME://[v6 address]:port (EndPoint's uriParseExp:
// ^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)); the host may be empty.
Listener parse_listener(const Properties& props, const std::string& key, const std::string& value,
                        const std::string& entry) {
  const std::string expected =
      fmt::format("expected NAME://host:port[,NAME://host:port...], got '{}'", value);
  const size_t scheme = entry.find("://");
  if (scheme == std::string::npos || scheme == 0) throw props.error(key, expected);
  Listener l;
  l.name = upper(entry.substr(0, scheme));
  const std::string_view rest = std::string_view(entry).substr(scheme + 3);
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      throw props.error(key, expected);
    }
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) throw props.error(key, expected);
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (!std::all_of(host.begin(), host.end(), valid_host_char)) {
    throw props.error(key, fmt::format("invalid host '{}' in '{}'", host, entry));
  }
  int p = 0;
  const bool digits = all_digits(port) && port.size() <= 5;
  if (digits) std::from_chars(port.data(), port.data() + port.size(), p);
  if (!digits || p < 1 || p > 65535) {
    throw props.error(key,
                      fmt::format("port must be from 1 to 65535, got '{}' in '{}'", port, entry));
  }
  l.host = std::string(host);
  l.port = static_cast<uint16_t>(p);
  return l;
}

// A comma-separated list of listeners with distinct names (and, for
// `listeners`, distinct ports: two sockets cannot bind one port).
std::vector<Listener> parse_listeners(const Properties& props, const std::string& key,
                                      const std::string& value, bool distinct_ports) {
  const std::vector<std::string> entries = split_csv(value);
  if (entries.empty()) {
    throw props.error(key, fmt::format("expected NAME://host:port[,NAME://host:port...], got '{}'",
                                       value));
  }
  std::vector<Listener> out;
  for (const std::string& entry : entries) {
    Listener l = parse_listener(props, key, value, entry);
    for (const Listener& other : out) {
      if (other.name == l.name) {
        throw props.error(key,
                          fmt::format("listener name {} is given twice in '{}'", l.name, value));
      }
      if (distinct_ports && other.port == l.port) {
        throw props.error(key, fmt::format("port {} is used by both {} and {}", l.port, other.name,
                                           l.name));
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string names_of(const std::vector<Listener>& listeners) {
  std::vector<std::string> names;
  for (const Listener& l : listeners) names.push_back(l.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void parse_all_listeners(const Properties& props, BrokerConfig& c) {
  const std::map<std::string, std::string> protocols = parse_protocol_map(props);
  const bool legacy = c.version < VersionProfile::v3_1;

  // listeners; before 3.0, PLAINTEXT://host.name:port when absent.
  const std::string legacy_host = props.get_string("host.name", "");
  const int64_t legacy_port = props.get_int("port", 9092, 1, 65535);
  if (props.has("listeners")) {
    c.listeners = parse_listeners(props, "listeners", props.values.at("listeners"), true);
  } else if (legacy) {
    c.listeners = {Listener{"PLAINTEXT", legacy_host, static_cast<uint16_t>(legacy_port)}};
  }
  // Without `listeners` the listener is PLAINTEXT, so only the map can fail it.
  const std::string listeners_key =
      props.has("listeners") ? "listeners" : "listener.security.protocol.map";
  for (const Listener& l : c.listeners) {
    auto it = protocols.find(l.name);
    if (it == protocols.end()) {
      throw props.error(listeners_key,
                        fmt::format("listener {} has no security protocol in "
                                    "listener.security.protocol.map",
                                    l.name));
    }
    if (it->second != "PLAINTEXT") {
      throw props.error(listeners_key,
                        fmt::format("listener {} uses security protocol {}; only PLAINTEXT is "
                                    "modelled",
                                    l.name, it->second));
    }
  }

  // advertised.listeners; before 3.0, advertised.host.name/advertised.port;
  // otherwise the listeners themselves.
  std::string advertised_key = "advertised.listeners";
  const bool legacy_advertised =
      legacy && (props.has("advertised.host.name") || props.has("advertised.port"));
  const std::string advertised_host = props.get_string("advertised.host.name", legacy_host);
  const int64_t advertised_port = props.get_int("advertised.port", legacy_port, 1, 65535);
  if (props.has("advertised.listeners")) {
    c.advertised_listeners =
        parse_listeners(props, advertised_key, props.values.at(advertised_key), false);
  } else if (legacy_advertised) {
    advertised_key = props.has("advertised.host.name") ? "advertised.host.name" : "advertised.port";
    c.advertised_listeners = {
        Listener{"PLAINTEXT", advertised_host, static_cast<uint16_t>(advertised_port)}};
  } else {
    c.advertised_listeners = c.listeners;
  }
  for (const Listener& a : c.advertised_listeners) {
    const bool listed = std::any_of(c.listeners.begin(), c.listeners.end(),
                                    [&](const Listener& l) { return l.name == a.name; });
    if (!listed) {
      throw props.error(advertised_key,
                        fmt::format("listener {} is not among the listeners ({})", a.name,
                                    names_of(c.listeners)));
    }
    if (a.host == "0.0.0.0") {
      const bool defaulted = !props.has("advertised.listeners") && !legacy_advertised;
      throw props.error(
          advertised_key,
          fmt::format("cannot use the non-routable meta-address 0.0.0.0 (listener {}){}; give "
                      "an address other brokers and clients can reach",
                      a.name, defaulted ? ", which it takes from listeners when not set" : ""));
    }
  }

  // inter.broker.listener.name, or the listener named after
  // security.inter.broker.protocol (default PLAINTEXT); not both.
  const bool by_name = props.has("inter.broker.listener.name");
  const bool by_protocol = props.has("security.inter.broker.protocol");
  if (by_name && by_protocol) {
    throw props.error("security.inter.broker.protocol",
                      "only one of inter.broker.listener.name and security.inter.broker.protocol "
                      "may be set");
  }
  if (by_protocol) {
    const std::string& v = props.values.at("security.inter.broker.protocol");
    if (upper(v) != "PLAINTEXT") {
      throw props.error("security.inter.broker.protocol",
                        fmt::format("only PLAINTEXT is modelled, got '{}'", v));
    }
  }
  c.inter_broker_listener =
      by_name ? upper(trim(props.values.at("inter.broker.listener.name"))) : "PLAINTEXT";
  const bool advertised = std::any_of(
      c.advertised_listeners.begin(), c.advertised_listeners.end(),
      [&](const Listener& l) { return l.name == c.inter_broker_listener; });
  if (!advertised) {
    throw props.error(
        by_protocol ? "security.inter.broker.protocol" : "inter.broker.listener.name",
        fmt::format("{} is not among the advertised listeners ({}){}", c.inter_broker_listener,
                    names_of(c.advertised_listeners),
                    by_name || by_protocol ? "" : "; it defaults to PLAINTEXT"));
  }
}

// --- the log settings -------------------------------------------------------------

void parse_log_config(const Properties& props, LogConfig& log) {
  constexpr int64_t kMsPerMinute = 60 * 1000;
  constexpr int64_t kMsPerHour = 60 * kMsPerMinute;

  log.segment_bytes =
      props.get_int("log.segment.bytes", log.segment_bytes, kMinSegmentBytes, kMaxInt32, "bytes");
  log.max_message_bytes = static_cast<int32_t>(
      props.get_int("message.max.bytes", log.max_message_bytes, 0, kMaxInt32, "bytes"));

  // log.roll.ms wins over log.roll.hours (KafkaConfig.logRollTimeMillis);
  // both are checked.
  const int64_t roll_hours = props.get_int("log.roll.hours", 168, 1, kMaxInt32, "hours");
  const int64_t roll_ms = props.get_int("log.roll.ms", 0, 1, kMaxInt64, "milliseconds");
  if (props.has("log.roll.ms")) {
    log.segment_ms = roll_ms;
  } else if (props.has("log.roll.hours")) {
    log.segment_ms = roll_hours * kMsPerHour;
  }

  // log.retention.ms over .minutes over .hours
  // (KafkaConfig.getLogRetentionTimeMillis); -1 is unlimited.
  const int64_t ret_ms =
      get_int_or_unlimited(props, "log.retention.ms", 0, 1, kMaxInt64, "milliseconds");
  const int64_t ret_minutes =
      get_int_or_unlimited(props, "log.retention.minutes", 0, 1, kMaxInt32, "minutes");
  const int64_t ret_hours =
      get_int_or_unlimited(props, "log.retention.hours", 0, 1, kMaxInt32, "hours");
  if (props.has("log.retention.ms")) {
    log.retention_ms = ret_ms;
  } else if (props.has("log.retention.minutes")) {
    log.retention_ms = ret_minutes == -1 ? -1 : ret_minutes * kMsPerMinute;
  } else if (props.has("log.retention.hours")) {
    log.retention_ms = ret_hours == -1 ? -1 : ret_hours * kMsPerHour;
  }

  log.retention_bytes = get_int_or_unlimited(props, "log.retention.bytes", log.retention_bytes, 0,
                                             kMaxInt64, "bytes");
  log.min_insync_replicas = static_cast<int32_t>(
      props.get_int("min.insync.replicas", log.min_insync_replicas, 1, kMaxInt32, "replicas"));
  log.unclean_leader_election =
      get_bool(props, "unclean.leader.election.enable", log.unclean_leader_election);
  log.flush_interval_messages = props.get_int(
      "log.flush.interval.messages", log.flush_interval_messages, 1, kMaxInt64, "messages");
}

}  // namespace

const char* to_string(VersionProfile v) {
  switch (v) {
    case VersionProfile::v2_2: return "2.2";
    case VersionProfile::v2_3: return "2.3";
    case VersionProfile::v2_8: return "2.8";
    case VersionProfile::v3_1: return "3.1";
    case VersionProfile::v3_9: return "3.9";
  }
  return "?";
}

// --- inter.broker.protocol.version ---------------------------------------------------

namespace {

// Every inter-broker protocol version Kafka has named, oldest first
// (ApiVersion.allVersions in 2.8.2, MetadataVersion in 3.9).
constexpr std::string_view kInterBrokerProtocols[] = {
    "0.8.0",      "0.8.1",      "0.8.2",      "0.9.0",      "0.10.0-IV0", "0.10.0-IV1",
    "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1",
    "0.11.0-IV2", "1.0-IV0",    "1.1-IV0",    "2.0-IV0",    "2.0-IV1",    "2.1-IV0",
    "2.1-IV1",    "2.1-IV2",    "2.2-IV0",    "2.2-IV1",    "2.3-IV0",    "2.3-IV1",
    "2.4-IV0",    "2.4-IV1",    "2.5-IV0",    "2.6-IV0",    "2.7-IV0",    "2.7-IV1",
    "2.7-IV2",    "2.8-IV0",    "2.8-IV1",    "3.0-IV0",    "3.0-IV1",    "3.1-IV0",
    "3.2-IV0",    "3.3-IV0",    "3.3-IV1",    "3.3-IV2",    "3.3-IV3",    "3.4-IV0",
    "3.5-IV0",    "3.5-IV1",    "3.5-IV2",    "3.6-IV0",    "3.6-IV1",    "3.6-IV2",
    "3.7-IV0",    "3.7-IV1",    "3.7-IV2",    "3.7-IV3",    "3.7-IV4",    "3.8-IV0",
    "3.9-IV0",    "4.0-IV0",    "4.0-IV1",
};
constexpr int kInterBrokerProtocolCount =
    static_cast<int>(sizeof(kInterBrokerProtocols) / sizeof(kInterBrokerProtocols[0]));

// "2.7-IV2" -> "2.7"; a name without a sub-version is its own short form.
std::string_view short_name(std::string_view full) { return full.substr(0, full.find('-')); }

}  // namespace

std::string_view InterBrokerProtocol::name() const {
  SIM_ASSERT(ordinal >= 0 && ordinal < kInterBrokerProtocolCount, "no inter-broker protocol {}",
             ordinal);
  return kInterBrokerProtocols[ordinal];
}

InterBrokerProtocol inter_broker_protocol(std::string_view full_name) {
  for (int i = 0; i < kInterBrokerProtocolCount; ++i) {
    if (kInterBrokerProtocols[i] == full_name) return InterBrokerProtocol{i};
  }
  SIM_ASSERT(false, "no inter-broker protocol named {}", full_name);
  return {};
}

std::optional<InterBrokerProtocol> find_inter_broker_protocol(std::string_view s, VersionProfile release) {
  const size_t keep = s.substr(0, 2) == "0." ? 3 : 2;
  size_t end = 0;
  for (size_t parts = 0; parts < keep && end != std::string_view::npos; ++parts) {
    end = s.find('.', parts == 0 ? 0 : end + 1);
  }
  const std::string_view key = s.substr(0, end);
  const int newest = newest_inter_broker_protocol(release).ordinal;
  for (int i = 0; i <= newest; ++i) {
    if (kInterBrokerProtocols[i] == key) return InterBrokerProtocol{i};
  }
  // Short names only up to the newest production version (IBP_VERSIONS).
  for (int i = default_inter_broker_protocol(release).ordinal; i >= 0; --i) {
    if (short_name(kInterBrokerProtocols[i]) == key) return InterBrokerProtocol{i};
  }
  return std::nullopt;
}

InterBrokerProtocol newest_inter_broker_protocol(VersionProfile v) {
  switch (v) {
    case VersionProfile::v2_2: return inter_broker_protocol("2.2-IV1");
    case VersionProfile::v2_3: return inter_broker_protocol("2.3-IV1");
    case VersionProfile::v2_8: return inter_broker_protocol("2.8-IV1");
    case VersionProfile::v3_1: return inter_broker_protocol("3.1-IV0");
    // 3.9 names 4.0-IV0 and 4.0-IV1 too, not yet for production: a
    // ZooKeeper-mode 3.9 broker takes them by their full names only.
    case VersionProfile::v3_9: return inter_broker_protocol("4.0-IV1");
  }
  return {};
}

InterBrokerProtocol default_inter_broker_protocol(VersionProfile v) {
  // MetadataVersion.LATEST_PRODUCTION in 3.9; ApiVersion.latestVersion before.
  return v == VersionProfile::v3_9 ? inter_broker_protocol("3.9-IV0") : newest_inter_broker_protocol(v);
}

VersionProfile parse_version_profile(const std::string& s, const std::string& source,
                                     const std::string& key) {
  // major.minor or major.minor.patch, digits only.
  std::vector<std::string_view> parts;
  std::string_view rest = s;
  while (true) {
    const size_t dot = rest.find('.');
    parts.push_back(rest.substr(0, dot));
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  const bool well_formed = (parts.size() == 2 || parts.size() == 3) &&
                           std::all_of(parts.begin(), parts.end(), all_digits);
  if (well_formed) {
    const std::string line = fmt::format("{}.{}", parts[0], parts[1]);
    for (VersionProfile v : kVersionProfiles) {
      if (line == to_string(v)) return v;
    }
  }
  throw model::ConfigError(source, key,
                           fmt::format("expected one of 2.2, 2.3, 2.8, 3.1, 3.9, got '{}'", s));
}

const char* to_string(Truncation t) {
  switch (t) {
    case Truncation::leader_epoch: return "leader-epoch";
    case Truncation::high_watermark: return "high-watermark";
  }
  return "?";
}

Endpoint BrokerConfig::advertised_endpoint(const std::string& host_address) const {
  auto it = std::find_if(advertised_listeners.begin(), advertised_listeners.end(),
                         [&](const Listener& l) { return l.name == inter_broker_listener; });
  SIM_ASSERT(it != advertised_listeners.end(),
             "broker {}: no advertised listener named {} (inter.broker.listener.name)", broker_id,
             inter_broker_listener);
  const bool wildcard = it->host.empty() || it->host == "0.0.0.0";
  return Endpoint{it->name, wildcard ? host_address : it->host, it->port};
}

const std::vector<std::string> kBrokerKeysWithoutEffect = keys_of(kBrokerRules);

const std::vector<std::string> kTopicConfigKeys = [] {
  std::vector<std::string> keys = {
      "flush.messages", "flush.ms",      "max.message.bytes", "min.insync.replicas",
      "retention.bytes", "retention.ms", "segment.bytes",     "segment.ms",
      "unclean.leader.election.enable",
  };
  for (const KeyRule& r : kTopicRules) keys.emplace_back(r.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}();

namespace {

// The mechanisms a broker's inter-broker protocol switches, on top of its
// release's (default_broker_config).
void apply_inter_broker_protocol(BrokerConfig& c) {
  const InterBrokerProtocol ibp = c.inter_broker_protocol;
  ReplicationRules& r = c.replication_rules;
  // AlterIsr from 2.7 on protocol 2.7-IV2 (isAlterIsrSupported, KafkaServer
  // picks the manager by it); otherwise the leader writes ZooKeeper itself,
  // holding the partition's lock until 3.0.
  r.isr_changes_through_controller =
      c.version >= VersionProfile::v2_8 && ibp >= inter_broker_protocol("2.7-IV2");
  r.isr_write_holds_partition_lock = !r.isr_changes_through_controller && c.version < VersionProfile::v3_1;
  // Truncation on the Fetch answer from 2.8 (KAFKA-10554) on protocol
  // 2.7-IV1 (isTruncationOnFetchSupported); never with the pre-KIP-101
  // what-if, whose followers cut at their high watermark.
  r.truncation_on_fetch = c.version >= VersionProfile::v2_8 && ibp >= inter_broker_protocol("2.7-IV1") &&
                          c.truncation == Truncation::leader_epoch;
  // KafkaServer.startup: a ZooKeeper-based producer-id manager, which claims
  // its first block as it is built, unless the protocol allows
  // AllocateProducerIds (isAllocateProducerIdsSupported, 3.0-IV0; 3.1.0, 3.9).
  c.startup_rules.producer_id_block_at_startup =
      c.version < VersionProfile::v3_1 || ibp < inter_broker_protocol("3.0-IV0");
  // AlterPartitionManager.buildRequest: topic ids (and so AlterPartition
  // version 2 and up) from 2.8-IV0 (isTopicIdsSupported, KIP-516).
  r.alter_isr_by_topic_id = ibp >= inter_broker_protocol("2.8-IV0");
}

// inter.broker.protocol.version: a version the release knows (KafkaConfig
// refuses any other: "Version `x` is not a valid version"), from 2.1-IV2,
// the oldest the model's replicas speak.
InterBrokerProtocol parse_inter_broker_protocol(const Properties& props, VersionProfile version) {
  const std::string key = "inter.broker.protocol.version";
  if (!props.has(key)) return default_inter_broker_protocol(version);
  const std::string& value = props.values.at(key);
  const InterBrokerProtocol newest = newest_inter_broker_protocol(version);
  const std::optional<InterBrokerProtocol> ibp = find_inter_broker_protocol(value, version);
  if (!ibp) {
    throw props.error(key, fmt::format("'{}' is not a version Kafka {} knows (expected one from "
                                       "0.8.0 to {}, such as {} or {})",
                                       value, to_string(version), newest.name(),
                                       short_name(default_inter_broker_protocol(version).name()),
                                       default_inter_broker_protocol(version).name()));
  }
  if (*ibp < inter_broker_protocol("2.1-IV2")) {
    const std::string named = value == ibp->name() ? fmt::format("'{}'", value)
                                                   : fmt::format("'{}' ({})", value, ibp->name());
    throw props.error(key, fmt::format("{} is not modelled: below 2.1-IV2 (KIP-320) a follower's "
                                       "fetch carries no leader epoch (Fetch v10), which the model's "
                                       "replicas always send; use 2.1 or later",
                                       named));
  }
  return *ibp;
}

// log.message.format.version: read as a version the release knows, even
// where it is ignored (LogConfig.MessageFormatVersion parses it).
void check_log_message_format(const Properties& props, const BrokerConfig& c) {
  const std::string key = "log.message.format.version";
  if (!props.has(key)) return;
  // Where it is used, a format above the protocol's is refused too
  // (KafkaConfig: "can only be used when inter.broker.protocol.version is set
  // to version ... or higher"), which cannot happen here: every modelled
  // protocol writes record format v2, the newest.
  check_message_format(props, key, message_format_reading(c));
}

}  // namespace

MessageFormatReading message_format_reading(const BrokerConfig& c) {
  return {c.version,
          c.version < VersionProfile::v3_1 || c.inter_broker_protocol < inter_broker_protocol("3.0-IV1")};
}

BrokerConfig default_broker_config(VersionProfile version) {
  BrokerConfig c;  // the 3.9 defaults
  c.version = version;
  c.inter_broker_protocol = default_inter_broker_protocol(version);
  // listeners=PLAINTEXT://:9092 (3.x); PLAINTEXT://host.name:port with
  // host.name "" and port 9092 (2.x): the same endpoint.
  c.listeners = {Listener{}};
  c.advertised_listeners = c.listeners;
  // Each rule starts in the release its comment in config.h names; a
  // profile has it when its line is that release or later.
  const auto from = [version](VersionProfile first) { return version >= first; };
  const bool v2_3 = from(VersionProfile::v2_3);
  const bool v2_8 = from(VersionProfile::v2_8);
  const bool v3_1 = from(VersionProfile::v3_1);
  const bool v3_9 = from(VersionProfile::v3_9);
  if (!v2_8) {
    // KIP-537 (Kafka 2.5) raised both.
    c.zookeeper_session_timeout_ms = 6000;
    c.replica_lag_time_max_ms = 10000;
    // Kafka 2.5 raised it to 1 MiB + 12 (KAFKA-4203, Defaults.MessageMaxBytes).
    c.log.max_message_bytes = 1000012;
  }
  if (!v2_3) {
    // KIP-345 (Kafka 2.3, KAFKA-7862) raised it from 5 to 30 minutes so that
    // static members can use long session timeouts.
    c.group_max_session_timeout_ms = 300000;
  }
  c.replication_rules = {.min_isr_holds_high_watermark = v3_9,           // 3.7
                         .new_epoch_forgets_out_of_sync_fetch = v3_9,    // 3.3
                         .no_op_truncation_trims_epochs = v2_8,          // 2.6.1 / 2.7.0
                         // isr_write_holds_partition_lock: apply_inter_broker_protocol
                         .failed_fetch_sleeps = !v3_1,                   // until 3.1
                         .isr_join_needs_live_broker = v3_9,             // 3.3
                         .high_watermark_waits_for_eligible_only = v3_9,  // 3.6
                         .fetch_above_end_completes = v3_9,              // 3.8
                         .unknown_producer_any_sequence = v2_8,          // 2.5
                         // isr_changes_through_controller: apply_inter_broker_protocol
                         .alter_isr_keeps_sent_change = v3_1,            // 3.0
                         .isr_commit_moves_high_watermark = v3_1,        // 3.1
                         .alter_isr_retry = v3_9   ? AlterIsrRetry::sent_again     // 3.2.1 / 3.3
                                            : v3_1 ? AlterIsrRetry::falls_back     // 3.1
                                                   : AlterIsrRetry::stays_pending,
                         .alter_partition_checks = v3_9,                 // 3.3
                         .failover_takes_offline_replicas_out_of_isr = v2_3,
                         .zk_isr_failure_stays_pending = v2_8,           // 2.8
                         .shrink_pass_skips_change_in_flight = v2_8,     // 2.7
                         .acks_count_maximal_isr = v2_8,                 // 2.7
                         // truncation_on_fetch: apply_inter_broker_protocol
                         .diverging_epoch_skips_high_watermark = v3_9};  // 3.4.1 / 3.5
  c.group_rules = {.join_admission_by_state = v2_8,        // 2.6
                   .heartbeat_while_completing = v2_8,     // 2.7
                   .heartbeat_checks_member_first = v2_3,  // 2.3
                   .commit_checks_member_first = v2_8,     // 2.4
                   .turned_away_drops_pending = v3_1,      // 3.0
                   .rejoin_updates_timeouts = v3_9};       // 3.4 / 3.3.2
  c.startup_rules = {.listen_at_end_of_startup = v3_9,                // 3.5
                     // producer_id_block_at_startup: apply_inter_broker_protocol
                     .producer_id_waits_for_block = !v3_9,           // until 3.6
                     .load_cuts_epochs_at_log_start = !v3_1,         // until 3.0
                     .controller_request_timeout_capped = v3_9,      // 3.3.2 / 3.4
                     .controlled_shutdown_reads_zookeeper = !v3_1};  // until 3.0
  apply_inter_broker_protocol(c);
  return c;
}

BrokerConfig parse_broker_config(const Properties& props, VersionProfile version) {
  reject_not_modelled(props, version);
  props.reject_unknown(known_broker_keys(version));
  for (const KeyRule& rule : kBrokerRules) check_rule(props, rule);

  BrokerConfig c = default_broker_config(version);
  c.inter_broker_protocol = parse_inter_broker_protocol(props, version);
  check_log_message_format(props, c);

  // broker.id: with broker.id.generation.enable (the default) Kafka takes a
  // configured id only up to reserved.broker.max.id, keeping the ids above
  // for generated ones.
  const bool generation = get_bool(props, "broker.id.generation.enable", true);
  const int64_t reserved_max = props.get_int("reserved.broker.max.id", 1000, 0, kMaxInt32);
  if (!props.has("broker.id")) {
    throw props.error("broker.id",
                      "required (broker.id generation from ZooKeeper is not modelled; give each "
                      "broker its id)");
  }
  if (props.values.at("broker.id") == "-1") {
    throw props.error("broker.id",
                      "broker.id generation (-1) is not modelled; give each broker an id >= 0");
  }
  const int64_t id = props.get_int("broker.id", -1, 0, kMaxInt32, "a broker id");
  if (generation && id > reserved_max) {
    throw props.error("broker.id",
                      fmt::format("{} is above reserved.broker.max.id ({}), which Kafka keeps for "
                                  "generated ids; raise reserved.broker.max.id or set "
                                  "broker.id.generation.enable=false",
                                  id, reserved_max));
  }
  c.broker_id = static_cast<BrokerId>(id);

  parse_all_listeners(props, c);

  // log.dirs wins over log.dir (KafkaConfig.logDirs).
  for (const char* key : {"log.dir", "log.dirs"}) {
    if (props.has(key) && split_csv(props.values.at(key)).empty()) {
      throw props.error(key, fmt::format("expected a comma-separated list of directories, got '{}'",
                                         props.values.at(key)));
    }
  }
  if (props.has("log.dirs") || props.has("log.dir")) {
    const std::string key = props.has("log.dirs") ? "log.dirs" : "log.dir";
    c.log_dirs = split_csv(props.values.at(key));
    std::set<std::string> seen;
    for (const std::string& dir : c.log_dirs) {
      if (!seen.insert(dir).second) {
        throw props.error(key, fmt::format("directory '{}' is given twice", dir));
      }
    }
  }

  // zookeeper.connect: required; kept as written, checked as the client will
  // parse it.
  if (!props.has("zookeeper.connect")) {
    throw props.error("zookeeper.connect",
                      "required (the ZooKeeper ensemble, e.g. zk1:2181,zk2:2181,zk3:2181/kafka)");
  }
  c.zookeeper_connect = props.values.at("zookeeper.connect");
  zk::parse_connect_string(c.zookeeper_connect, props.source, "zookeeper.connect");
  c.zookeeper_session_timeout_ms =
      static_cast<int32_t>(props.get_int("zookeeper.session.timeout.ms",
                                         c.zookeeper_session_timeout_ms, 1, kMaxInt32,
                                         "milliseconds"));
  c.zookeeper_connection_timeout_ms = static_cast<int32_t>(
      props.get_int("zookeeper.connection.timeout.ms", c.zookeeper_connection_timeout_ms, 1,
                    kMaxInt32, "milliseconds"));

  auto int32 = [&](const char* key, int32_t current, int64_t min, int64_t max,
                   std::string_view unit) {
    return static_cast<int32_t>(props.get_int(key, current, min, max, unit));
  };
  auto int64 = [&](const char* key, int64_t current, int64_t min, std::string_view unit) {
    return props.get_int(key, current, min, kMaxInt64, unit);
  };

  c.default_replication_factor =
      int32("default.replication.factor", c.default_replication_factor, 1, kMaxInt32, "replicas");
  c.num_partitions = int32("num.partitions", c.num_partitions, 1, kMaxInt32, "partitions");
  c.num_io_threads = int32("num.io.threads", c.num_io_threads, 1, kMaxInt32, "threads");

  c.replica_lag_time_max_ms = int64("replica.lag.time.max.ms", c.replica_lag_time_max_ms, 1,
                                    "milliseconds");
  c.replica_fetch_wait_max_ms = int32("replica.fetch.wait.max.ms", c.replica_fetch_wait_max_ms, 0,
                                      kMaxInt32, "milliseconds");
  c.replica_fetch_min_bytes =
      int32("replica.fetch.min.bytes", c.replica_fetch_min_bytes, 0, kMaxInt32, "bytes");
  c.replica_fetch_max_bytes =
      int32("replica.fetch.max.bytes", c.replica_fetch_max_bytes, 0, kMaxInt32, "bytes");
  c.replica_fetch_response_max_bytes = int32("replica.fetch.response.max.bytes",
                                             c.replica_fetch_response_max_bytes, 0, kMaxInt32, "bytes");
  c.replica_fetch_backoff_ms = int32("replica.fetch.backoff.ms", c.replica_fetch_backoff_ms, 0,
                                     kMaxInt32, "milliseconds");
  c.replica_socket_timeout_ms = int32("replica.socket.timeout.ms", c.replica_socket_timeout_ms, 1,
                                      kMaxInt32, "milliseconds");
  c.replica_high_watermark_checkpoint_interval_ms =
      int64("replica.high.watermark.checkpoint.interval.ms",
            c.replica_high_watermark_checkpoint_interval_ms, 1, "milliseconds");
  // KafkaConfig.validateValues: a fetch may wait neither longer than the
  // socket timeout nor longer than a follower may lag.
  if (c.replica_fetch_wait_max_ms > c.replica_socket_timeout_ms) {
    throw props.error(
        props.has("replica.socket.timeout.ms") ? "replica.socket.timeout.ms"
                                               : "replica.fetch.wait.max.ms",
        fmt::format("replica.socket.timeout.ms ({} ms) must be at least replica.fetch.wait.max.ms "
                    "({} ms), or fetches time out while the leader waits",
                    c.replica_socket_timeout_ms, c.replica_fetch_wait_max_ms));
  }
  if (c.replica_fetch_wait_max_ms > c.replica_lag_time_max_ms) {
    throw props.error(
        props.has("replica.lag.time.max.ms") ? "replica.lag.time.max.ms"
                                             : "replica.fetch.wait.max.ms",
        fmt::format("replica.fetch.wait.max.ms ({} ms) must not be larger than "
                    "replica.lag.time.max.ms ({} ms), or followers drop out of the ISR",
                    c.replica_fetch_wait_max_ms, c.replica_lag_time_max_ms));
  }

  c.controlled_shutdown_enable = get_bool(props, "controlled.shutdown.enable",
                                          c.controlled_shutdown_enable);
  c.controlled_shutdown_max_retries = int32("controlled.shutdown.max.retries",
                                            c.controlled_shutdown_max_retries, 0, kMaxInt32,
                                            "retries");
  c.controlled_shutdown_retry_backoff_ms = int64(
      "controlled.shutdown.retry.backoff.ms", c.controlled_shutdown_retry_backoff_ms, 0,
      "milliseconds");

  c.auto_leader_rebalance_enable =
      get_bool(props, "auto.leader.rebalance.enable", c.auto_leader_rebalance_enable);
  c.leader_imbalance_check_interval_seconds =
      int64("leader.imbalance.check.interval.seconds", c.leader_imbalance_check_interval_seconds,
            1, "seconds");
  c.leader_imbalance_per_broker_percentage =
      int32("leader.imbalance.per.broker.percentage", c.leader_imbalance_per_broker_percentage, 0,
            100, "percent");
  c.auto_create_topics_enable =
      get_bool(props, "auto.create.topics.enable", c.auto_create_topics_enable);

  c.offsets_topic_num_partitions = int32(
      "offsets.topic.num.partitions", c.offsets_topic_num_partitions, 1, kMaxInt32, "partitions");
  c.offsets_topic_replication_factor = static_cast<int16_t>(
      props.get_int("offsets.topic.replication.factor", c.offsets_topic_replication_factor, 1,
                    kMaxInt16, "replicas"));
  c.offsets_topic_segment_bytes = int32("offsets.topic.segment.bytes", c.offsets_topic_segment_bytes,
                                        1, kMaxInt32, "bytes");
  c.offsets_retention_minutes = props.get_int("offsets.retention.minutes",
                                              c.offsets_retention_minutes, 1, kMaxInt32, "minutes");
  c.transaction_state_log_replication_factor =
      int32("transaction.state.log.replication.factor", c.transaction_state_log_replication_factor,
            1, kMaxInt16, "replicas");

  c.log_retention_check_interval_ms = int64(
      "log.retention.check.interval.ms", c.log_retention_check_interval_ms, 1, "milliseconds");
  c.log_flush_scheduler_interval_ms = int64(
      "log.flush.scheduler.interval.ms", c.log_flush_scheduler_interval_ms, 1, "milliseconds");

  c.request_timeout_ms =
      int32("request.timeout.ms", c.request_timeout_ms, 1, kMaxInt32, "milliseconds");
  c.controller_socket_timeout_ms = int32("controller.socket.timeout.ms",
                                         c.controller_socket_timeout_ms, 1, kMaxInt32,
                                         "milliseconds");

  c.group_initial_rebalance_delay_ms = int32(
      "group.initial.rebalance.delay.ms", c.group_initial_rebalance_delay_ms, 0, kMaxInt32,
      "milliseconds");
  c.group_min_session_timeout_ms = int32("group.min.session.timeout.ms",
                                         c.group_min_session_timeout_ms, 1, kMaxInt32,
                                         "milliseconds");
  c.group_max_session_timeout_ms = int32("group.max.session.timeout.ms",
                                         c.group_max_session_timeout_ms, 1, kMaxInt32,
                                         "milliseconds");
  c.group_max_size = int32("group.max.size", c.group_max_size, 1, kMaxInt32, "members");
  c.offsets_commit_timeout_ms = int32("offsets.commit.timeout.ms", c.offsets_commit_timeout_ms, 1,
                                      kMaxInt32, "milliseconds");
  // KafkaConfig: atLeast(-1); the coordinator waits for the ISR only with -1.
  c.offsets_commit_required_acks = static_cast<int16_t>(props.get_int(
      "offsets.commit.required.acks", c.offsets_commit_required_acks, -1, kMaxInt16, "acks"));
  // Kafka does not check this, but no consumer could then join a group.
  if (c.group_min_session_timeout_ms > c.group_max_session_timeout_ms) {
    throw props.error(props.has("group.min.session.timeout.ms") ? "group.min.session.timeout.ms"
                                                                : "group.max.session.timeout.ms",
                      fmt::format("group.min.session.timeout.ms ({} ms) must not be larger than "
                                  "group.max.session.timeout.ms ({} ms)",
                                  c.group_min_session_timeout_ms, c.group_max_session_timeout_ms));
  }

  parse_log_config(props, c.log);
  // log.flush.interval.ms defaults to log.flush.scheduler.interval.ms
  // (KafkaConfig.logFlushIntervalMs), itself "never" (Long.MaxValue) by default.
  c.log.flush_interval_ms = int64("log.flush.interval.ms", c.log_flush_scheduler_interval_ms, 0,
                                  "milliseconds");

  const std::string truncation = props.get_string("kafkasim.truncation", "leader-epoch");
  if (truncation == "leader-epoch") {
    c.truncation = Truncation::leader_epoch;
  } else if (truncation == "high-watermark") {
    c.truncation = Truncation::high_watermark;
  } else {
    throw props.error("kafkasim.truncation",
                      fmt::format("expected leader-epoch or high-watermark, got '{}'", truncation));
  }
  apply_inter_broker_protocol(c);
  return c;
}

LogConfig apply_topic_overrides(const LogConfig& defaults, const Properties& overrides,
                                bool internal, MessageFormatReading reading) {
  const Properties& o = overrides;
  o.reject_unknown(kTopicConfigKeys);
  for (const KeyRule& rule : kTopicRules) {
    if (rule.kind != Kind::cleanup_policy) check_rule(o, rule);
  }
  if (o.has("message.format.version")) check_message_format(o, "message.format.version", reading);

  LogConfig c = defaults;
  // Log.deleteOldSegments: without delete in the policy, only segments below
  // the log start offset go.
  if (o.has("cleanup.policy")) c.retention_deletes = check_cleanup_policy(o, "cleanup.policy", internal);
  c.segment_bytes =
      o.get_int("segment.bytes", c.segment_bytes, kMinSegmentBytes, kMaxInt32, "bytes");
  c.segment_ms = o.get_int("segment.ms", c.segment_ms, 1, kMaxInt64, "milliseconds");
  c.max_message_bytes = static_cast<int32_t>(
      o.get_int("max.message.bytes", c.max_message_bytes, 0, kMaxInt32, "bytes"));
  // Unlike log.retention.ms, a topic's retention.ms may be 0 (LogConfig:
  // atLeast(-1)).
  c.retention_ms = get_int_or_unlimited(o, "retention.ms", c.retention_ms, 0, kMaxInt64,
                                        "milliseconds");
  c.retention_bytes =
      get_int_or_unlimited(o, "retention.bytes", c.retention_bytes, 0, kMaxInt64, "bytes");
  c.min_insync_replicas = static_cast<int32_t>(
      o.get_int("min.insync.replicas", c.min_insync_replicas, 1, kMaxInt32, "replicas"));
  c.unclean_leader_election =
      get_bool(o, "unclean.leader.election.enable", c.unclean_leader_election);
  // flush.messages is atLeast(1) since 3.3 (KAFKA-12613); 2.x also took 0,
  // which flushes after every message just as 1 does.
  c.flush_interval_messages =
      o.get_int("flush.messages", c.flush_interval_messages, 1, kMaxInt64, "messages");
  c.flush_interval_ms = o.get_int("flush.ms", c.flush_interval_ms, 0, kMaxInt64, "milliseconds");
  return c;
}

}  // namespace kafka
