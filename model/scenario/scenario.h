// A scenario file, read and checked: the topology (hosts and the ZooKeeper
// servers, brokers and clients on them), the configuration (a version
// profile, zoo.cfg and server.properties keys — inline or from files — per
// cluster and per broker, client properties), topics, the workload, a timed
// fault schedule and/or a random nemesis, and the expectations that make the
// scenario a regression check. docs/scenario-format.md documents every field.
//
// Everything a run needs is resolved here, once: each broker's BrokerConfig
// and each ZooKeeper server's ServerConfig are built by the same parsers a
// real properties file goes through, so that a misspelt key
// ("zookeeper.session.tmeout.ms") is an error with the scenario file and the
// JSON path of the key, before anything runs. References (a fault on a host
// that does not exist, a replication factor above the broker count, two
// processes on one port of one host) are errors too.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/client/config.h"
#include "model/client/lab.h"
#include "model/client/steady.h"
#include "model/kafka/config.h"
#include "model/scenario/expect.h"
#include "model/scenario/json_input.h"
#include "model/zk/config.h"

namespace scenario {

// What the runner adds to every world (model/scenario/run.h): the admin that
// creates the topics runs as a process of this name on a host of this name
// and address, so a scenario may use neither.
inline constexpr const char* kAdminName = "admin";
inline constexpr const char* kAdminAddress = "10.255.255.254";

struct ZooKeeperSpec {
  int32_t id = 0;        // myid; the process is named "zk<id>"
  std::string host;      // the host's name
  zk::ServerConfig config;
};

struct BrokerSpec {
  kafka::BrokerId id = 0;  // broker.id; the process is named "kafka<id>"
  std::string host;
  kafka::BrokerConfig config;
};

struct ClientSpec {
  std::string name;  // the process name, as faults and the history call it
  std::string host;
  std::string path;  // JSON path of its declaration, for messages
};

struct HostSpec {
  std::string name;
  std::string address;
};

struct TopicSpec {
  std::string name;
  int32_t partitions = 1;
  int16_t replication_factor = 1;
  std::map<std::string, std::string> config;  // topic-level overrides (retention.ms ...)
};

enum class FaultAction {
  power_off,        // host: off, unsynced writes lost, nothing answers
  power_on,         // host: on; its processes start again after the boot delay
  kill,             // process: kill -9
  start,            // process: start a stopped or killed process
  stop,             // process: SIGTERM (a broker's controlled shutdown)
  pause,            // process: SIGSTOP (or a long GC)
  resume,           // process: SIGCONT
  partition,        // groups of hosts that cannot reach each other, or one way from → to
  isolate,          // host: cut from every other host
  heal,             // every cut removed
  replace_address,  // host: the same host under a new address (seed 003)
  restart_clients,  // every client process killed and started again
};
const char* to_string(FaultAction a);

struct Fault {
  int64_t at_us = 0;  // virtual time
  FaultAction action = FaultAction::heal;
  std::string target;  // a host (power_*, isolate, replace_address) or a process name
  std::vector<std::vector<std::string>> groups;  // partition: host names per side
  std::string from;                              // partition one way: from cannot reach to
  std::string to;
  // partition by pairs: each pair of hosts cannot reach each other (both
  // ways), every other pair still can (Jepsen's bridge and majority ring).
  std::vector<std::pair<std::string, std::string>> cuts;
  std::string address;  // replace_address
  // replace_address: the ensemble's zoo.cfg files are rewritten with the new
  // address (as Exhibitor does); each ZooKeeper server reads it when it next
  // starts. Brokers' zookeeper.connect is never rewritten.
  bool update_ensemble = false;
  // stop: how long SIGTERM has before SIGKILL (systemd's TimeoutStopSec 90 s;
  // `docker stop` waits 10 s).
  int64_t grace_us = 90'000'000;
  std::string path;     // JSON path of the fault, for messages
};

// A random fault schedule drawn from the run's seed.
struct NemesisSpec {
  std::vector<FaultAction> kinds;  // among kill, pause, stop, power_off, partition, isolate
  std::vector<std::string> targets;  // process or host names, or "brokers", "zookeepers", "clients"
  int64_t start_us = 0;
  int64_t mean_interval_us = 30'000'000;  // between the starts of two faults
  int64_t min_duration_us = 5'000'000;
  int64_t max_duration_us = 30'000'000;
  int64_t quiet_us = 60'000'000;  // no new fault in the last quiet_us of the run; everything healed before
};

// The lab workload (seeds/000's producer.py and consumer.py): one producer
// counting up, one consumer checking the sequence.
struct LabWorkload {
  std::string topic;
  std::string producer = "producer";  // client names; "" for none
  std::string consumer = "consumer";
  client::LabOptions options;
  // The consumer starts first, the producer this much later (the author
  // started consumer.py, then producer.py).
  int64_t consumer_head_start_us = 2'000'000;
  client::ProducerConfig producer_config;  // the workload's defaults + the file's clients.producer
  client::ConsumerConfig consumer_config;
};

// The steady workload (model/client/steady.h): producers at a rate, keyed,
// consumers in groups.
struct SteadyWorkload {
  std::vector<std::string> producers;  // client names, producer i is index i
  std::vector<std::string> consumers;
  client::SteadyOptions options;  // its producer/consumer configs include the file's clients.*
  // The consumers start at this virtual time (or with the producers, when
  // the topics are ready later); nullopt: with the producers.
  std::optional<int64_t> consumers_start_us;
};

struct WorkloadSpec {
  std::string type;  // "lab", "steady"
  std::string path;  // JSON path of the workload object
  LabWorkload lab;        // when type == "lab"
  SteadyWorkload steady;  // when type == "steady"
  // The role of a client process: "producer" or "consumer".
  std::string role_of(const std::string& client) const;
};

// The simulated machines and network (not Kafka configuration).
struct EnvironmentSpec {
  int64_t boot_delay_us = 1'000'000;  // power on -> processes start
  // A connect to a powered-off host fails after this ("No route to host");
  // nullopt: the connect times out instead.
  std::optional<int64_t> host_unreachable_after_us;
  int64_t fsync_latency_min_us = 500;
  int64_t fsync_latency_max_us = 5'000;
  std::optional<int64_t> writeback_delay_us = 30'000'000;  // nullopt: never on its own
  // The service manager of the ZooKeeper and Kafka processes (systemd's
  // Restart= and RestartSec=; seeds/000's units say always and 10 s).
  sim::RestartPolicy restart = sim::RestartPolicy::no;
  int64_t restart_delay_us = 10'000'000;
};

// A named window of the run; the verdict reports stalls and counts per phase.
struct PhaseSpec {
  std::string name;
  int64_t from_us = 0;
  int64_t to_us = 0;
};

// A named moment of the run; the verdict holds the cluster's state then.
struct SnapshotSpec {
  std::string name;
  int64_t at_us = 0;
};

struct Scenario {
  std::string file;  // as given; messages name it
  // The server.properties / zoo.cfg files it references, as opened.
  std::vector<std::string> referenced_files;
  std::string name;
  std::string description;
  kafka::VersionProfile version = kafka::VersionProfile::v3_9;
  uint64_t seed = 1;         // the default seed of `run`
  int64_t duration_us = 0;   // how long the run lasts in virtual time
  std::vector<HostSpec> hosts;
  std::vector<ZooKeeperSpec> zookeepers;  // by id
  std::vector<BrokerSpec> brokers;        // by id
  std::vector<ClientSpec> clients;        // in file order
  std::map<std::string, std::string> producer_properties;
  std::map<std::string, std::string> consumer_properties;
  std::vector<TopicSpec> topics;
  WorkloadSpec workload;
  EnvironmentSpec environment;
  std::vector<PhaseSpec> phases;
  std::vector<SnapshotSpec> snapshots;  // by time
  std::vector<Fault> faults;  // sorted by time (stable: file order within one time)
  std::optional<NemesisSpec> nemesis;
  std::vector<Expectation> expectations;
  // A hash of the file's canonical JSON (keys sorted, no white space): two
  // files that differ only in layout have the same hash. 16 hex digits.
  std::string hash;
  // The document as read (for re-reading it with overrides).
  nlohmann::json source;

  const HostSpec* host(const std::string& name) const;
  // The host a process runs on; nullptr for an unknown process name.
  const HostSpec* host_of_process(const std::string& process) const;
  bool is_process(const std::string& name) const { return host_of_process(name) != nullptr; }
};

// Reads and checks a scenario; `text` is the file's content. Files it
// references (zoo.cfg, server.properties) are read relative to the
// directory of `file`. Throws InputError (file, JSON path, what was
// expected) for anything wrong.
Scenario parse_scenario(const std::string& file, std::string_view text);
Scenario load_scenario(const std::string& file);

}  // namespace scenario
