// zoo.cfg, read as ZooKeeper's QuorumPeerConfig.parseProperties reads it,
// but strict: a key the model does not know is an error, not a system property.
//
// Keys with an effect: tickTime, initLimit, syncLimit, clientPort, dataDir
// (dataLogDir means the same here: one simulated disk per server), server.N,
// myid, minSessionTimeout, maxSessionTimeout, forceSync and commitLogCount.
// ZooKeeper turns every zoo.cfg key it does not know itself into the system
// property "zookeeper.<key>", which is how commitLogCount and forceSync reach
// it; the system property's own name, zookeeper.commitLogCount, is accepted
// too. Keys accepted without effect: kServerKeysWithoutEffect (config.h).
#include "model/zk/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zk {
namespace {

using model::Properties;

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

const std::vector<std::string>& keys_with_effect() {
  static const std::vector<std::string> keys = {
      "tickTime",          "initLimit",  "syncLimit",      "clientPort",
      "dataDir",           "dataLogDir", "myid",           "minSessionTimeout",
      "maxSessionTimeout", "forceSync",  "commitLogCount", "zookeeper.commitLogCount",
  };
  return keys;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> keys = keys_with_effect();
  keys.insert(keys.end(), kServerKeysWithoutEffect.begin(), kServerKeysWithoutEffect.end());
  return keys;
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::optional<uint16_t> parse_port(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 1 || v > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(v);
}

// Splits "host:rest" or "[v6 address]:rest" at the colon after the host.
std::optional<std::pair<std::string, std::string>> split_host(std::string_view s) {
  size_t colon = 0;
  std::string host;
  if (!s.empty() && s.front() == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      return std::nullopt;
    }
    host = std::string(s.substr(1, close - 1));
    colon = close + 1;
  } else {
    colon = s.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = std::string(s.substr(0, colon));
  }
  if (host.empty()) return std::nullopt;
  return std::pair{host, std::string(s.substr(colon + 1))};
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.emplace_back(s.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

struct ServerEntry {
  std::string key;  // as written, e.g. "server.1"
  PeerAddress address;
  std::optional<uint16_t> client_port;  // the ZooKeeper 3.5+ ";[host:]port" suffix
};

// server.N = host:peerPort:electionPort[:participant][;[clientHost:]clientPort]
ServerEntry parse_server_entry(const Properties& props, const std::string& key,
                               const std::string& value) {
  const std::string expected = fmt::format(
      "expected host:peerPort:electionPort[:participant][;[clientHost:]clientPort], got '{}'",
      value);
  ServerEntry entry;
  entry.key = key;
  const size_t semicolon = value.find(';');
  const std::string_view addresses = std::string_view(value).substr(0, semicolon);
  auto host_rest = split_host(addresses);
  if (!host_rest) throw props.error(key, expected);
  entry.address.host = host_rest->first;
  const std::vector<std::string> parts = split(host_rest->second, ':');
  if (parts.size() < 2 || parts.size() > 3) throw props.error(key, expected);
  const std::optional<uint16_t> peer = parse_port(parts[0]);
  if (!peer) {
    throw props.error(
        key, fmt::format("peer port must be from 1 to 65535, got '{}' in '{}'", parts[0], value));
  }
  const std::optional<uint16_t> election = parse_port(parts[1]);
  if (!election) {
    throw props.error(key, fmt::format("election port must be from 1 to 65535, got '{}' in '{}'",
                                       parts[1], value));
  }
  entry.address.peer_port = *peer;
  entry.address.election_port = *election;
  if (parts.size() == 3) {
    std::string role = parts[2];
    std::transform(role.begin(), role.end(), role.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (role == "observer") {
      throw props.error(key, fmt::format("observers are not modelled (got '{}')", value));
    }
    if (role != "participant") throw props.error(key, expected);
  }
  if (semicolon != std::string::npos) {
    const std::string client = value.substr(semicolon + 1);
    std::string port_text = client;
    if (client.find(':') != std::string::npos || (!client.empty() && client.front() == '[')) {
      auto client_host = split_host(client);
      if (!client_host) throw props.error(key, expected);
      port_text = client_host->second;
    }
    entry.client_port = parse_port(port_text);
    if (!entry.client_port) {
      throw props.error(key, fmt::format("client port must be from 1 to 65535, got '{}' in '{}'",
                                         port_text, value));
    }
  }
  return entry;
}

ServerId parse_server_id(const Properties& props, const std::string& key) {
  const std::string n = key.substr(std::string_view("server.").size());
  const bool digits = !n.empty() && n.size() <= 3 &&
                      std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int id = digits ? std::stoi(n) : 0;
  if (id < 1 || id > 255) {
    throw props.error(key, "expected a key server.N with N a server id from 1 to 255");
  }
  return static_cast<ServerId>(id);
}

// The keys accepted without effect still get their values checked.
void check_keys_without_effect(const Properties& props) {
  for (const char* key : {"maxClientCnxns", "globalOutstandingLimit", "autopurge.purgeInterval"}) {
    props.get_int(key, 0, 0, kMaxInt32);
  }
  for (const char* key :
       {"autopurge.snapRetainCount", "snapCount", "preAllocSize", "jute.maxbuffer"}) {
    props.get_int(key, 1, 1, kMaxInt32);
  }
  for (const char* key : {"admin.serverPort", "metricsProvider.httpPort"}) {
    props.get_int(key, 8080, 1, 65535);
  }
  for (const char* key : {"admin.enableServer", "standaloneEnabled", "reconfigEnabled",
                          "quorumListenOnAllIPs", "syncEnabled", "metricsProvider.exportJvmInfo"}) {
    props.get_bool(key, false);
  }
  if (props.has("electionAlg") && props.get_int("electionAlg", 3, 0, kMaxInt32) != 3) {
    throw props.error("electionAlg",
                      fmt::format("only fast leader election (3) is modelled, got '{}'",
                                  props.values.at("electionAlg")));
  }
  if (props.has("peerType")) {
    std::string v = props.values.at("peerType");
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v == "observer") throw props.error("peerType", "observers are not modelled");
    if (v != "participant") {
      throw props.error("peerType",
                        fmt::format("expected participant, got '{}'", props.values.at("peerType")));
    }
  }
}

// No two listeners may share a host:port (peer and election ports of every
// server, and this server's client port).
void check_ports(const Properties& props, const std::map<ServerId, ServerEntry>& entries,
                 ServerId myid, uint16_t client_port, const std::string& client_port_key) {
  std::map<std::pair<std::string, uint16_t>, std::string> used;  // -> "the peer port of server.1"
  auto claim = [&](const std::string& key, const std::string& host, uint16_t port,
                   const std::string& what) {
    auto [it, inserted] =
        used.emplace(std::pair{host, port}, fmt::format("the {} of {}", what, key));
    if (!inserted) {
      throw props.error(key, fmt::format("{} {}:{} is already {}", what, host, port, it->second));
    }
  };
  for (const auto& [id, entry] : entries) {
    claim(entry.key, entry.address.host, entry.address.peer_port, "peer port");
    claim(entry.key, entry.address.host, entry.address.election_port, "election port");
  }
  auto mine = entries.find(myid);
  if (mine != entries.end()) {
    claim(client_port_key, mine->second.address.host, client_port, "client port");
  }
}

}  // namespace

int32_t ServerConfig::min_session_timeout() const {
  return min_session_timeout_ms == -1 ? static_cast<int32_t>(2 * tick_time_ms)
                                      : min_session_timeout_ms;
}

int32_t ServerConfig::max_session_timeout() const {
  return max_session_timeout_ms == -1 ? static_cast<int32_t>(20 * tick_time_ms)
                                      : max_session_timeout_ms;
}

// ZooKeeperServer.processConnectRequest: raise to the minimum, then lower to
// the maximum.
int32_t ServerConfig::negotiate_session_timeout(int32_t requested_ms) const {
  int32_t timeout = requested_ms;
  if (timeout < min_session_timeout()) timeout = min_session_timeout();
  if (timeout > max_session_timeout()) timeout = max_session_timeout();
  return timeout;
}

ServerConfig parse_server_config(const Properties& props) {
  for (const auto& [key, value] : props.values) {
    if (starts_with(key, "group.") || starts_with(key, "weight.")) {
      throw props.error(key, "hierarchical quorums (group.N, weight.N) are not modelled");
    }
    if (key == "dynamicConfigFile") {
      throw props.error(key, "dynamic reconfiguration is not modelled; list server.N here");
    }
  }
  props.reject_unknown(known_keys(),
                       [](const std::string& key) { return starts_with(key, "server."); });
  check_keys_without_effect(props);

  ServerConfig config;
  config.tick_time_ms = props.get_int("tickTime", 2000, 1, 600000, "milliseconds");

  // server.N lines, by id.
  std::map<ServerId, ServerEntry> entries;
  for (const auto& [key, value] : props.values) {
    if (!starts_with(key, "server.")) continue;
    const ServerId id = parse_server_id(props, key);
    ServerEntry entry = parse_server_entry(props, key, value);
    auto [it, inserted] = entries.emplace(id, entry);
    if (!inserted) {
      throw props.error(key,
                        fmt::format("server id {} is already given by '{}'", id, it->second.key));
    }
  }

  // myid: the file dataDir/myid in a real installation.
  if (entries.empty()) {
    config.myid = static_cast<ServerId>(props.get_int("myid", 1, 1, 255, "a server id"));
    ServerEntry standalone;
    standalone.key = "the standalone server";  // only ever named in a clientPort clash
    standalone.address = PeerAddress{"127.0.0.1", 2888, 3888};
    entries.emplace(config.myid, standalone);
  } else {
    if (!props.has("myid")) {
      throw props.error("myid",
                        "required when server.N lines are given (ZooKeeper reads it from "
                        "dataDir/myid)");
    }
    config.myid = static_cast<ServerId>(props.get_int("myid", 0, 1, 255, "a server id"));
    if (entries.count(config.myid) == 0) {
      std::vector<ServerId> ids;
      for (const auto& [id, entry] : entries) ids.push_back(id);
      throw props.error("myid", fmt::format("{} is not among the servers ({})", config.myid,
                                            fmt::join(ids, ", ")));
    }
  }
  for (const auto& [id, entry] : entries) config.servers.emplace(id, entry.address);

  // initLimit and syncLimit have no default in ZooKeeper; an ensemble needs them.
  const bool ensemble = config.servers.size() > 1;
  for (const char* key : {"initLimit", "syncLimit"}) {
    if (ensemble && !props.has(key)) {
      throw props.error(key, fmt::format("required when more than one server.N is given "
                                         "(in ticks of tickTime; e.g. {})",
                                         std::string_view(key) == "initLimit" ? 10 : 5));
    }
  }
  config.init_limit = static_cast<int32_t>(props.get_int("initLimit", 10, 1, 1000, "ticks"));
  config.sync_limit = static_cast<int32_t>(props.get_int("syncLimit", 5, 1, 1000, "ticks"));

  // clientPort, or the ";port" of this server's own server.N line, or 2181.
  const ServerEntry& own = entries.at(config.myid);
  std::string client_port_key = "clientPort";
  if (props.has("clientPort")) {
    config.client_port = static_cast<uint16_t>(props.get_int("clientPort", 2181, 1, 65535));
    if (own.client_port && *own.client_port != config.client_port) {
      throw props.error(own.key, fmt::format("client port {} differs from clientPort={}",
                                             *own.client_port, config.client_port));
    }
  } else if (own.client_port) {
    config.client_port = *own.client_port;
    client_port_key = own.key;
  }
  check_ports(props, entries, config.myid, config.client_port, client_port_key);

  for (const char* key : {"dataDir", "dataLogDir"}) {
    if (props.has(key) && props.values.at(key).empty()) {
      throw props.error(key, "expected a directory path, got ''");
    }
  }
  config.data_dir = props.get_string("dataDir", props.get_string("dataLogDir", config.data_dir));

  if (props.has("minSessionTimeout")) {
    config.min_session_timeout_ms =
        static_cast<int32_t>(props.get_int("minSessionTimeout", -1, 1, kMaxInt32, "milliseconds"));
  }
  if (props.has("maxSessionTimeout")) {
    config.max_session_timeout_ms =
        static_cast<int32_t>(props.get_int("maxSessionTimeout", -1, 1, kMaxInt32, "milliseconds"));
  }
  if (config.min_session_timeout() > config.max_session_timeout()) {
    throw props.error(
        props.has("minSessionTimeout") ? "minSessionTimeout" : "maxSessionTimeout",
        fmt::format("minSessionTimeout ({} ms) must not be larger than maxSessionTimeout ({} ms)",
                    config.min_session_timeout(), config.max_session_timeout()));
  }

  config.force_sync = props.get_bool("forceSync", true);

  if (props.has("commitLogCount") && props.has("zookeeper.commitLogCount")) {
    throw props.error("zookeeper.commitLogCount",
                      "given twice, also as 'commitLogCount' (ZooKeeper reads both as the "
                      "same system property)");
  }
  const std::string log_count_key =
      props.has("zookeeper.commitLogCount") ? "zookeeper.commitLogCount" : "commitLogCount";
  config.commit_log_count =
      static_cast<int32_t>(props.get_int(log_count_key, 500, 1, 1000000, "transactions"));
  return config;
}

}  // namespace zk
