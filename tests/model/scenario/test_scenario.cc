// Scenario files: what a good one resolves to, and the message each kind of
// mistake gets (model/scenario/scenario.h).
#include "model/scenario/scenario.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace scenario {
namespace {

// The seed-000 lab, as a scenario file would hold it.
const char* const kGood = R"({
  "name": "seed-000 rolling power-off",
  "version": "2.2",
  "seed": 7,
  "duration_s": 960,
  "zookeeper": {"properties": {"tickTime": 2000, "initLimit": 5, "syncLimit": 2}},
  "kafka": {"properties": {"default.replication.factor": 3, "zookeeper.connection.timeout.ms": 6000}},
  "hosts": [
    {"name": "node1", "address": "10.0.0.1", "zookeeper": {"id": 1}, "brokers": [{"id": 1}]},
    {"name": "node2", "address": "10.0.0.2", "zookeeper": {"id": 2}, "brokers": [{"id": 2}]},
    {"name": "node3", "address": "10.0.0.3", "zookeeper": {"id": 3},
     "brokers": [{"id": 3, "properties": {"log.dirs": "/data/kafka"}}]},
    {"name": "client", "address": "10.0.0.10", "clients": ["producer", "consumer"]}
  ],
  "clients": {"producer": {"request.timeout.ms": 10000}, "consumer": {"auto.offset.reset": "earliest"}},
  "topics": [{"name": "test", "partitions": 2, "replication_factor": 3, "config": {"retention.ms": 60000}}],
  "workload": {"type": "lab", "tries": 5},
  "faults": [
    {"at": 300, "action": "power_on", "target": "node1"},
    {"at": 60.25, "action": "power_off", "target": "node1"},
    {"at": 400, "action": "partition", "groups": [["node1"], ["node2", "node3"]]},
    {"at": 410, "action": "partition", "from": "node2", "to": "client"},
    {"at": 420, "action": "kill", "target": "kafka2"},
    {"at": 430, "action": "replace_address", "target": "node3", "address": "10.0.0.33"},
    {"at": 440, "action": "heal"}
  ],
  "expect": ["max_stall_s <= 20", "lost == 0 || true"]
})";

nlohmann::json good() { return nlohmann::json::parse(kGood); }

