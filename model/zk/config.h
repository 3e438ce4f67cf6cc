// A ZooKeeper server's configuration, by zoo.cfg's own key names.
//
// Defaults and limits follow the ZooKeeper Administrator's Guide
// (zookeeperAdmin.html, "Configuration Parameters"): tickTime 2000 ms,
// minSessionTimeout 2 x tickTime, maxSessionTimeout 20 x tickTime, forceSync
// yes. initLimit and syncLimit have no default in ZooKeeper and are required
// for an ensemble of more than one server.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/properties.h"
#include "model/zk/types.h"

namespace zk {

struct PeerAddress {
  std::string host;  // an address (or a host name the scenario maps to one)
  uint16_t peer_port = 2888;
  uint16_t election_port = 3888;
  friend bool operator==(const PeerAddress&, const PeerAddress&) = default;
};

struct ServerConfig {
  int64_t tick_time_ms = 2000;
  int32_t init_limit = 10;  // ticks
  int32_t sync_limit = 5;   // ticks
  uint16_t client_port = 2181;
  std::string data_dir = "/var/lib/zookeeper";
  std::map<ServerId, PeerAddress> servers;  // server.N
  ServerId myid = 0;
  int32_t min_session_timeout_ms = -1;  // -1: 2 x tickTime
  int32_t max_session_timeout_ms = -1;  // -1: 20 x tickTime
  bool force_sync = true;
  // How many recent committed transactions a leader keeps to bring a
  // follower up to date with a DIFF; a follower further behind gets a SNAP
  // (ZooKeeper's zookeeper.commitLogCount, default 500).
  int32_t commit_log_count = 500;

  int32_t min_session_timeout() const;
  int32_t max_session_timeout() const;
  // The timeout a client asking for `requested_ms` gets.
  int32_t negotiate_session_timeout(int32_t requested_ms) const;
  size_t quorum_size() const { return servers.size() / 2 + 1; }
};

// zoo.cfg keys that a real ZooKeeper understands and the model accepts, but
// that change nothing in a simulation: disk housekeeping, connection limits,
// the admin server and four-letter words, metrics, buffer sizes. Their values
// are still checked (a number must be a number). electionAlg is accepted only
// as 3, fast leader election; peerType only as participant.
inline const std::vector<std::string> kServerKeysWithoutEffect = {
    "4lw.commands.whitelist",
    "admin.enableServer",
    "admin.serverAddress",
    "admin.serverPort",
    "autopurge.purgeInterval",
    "autopurge.snapRetainCount",
    "clientPortAddress",
    "electionAlg",
    "globalOutstandingLimit",
    "jute.maxbuffer",
    "maxClientCnxns",
    "metricsProvider.className",
    "metricsProvider.exportJvmInfo",
    "metricsProvider.httpPort",
    "peerType",
    "preAllocSize",
    "quorumListenOnAllIPs",
    "reconfigEnabled",
    "snapCount",
    "standaloneEnabled",
    "syncEnabled",
};

// Builds a configuration from zoo.cfg properties. `myid` may be given as a
// property (in a real installation it is the file dataDir/myid). Throws
// model::ConfigError naming the source, the key and what was expected for an
// unknown key, a malformed value, or an inconsistent whole (myid not among
// the servers, limits out of range ...).
ServerConfig parse_server_config(const model::Properties& props);

}  // namespace zk
