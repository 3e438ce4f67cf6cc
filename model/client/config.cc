// Producer and consumer configuration, read as librdkafka reads it
// (rdkafka_conf.c: the property table, rd_kafka_anyconf_set_prop0 and
// rd_kafka_conf_finalize / rd_kafka_topic_conf_finalize), but strict: a key
// the model does not know is an error with a did-you-mean, where librdkafka
// fails on unknown keys too but only warns about a consumer key given to a
// producer (and the other way round).
//
// Source: confluentinc/librdkafka master (2.x), CONFIGURATION.md and
// src/rdkafka_conf.c. Ranges are librdkafka's unless noted.
//
// Aliases. Every pair below names one setting; giving both spellings is an
// error ("set twice through an alias"), where librdkafka keeps the last one
// set. The first of each pair is librdkafka's canonical name where
// librdkafka has the pair; the Java names are accepted too:
//   bootstrap.servers      = metadata.broker.list        (librdkafka)
//   acks                   = request.required.acks       (librdkafka)
//   retries                = message.send.max.retries    (librdkafka)
//   message.timeout.ms     = delivery.timeout.ms         (librdkafka; Java's name)
//   linger.ms              = queue.buffering.max.ms      (librdkafka)
//   max.in.flight          = max.in.flight.requests.per.connection (librdkafka;
//                            producer and consumer, as librdkafka's is)
//   compression.codec      = compression.type            (librdkafka; no effect)
//   fetch.wait.max.ms      = fetch.max.wait.ms           (Java's name)
//   fetch.message.max.bytes = max.partition.fetch.bytes  (librdkafka; Java's name)
//   message.max.bytes      = max.request.size            (producer; Java's name)
//   request.timeout.ms     = socket.timeout.ms           (consumer only, see below)
//   retry.backoff.ms       = fetch.error.backoff.ms      (consumer only, see below)
//
// The consumer's request timeout. librdkafka has no consumer
// request.timeout.ms: every request a librdkafka consumer sends is timed by
// socket.timeout.ms ("Default timeout for network requests"), so that is the
// librdkafka spelling of the setting; the Java consumer calls it
// request.timeout.ms. Both are accepted, as aliases. librdkafka's default is
// 60000, Java's 30000; ConsumerConfig keeps 30000, the steady workload's
// consumers (librdkafka's defaults, steady.cc) 60000. For the producer the
// two are different settings, as in librdkafka: request.timeout.ms is the
// broker's ack timeout (sent in the ProduceRequest), socket.timeout.ms the
// client's own wait for any answer, which for a ProduceRequest is cut to
// what is left of its first record's message.timeout.ms.
//
// The consumer's backoff. The model's consumer waits retry.backoff.ms after
// a failed fetch, which librdkafka calls fetch.error.backoff.ms (default 500;
// retry.backoff.ms, default 100, is its backoff for other requests). The
// model has one value, so the two are aliases here.
//
// Where the model departs from librdkafka, on purpose:
//   - booleans are true/false/t/f/1/0 in any case for t/f, as librdkafka;
//     enumerations (acks=all, auto.offset.reset, security.protocol,
//     compression.codec, isolation.level, debug) are case-insensitive as
//     librdkafka's S2I properties are; partitioner and
//     partition.assignment.strategy are case-sensitive, as in librdkafka.
//   - acks is 0, 1, -1 or all: librdkafka takes -1 .. 1000, but brokers refuse
//     any other value (INVALID_REQUIRED_ACKS).
//   - message.timeout.ms = 0 (no timeout) and auto.commit.interval.ms = 0
//     (never commit) are errors: the model needs a finite timeout, and
//     enable.auto.commit=false says "never commit" plainly.
//   - linger.ms is an integer (librdkafka takes a fraction of a millisecond).
//   - partitioner: librdkafka's names, each a key hash and a rule for records
//     without a key (rdkafka_topic.c maps the names, rdkafka_msg.c has
//     rd_kafka_msg_partitioner_*; KeyHash / NullKeyPartitioning in config.h):
//       random             keys ignored; every record random
//       consistent         CRC-32 of the key; no key: CRC-32 of zero bytes = 0,
//                          so partition 0
//       consistent_random  CRC-32 of the key; no key or an empty key: random
//       murmur2            murmur2 of the key (Java's); no key: murmur2 of zero
//                          bytes, 0x106e08d9, mod the partition count
//       murmur2_random     murmur2 of the key; no key: random
//       fnv1a              FNV-1a of the key; no key: FNV-1a of zero bytes made
//                          positive, 0x7ee3623b, mod the partition count
//       fnv1a_random       FNV-1a of the key; no key: random
//     The fixed partitions are librdkafka's own: its partitioner functions are
//     called with a NULL key and length 0, and rd_crc32 / rd_murmur2 / rd_fnv1a
//     of zero bytes give those constants (rdmurmur2.c and rdfnv1a.c list them
//     in their unit tests for "" and NULL). The partition is taken over the
//     partition count, available or not, so records wait for that partition's
//     leader. Since librdkafka 1.5 records without a key under random and the
//     *_random partitioners are sticky: one random partition per topic until
//     sticky.partitioning.linger.ms (default 10 ms) has passed
//     (rd_kafka_msg_sticky_partition); consistent, murmur2 and fnv1a never are
//     (rd_kafka_topic_conf_finalize sets random_partitioner for them). The
//     model gives each such record a random available partition, which is
//     what librdkafka does with sticky.partitioning.linger.ms=0 and close to
//     it when records come further apart than 10 ms. The Java names sticky
//     (Java 2.4+, KIP-480) and round_robin (the DefaultPartitioner before
//     2.4) are accepted and hash keys with murmur2, as Java does.
//   - enable.idempotence=true, as librdkafka: acks must be all (set to all
//     when not given), max.in.flight at most 5 (lowered to 5 when not given),
//     retries at least 1 (set to 2147483647 when not given and below 1).
//   - message.timeout.ms must be greater than linger.ms when linger.ms is
//     given; otherwise linger.ms is lowered below it (librdkafka).
//   - consumer: heartbeat.interval.ms must be lower than session.timeout.ms
//     (Java and the broker assume it; librdkafka does not check),
//     max.poll.interval.ms at least session.timeout.ms (librdkafka), the
//     request timeout larger than fetch.wait.max.ms (the model's consumer
//     times a fetch by the request timeout alone, where librdkafka adds
//     fetch.wait.max.ms to it), and without group.id there is nothing to
//     commit to: enable.auto.commit=true is an error and its default becomes
//     false (the Java consumer's rule).
//   - partition.assignment.strategy: range and roundrobin (a list, the first
//     is used: every member of a simulated group is the same client);
//     cooperative-sticky is not modelled.
//   - security.protocol is plaintext only; ssl.* and sasl.* keys, transactions,
//     static membership and a few other librdkafka features are refused with
//     the reason (kNotModelled).
//   - bootstrap.servers is required, unless the defaults carry servers.
#include "model/client/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace client {
namespace {

using model::ConfigError;
using model::lower;
using model::trim;
using model::Properties;

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// librdkafka's RD_KAFKA_IDEMP_MAX_INFLIGHT.
constexpr int32_t kIdempotentMaxInFlight = 5;

// Splits at commas and trims each item; empty items are kept.
std::vector<std::string> split_csv(std::string_view s) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    const size_t end = comma == std::string_view::npos ? s.size() : comma;
    items.emplace_back(trim(s.substr(start, end - start)));
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// librdkafka's _RK_C_BOOL: true, t, 1, false, f, 0 (true/t/false/f in any case).
bool get_bool(const Properties& props, const std::string& key, bool default_value) {
  const std::optional<std::string> v = props.get(key);
  if (!v) return default_value;
  const std::string l = lower(*v);
  if (l == "true" || l == "t" || l == "1") return true;
  if (l == "false" || l == "f" || l == "0") return false;
  throw props.error(key, fmt::format("expected true or false, got '{}'", *v));
}

int32_t get_int32(const Properties& props, const std::string& key, int64_t default_value,
                  int64_t min, int64_t max, std::string_view unit) {
  return static_cast<int32_t>(props.get_int(key, default_value, min, max, unit));
}

// A setting two clients name differently, read from whichever spelling
// `key` is, with that client's range: `named` when it is `spelling`,
// `otherwise` when it is the other.
struct Range {
  int64_t min;
  int64_t max;
};
int32_t get_int32_by_spelling(const Properties& props, const std::string& key, std::string_view spelling,
                              Range named, Range otherwise, int64_t default_value, std::string_view unit) {
  const Range r = key == spelling ? named : otherwise;
  return get_int32(props, key, default_value, r.min, r.max, unit);
}

// reconnect.backoff.max.ms, a producer's and a consumer's (librdkafka's range).
int32_t get_reconnect_backoff_max(const Properties& props, int32_t default_value) {
  return get_int32(props, "reconnect.backoff.max.ms", default_value, 0, 3600000, "milliseconds");
}

// librdkafka refuses a cap below the first backoff (rd_kafka_conf_finalize).
// The error names the key given (the cap, when both are).
void check_reconnect_backoffs(const Properties& props, int32_t backoff_ms, int32_t max_ms) {
  if (max_ms >= backoff_ms) return;
  const std::string key = props.has("reconnect.backoff.max.ms") || !props.has("reconnect.backoff.ms")
                              ? "reconnect.backoff.max.ms"
                              : "reconnect.backoff.ms";
  throw props.error(key, fmt::format("reconnect.backoff.max.ms ({} ms) must be at least "
                                     "reconnect.backoff.ms ({} ms)",
                                     max_ms, backoff_ms));
}

// socket.connection.setup.timeout.ms, a producer's and a consumer's: at least
// 1 s, as librdkafka allows.
int32_t get_connection_setup_timeout(const Properties& props, int32_t default_value) {
  return get_int32(props, "socket.connection.setup.timeout.ms", default_value, 1000, kMaxInt32,
                   "milliseconds");
}

// --- aliases ----------------------------------------------------------------------

struct Alias {
  std::string_view key;    // the name this file reads
  std::string_view alias;  // the other spelling
};

constexpr Alias kProducerAliases[] = {
    {"bootstrap.servers", "metadata.broker.list"},
    {"acks", "request.required.acks"},
    {"retries", "message.send.max.retries"},
    {"message.timeout.ms", "delivery.timeout.ms"},
    {"linger.ms", "queue.buffering.max.ms"},
    {"max.in.flight", "max.in.flight.requests.per.connection"},
    {"compression.codec", "compression.type"},
    {"message.max.bytes", "max.request.size"},
};

constexpr Alias kConsumerAliases[] = {
    {"bootstrap.servers", "metadata.broker.list"},
    {"fetch.wait.max.ms", "fetch.max.wait.ms"},
    {"fetch.message.max.bytes", "max.partition.fetch.bytes"},
    {"request.timeout.ms", "socket.timeout.ms"},
    {"retry.backoff.ms", "fetch.error.backoff.ms"},
    {"max.in.flight", "max.in.flight.requests.per.connection"},
};

template <size_t N>
void reject_alias_conflicts(const Properties& props, const Alias (&aliases)[N]) {
  for (const Alias& a : aliases) {
    const std::string key(a.key);
    const std::string alias(a.alias);
    if (props.has(key) && props.has(alias)) {
      throw props.error(alias, fmt::format("set twice through an alias: '{}' and '{}' are one "
                                           "setting, given as '{}' and as '{}'",
                                           alias, key, props.values.at(alias),
                                           props.values.at(key)));
    }
  }
}

// The spelling of `key` that props uses (after reject_alias_conflicts): the
// alias when only it is given, else `key` itself.
template <size_t N>
std::string spelling(const Properties& props, const Alias (&aliases)[N], std::string_view key) {
  for (const Alias& a : aliases) {
    if (a.key == key && props.has(std::string(a.alias))) return std::string(a.alias);
  }
  return std::string(key);
}

// --- keys without effect ------------------------------------------------------------

enum class Kind {
  integer,      // an integer in [min, max]
  boolean,      // librdkafka's bool
  text,         // any string
  choice,       // one of `choices` ("a|b|c"), in any case
  choice_list,  // a comma-separated list of `choices`, in any case
};

// Which client takes a key.
enum class Role { both, producer, consumer };

struct KeyRule {
  std::string_view key;
  Role role = Role::both;
  Kind kind = Kind::text;
  int64_t min = 0;
  int64_t max = kMaxInt32;
  std::string_view choices = {};
  // For a choice: values a real client takes that the model refuses
  // ("a|b"), and why (`note`, "... not modelled").
  std::string_view not_modelled = {};
  std::string_view note = {};
};

// Keys a real client accepts that change nothing in the model, type-checked
// as librdkafka checks them. Sorted by key.
constexpr KeyRule kClientRules[] = {
    {.key = "api.version.request", .kind = Kind::boolean},
    {.key = "broker.version.fallback", .kind = Kind::text},
    // No effect while the broker has no replica.selector.class (follower
    // fetching, KIP-392), which the broker model does not accept.
    {.key = "check.crcs", .role = Role::consumer, .kind = Kind::boolean},
    {.key = "client.rack", .kind = Kind::text},
    // The model does not compress; batch.size counts uncompressed bytes.
    {.key = "compression.codec",
     .role = Role::producer,
     .kind = Kind::choice,
     .choices = "none|gzip|snappy|lz4|zstd"},
    {.key = "compression.type",
     .role = Role::producer,
     .kind = Kind::choice,
     .choices = "none|gzip|snappy|lz4|zstd"},
    {.key = "debug",
     .kind = Kind::choice_list,
     .choices = "generic|broker|topic|metadata|feature|queue|msg|protocol|cgrp|security|fetch|"
                "interceptor|plugin|consumer|admin|eos|mock|assignor|conf|telemetry|all"},
    {.key = "enable.partition.eof", .role = Role::consumer, .kind = Kind::boolean},
    {.key = "group.protocol",
     .role = Role::consumer,
     .kind = Kind::choice,
     .choices = "classic",
     .not_modelled = "consumer",
     .note = "the KIP-848 consumer group protocol is not modelled"},
    // Without transactions (not modelled) both levels read the same records.
    {.key = "isolation.level",
     .role = Role::consumer,
     .kind = Kind::choice,
     .choices = "read_uncommitted|read_committed"},
    {.key = "log.connection.close", .kind = Kind::boolean},
    {.key = "log_level", .kind = Kind::integer, .min = 0, .max = 7},
    {.key = "security.protocol",
     .kind = Kind::choice,
     .choices = "plaintext",
     .not_modelled = "ssl|sasl_plaintext|sasl_ssl",
     .note = "SSL and SASL are not modelled"},
    {.key = "socket.keepalive.enable", .kind = Kind::boolean},
    {.key = "socket.nagle.disable", .kind = Kind::boolean},
    {.key = "socket.receive.buffer.bytes", .kind = Kind::integer, .min = 0, .max = 100000000},
    {.key = "socket.send.buffer.bytes", .kind = Kind::integer, .min = 0, .max = 100000000},
    {.key = "statistics.interval.ms", .kind = Kind::integer, .min = 0, .max = 86400000},
    // The model's null-key records are random per record, as librdkafka's
    // are with 0 here (see the partitioner note at the top).
    {.key = "sticky.partitioning.linger.ms",
     .role = Role::producer,
     .kind = Kind::integer,
     .min = 0,
     .max = 900000},
};

bool takes(Role rule, Role client) { return rule == Role::both || rule == client; }

std::vector<std::string_view> split_choices(std::string_view choices) {
  std::vector<std::string_view> out;
  if (choices.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t bar = choices.find('|', start);
    out.push_back(choices.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
}

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void check_choice(const Properties& props, const KeyRule& rule, const std::string& key,
                  const std::string& value, const std::string& item) {
  const std::vector<std::string_view> choices = split_choices(rule.choices);
  const std::string l = lower(item);
  if (contains(choices, l)) return;
  if (contains(split_choices(rule.not_modelled), l)) {
    throw props.error(key, fmt::format("{}; expected {}, got '{}'", rule.note,
                                       fmt::join(choices, " or "), value));
  }
  throw props.error(key, fmt::format("expected {}{}, got '{}'",
                                     rule.kind == Kind::choice_list ? "a comma-separated list of "
                                                                    : "one of ",
                                     fmt::join(choices, ", "), value));
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
    case Kind::choice:
      check_choice(props, rule, key, value, std::string(trim(value)));
      break;
    case Kind::choice_list:
      for (const std::string& item : split_csv(value)) check_choice(props, rule, key, value, item);
      break;
  }
}

std::vector<std::string> keys_without_effect(Role client) {
  std::vector<std::string> keys;
  for (const KeyRule& r : kClientRules) {
    if (takes(r.role, client)) keys.emplace_back(r.key);
  }
  return keys;
}

// --- keys the model refuses ----------------------------------------------------------

struct NotModelled {
  std::string_view key;
  Role role;
  std::string_view reason;
};

constexpr NotModelled kNotModelled[] = {
    {"group.instance.id", Role::consumer, "static group membership (KIP-345) is not modelled"},
    {"queue.buffering.max.kbytes", Role::producer,
     "a bounded producer queue is not modelled; the model's producer queue is unbounded"},
    {"queue.buffering.max.messages", Role::producer,
     "a bounded producer queue is not modelled; the model's producer queue is unbounded"},
    {"retry.backoff.max.ms", Role::both,
     "exponential retry backoff is not modelled; the model waits retry.backoff.ms before "
     "every retry"},
    {"transaction.timeout.ms", Role::producer, "transactions (KIP-98) are not modelled"},
    {"transactional.id", Role::producer, "transactions (KIP-98) are not modelled"},
};

void reject_not_modelled(const Properties& props, Role client) {
  for (const auto& [key, value] : props.values) {
    if (starts_with(key, "ssl.") || starts_with(key, "sasl.")) {
      throw props.error(key, "SSL and SASL are not modelled; only security.protocol=plaintext is");
    }
    for (const NotModelled& n : kNotModelled) {
      if (n.key == key && takes(n.role, client)) throw props.error(key, std::string(n.reason));
    }
  }
}

std::vector<std::string> not_modelled_keys(Role client) {
  std::vector<std::string> keys;
  for (const NotModelled& n : kNotModelled) {
    if (takes(n.role, client)) keys.emplace_back(n.key);
  }
  return keys;
}

// --- keys with effect ----------------------------------------------------------------

const std::vector<std::string>& producer_keys_with_effect() {
  static const std::vector<std::string> keys = {
      "bootstrap.servers",
      "acks",
      "retries",
      "retry.backoff.ms",
      "request.timeout.ms",
      "socket.timeout.ms",
      "message.timeout.ms",
      "linger.ms",
      "batch.size",
      "batch.num.messages",
      "message.max.bytes",
      "max.in.flight",
      "enable.idempotence",
      "partitioner",
      "metadata.max.age.ms",
      "topic.metadata.refresh.interval.ms",
      "reconnect.backoff.ms",
      "reconnect.backoff.max.ms",
      "socket.connection.setup.timeout.ms",
      "client.id",
  };
  return keys;
}

const std::vector<std::string>& consumer_keys_with_effect() {
  static const std::vector<std::string> keys = {
      "bootstrap.servers",
      "group.id",
      "auto.offset.reset",
      "fetch.min.bytes",
      "fetch.wait.max.ms",
      "fetch.max.bytes",
      "fetch.message.max.bytes",
      "request.timeout.ms",
      "retry.backoff.ms",
      "enable.auto.commit",
      "auto.commit.interval.ms",
      "session.timeout.ms",
      "heartbeat.interval.ms",
      "max.poll.interval.ms",
      "partition.assignment.strategy",
      "max.in.flight",
      "metadata.max.age.ms",
      "topic.metadata.refresh.interval.ms",
      "reconnect.backoff.ms",
      "reconnect.backoff.max.ms",
      "socket.connection.setup.timeout.ms",
      "client.id",
  };
  return keys;
}

template <size_t N>
std::vector<std::string> known_keys(const std::vector<std::string>& with_effect,
                                    const Alias (&aliases)[N], Role client) {
  std::vector<std::string> keys = with_effect;
  for (const Alias& a : aliases) keys.emplace_back(a.alias);
  for (const std::string& k : keys_without_effect(client)) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  for (const std::string& k : not_modelled_keys(client)) keys.push_back(k);
  return keys;
}

std::vector<std::string> producer_known_keys() {
  return known_keys(producer_keys_with_effect(), kProducerAliases, Role::producer);
}

std::vector<std::string> consumer_known_keys() {
  return known_keys(consumer_keys_with_effect(), kConsumerAliases, Role::consumer);
}

// A key the other kind of client takes (librdkafka warns "is a consumer
// property and will be ignored by this producer instance"; here, an error).
void reject_other_role(const Properties& props, const std::vector<std::string>& own,
                       const std::vector<std::string>& other, std::string_view own_name,
                       std::string_view other_name) {
  for (const auto& [key, value] : props.values) {
    if (std::find(own.begin(), own.end(), key) != own.end()) continue;
    if (std::find(other.begin(), other.end(), key) != other.end()) {
      throw props.error(key, fmt::format("a {} key; a {} does not take it", other_name, own_name));
    }
  }
}

// The start of a client's parse: keys the model refuses, keys of the other
// client, unknown keys, aliases given twice, keys without effect.
template <size_t N>
void check_keys(const Properties& props, Role client, const Alias (&aliases)[N]) {
  reject_not_modelled(props, client);
  const std::vector<std::string> producer_keys = producer_known_keys();
  const std::vector<std::string> consumer_keys = consumer_known_keys();
  if (client == Role::producer) {
    reject_other_role(props, producer_keys, consumer_keys, "producer", "consumer");
    props.reject_unknown(producer_keys);
  } else {
    reject_other_role(props, consumer_keys, producer_keys, "consumer", "producer");
    props.reject_unknown(consumer_keys);
  }
  reject_alias_conflicts(props, aliases);
  for (const KeyRule& rule : kClientRules) {
    if (takes(rule.role, client)) check_rule(props, rule);
  }
}

template <size_t N>
std::vector<BootstrapServer> get_bootstrap(const Properties& props, const Alias (&aliases)[N],
                                           const std::vector<BootstrapServer>& defaults) {
  const std::string key = spelling(props, aliases, "bootstrap.servers");
  const std::optional<std::string> value = props.get(key);
  if (!value) {
    if (!defaults.empty()) return defaults;
    throw props.error("bootstrap.servers",
                      "required: expected host:port[,host:port...], got nothing");
  }
  return parse_bootstrap(*value, props.source, key);
}

// --- producer values -------------------------------------------------------------------

int16_t parse_acks(const Properties& props, const std::string& key, int16_t default_value) {
  const std::optional<std::string> v = props.get(key);
  if (!v) return default_value;
  const std::string t(trim(*v));
  if (lower(t) == "all" || t == "-1") return -1;
  if (t == "0") return 0;
  if (t == "1") return 1;
  throw props.error(key, fmt::format("expected 0, 1, -1 or all, got '{}'", *v));
}

struct Partitioner {
  KeyHash key_hash;
  NullKeyPartitioning null_key;
};

Partitioner parse_partitioner(const Properties& props, Partitioner default_value) {
  const std::optional<std::string> v = props.get("partitioner");
  if (!v) return default_value;
  // librdkafka's values (exact case, as librdkafka compares them with
  // strcmp), then Java's.
  static const std::vector<std::pair<std::string, Partitioner>> names = {
      {"random", {KeyHash::none, NullKeyPartitioning::random}},
      {"consistent", {KeyHash::crc32, NullKeyPartitioning::hashed}},
      {"consistent_random", {KeyHash::crc32, NullKeyPartitioning::random}},
      {"murmur2", {KeyHash::murmur2, NullKeyPartitioning::hashed}},
      {"murmur2_random", {KeyHash::murmur2, NullKeyPartitioning::random}},
      {"fnv1a", {KeyHash::fnv1a, NullKeyPartitioning::hashed}},
      {"fnv1a_random", {KeyHash::fnv1a, NullKeyPartitioning::random}},
      {"sticky", {KeyHash::murmur2, NullKeyPartitioning::sticky}},
      {"round_robin", {KeyHash::murmur2, NullKeyPartitioning::round_robin}},
  };
  for (const auto& [name, p] : names) {
    if (*v == name) return p;
  }
  throw props.error("partitioner",
                    fmt::format("expected one of random, consistent, consistent_random, murmur2, "
                                "murmur2_random, fnv1a, fnv1a_random, sticky, round_robin, "
                                "got '{}'",
                                *v));
}

// message.timeout.ms: positive (librdkafka's 0, "no timeout", is refused).
int64_t parse_message_timeout(const Properties& props, const std::string& key,
                              int64_t default_value) {
  if (props.get(key) == std::optional<std::string>("0")) {
    throw props.error(key, "0 (no timeout) is not modelled; expected a positive integer "
                           "(milliseconds, at most 2147483647), got '0'");
  }
  return props.get_int(key, default_value, 1, kMaxInt32, "milliseconds");
}

// --- consumer values -------------------------------------------------------------------

ConsumerConfig::Reset parse_reset(const Properties& props, ConsumerConfig::Reset default_value) {
  const std::optional<std::string> v = props.get("auto.offset.reset");
  if (!v) return default_value;
  const std::string l = lower(trim(*v));
  if (l == "earliest" || l == "smallest" || l == "beginning") {
    return ConsumerConfig::Reset::earliest;
  }
  if (l == "latest" || l == "largest" || l == "end") return ConsumerConfig::Reset::latest;
  // none is Java's spelling, error librdkafka's.
  if (l == "none" || l == "error") return ConsumerConfig::Reset::none;
  throw props.error("auto.offset.reset",
                    fmt::format("expected one of earliest, smallest, beginning, latest, largest, "
                                "end, none, error, got '{}'",
                                *v));
}

std::string parse_assignment_strategy(const Properties& props, const std::string& default_value) {
  const std::string key = "partition.assignment.strategy";
  const std::optional<std::string> v = props.get(key);
  if (!v) return default_value;
  const std::vector<std::string> items = split_csv(*v);
  for (const std::string& item : items) {
    if (item == "range" || item == "roundrobin") continue;
    if (item == "cooperative-sticky") {
      throw props.error(key, fmt::format("cooperative-sticky (incremental rebalancing, KIP-429) "
                                         "is not modelled; expected a comma-separated list of "
                                         "range and roundrobin, got '{}'",
                                         *v));
    }
    throw props.error(key, fmt::format("expected a comma-separated list of range and roundrobin, "
                                       "got '{}'",
                                       *v));
  }
  return items.front();  // split_csv gives at least one item, checked above
}

}  // namespace

std::vector<BootstrapServer> parse_bootstrap(const std::string& s, const std::string& source,
                                             const std::string& key) {
  const auto fail = [&](const std::string& what) { return ConfigError(source, key, what); };
  const std::string expected = fmt::format("expected host:port[,host:port...], got '{}'", s);
  if (trim(s).empty()) throw fail(expected);
  std::vector<BootstrapServer> out;
  for (const std::string& entry : split_csv(s)) {
    if (entry.empty()) throw fail(fmt::format("empty entry in '{}'", s));
    std::string_view rest = entry;
    // librdkafka takes an optional protocol prefix.
    if (const size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
      const std::string protocol = lower(rest.substr(0, scheme));
      if (protocol != "plaintext") {
        throw fail(fmt::format("only plaintext:// is modelled (SSL and SASL are not), got '{}' "
                               "in '{}'",
                               entry, s));
      }
      rest.remove_prefix(scheme + 3);
    }
    std::string_view host;
    std::optional<std::string_view> port;
    if (!rest.empty() && rest.front() == '[') {  // [IPv6 address]:port
      const size_t close = rest.find(']');
      if (close == std::string_view::npos) {
        throw fail(fmt::format("unclosed '[' in '{}' in '{}'", entry, s));
      }
      host = rest.substr(1, close - 1);
      const std::string_view after = rest.substr(close + 1);
      if (!after.empty()) {
        if (after.front() != ':') throw fail(fmt::format("bad entry '{}' in '{}'", entry, s));
        port = after.substr(1);
      }
    } else {
      const size_t colon = rest.find(':');
      if (colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos) {
        throw fail(fmt::format("more than one ':' in '{}' in '{}' (write an IPv6 address in "
                               "brackets)",
                               entry, s));
      }
      host = rest.substr(0, colon);
      if (colon != std::string_view::npos) port = rest.substr(colon + 1);
    }
    if (host.empty()) throw fail(fmt::format("no host in '{}' in '{}'", entry, s));
    if (std::any_of(host.begin(), host.end(), [](char c) {
          return std::isspace(static_cast<unsigned char>(c)) || c == '/';
        })) {
      throw fail(fmt::format("invalid host '{}' in '{}'", host, s));
    }
    BootstrapServer server;
    server.host = std::string(host);
    if (port) {
      int p = 0;
      const bool digits = !port->empty() && port->size() <= 5 &&
                          std::all_of(port->begin(), port->end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (digits) std::from_chars(port->data(), port->data() + port->size(), p);
      if (!digits || p < 1 || p > 65535) {
        throw fail(fmt::format("port must be from 1 to 65535, got '{}' in '{}'", *port, s));
      }
      server.port = static_cast<uint16_t>(p);
    }
    out.push_back(std::move(server));
  }
  return out;
}

namespace {

// topic.metadata.refresh.interval.ms (-1 .. 3600000) and metadata.max.age.ms
// (1 .. 86400000). Given an interval and no max age, the max age is three
// intervals, as librdkafka derives it (rd_kafka_conf_finalize: "Defaults to
// topic.metadata.refresh.interval.ms * 3"), so a long interval is not cut
// short by the default max age.
void parse_metadata_timing(const Properties& props, int64_t& refresh_interval_ms, int64_t& max_age_ms) {
  max_age_ms = props.get_int("metadata.max.age.ms", max_age_ms, 1, 86400000, "milliseconds");
  refresh_interval_ms = props.get_int("topic.metadata.refresh.interval.ms", refresh_interval_ms, -1, 3600000,
                                      "milliseconds");
  if (props.has("topic.metadata.refresh.interval.ms") && !props.has("metadata.max.age.ms") &&
      refresh_interval_ms > 0) {
    max_age_ms = 3 * refresh_interval_ms;
  }
}

}  // namespace

ProducerConfig parse_producer_config(const Properties& props, ProducerConfig defaults) {
  check_keys(props, Role::producer, kProducerAliases);
  const auto key = [&](std::string_view k) { return spelling(props, kProducerAliases, k); };

  ProducerConfig c = std::move(defaults);
  c.bootstrap = get_bootstrap(props, kProducerAliases, c.bootstrap);
  c.client_id = props.get_string("client.id", c.client_id);

  const std::string acks_key = key("acks");
  c.acks = parse_acks(props, acks_key, c.acks);
  const std::string retries_key = key("retries");
  c.retries = get_int32(props, retries_key, c.retries, 0, kMaxInt32, "retries");
  c.retry_backoff_ms =
      get_int32(props, "retry.backoff.ms", c.retry_backoff_ms, 1, 300000, "milliseconds");
  c.request_timeout_ms =
      get_int32(props, "request.timeout.ms", c.request_timeout_ms, 1, 900000, "milliseconds");
  if (c.single_request_timeout) {
    if (props.has("socket.timeout.ms")) {
      throw props.error("socket.timeout.ms",
                        "not a setting of the lab workload's producer (aiokafka): it waits "
                        "request.timeout.ms for every answer; set that instead");
    }
    c.socket_timeout_ms = c.request_timeout_ms;
  } else {
    c.socket_timeout_ms =
        get_int32(props, "socket.timeout.ms", c.socket_timeout_ms, 10, 300000, "milliseconds");
  }
  const std::string timeout_key = key("message.timeout.ms");
  c.message_timeout_ms = parse_message_timeout(props, timeout_key, c.message_timeout_ms);
  const std::string linger_key = key("linger.ms");
  c.linger_ms = get_int32(props, linger_key, c.linger_ms, 0, 900000, "milliseconds");
  c.batch_size = get_int32(props, "batch.size", c.batch_size, 1, kMaxInt32, "bytes");
  c.batch_num_messages =
      get_int32(props, "batch.num.messages", c.batch_num_messages, 1, 1000000, "messages");
  // librdkafka's spelling with its range; Java's with Java's (atLeast(0)).
  c.message_max_bytes = get_int32_by_spelling(props, key("message.max.bytes"), "message.max.bytes",
                                              {1000, 1000000000}, {0, kMaxInt32}, c.message_max_bytes,
                                              "bytes");
  const std::string in_flight_key = key("max.in.flight");
  c.max_in_flight = get_int32(props, in_flight_key, c.max_in_flight, 1, 1000000, "requests");
  c.enable_idempotence = get_bool(props, "enable.idempotence", c.enable_idempotence);
  const Partitioner partitioner = parse_partitioner(props, {c.key_hash, c.null_key});
  c.key_hash = partitioner.key_hash;
  c.null_key = partitioner.null_key;
  parse_metadata_timing(props, c.metadata_refresh_interval_ms, c.metadata_max_age_ms);
  c.reconnect_backoff_ms = get_int32(props, "reconnect.backoff.ms", c.reconnect_backoff_ms, 0,
                                     3600000, "milliseconds");
  c.reconnect_backoff_max_ms = get_reconnect_backoff_max(props, c.reconnect_backoff_max_ms);
  check_reconnect_backoffs(props, c.reconnect_backoff_ms, c.reconnect_backoff_max_ms);
  c.connection_setup_timeout_ms = get_connection_setup_timeout(props, c.connection_setup_timeout_ms);

  if (c.enable_idempotence) {
    if (!props.has(acks_key)) {
      c.acks = -1;
    } else if (c.acks != -1) {
      throw props.error(acks_key, fmt::format("must be all (-1) when enable.idempotence is true, "
                                              "got '{}'",
                                              props.values.at(acks_key)));
    }
    if (!props.has(in_flight_key)) {
      c.max_in_flight = std::min(c.max_in_flight, kIdempotentMaxInFlight);
    } else if (c.max_in_flight > kIdempotentMaxInFlight) {
      throw props.error(in_flight_key,
                        fmt::format("must be at most {} when enable.idempotence is true, got '{}'",
                                    kIdempotentMaxInFlight, props.values.at(in_flight_key)));
    }
    if (!props.has(retries_key)) {
      if (c.retries < 1) c.retries = static_cast<int32_t>(kMaxInt32);
    } else if (c.retries < 1) {
      throw props.error(retries_key,
                        fmt::format("must be at least 1 when enable.idempotence is true, got '{}'",
                                    props.values.at(retries_key)));
    }
  }

  if (c.message_timeout_ms <= c.linger_ms) {
    if (props.has(linger_key)) {
      throw props.error(linger_key, fmt::format("message.timeout.ms ({} ms) must be greater than "
                                                "linger.ms ({} ms)",
                                                c.message_timeout_ms, c.linger_ms));
    }
    c.linger_ms = static_cast<int32_t>(c.message_timeout_ms - 1);
  }
  return c;
}

ConsumerConfig parse_consumer_config(const Properties& props, ConsumerConfig defaults) {
  check_keys(props, Role::consumer, kConsumerAliases);
  const auto key = [&](std::string_view k) { return spelling(props, kConsumerAliases, k); };

  ConsumerConfig c = std::move(defaults);
  c.bootstrap = get_bootstrap(props, kConsumerAliases, c.bootstrap);
  c.client_id = props.get_string("client.id", c.client_id);
  c.group_id = props.get_string("group.id", c.group_id);
  c.auto_offset_reset = parse_reset(props, c.auto_offset_reset);

  c.fetch_min_bytes =
      get_int32(props, "fetch.min.bytes", c.fetch_min_bytes, 1, 100000000, "bytes");
  const std::string fetch_wait_key = key("fetch.wait.max.ms");
  c.fetch_wait_max_ms =
      get_int32(props, fetch_wait_key, c.fetch_wait_max_ms, 0, 300000, "milliseconds");
  c.fetch_max_bytes =
      get_int32(props, "fetch.max.bytes", c.fetch_max_bytes, 0, 2147483135, "bytes");
  // librdkafka's spelling with its range; Java's with Java's (atLeast(0)).
  c.max_partition_fetch_bytes =
      get_int32_by_spelling(props, key("fetch.message.max.bytes"), "fetch.message.max.bytes",
                            {1, 1000000000}, {0, kMaxInt32}, c.max_partition_fetch_bytes, "bytes");

  // Each spelling with its own client's range: socket.timeout.ms is
  // librdkafka's (10 .. 300000), request.timeout.ms Java's (positive).
  const std::string request_timeout_key = key("request.timeout.ms");
  c.request_timeout_ms =
      get_int32_by_spelling(props, request_timeout_key, "socket.timeout.ms", {10, 300000},
                            {1, kMaxInt32}, c.request_timeout_ms, "milliseconds");
  // retry.backoff.ms 1 .. 300000, fetch.error.backoff.ms 0 .. 300000.
  const std::string backoff_key = key("retry.backoff.ms");
  c.retry_backoff_ms = get_int32(props, backoff_key, c.retry_backoff_ms,
                                 backoff_key == "retry.backoff.ms" ? 1 : 0, 300000,
                                 "milliseconds");

  c.enable_auto_commit = get_bool(props, "enable.auto.commit", c.enable_auto_commit);
  if (props.get("auto.commit.interval.ms") == std::optional<std::string>("0")) {
    throw props.error("auto.commit.interval.ms",
                      "0 (never commit) is not modelled; set enable.auto.commit=false instead; "
                      "expected a positive integer (milliseconds, at most 86400000), got '0'");
  }
  c.auto_commit_interval_ms = get_int32(props, "auto.commit.interval.ms",
                                        c.auto_commit_interval_ms, 1, 86400000, "milliseconds");
  if (c.group_id.empty()) {
    if (props.has("enable.auto.commit") && c.enable_auto_commit) {
      throw props.error("enable.auto.commit",
                        "cannot be true without a group.id: there is no group to commit to");
    }
    c.enable_auto_commit = false;
  }

  c.session_timeout_ms =
      get_int32(props, "session.timeout.ms", c.session_timeout_ms, 1, 3600000, "milliseconds");
  c.heartbeat_interval_ms = get_int32(props, "heartbeat.interval.ms", c.heartbeat_interval_ms, 1,
                                      3600000, "milliseconds");
  c.max_poll_interval_ms = get_int32(props, "max.poll.interval.ms", c.max_poll_interval_ms, 1,
                                     86400000, "milliseconds");
  c.partition_assignment_strategy =
      parse_assignment_strategy(props, c.partition_assignment_strategy);
  c.max_in_flight = get_int32(props, key("max.in.flight"), c.max_in_flight, 1, 1000000, "requests");
  parse_metadata_timing(props, c.metadata_refresh_interval_ms, c.metadata_max_age_ms);
  c.reconnect_backoff_ms = get_int32(props, "reconnect.backoff.ms", c.reconnect_backoff_ms, 0,
                                     3600000, "milliseconds");
  c.reconnect_backoff_max_ms = get_reconnect_backoff_max(props, c.reconnect_backoff_max_ms);
  check_reconnect_backoffs(props, c.reconnect_backoff_ms, c.reconnect_backoff_max_ms);
  c.connection_setup_timeout_ms = get_connection_setup_timeout(props, c.connection_setup_timeout_ms);

  // Cross-checks: the error names the key given (the first one given, when
  // both are).
  const auto blame = [&](const std::string& a, const std::string& b) {
    return props.has(a) || !props.has(b) ? a : b;
  };
  if (c.heartbeat_interval_ms >= c.session_timeout_ms) {
    throw props.error(blame("heartbeat.interval.ms", "session.timeout.ms"),
                      fmt::format("heartbeat.interval.ms ({} ms) must be lower than "
                                  "session.timeout.ms ({} ms)",
                                  c.heartbeat_interval_ms, c.session_timeout_ms));
  }
  if (c.max_poll_interval_ms < c.session_timeout_ms) {
    throw props.error(blame("max.poll.interval.ms", "session.timeout.ms"),
                      fmt::format("max.poll.interval.ms ({} ms) must be at least "
                                  "session.timeout.ms ({} ms)",
                                  c.max_poll_interval_ms, c.session_timeout_ms));
  }
  if (c.request_timeout_ms <= c.fetch_wait_max_ms) {
    throw props.error(blame(request_timeout_key, fetch_wait_key),
                      fmt::format("{} ({} ms) must be greater than {} ({} ms): the model times a "
                                  "fetch by the request timeout alone",
                                  request_timeout_key, c.request_timeout_ms, fetch_wait_key,
                                  c.fetch_wait_max_ms));
  }
  return c;
}

}  // namespace client