std::string error_of(const nlohmann::json& j) {
  try {
    (void)parse_scenario("s.json", j.dump(2));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_file(const std::string& path) {
  try {
    (void)load_scenario(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScenarioFile, AGoodFileResolvesEveryProcessConfiguration) {
  const Scenario s = parse_scenario("s.json", kGood);
  EXPECT_EQ(s.name, "seed-000 rolling power-off");
  EXPECT_EQ(s.version, kafka::VersionProfile::v2_2);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration_us, 960'000'000);
  ASSERT_EQ(s.hosts.size(), 4u);
  ASSERT_EQ(s.zookeepers.size(), 3u);
  const zk::ServerConfig& z2 = s.zookeepers[1].config;
  EXPECT_EQ(z2.myid, 2);
  EXPECT_EQ(z2.init_limit, 5);
  EXPECT_EQ(z2.sync_limit, 2);
  ASSERT_EQ(z2.servers.size(), 3u);
  EXPECT_EQ(z2.servers.at(3).host, "10.0.0.3");

  ASSERT_EQ(s.brokers.size(), 3u);
  const kafka::BrokerConfig& b3 = s.brokers[2].config;
  EXPECT_EQ(b3.broker_id, 3);
  EXPECT_EQ(b3.zookeeper_connect, "10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181");
  EXPECT_EQ(b3.zookeeper_session_timeout_ms, 6000);  // the 2.2 default
  EXPECT_EQ(b3.zookeeper_connection_timeout_ms, 6000);
  EXPECT_EQ(b3.default_replication_factor, 3);
  EXPECT_EQ(b3.log_dirs, std::vector<std::string>{"/data/kafka"});
  EXPECT_EQ(s.brokers[0].config.log_dirs, std::vector<std::string>{"/var/lib/kafka/data"});

  ASSERT_EQ(s.clients.size(), 2u);
  EXPECT_EQ(s.clients[1].name, "consumer");
  EXPECT_EQ(s.host_of_process("consumer")->name, "client");
  EXPECT_EQ(s.host_of_process("kafka2")->name, "node2");
  EXPECT_EQ(s.host_of_process("zk3")->address, "10.0.0.3");
  EXPECT_EQ(s.host_of_process("node1"), nullptr);
  EXPECT_EQ(s.producer_properties.at("request.timeout.ms"), "10000");
  EXPECT_EQ(s.consumer_properties.at("auto.offset.reset"), "earliest");

  ASSERT_EQ(s.topics.size(), 1u);
  EXPECT_EQ(s.topics[0].partitions, 2);
  EXPECT_EQ(s.topics[0].replication_factor, 3);
  EXPECT_EQ(s.topics[0].config.at("retention.ms"), "60000");

  EXPECT_EQ(s.workload.type, "lab");
  EXPECT_EQ(s.workload.lab.options.tries, 5);
  EXPECT_EQ(s.workload.lab.options.topic, "test");  // the only topic
  EXPECT_EQ(s.workload.lab.producer, "producer");
  EXPECT_EQ(s.workload.lab.consumer, "consumer");
  EXPECT_EQ(s.workload.role_of("consumer"), "consumer");
  // The file's client properties on top of the lab's defaults (acks=1), and
  // every broker as bootstrap server.
  EXPECT_EQ(s.workload.lab.producer_config.request_timeout_ms, 10000);
  EXPECT_EQ(s.workload.lab.producer_config.acks, 1);
  ASSERT_EQ(s.workload.lab.producer_config.bootstrap.size(), 3u);
  EXPECT_EQ(s.workload.lab.producer_config.bootstrap[2].host, "10.0.0.3");
  EXPECT_EQ(s.workload.lab.consumer_config.auto_offset_reset, client::ConsumerConfig::Reset::earliest);

  // Sorted by time.
  ASSERT_EQ(s.faults.size(), 7u);
  EXPECT_EQ(s.faults[0].action, FaultAction::power_off);
  EXPECT_EQ(s.faults[0].at_us, 60'250'000);
  EXPECT_EQ(s.faults[0].path, "$.faults[1]");
  EXPECT_EQ(s.faults[1].action, FaultAction::power_on);
  EXPECT_EQ(s.faults[2].groups, (std::vector<std::vector<std::string>>{{"node1"}, {"node2", "node3"}}));
  EXPECT_EQ(s.faults[3].from, "node2");
  EXPECT_EQ(s.faults[3].to, "client");
  EXPECT_EQ(s.faults[5].address, "10.0.0.33");
  ASSERT_EQ(s.expectations.size(), 2u);
  EXPECT_EQ(s.expectations[0].text(), "max_stall_s <= 20");
}

// The lab's producer is aiokafka's: one request_timeout_ms, sent to the
// broker and waited by the client. The file's request.timeout.ms sets both;
// librdkafka's socket.timeout.ms is not one of its settings.
TEST(ScenarioFile, TheLabProducersRequestTimeoutIsItsOwnWaitToo) {
  nlohmann::json j = good();
  j["clients"]["producer"]["request.timeout.ms"] = 3000;
  const Scenario s = parse_scenario("s.json", j.dump());
  EXPECT_EQ(s.workload.lab.producer_config.request_timeout_ms, 3000);
  EXPECT_EQ(s.workload.lab.producer_config.socket_timeout_ms, 3000);
  j["clients"]["producer"]["socket.timeout.ms"] = 3000;
  EXPECT_EQ(error_of(j),
            "s.json: at $.clients.producer[\"socket.timeout.ms\"]: not a setting of the lab workload's producer "
            "(aiokafka): it waits request.timeout.ms for every answer; set that instead");
}

TEST(ScenarioFile, AHostMayTakeAnAddressAnotherHasLeft) {
  nlohmann::json j = good();
  j["faults"] = {{{"at", 10}, {"action", "replace_address"}, {"target", "node2"}, {"address", "10.0.0.5"}},
                 {{"at", 11}, {"action", "replace_address"}, {"target", "node1"}, {"address", "10.0.0.2"}}};
  const Scenario s = parse_scenario("s.json", j.dump());
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[1].address, "10.0.0.2");
  // Not before it is left.
  j["faults"][1]["at"] = 9;
  EXPECT_EQ(error_of(j), "s.json: at $.faults[1].address: 10.0.0.2 is held by host \"node2\" at 9 s");
}

TEST(ScenarioFile, TheHashIgnoresLayoutButNotContent) {
  const Scenario a = parse_scenario("a.json", kGood);
  const Scenario b = parse_scenario("b.json", good().dump());  // no white space, keys reordered
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.hash.size(), 16u);
  nlohmann::json j = good();
  j["seed"] = 8;
  EXPECT_NE(parse_scenario("c.json", j.dump()).hash, a.hash);
}

// A file's seed is any seed a sweep can run (a reproducer's --seed), 2^64 - 1
// included; absent, it is 1.
TEST(ScenarioFile, TheSeedIsAnyUnsignedSixtyFourBitInteger) {
  nlohmann::json j = good();
  j["seed"] = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(parse_scenario("s.json", j.dump()).seed, std::numeric_limits<uint64_t>::max());
  j["seed"] = 7.0;
  EXPECT_EQ(parse_scenario("s.json", j.dump()).seed, 7u);
  j["seed"] = 1e17;
  EXPECT_EQ(parse_scenario("s.json", j.dump()).seed, 100000000000000000u);
  j.erase("seed");
  EXPECT_EQ(parse_scenario("s.json", j.dump()).seed, 1u);
}

TEST(ScenarioFile, PropertiesFilesAreReadRelativeToTheScenario) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "kafkasim_scenario_files";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "server.properties");
    out << "# a shipped file\nnum.partitions=4\nzookeeper.session.timeout.ms=9000\n";
    std::ofstream zoo(dir / "zoo.cfg");
    zoo << "tickTime=3000\ninitLimit=7\nsyncLimit=3\n";
  }
  nlohmann::json j = good();
  j["kafka"] = {{"file", "server.properties"}, {"properties", {{"num.partitions", 6}}}};
  j["zookeeper"] = {{"file", "zoo.cfg"}};
  {
    std::ofstream out(dir / "s.json");
    out << j.dump(2);
  }
  const Scenario s = load_scenario((dir / "s.json").string());
  EXPECT_EQ(s.brokers[0].config.num_partitions, 6);  // inline wins over the file
  EXPECT_EQ(s.brokers[0].config.zookeeper_session_timeout_ms, 9000);
  EXPECT_EQ(s.zookeepers[0].config.tick_time_ms, 3000);
  EXPECT_EQ(s.zookeepers[0].config.init_limit, 7);

  // Changing what a referenced file says changes the scenario's hash.
  {
    std::ofstream zoo(dir / "zoo.cfg");
    zoo << "tickTime=3000\ninitLimit=8\nsyncLimit=3\n";
  }
  EXPECT_NE(load_scenario((dir / "s.json").string()).hash, s.hash);

  // A misspelt key in a referenced file names the file and the line.
  {
    std::ofstream out(dir / "server.properties");
    out << "num.partitions=4\nzookeeper.session.tmeout.ms=9000\n";
  }
  try {
    (void)load_scenario((dir / "s.json").string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("at $.kafka: " + (dir / "server.properties").string() +
                        " line 2: 'zookeeper.session.tmeout.ms': unknown key"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("zookeeper.session.timeout.ms"), std::string::npos) << what;
  }
  // So does a value the scenario contradicts, and a key it forbids.
  {
    std::ofstream out(dir / "server.properties");
    out << "num.partitions=4\nbroker.id=9\n";
  }
  EXPECT_EQ(error_of_file((dir / "s.json").string()),
            (dir / "s.json").string() + ": at $.kafka: " + (dir / "server.properties").string() +
                " line 2: 'broker.id': 9 contradicts the broker's \"id\" 1");
  {
    std::ofstream out(dir / "server.properties");
    out << "num.partitions=4\n";
    std::ofstream zoo(dir / "zoo.cfg");
    zoo << "tickTime=3000\nserver.1=10.0.0.1:2888:3888\n";
  }
  EXPECT_EQ(error_of_file((dir / "s.json").string()),
            (dir / "s.json").string() + ": at $.zookeeper: " + (dir / "zoo.cfg").string() +
                " line 2: 'server.1': the ensemble's server list comes from the hosts; remove it");
  // A directory, or no name at all, is not a properties file.
  j["zookeeper"] = {{"file", "."}};
  EXPECT_EQ(error_of(j).rfind("s.json: at $.zookeeper.file: cannot read the file \".\": it is a directory", 0), 0u)
      << error_of(j);
  j["zookeeper"] = {{"file", ""}};
  EXPECT_EQ(error_of(j), "s.json: at $.zookeeper.file: expected the name of a properties file, got \"\"");
  EXPECT_EQ(error_of_file(dir.string()), dir.string() + ": cannot read the file: it is a directory");
  j["zookeeper"] = good()["zookeeper"];
  j["kafka"] = {{"file", "missing.properties"}};
  EXPECT_EQ(error_of(j).rfind("s.json: at $.kafka.file: cannot read the file", 0), 0u) << error_of(j);
  EXPECT_NE(error_of(j).find(": no such file"), std::string::npos) << error_of(j);
}

