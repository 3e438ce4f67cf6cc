#include "model/kafka/znodes.h"

#include <cstdint>

#include <nlohmann/json.hpp>

namespace kafka::znodes {

using nlohmann::ordered_json;

const std::vector<std::string>& top_level_paths() {
  static const std::vector<std::string> paths = {
      "/admin",          kAdminDeleteTopics, "/brokers",          kBrokerIds,
      kBrokerTopics,     kBrokerSeqId,       "/config",           kConfigChanges,
      kConfigTopics,     "/config/clients",  "/config/users",     "/config/brokers",
      "/consumers",      kIsrChangeNotification, kLatestProducerIdBlock,
      "/log_dir_event_notification",
  };
  return paths;
}

std::string broker_path(BrokerId id) { return fmt::format("{}/{}", kBrokerIds, id); }
std::string topic_path(const std::string& topic) { return kBrokerTopics + "/" + topic; }
std::string partitions_path(const std::string& topic) { return topic_path(topic) + "/partitions"; }
std::string partition_path(const TopicPartition& tp) {
  return fmt::format("{}/{}", partitions_path(tp.topic), tp.partition);
}
std::string partition_state_path(const TopicPartition& tp) { return partition_path(tp) + "/state"; }
std::string topic_config_path(const std::string& topic) { return kConfigTopics + "/" + topic; }

namespace {

std::optional<ordered_json> parse(const std::string& s) {
  ordered_json j = ordered_json::parse(s, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

template <typename T>
std::optional<T> field(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// Kafka writes some numbers as JSON strings ("timestamp", "block_start").
std::optional<int64_t> string_number(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (!it->is_string()) return std::nullopt;
  const std::string s = it->get<std::string>();
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    const int digit = s[i] - '0';
    if (v > (INT64_MAX - digit) / 10) return std::nullopt;  // beyond int64
    v = v * 10 + digit;
  }
  return s[0] == '-' ? -v : v;
}

std::string endpoint_string(const Endpoint& e) {
  return fmt::format("{}://{}:{}", e.listener, e.host, e.port);
}

}  // namespace

std::string encode_broker(const BrokerRegistration& b) {
  ordered_json j;
  ordered_json map = ordered_json::object();
  ordered_json endpoints = ordered_json::array();
  for (const Endpoint& e : b.endpoints) {
    map[e.listener] = "PLAINTEXT";
    endpoints.push_back(endpoint_string(e));
  }
  j["listener_security_protocol_map"] = map;
  j["endpoints"] = endpoints;
  j["jmx_port"] = -1;
  j["host"] = b.endpoints.empty() ? "" : b.endpoints.front().host;
  j["timestamp"] = std::to_string(b.timestamp_ms);
  j["port"] = b.endpoints.empty() ? 0 : b.endpoints.front().port;
  j["version"] = 4;
  return j.dump();
}

std::optional<BrokerRegistration> decode_broker(BrokerId id, const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  BrokerRegistration b;
  b.id = id;
  b.timestamp_ms = string_number(*j, "timestamp").value_or(0);
  auto endpoints = field<std::vector<std::string>>(*j, "endpoints");
  if (!endpoints) return std::nullopt;
  for (const std::string& s : *endpoints) {
    const size_t scheme = s.find("://");
    const size_t colon = s.rfind(':');
    if (scheme == std::string::npos || colon == std::string::npos || colon < scheme + 3) {
      return std::nullopt;
    }
    Endpoint e;
    e.listener = s.substr(0, scheme);
    e.host = s.substr(scheme + 3, colon - scheme - 3);
    int64_t port = 0;
    if (colon + 1 == s.size()) return std::nullopt;  // "PLAINTEXT://h:" has no port
    for (size_t i = colon + 1; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      port = port * 10 + (s[i] - '0');
      if (port > 65535) return std::nullopt;
    }
    e.port = static_cast<uint16_t>(port);
    b.endpoints.push_back(std::move(e));
  }
  return b;
}

std::string encode_controller(BrokerId id, int64_t timestamp_ms) {
  ordered_json j;
  j["version"] = 1;
  j["brokerid"] = id;
  j["timestamp"] = std::to_string(timestamp_ms);
  return j.dump();
}

std::optional<BrokerId> decode_controller(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  return field<BrokerId>(*j, "brokerid");
}

std::optional<ControllerEpoch> decode_controller_epoch(const std::string& data) {
  if (data.empty() || data.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : data) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return ControllerEpoch{v};
}

std::string encode_assignment(const Assignment& a) {
  ordered_json j;
  j["version"] = 2;
  ordered_json parts = ordered_json::object();
  for (const auto& [p, replicas] : a) parts[std::to_string(p)] = replicas;
  j["partitions"] = parts;
  j["adding_replicas"] = ordered_json::object();
  j["removing_replicas"] = ordered_json::object();
  return j.dump();
}

std::optional<Assignment> decode_assignment(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  auto it = j->find("partitions");
  if (it == j->end() || !it->is_object()) return std::nullopt;
  Assignment a;
  for (auto p = it->begin(); p != it->end(); ++p) {
    const std::string& key = p.key();
    if (key.empty() || key.size() > 9) return std::nullopt;
    int32_t n = 0;
    for (char c : key) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + (c - '0');
    }
    try {
      a[n] = p.value().get<std::vector<BrokerId>>();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  }
  return a;
}

std::string encode_partition_state(const LeaderAndIsr& s) {
  ordered_json j;
  j["controller_epoch"] = s.controller_epoch.value;
  j["leader"] = s.leader;
  j["version"] = 1;
  j["leader_epoch"] = s.leader_epoch.value;
  j["isr"] = s.isr;
  return j.dump();
}

std::optional<LeaderAndIsr> decode_partition_state(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  auto ce = field<int64_t>(*j, "controller_epoch");
  auto leader = field<BrokerId>(*j, "leader");
  auto le = field<int64_t>(*j, "leader_epoch");
  auto isr = field<std::vector<BrokerId>>(*j, "isr");
  if (!ce || !leader || !le || !isr) return std::nullopt;
  return LeaderAndIsr{*leader, LeaderEpoch{*le}, *isr, ControllerEpoch{*ce}};
}

std::string encode_topic_config(const std::map<std::string, std::string>& config) {
  ordered_json j;
  j["version"] = 1;
  ordered_json c = ordered_json::object();
  for (const auto& [k, v] : config) c[k] = v;
  j["config"] = c;
  return j.dump();
}

std::optional<std::map<std::string, std::string>> decode_topic_config(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  return field<std::map<std::string, std::string>>(*j, "config");
}

std::string encode_isr_change(const std::vector<TopicPartition>& partitions) {
  ordered_json j;
  j["version"] = 1;
  ordered_json list = ordered_json::array();
  for (const TopicPartition& tp : partitions) {
    ordered_json p;
    p["topic"] = tp.topic;
    p["partition"] = tp.partition;
    list.push_back(p);
  }
  j["partitions"] = list;
  return j.dump();
}

std::optional<std::vector<TopicPartition>> decode_isr_change(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  auto it = j->find("partitions");
  if (it == j->end() || !it->is_array()) return std::nullopt;
  std::vector<TopicPartition> out;
  for (const auto& p : *it) {
    if (!p.is_object()) return std::nullopt;
    auto topic = field<std::string>(p, "topic");
    auto partition = field<int32_t>(p, "partition");
    if (!topic || !partition) return std::nullopt;
    out.push_back({*topic, *partition});
  }
  return out;
}

std::string encode_producer_id_block(const ProducerIdBlock& b) {
  ordered_json j;
  j["version"] = 1;
  j["broker"] = b.broker;
  j["block_start"] = std::to_string(b.block_start);
  j["block_end"] = std::to_string(b.block_end);
  return j.dump();
}

std::optional<ProducerIdBlock> decode_producer_id_block(const std::string& json) {
  auto j = parse(json);
  if (!j) return std::nullopt;
  auto broker = field<BrokerId>(*j, "broker");
  auto start = string_number(*j, "block_start");
  auto end = string_number(*j, "block_end");
  if (!broker || !start || !end) return std::nullopt;
  return ProducerIdBlock{*broker, *start, *end};
}

}  // namespace kafka::znodes