// The good file cut to one second, without the faults, phases and snapshots
// that would then lie after its end.
void one_second_run(nlohmann::json& j) {
  j["duration_s"] = 1;
  j["faults"] = nlohmann::json::array();
  j.erase("phases");
  j.erase("snapshots");
}

struct Broken {
  const char* what;
  std::function<void(nlohmann::json&)> edit;
  std::string message;
};

TEST(ScenarioFile, EveryMistakeNamesTheFileThePathAndWhatWasExpected) {
  const std::vector<Broken> cases = {
      {"a misspelt Kafka key", [](nlohmann::json& j) { j["kafka"]["properties"]["zookeeper.session.tmeout.ms"] = 6000; },
       "s.json: at $.kafka.properties[\"zookeeper.session.tmeout.ms\"]: unknown key; did you mean "
       "'zookeeper.session.timeout.ms'?"},
      {"a misspelt per-broker key", [](nlohmann::json& j) { j["hosts"][1]["brokers"][0]["properties"]["min.insync.replica"] = 2; },
       "s.json: at $.hosts[1].brokers[0].properties[\"min.insync.replica\"]: unknown key; did you mean "
       "'min.insync.replicas'?"},
      {"a protocol newer than the release", [](nlohmann::json& j) {
         j["version"] = "2.8";
         j["hosts"][1]["brokers"][0]["properties"]["inter.broker.protocol.version"] = "3.0";
       },
       "s.json: at $.hosts[1].brokers[0].properties[\"inter.broker.protocol.version\"]: '3.0' is not a version "
       "Kafka 2.8 knows (expected one from 0.8.0 to 2.8-IV1, such as 2.8 or 2.8-IV1)"},
      {"a protocol the model lacks", [](nlohmann::json& j) { j["kafka"]["properties"]["inter.broker.protocol.version"] = "2.0"; },
       "s.json: at $.kafka.properties[\"inter.broker.protocol.version\"]: '2.0' (2.0-IV1) is not modelled: below "
       "2.1-IV2 (KIP-320) a follower's fetch carries no leader epoch (Fetch v10), which the model's replicas "
       "always send; use 2.1 or later"},
      {"an out-of-range Kafka value", [](nlohmann::json& j) { j["kafka"]["properties"]["num.partitions"] = 0; },
       "s.json: at $.kafka.properties[\"num.partitions\"]: expected a positive integer (partitions, at most "
       "2147483647), got '0'"},
      {"a misspelt zoo.cfg key", [](nlohmann::json& j) { j["zookeeper"]["properties"]["tickTme"] = 2000; },
       "s.json: at $.zookeeper.properties.tickTme: unknown key; did you mean 'tickTime'?"},
      {"a server list given by hand", [](nlohmann::json& j) { j["zookeeper"]["properties"]["server.1"] = "a:1:2"; },
       "s.json: at $.zookeeper.properties[\"server.1\"]: the ensemble's server list comes from the hosts; remove "
       "it"},
      {"an unknown top-level field", [](nlohmann::json& j) { j["faultz"] = nlohmann::json::array(); },
       "s.json: at $.faultz: unknown field \"faultz\" (did you mean \"faults\"?); known fields here: clients, "
       "description, duration_s, environment, expect, faults, hosts, kafka, name, nemesis, phases, seed, snapshots, "
       "topics, version, workload, zookeeper"},
      {"an unknown host field", [](nlohmann::json& j) { j["hosts"][0]["zookeper"] = {{"id", 9}}; },
       "s.json: at $.hosts[0].zookeper: unknown field \"zookeper\" (did you mean \"zookeeper\"?); known fields "
       "here: address, brokers, clients, name, zookeeper"},
      {"a bad version", [](nlohmann::json& j) { j["version"] = "1.1"; },
       "s.json: at $.version: expected one of 2.2, 2.3, 2.8, 3.1, 3.9, got '1.1'"},
      {"no duration", [](nlohmann::json& j) { j.erase("duration_s"); },
       "s.json: at $: missing the required field \"duration_s\""},
      {"a negative duration", [](nlohmann::json& j) { j["duration_s"] = -1; },
       "s.json: at $.duration_s: expected a number from 1e-06 to 31536000, got -1 (an integer)"},
      {"no hosts", [](nlohmann::json& j) { j["hosts"] = nlohmann::json::array(); },
       "s.json: at $.hosts: expected an array of at least 1 element, got 0"},
      {"no ZooKeeper", [](nlohmann::json& j) { for (auto& h : j["hosts"]) h.erase("zookeeper"); },
       "s.json: at $: a cluster needs at least one ZooKeeper server (\"zookeeper\" on a host)"},
      {"a duplicate host name", [](nlohmann::json& j) { j["hosts"][1]["name"] = "node1"; },
       "s.json: at $.hosts[1].name: the name \"node1\" is used twice (hosts and processes share one namespace)"},
      {"a duplicate address", [](nlohmann::json& j) { j["hosts"][1]["address"] = "10.0.0.1"; },
       "s.json: at $.hosts[1].address: the address 10.0.0.1 is already host \"node1\"'s"},
      {"a bad address", [](nlohmann::json& j) { j["hosts"][1]["address"] = "10.0.0.256"; },
       "s.json: at $.hosts[1].address: expected an IPv4 address such as \"10.0.0.1\" (four numbers from 0 to 255, "
       "no leading zeros), got \"10.0.0.256\""},
      {"a duplicate broker id", [](nlohmann::json& j) { j["hosts"][1]["brokers"][0]["id"] = 1; },
       "s.json: at $.hosts[1].brokers[0].id: broker id 1 is used twice"},
      {"a duplicate ZooKeeper id", [](nlohmann::json& j) { j["hosts"][2]["zookeeper"]["id"] = 1; },
       "s.json: at $.hosts[2].zookeeper.id: ZooKeeper server id 1 is used twice"},
      {"a ZooKeeper id out of range", [](nlohmann::json& j) { j["hosts"][2]["zookeeper"]["id"] = 0; },
       "s.json: at $.hosts[2].zookeeper.id: expected an integer from 1 to 255, got 0 (an integer)"},
      {"two brokers on one port of one host",
       [](nlohmann::json& j) { j["hosts"][0]["brokers"].push_back({{"id", 4}, {"properties", {{"log.dirs", "/d4"}}}}); },
       "s.json: at $.hosts[0].brokers[1]: port 9092 on host \"node1\" is already taken by kafka1"},
      {"two brokers in one log directory",
       [](nlohmann::json& j) { j["hosts"][0]["brokers"].push_back({{"id", 4}, {"properties", {{"listeners", "PLAINTEXT://:9093"}}}}); },
       "s.json: at $.hosts[0].brokers[1]: log directory /var/lib/kafka/data on host \"node1\" is already kafka1's"},
      {"a contradicting broker.id",
       [](nlohmann::json& j) { j["hosts"][0]["brokers"][0]["properties"] = {{"broker.id", 5}}; },
       "s.json: at $.hosts[0].brokers[0].properties[\"broker.id\"]: 5 contradicts the broker's \"id\" 1"},
      {"a client named like a process", [](nlohmann::json& j) { j["hosts"][3]["clients"][0] = "kafka1"; },
       "s.json: at $.hosts[3].clients[0]: the name \"kafka1\" is used twice (hosts and processes share one namespace)"},
      {"a replication factor above the broker count", [](nlohmann::json& j) { j["topics"][0]["replication_factor"] = 4; },
       "s.json: at $.topics[0].replication_factor: replication factor 4 is above the number of brokers (3)"},
      {"a bad topic name", [](nlohmann::json& j) { j["topics"][0]["name"] = "my topic"; },
       "s.json: at $.topics[0].name: \"my topic\" is not a topic name a client may create (letters, digits, '.', "
       "'_', '-'; at most 249; not starting with \"__\")"},
      {"a misspelt topic config", [](nlohmann::json& j) { j["topics"][0]["config"]["retention.mss"] = 5; },
       "s.json: at $.topics[0].config[\"retention.mss\"]: unknown key; did you mean 'retention.ms'?"},
      {"a duplicate topic", [](nlohmann::json& j) { j["topics"].push_back(j["topics"][0]); },
       "s.json: at $.topics[1].name: topic \"test\" is defined twice"},
      {"an unknown lab field", [](nlohmann::json& j) { j["workload"]["trys"] = 3; },
       "s.json: at $.workload.trys: unknown field \"trys\" (did you mean \"tries\"?); known fields here: consumer, "
       "consumer_head_start_s, pause_ms, poll_timeout_ms, producer, topic, tries, type, value_size"},
      {"a lab producer that would send without end at one instant",
       [](nlohmann::json& j) {
         j["workload"]["pause_ms"] = 0;
         j["clients"]["producer"]["acks"] = "0";
       },
       "s.json: at $.workload.pause_ms: 0 with acks=0 would make the producer send without end at one virtual "
       "instant (the model spends no time writing a request); give at least 1"},
      {"a workload topic not defined", [](nlohmann::json& j) { j["workload"]["topic"] = "tset"; },
       "s.json: at $.workload.topic: no topic named \"tset\" in \"topics\""},
      {"a workload client not declared", [](nlohmann::json& j) { j["workload"]["producer"] = "prodcer"; },
       "s.json: at $.workload.producer: no client named \"prodcer\" on any host; clients: producer, consumer"},
      {"a client without a role", [](nlohmann::json& j) { j["hosts"][3]["clients"].push_back("spare"); },
       "s.json: at $.hosts[3].clients[2]: client \"spare\" has no role in the lab workload (\"producer\" or "
       "\"consumer\")"},
      {"a misspelt client property", [](nlohmann::json& j) { j["clients"]["producer"]["enable.idempotance"] = true; },
       "s.json: at $.clients.producer[\"enable.idempotance\"]: unknown key; did you mean 'enable.idempotence'?"},
      {"idempotence with acks=1", [](nlohmann::json& j) {
         j["clients"]["producer"]["enable.idempotence"] = true;
         j["clients"]["producer"]["acks"] = 1;
       },
       "s.json: at $.clients.producer.acks: must be all (-1) when enable.idempotence is true, got '1'"},
      {"a steady workload with a client twice", [](nlohmann::json& j) {
         j["workload"] = {{"type", "steady"}, {"producers", {"producer"}}, {"consumers", {"producer", "consumer"}}};
       },
       "s.json: at $.workload.consumers[0]: client \"producer\" already has a role in the workload"},
      {"a phase that ends before it starts", [](nlohmann::json& j) {
         j["phases"] = {{{"name", "rolling"}, {"from_s", 100}, {"to_s", 50}}};
       },
       "s.json: at $.phases[0].to_s: to_s must be after from_s"},
      {"two snapshots of one name", [](nlohmann::json& j) {
         j["snapshots"] = {{{"name", "a"}, {"at_s", 1}}, {{"name", "a"}, {"at_s", 2}}};
       },
       "s.json: at $.snapshots[1].name: snapshot \"a\" is defined twice"},
      {"a snapshot after the end", [](nlohmann::json& j) { j["snapshots"] = {{{"name", "a"}, {"at_s", 961}}}; },
       "s.json: at $.snapshots[0].at_s: at_s is after the end of the run (960 s)"},
      {"a nemesis that would draw too many faults", [](nlohmann::json& j) {
         j["duration_s"] = 5000;
         j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"brokers"}}, {"mean_interval_s", 0.001}, {"quiet_s", 60}};
       },
       "s.json: at $.nemesis.mean_interval_s: a mean interval of 0.001 s draws about 4940000 faults in 4940 s; at "
       "most 1000000 (make it at least 0.00494 s)"},
      {"a grace on a kill", [](nlohmann::json& j) { j["faults"][4]["grace_s"] = 5; },
       "s.json: at $.faults[4].grace_s: unknown field \"grace_s\"; known fields here: action, at, target"},
      {"a host named as the runner's admin", [](nlohmann::json& j) { j["hosts"][3]["name"] = "admin"; },
       "s.json: at $.hosts[3].name: the name \"admin\" is the runner's own (the process that creates the topics)"},
      {"a host at the runner's admin address", [](nlohmann::json& j) { j["hosts"][3]["address"] = "10.255.255.254"; },
       "s.json: at $.hosts[3].address: the address 10.255.255.254 is the runner's own (its admin host)"},
      {"two hosts moved to one address", [](nlohmann::json& j) {
         j["faults"].push_back({{"at", 435}, {"action", "replace_address"}, {"target", "node2"}, {"address", "10.0.0.33"}});
       },
       "s.json: at $.faults[7].address: 10.0.0.33 is held by host \"node3\" at 435 s"},
      {"a nemesis partition over one host", [](nlohmann::json& j) {
         j["nemesis"] = {{"kinds", {"partition"}}, {"targets", {"node1"}}};
       },
       "s.json: at $.nemesis.targets: the nemesis kind \"partition\" splits the targets' hosts into two groups, and "
       "the targets [\"node1\"] are on 1 host; it needs at least two"},
      {"an unknown environment field", [](nlohmann::json& j) { j["environment"] = {{"boot_delay", 20}}; },
       "s.json: at $.environment.boot_delay: unknown field \"boot_delay\" (did you mean \"boot_delay_s\"?); known "
       "fields here: boot_delay_s, fsync_latency_max_ms, fsync_latency_min_ms, host_unreachable_after_s, restart, "
       "restart_delay_s, writeback_delay_s"},
      {"an unknown workload", [](nlohmann::json& j) { j["workload"]["type"] = "stedy"; },
       "s.json: at $.workload.type: expected one of \"lab\", \"steady\", got \"stedy\" (did you mean \"steady\"?)"},
      {"a fault after the end", [](nlohmann::json& j) { j["faults"][0]["at"] = 961; },
       "s.json: at $.faults[0].at: 961 s is after the end of the run (duration_s 960)"},
      {"an unknown action", [](nlohmann::json& j) { j["faults"][0]["action"] = "poweroff"; },
       "s.json: at $.faults[0].action: expected one of \"power_off\", \"power_on\", \"kill\", \"start\", \"stop\", "
       "\"pause\", \"resume\", \"partition\", \"isolate\", \"heal\", \"replace_address\", \"restart_clients\", got "
       "\"poweroff\" (did you mean \"power_off\"?)"},
      {"a fault on a host that does not exist", [](nlohmann::json& j) { j["faults"][0]["target"] = "node4"; },
       "s.json: at $.faults[0].target: no host named \"node4\"; hosts: node1, node2, node3, client"},
      {"a host fault on a process", [](nlohmann::json& j) { j["faults"][0]["target"] = "kafka1"; },
       "s.json: at $.faults[0].target: no host named \"kafka1\" (\"kafka1\" is a process, on host \"node1\"); "
       "hosts: node1, node2, node3, client"},
      {"a process fault on a host", [](nlohmann::json& j) { j["faults"][4]["target"] = "node2"; },
       "s.json: at $.faults[4].target: no process named \"node2\" (\"node2\" is a host); processes: zk1, zk2, zk3, "
       "kafka1, kafka2, kafka3, producer, consumer"},
      {"a field of another action", [](nlohmann::json& j) { j["faults"][6]["target"] = "node1"; },
       "s.json: at $.faults[6].target: unknown field \"target\"; known fields here: action, at"},
      {"a partition with both shapes", [](nlohmann::json& j) { j["faults"][2]["from"] = "node1"; },
       "s.json: at $.faults[2]: a partition has one of \"groups\" (sides that cannot reach each other), \"from\" "
       "and \"to\" (one way) or \"cuts\" (pairs of hosts cut both ways)"},
      {"a cut that is not a pair", [](nlohmann::json& j) {
         j["faults"][2].erase("groups");
         j["faults"][2]["cuts"] = {{"node1", "node2", "node3"}};
       },
       "s.json: at $.faults[2].cuts[0]: expected a pair of hosts, got 3 of them"},
      {"a cut of a host from itself", [](nlohmann::json& j) {
         j["faults"][2].erase("groups");
         j["faults"][2]["cuts"] = nlohmann::json::array({nlohmann::json::array({"node1", "node3"}),
                                                         nlohmann::json::array({"node2", "node2"})});
       },
       "s.json: at $.faults[2].cuts[1][1]: a host cannot be cut from itself"},
      {"a cut naming no host", [](nlohmann::json& j) {
         j["faults"][2].erase("groups");
         j["faults"][2]["cuts"] = nlohmann::json::array({nlohmann::json::array({"node1", "node9"})});
       },
       "s.json: at $.faults[2].cuts[0][1]: no host named \"node9\"; hosts: node1, node2, node3, client"},
      {"a host in two groups", [](nlohmann::json& j) { j["faults"][2]["groups"][1][0] = "node1"; },
       "s.json: at $.faults[2].groups[1][0]: host \"node1\" is in two groups"},
      {"one group", [](nlohmann::json& j) { j["faults"][2]["groups"] = {{"node1"}}; },
       "s.json: at $.faults[2].groups: expected an array of at least 2 elements, got 1"},
      {"an address already taken", [](nlohmann::json& j) { j["faults"][5]["address"] = "10.0.0.2"; },
       "s.json: at $.faults[5].address: 10.0.0.2 is held by host \"node2\" at 430 s"},
      {"a host name with a space", [](nlohmann::json& j) { j["hosts"][1]["name"] = "node 2"; },
       "s.json: at $.hosts[1].name: \"node 2\": a host or client name is letters, digits, '_', '-' and '.'"},
      {"a client name with a line break", [](nlohmann::json& j) { j["hosts"][3]["clients"][1] = "con\nsumer"; },
       "s.json: at $.hosts[3].clients[1]: \"con\\nsumer\": a host or client name is letters, digits, '_', '-' and "
       "'.'"},
      {"topics that collide", [](nlohmann::json& j) { j["topics"].push_back({{"name", "te.st"}}); j["topics"].push_back({{"name", "te_st"}}); },
       "s.json: at $.topics[2].name: topic \"te_st\" collides with topic \"te.st\" ('.' and '_' are one to Kafka's "
       "metrics; Kafka refuses to create it)"},
      {"an address with a leading zero", [](nlohmann::json& j) { j["hosts"][1]["address"] = "10.0.0.01"; },
       "s.json: at $.hosts[1].address: expected an IPv4 address such as \"10.0.0.1\" (four numbers from 0 to 255, "
       "no leading zeros), got \"10.0.0.01\""},
      {"the runner's address spelt with a zero", [](nlohmann::json& j) { j["faults"][5]["address"] = "010.255.255.254"; },
       "s.json: at $.faults[5].address: expected an IPv4 address such as \"10.0.0.1\" (four numbers from 0 to 255, "
       "no leading zeros), got \"010.255.255.254\""},
      {"myid in zoo.cfg", [](nlohmann::json& j) { j["zookeeper"]["properties"]["myid"] = 3; },
       "s.json: at $.zookeeper.properties.myid: not a zoo.cfg key: a server's myid is its \"id\" in the scenario; "
       "remove it"},
      {"a listener on another host's address",
       [](nlohmann::json& j) { j["hosts"][0]["brokers"][0]["properties"]["listeners"] = "PLAINTEXT://10.0.0.2:9092"; },
       "s.json: at $.hosts[0].brokers[0].properties.listeners: PLAINTEXT://10.0.0.2:9092 binds 10.0.0.2, which is "
       "not an address of host \"node1\" (10.0.0.1)"},
      {"a property with no name", [](nlohmann::json& j) { j["kafka"]["properties"][""] = "x"; },
       "s.json: at $.kafka.properties[\"\"]: a property needs a name"},
      {"one client in both lab roles", [](nlohmann::json& j) {
         j["hosts"][3]["clients"] = {"consumer"};
         j["clients"].erase("producer");
         j["workload"]["producer"] = "consumer";
       },
       "s.json: at $.workload: the client \"consumer\" would be both producer and consumer: \"consumer\" is "
       "\"consumer\" when not given; name another client, or \"\" for none"},
      {"a producer that would start after the end", [](nlohmann::json& j) { j["workload"]["consumer_head_start_s"] = 960; },
       "s.json: at $.workload.consumer_head_start_s: the producer would start 960 s in, not before the end of the run "
       "(duration_s 960)"},
      {"an fsync latency above the default maximum", [](nlohmann::json& j) { j["environment"] = {{"fsync_latency_min_ms", 10}}; },
       "s.json: at $.environment.fsync_latency_min_ms: 10 ms is above fsync_latency_max_ms (by default 5 ms); set that "
       "too"},
      {"an expectation that does not parse", [](nlohmann::json& j) { j["expect"][0] = "max_stall_s = 20"; },
       "s.json: at $.expect[0]: in the expectation \"max_stall_s = 20\": column 13: '=' is not an operator; compare "
       "with '=='"},
      {"an expectation nested too deep",
       [](nlohmann::json& j) {
         std::string text;
         for (int i = 0; i < 300; ++i) text += "not ";
         j["expect"][0] = text + "true";
       },
       "s.json: at $.expect[0]: in the expectation \"not not not not not not not not not not not not not not not not not "
       "not not not not not not not not … (1204 characters)\": column 1025: the expression nests more than 256 levels "
       "deep"},
      {"a property that is an object", [](nlohmann::json& j) { j["clients"]["producer"]["acks"] = {{"x", 1}}; },
       "s.json: at $.clients.producer.acks: expected a property value (a string, a number or a boolean), got "
       "{\"x\":1} (an object)"},
      {"a nemesis with no room", [](nlohmann::json& j) { j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"brokers"}}, {"start_s", 900}}; },
       "s.json: at $.nemesis: start_s + quiet_s (960 s) leaves no time for faults in a run of 960 s"},
      {"a nemesis on an unknown target", [](nlohmann::json& j) { j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"broker"}}}; },
       "s.json: at $.nemesis.targets[0]: expected \"brokers\", \"zookeepers\", \"clients\", a host or a process, got "
       "\"broker\""},
      {"a nemesis of an unknown kind", [](nlohmann::json& j) { j["nemesis"] = {{"kinds", {"heal"}}, {"targets", {"brokers"}}}; },
       "s.json: at $.nemesis.kinds[0]: expected one of \"kill\", \"pause\", \"stop\", \"power_off\", \"partition\", "
       "\"isolate\", got \"heal\""},
      {"a negative seed", [](nlohmann::json& j) { j["seed"] = -1; },
       "s.json: at $.seed: expected an integer from 0 to 18446744073709551615, got -1 (an integer)"},
      {"a steady workload's misspelt consumers, with a start time", [](nlohmann::json& j) {
         j["workload"] = {{"type", "steady"}, {"producers", {"producer"}}, {"consumer", {"consumer"}},
                          {"consumers_start_s", 5}};
       },
       "s.json: at $.workload.consumer: unknown field \"consumer\" (did you mean \"consumers\"?); known fields here: "
       "arrivals, consumers, consumers_start_s, groups, keys, max_outstanding, poll_timeout_ms, producers, rate_per_s, "
       "topic, type, value_size"},
      {"a steady workload's misspelt producers", [](nlohmann::json& j) {
         j["workload"] = {{"type", "steady"}, {"producer", {"producer"}}, {"consumers", {"consumer"}}};
       },
       "s.json: at $.workload: missing the required field \"producers\" (is \"producer\" it, misspelt?)"},
      // A control byte in a quoted text is shown escaped: a raw NUL would end
      // the message where it is printed.
      {"a NUL byte in an expectation", [](nlohmann::json& j) { j["expect"][0] = std::string("lost == \0 0", 11); },
       "s.json: at $.expect[0]: in the expectation \"lost == \\x00 0\": column 9: unexpected byte 0x00 (only ASCII "
       "is understood; write <=, >=, != for the symbols)"},
      // Addresses no host can hold (RFC 6890).
      {"a host at the meta-address", [](nlohmann::json& j) { j["hosts"][3]["address"] = "0.0.0.0"; },
       "s.json: at $.hosts[3].address: 0.0.0.0 cannot be a host's address: 0.0.0.0/8 is \"this network\" (0.0.0.0 is "
       "the non-routable meta-address): no host answers at it"},
      {"a host at a loopback address", [](nlohmann::json& j) { j["hosts"][3]["address"] = "127.0.0.1"; },
       "s.json: at $.hosts[3].address: 127.0.0.1 cannot be a host's address: 127.0.0.0/8 is loopback: every host's "
       "own, which no other host can reach"},
      {"a host at a multicast address", [](nlohmann::json& j) { j["hosts"][3]["address"] = "239.1.1.1"; },
       "s.json: at $.hosts[3].address: 239.1.1.1 cannot be a host's address: 224.0.0.0/4 is multicast, not one "
       "host's address"},
      {"a host at the broadcast address", [](nlohmann::json& j) { j["hosts"][3]["address"] = "255.255.255.255"; },
       "s.json: at $.hosts[3].address: 255.255.255.255 cannot be a host's address: 240.0.0.0/4 is reserved "
       "(255.255.255.255 is the broadcast address), not one host's address"},
      {"a host moved to a loopback address", [](nlohmann::json& j) {
         j["faults"].push_back({{"at", 435}, {"action", "replace_address"}, {"target", "node2"}, {"address", "127.0.0.2"}});
       },
       "s.json: at $.faults[7].address: 127.0.0.2 cannot be a host's address: 127.0.0.0/8 is loopback: every host's "
       "own, which no other host can reach"},
      // A check between fields that fails on a default names the field left
      // out; and a misspelt field is named before any such check runs.
      {"a producer that would start after a short run", one_second_run,
       "s.json: at $.workload: \"consumer_head_start_s\" (not given, so at its default): the producer would start 2 s "
       "in, not before the end of the run (duration_s 1)"},
      {"a misspelt consumer_head_start_s", [](nlohmann::json& j) {
         one_second_run(j);
         j["workload"]["consumer_head_start"] = 0.5;
       },
       "s.json: at $.workload.consumer_head_start: unknown field \"consumer_head_start\" (did you mean "
       "\"consumer_head_start_s\"?); known fields here: consumer, consumer_head_start_s, pause_ms, poll_timeout_ms, "
       "producer, topic, tries, type, value_size"},
      {"a nemesis whose default maximum is below its minimum", [](nlohmann::json& j) {
         j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"brokers"}}, {"min_duration_s", 40}};
       },
       "s.json: at $.nemesis: \"max_duration_s\" (not given, so at its default): 30 s is below min_duration_s (40 s)"},
      {"a misspelt quiet_s", [](nlohmann::json& j) {
         j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"brokers"}}, {"start_s", 900}, {"quite_s", 5}};
       },
       "s.json: at $.nemesis.quite_s: unknown field \"quite_s\" (did you mean \"quiet_s\"?); known fields here: "
       "kinds, max_duration_s, mean_interval_s, min_duration_s, quiet_s, start_s, targets"},
      {"an fsync minimum above the default maximum", [](nlohmann::json& j) {
         j["environment"] = {{"fsync_latency_min_ms", 10}};
       },
       "s.json: at $.environment.fsync_latency_min_ms: 10 ms is above fsync_latency_max_ms (by default 5 ms); set "
       "that too"},
      {"a misspelt fsync maximum", [](nlohmann::json& j) {
         j["environment"] = {{"fsync_latency_min_ms", 10}, {"fsync_latency_max", 20}};
       },
       "s.json: at $.environment.fsync_latency_max: unknown field \"fsync_latency_max\"; known fields here: "
       "boot_delay_s, fsync_latency_max_ms, fsync_latency_min_ms, host_unreachable_after_s, restart, restart_delay_s, "
       "writeback_delay_s"},
  };
  for (const Broken& c : cases) {
    nlohmann::json j = good();
    c.edit(j);
    EXPECT_EQ(error_of(j), c.message) << c.what;
  }
  EXPECT_EQ(error_of(nlohmann::json::array()), "s.json: at $: expected an object, got [] (an array)");
}

TEST(ScenarioFile, MalformedJsonIsAnInputError) {
  try {
    (void)parse_scenario("s.json", "{\"name\": \"x\",\n \"hosts\": [}\n");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.json: malformed JSON at line 2, column 12", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace scenario

namespace scenario {
namespace {

// docs/scenario.schema.json lists, for each object, the fields the reader
// accepts: an unknown field at each level must name exactly those.
TEST(ScenarioFile, TheJsonSchemaListsTheFieldsTheReaderAccepts) {
  const nlohmann::json schema = read_json_file(KAFKASIM_SOURCE_DIR "/docs/scenario.schema.json");
  const nlohmann::json& defs = schema.at("$defs");
  struct Level {
    const char* what;
    std::function<void(nlohmann::json&)> add_unknown;
    const nlohmann::json& schema_object;
  };
  const std::vector<Level> levels = {
      {"top level", [](nlohmann::json& j) { j["zzz"] = 1; }, schema},
      {"cluster config", [](nlohmann::json& j) { j["kafka"]["zzz"] = 1; }, defs.at("config")},
      {"host", [](nlohmann::json& j) { j["hosts"][0]["zzz"] = 1; }, defs.at("host")},
      {"host zookeeper", [](nlohmann::json& j) { j["hosts"][0]["zookeeper"]["zzz"] = 1; },
       defs.at("host").at("properties").at("zookeeper")},
      {"broker", [](nlohmann::json& j) { j["hosts"][0]["brokers"][0]["zzz"] = 1; },
       defs.at("host").at("properties").at("brokers").at("items")},
      {"clients", [](nlohmann::json& j) { j["clients"]["zzz"] = nlohmann::json::object(); },
       schema.at("properties").at("clients")},
      {"topic", [](nlohmann::json& j) { j["topics"][0]["zzz"] = 1; }, defs.at("topic")},
      {"nemesis",
       [](nlohmann::json& j) { j["nemesis"] = {{"kinds", {"kill"}}, {"targets", {"brokers"}}, {"zzz", 1}}; },
       defs.at("nemesis")},
      {"lab workload", [](nlohmann::json& j) { j["workload"]["zzz"] = 1; }, defs.at("lab_workload")},
      {"steady workload",
       [](nlohmann::json& j) { j["workload"] = {{"type", "steady"}, {"producers", {"producer"}}, {"consumers", {"consumer"}}, {"zzz", 1}}; },
       defs.at("steady_workload")},
      {"environment", [](nlohmann::json& j) { j["environment"] = {{"zzz", 1}}; }, defs.at("environment")},
      {"phase", [](nlohmann::json& j) { j["phases"] = {{{"name", "a"}, {"from_s", 0}, {"to_s", 1}, {"zzz", 1}}}; },
       defs.at("phase")},
      {"snapshot", [](nlohmann::json& j) { j["snapshots"] = {{{"name", "a"}, {"at_s", 0}, {"zzz", 1}}}; },
       defs.at("snapshot")},
  };
  for (const Level& level : levels) {
    nlohmann::json j = good();
    level.add_unknown(j);
    const std::string e = error_of(j);
    const std::string marker = "known fields here: ";
    const size_t at = e.find(marker);
    ASSERT_NE(at, std::string::npos) << level.what << ": " << e;
    std::string listed = e.substr(at + marker.size());
    std::string expected;
    for (auto it = level.schema_object.at("properties").begin(); it != level.schema_object.at("properties").end();
         ++it) {
      expected += (expected.empty() ? "" : ", ") + it.key();  // nlohmann keeps keys sorted
    }
    EXPECT_EQ(listed, expected) << level.what;
    EXPECT_EQ(level.schema_object.at("additionalProperties"), false) << level.what;
  }
}

}  // namespace
}  // namespace scenario
