// The scenario runner: a scenario file in, a verdict out. The small
// scenario here (one ZooKeeper, three brokers, the lab workload for a
// minute) runs in well under a second; the seed-000 files run whole.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <sstream>

#include "check_property.h"
#include "model/check/history.h"
#include "model/scenario/run.h"

namespace scenario {
namespace {

std::string failures(const RunResult& r) {
  std::string out;
  for (const ExpectationOutcome& e : r.expectations) {
    if (e.result != Expectation::Result::Outcome::held) out += e.text + ": " + e.detail + "\n";
  }
  if (r.invariant) out += "invariant: " + r.invariant->message + "\n";
  return out;
}

const char* const kSmall = R"({
  "name": "small",
  "version": "2.8",
  "duration_s": 60,
  "hosts": [
    {"name": "zk", "address": "10.0.0.1", "zookeeper": {"id": 1}},
    {"name": "node1", "address": "10.0.1.1", "brokers": [{"id": 1}]},
    {"name": "node2", "address": "10.0.1.2", "brokers": [{"id": 2}]},
    {"name": "node3", "address": "10.0.1.3", "brokers": [{"id": 3}]},
    {"name": "client", "address": "10.0.9.1", "clients": ["producer", "consumer"]}
  ],
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
  "workload": {"type": "lab"},
  "faults": [
    {"at": 10, "action": "kill", "target": "kafka1"},
    {"at": 10, "action": "kill", "target": "kafka2"},
    {"at": 40, "action": "start", "target": "kafka1"},
    {"at": 40, "action": "start", "target": "kafka2"}
  ],
  "snapshots": [{"name": "before", "at_s": 10}, {"name": "killed", "at_s": 35}, {"name": "at_start", "at_s": 40}],
  "phases": [{"name": "calm", "from_s": 4, "to_s": 10}],
  "expect": [
    "lost == 0",
    "len(snapshots.killed.brokers) == 1",
    "snapshots.killed.partition[\"t\", 0].leader == 3",
    "len(snapshots.killed.partition[\"t\", 0].isr) == 1 && snapshots.killed.partition[\"t\", 0].isr[0] == 3",
    "phases.calm.max_stall_s < 1",
    "phases.calm.acknowledged > 200"
  ]
})";

Scenario small(const std::string& patch = "") {
  nlohmann::json j = nlohmann::json::parse(kSmall);
  if (!patch.empty()) j.merge_patch(nlohmann::json::parse(patch));
  return parse_scenario("small.json", j.dump());
}

TEST(ScenarioRun, FaultsSnapshotsAndPhasesOfASmallScenario) {
  // With version 2.8's 18 s ZooKeeper sessions the killed brokers' znodes
  // go at about 28 s: the 35 s snapshot sees broker 3 alone, leading.
  const Scenario s = small();
  const RunResult r = run_scenario(s, 1);
  ASSERT_EQ(r.exit_code(), kExitHeld) << failures(r);
  EXPECT_EQ(r.end_time_us, 60'000'000);
  // The timeline holds the faults at their exact times, in file order.
  std::vector<std::string> faults;
  for (const TimelineEntry& t : r.timeline) {
    if (t.text.rfind("kill ", 0) == 0 || t.text.rfind("start ", 0) == 0) {
      faults.push_back(format_seconds(t.time_us) + " " + t.text);
    }
  }
  EXPECT_EQ(faults, (std::vector<std::string>{"10 kill kafka1", "10 kill kafka2", "40 start kafka1", "40 start kafka2"}));
  // A snapshot at the time of a fault sees the state before it.
  const nlohmann::json& v = r.verdict;
  EXPECT_EQ(v["snapshots"]["before"]["brokers"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(v["snapshots"]["at_start"]["running"]["kafka1"], false);
  EXPECT_EQ(v["final"]["running"]["kafka1"], true);
  EXPECT_EQ(v["final"]["brokers"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(v["final"]["zookeeper"]["leader"], 1);
  EXPECT_EQ(v["final"]["partition"]["t-0"]["replicas"].size(), 3u);
  EXPECT_EQ(v["final"]["partition"]["t-0"]["log_end"], v["final"]["partition"]["t-0"]["high_watermark"]);
  EXPECT_EQ(v["clients"]["producer"]["role"], "producer");
  EXPECT_EQ(v["acknowledged"], v["clients"]["producer"]["acknowledged"]);
  EXPECT_GT(v["acknowledged"].get<int64_t>(), 200);
  // The leader's process is gone but its host answers: every try is refused
  // at once, and the script gives up long before the 18 s session expires.
  EXPECT_EQ(v["producer_gave_up"], true);
  EXPECT_EQ(v["clients"]["producer"]["gave_up"], true);
  EXPECT_EQ(v["checks"]["lost"]["lost"], 0);
}

TEST(ScenarioRun, CutsSeverOnlyTheirPairs) {
  // Broker 1 cut from the ZooKeeper host loses its session (18 s) and its
  // znode; brokers 2 and 3 cut from each other still reach ZooKeeper, so
  // they stay registered. The heal brings broker 1 back.
  const Scenario s = small(R"({"faults": [
    {"at": 10, "action": "partition", "cuts": [["zk", "node1"], ["node2", "node3"]]},
    {"at": 40, "action": "heal"}],
    "expect": [], "phases": [], "snapshots": [{"name": "cut", "at_s": 35}]})");
  const RunResult r = run_scenario(s, 1);
  ASSERT_EQ(r.exit_code(), kExitHeld) << failures(r);
  EXPECT_EQ(r.verdict["snapshots"]["cut"]["brokers"], nlohmann::json({2, 3}));
  EXPECT_EQ(r.verdict["final"]["brokers"], nlohmann::json({1, 2, 3}));
  bool seen = false;
  for (const TimelineEntry& t : r.timeline) seen = seen || t.text == "partition zk<-/->node1 node2<-/->node3";
  EXPECT_TRUE(seen);
}

TEST(ScenarioRun, ARunIsAFunctionOfScenarioAndSeed) {
  const Scenario s = small();
  const RunResult a = run_scenario(s, 5);
  const RunResult b = run_scenario(s, 5);
  const RunResult c = run_scenario(s, 6);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
  EXPECT_EQ(a.verdict.dump(), b.verdict.dump());
  EXPECT_NE(a.trace_hash, c.trace_hash);
}

TEST(ScenarioRun, ExitCodesFollowTheExpectations) {
  EXPECT_EQ(run_scenario(small(R"({"expect": ["lost == 0"]})"), 1).exit_code(), kExitHeld);
  const RunResult failed = run_scenario(small(R"({"expect": ["lost == 0", "acknowledged == 0"]})"), 1);
  EXPECT_EQ(failed.exit_code(), kExitFailed);
  ASSERT_EQ(failed.expectations.size(), 2u);
  EXPECT_EQ(failed.expectations[1].result, Expectation::Result::Outcome::failed);
  EXPECT_EQ(failed.expectations[1].detail.rfind("acknowledged = ", 0), 0u) << failed.expectations[1].detail;
  // A field the verdict does not have is bad input, not a failure.
  const RunResult error = run_scenario(small(R"({"expect": ["lsot == 0"]})"), 1);
  EXPECT_EQ(error.exit_code(), kExitBadInput);
  EXPECT_NE(error.expectations[0].detail.find("(did you mean 'lost'?)"), std::string::npos)
      << error.expectations[0].detail;
  const nlohmann::json line = failed.to_json();
  EXPECT_EQ(line["exit"], kExitFailed);
  EXPECT_EQ(line["seed"], 1);
  EXPECT_EQ(line["scenario_hash"], failed.scenario_hash);
  EXPECT_TRUE(line["verdict"].contains("max_stall_s"));
}

TEST(ScenarioRun, TheHistoryAndTraceCanBeKept) {
  check::History history;
  std::ostringstream trace;
  RunOptions o;
  o.history_out = &history;
  o.trace_json = &trace;
  const RunResult r = run_scenario(small(), 2, o);
  EXPECT_GT(history.size(), 1000u);
  const std::string lines = trace.str();
  EXPECT_EQ(static_cast<uint64_t>(std::count(lines.begin(), lines.end(), '\n')), r.trace_records);
}

// A produce request with acks=all waits in its leader's purgatory after the
// append; if the partition moves meanwhile the answer is
// NOT_LEADER_FOR_PARTITION (DelayedProduce), and the batch may be in the
// log. The history records such a send as unknown (info), never as fail
// (not written): here the consumer later reads values so answered.
TEST(ScenarioRun, ANotLeaderAnswerToAParkedAcksAllSendIsAnUnknownOutcome) {
  const Scenario s = parse_scenario("not_leader.json", R"({
    "name": "not leader after the append",
    "version": "2.8",
    "duration_s": 90,
    "hosts": [
      {"name": "node1", "address": "10.0.0.1", "zookeeper": {"id": 1}, "brokers": [{"id": 1}]},
      {"name": "node2", "address": "10.0.0.2", "brokers": [{"id": 2}]},
      {"name": "node3", "address": "10.0.0.3", "brokers": [{"id": 3}]},
      {"name": "client", "address": "10.0.9.1", "clients": ["producer", "consumer"]}
    ],
    "clients": {"producer": {"retries": 0, "acks": "all"}, "consumer": {"auto.offset.reset": "earliest"}},
    "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
    "workload": {"type": "steady", "producers": ["producer"], "consumers": ["consumer"], "groups": [],
                 "rate_per_s": 10, "topic": "t", "consumers_start_s": 60},
    "faults": [
      {"at": 30, "action": "partition", "cuts": [["node2", "node3"]]},
      {"at": 35, "action": "stop", "target": "kafka2"},
      {"at": 50, "action": "heal"}
    ]
  })");
  check::History h;
  RunOptions o;
  o.history_out = &h;
  const RunResult r = run_scenario(s, 1, o);
  ASSERT_EQ(r.exit_code(), kExitHeld) << failures(r);
  std::set<uint64_t> consumed;
  for (const check::Op& op : h.ops()) {
    if (op.f == check::OpFunction::poll && op.type == check::OpType::ok && op.partition >= 0) consumed.insert(op.value);
  }
  const auto not_leader = h.find_string("NOT_LEADER_FOR_PARTITION");
  ASSERT_TRUE(not_leader.has_value()) << "no send was answered NOT_LEADER_FOR_PARTITION";
  size_t unknown_but_read = 0;
  for (const check::Op& op : h.ops()) {
    if (op.f != check::OpFunction::send || op.error != *not_leader) continue;
    EXPECT_NE(op.type, check::OpType::fail) << "value " << op.value << " at " << op.time_us;
    if (op.type == check::OpType::info && consumed.count(op.value) != 0) ++unknown_but_read;
  }
  EXPECT_GT(unknown_but_read, 0u);
}

// A broker's periodic tasks run at a fixed rate (KafkaScheduler:
// scheduleAtFixedRate): a run delayed by a pause leaves the schedule where it
// was. Retention checks every 60 s from 30 s, the broker paused from 140 to
// 170 s: the 150 s check runs at 170 s, and the next ones at 210, 270, 330
// and 390 s (not 230, 290 ...).
TEST(ScenarioRun, BrokerTasksKeepTheirScheduleAfterAPause) {
  const Scenario s = parse_scenario("pause.json", R"({
    "name": "retention after a pause",
    "version": "2.8",
    "duration_s": 400,
    "kafka": {"properties": {"log.retention.check.interval.ms": 60000, "offsets.topic.replication.factor": 1}},
    "hosts": [
      {"name": "zoo1", "address": "10.0.0.2", "zookeeper": {"id": 1}},
      {"name": "k1", "address": "10.0.0.5", "brokers": [{"id": 1}]},
      {"name": "client", "address": "10.0.0.10", "clients": ["p"]}
    ],
    "topics": [{"name": "t", "partitions": 1, "replication_factor": 1,
                "config": {"retention.ms": 30000, "segment.ms": 10000}}],
    "workload": {"type": "steady", "producers": ["p"], "consumers": [], "groups": [], "rate_per_s": 10,
                 "arrivals": "fixed", "keys": 0, "value_size": 10},
    "faults": [{"at": 140, "action": "pause", "target": "kafka1"}, {"at": 170, "action": "resume", "target": "kafka1"}]
  })");
  std::ostringstream trace;
  RunOptions o;
  o.trace_json = &trace;
  run_scenario(s, 1, o);
  std::set<int64_t> deleted_at_s;
  std::istringstream lines(trace.str());
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "segment_deleted") deleted_at_s.insert(j["t_us"].get<int64_t>() / 1'000'000);
  }
  EXPECT_EQ(deleted_at_s, (std::set<int64_t>{90, 170, 210, 270, 330, 390}));
}

TEST(ScenarioRun, RestartingTheClientsRecordsTheirExitsAndStartsThemAgain) {
  const RunResult r = run_scenario(
      small(R"({"faults": [{"at": 30, "action": "restart_clients"}], "snapshots": null,
                "expect": ["clients.producer.running", "clients.consumer.running", "acknowledged > 2000"]})"),
      1, [] {
        RunOptions o;
        return o;
      }());
  EXPECT_EQ(r.exit_code(), kExitHeld) << failures(r);
  check::History h;
  RunOptions o;
  o.history_out = &h;
  (void)run_scenario(small(R"({"faults": [{"at": 30, "action": "restart_clients"}], "snapshots": null, "expect": []})"),
                     1, o);
  size_t exits = 0;
  for (const check::Op& op : h.ops()) {
    if (op.f == check::OpFunction::exit) {
      ++exits;
      EXPECT_EQ(op.time_us, 30'000'000);
      EXPECT_EQ(h.string(op.error), "killed");
    }
  }
  EXPECT_EQ(exits, 2u);
}

TEST(ScenarioRun, OverridesGoWhereTheirKeyBelongs) {
  const Scenario s = small();
  const Scenario o = with_overrides(s, {{"acks", "all"},
                                        {"min.insync.replicas", "2"},
                                        {"unclean.leader.election.enable", "true"},
                                        {"zookeeper.tickTime", "3000"}});
  EXPECT_EQ(o.workload.lab.producer_config.acks, -1);
  for (const BrokerSpec& b : o.brokers) {
    EXPECT_EQ(b.config.log.min_insync_replicas, 2);
    EXPECT_TRUE(b.config.log.unclean_leader_election);
  }
  EXPECT_EQ(o.zookeepers[0].config.tick_time_ms, 3000);
  EXPECT_NE(o.hash, s.hash);
  // A key the consumer knows goes to the consumer.
  EXPECT_EQ(with_overrides(s, {{"consumer.auto.offset.reset", "earliest"}}).workload.lab.consumer_config.auto_offset_reset,
            client::ConsumerConfig::Reset::earliest);

  auto error_of = [&](std::map<std::string, std::string> m) -> std::string {
    try {
      (void)with_overrides(s, m);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of({{"akcs", "all"}}).rfind("--grid: at akcs: 'akcs' is not a Kafka broker, producer, consumer or "
                                              "zoo.cfg key",
                                              0),
            0u)
      << error_of({{"akcs", "all"}});
  EXPECT_NE(error_of({{"akcs", "all"}}).find("did you mean 'acks'"), std::string::npos) << error_of({{"akcs", "all"}});
  EXPECT_NE(error_of({{"min.insync.replicas", "zero"}}).find("min.insync.replicas=zero"), std::string::npos)
      << error_of({{"min.insync.replicas", "zero"}});
  // `version` is the scenario's version profile.
  const Scenario v22 = with_overrides(s, {{"version", "2.2"}});
  EXPECT_EQ(v22.version, kafka::VersionProfile::v2_2);
  for (const BrokerSpec& b : v22.brokers) {
    EXPECT_EQ(b.config.version, kafka::VersionProfile::v2_2);
    EXPECT_EQ(b.config.zookeeper_session_timeout_ms, 6000);
  }
  EXPECT_NE(v22.hash, s.hash);
  EXPECT_EQ(error_of({{"version", "2.4"}}),
            "--grid: at version: version=2.4: small.json: at $.version: expected one of 2.2, 2.3, 2.8, 3.1, 3.9, got '2.4'");
}

// `start` of a running process that is not stopping does nothing (as
// `systemctl start` of a running unit): a later kill stays a kill. A `start`
// right after a `stop` waits for the controlled shutdown to end.
TEST(ScenarioRun, StartWaitsForAStopAndIsANoOpOnARunningProcess) {
  const RunResult r = run_scenario(
      small(R"({"faults": [{"at": 5, "action": "start", "target": "kafka1"},
                           {"at": 8, "action": "kill", "target": "kafka1"},
                           {"at": 20, "action": "stop", "target": "kafka2"},
                           {"at": 20, "action": "start", "target": "kafka2"}],
                "snapshots": [{"name": "after", "at_s": 10}],
                "expect": ["!snapshots.after.running.kafka1", "!final.running.kafka1", "final.running.kafka2"]})"),
      1);
  EXPECT_EQ(r.exit_code(), kExitHeld) << failures(r);
  std::vector<std::string> stops;
  for (const TimelineEntry& t : r.timeline) {
    if (t.text.find("kafka2") != std::string::npos) stops.push_back(format_seconds(t.time_us) + " " + t.text);
  }
  EXPECT_EQ(stops, (std::vector<std::string>{"20 stop kafka2", "20 start kafka2"}));
  // The start of a running process at 5 s did nothing, and the timeline says so.
  bool noted = false;
  for (const TimelineEntry& t : r.timeline) {
    noted = noted || (t.time_us == 5'000'000 && t.text == "start kafka1 (no effect: already running)");
  }
  EXPECT_TRUE(noted);
}

TEST(ScenarioRun, FaultsThatChangeNothingSaySoInTheTimeline) {
  const RunResult r = run_scenario(
      small(R"({"faults": [{"at": 5, "action": "power_on", "target": "node1"},
                           {"at": 6, "action": "resume", "target": "kafka1"},
                           {"at": 7, "action": "pause", "target": "kafka1"},
                           {"at": 8, "action": "pause", "target": "kafka1"},
                           {"at": 9, "action": "resume", "target": "kafka1"},
                           {"at": 10, "action": "kill", "target": "kafka2"},
                           {"at": 11, "action": "kill", "target": "kafka2"},
                           {"at": 12, "action": "stop", "target": "kafka2"},
                           {"at": 13, "action": "power_off", "target": "node3"},
                           {"at": 14, "action": "power_off", "target": "node3"}],
                "snapshots": [], "expect": []})"),
      1);
  std::vector<std::string> faults;
  for (const TimelineEntry& t : r.timeline) {
    if (t.time_us >= 5'000'000 && t.time_us <= 14'000'000 && t.time_us % 1'000'000 == 0) {
      faults.push_back(format_seconds(t.time_us) + " " + t.text);
    }
  }
  EXPECT_EQ(faults, (std::vector<std::string>{
                        "5 power_on node1 (no effect: the host is already on)",
                        "6 resume kafka1 (no effect: not paused)",
                        "7 pause kafka1",
                        "8 pause kafka1 (no effect: already paused)",
                        "9 resume kafka1",
                        "10 kill kafka2",
                        "11 kill kafka2 (no effect: not running)",
                        "12 stop kafka2 (no effect: not running)",
                        "13 power_off node3",
                        "14 power_off node3 (no effect: the host is already off)",
                    }));
}

// An override of a broker key replaces a broker's own value of it and a
// topic's, which would otherwise win over the cluster-wide one.
TEST(ScenarioRun, OverridesReachBrokerAndTopicLevelValues) {
  const Scenario s = small(R"({"hosts": [
      {"name": "zk", "address": "10.0.0.1", "zookeeper": {"id": 1}},
      {"name": "node1", "address": "10.0.1.1", "brokers": [{"id": 1, "properties": {"min.insync.replicas": 1}}]},
      {"name": "node2", "address": "10.0.1.2", "brokers": [{"id": 2}]},
      {"name": "node3", "address": "10.0.1.3", "brokers": [{"id": 3}]},
      {"name": "client", "address": "10.0.9.1", "clients": ["producer", "consumer"]}],
    "topics": [{"name": "t", "partitions": 1, "replication_factor": 3, "config": {"min.insync.replicas": 1}}]})");
  const Scenario o = with_overrides(s, {{"min.insync.replicas", "2"}});
  for (const BrokerSpec& b : o.brokers) EXPECT_EQ(b.config.log.min_insync_replicas, 2) << b.id;
  EXPECT_EQ(o.topics[0].config.at("min.insync.replicas"), "2");
  // zoo.cfg first for a zookeeper. prefix, then the Kafka key of that name.
  EXPECT_EQ(with_overrides(s, {{"zookeeper.session.timeout.ms", "9000"}}).brokers[0].config.zookeeper_session_timeout_ms,
            9000);
}

TEST(ScenarioRun, DescribeAndZooKeeperAtAVirtualTime) {
  scenario::Run run(small(), 1);
  run.run_until(30'000'000);
  const std::string d = run.describe();
  EXPECT_NE(d.find("Topic: t\tPartition: 0\tLeader: 3\tReplicas: "), std::string::npos) << d;
  const std::optional<std::string> tree = run.zk_tree("/brokers/ids");
  ASSERT_TRUE(tree.has_value());
  EXPECT_NE(tree->find("/brokers/ids/3"), std::string::npos) << *tree;
  EXPECT_EQ(tree->find("/brokers/ids/1"), std::string::npos) << *tree;
  EXPECT_FALSE(run.zk_tree("/no/such/path").has_value());
  EXPECT_TRUE(run.zk_get("/controller").has_value());
}

// The seed-000 files, whole (16 virtual minutes each).
TEST(ScenarioRun, Seed000HoldsItsExpectations) {
  const Scenario s = load_scenario(KAFKASIM_SOURCE_DIR "/scenarios/seeds/000_f0aa22d7ff924a8b.json");
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(kafkasim::testing::scaled(2)); ++seed) {
    const RunResult r = run_scenario(s, seed);
    EXPECT_EQ(r.exit_code(), kExitHeld) << "seed " << seed << "\n" << failures(r);
  }
}

TEST(ScenarioRun, Seed000WithAcksAllAndIdempotenceLosesNothing) {
  const Scenario s = load_scenario(KAFKASIM_SOURCE_DIR "/scenarios/seeds/000_f0aa22d7ff924a8b_acks_all.json");
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(kafkasim::testing::scaled(2)); ++seed) {
    const RunResult r = run_scenario(s, seed);
    EXPECT_EQ(r.exit_code(), kExitHeld) << "seed " << seed << "\n" << failures(r);
  }
}

// The companion's delivery timeout is what keeps it free of duplicates: with
// the script's own 10 s (send_and_wait fails when the request does), some of
// the first seeds write values twice, and each one twice written is a value
// the script sent again after a try whose outcome was unknown. Idempotence
// merges the client's retries of a batch, never the script's resends. (The
// first such seed is looked for, so that the test does not hang on one
// seed's timing.)
TEST(ScenarioRun, Seed000AcksAllDuplicatesAreTheScriptsResends) {
  const Scenario companion =
      load_scenario(KAFKASIM_SOURCE_DIR "/scenarios/seeds/000_f0aa22d7ff924a8b_acks_all.json");
  const Scenario s = with_overrides(companion, {{"producer.delivery.timeout.ms", "10000"}});
  constexpr uint64_t kSeeds = 12;
  check::History h;
  std::optional<RunResult> found;
  for (uint64_t seed = 1; seed <= kSeeds && !found; ++seed) {
    h = check::History();
    RunOptions o;
    o.history_out = &h;
    RunResult r = run_scenario(s, seed, o);
    EXPECT_EQ(r.verdict["lost"], 0) << "seed " << seed;
    if (r.verdict["duplicates"].get<int64_t>() > 0) found = std::move(r);
  }
  ASSERT_TRUE(found.has_value()) << "no duplicates in seeds 1.." << kSeeds;
  const RunResult& r = *found;
  const nlohmann::json& items = r.verdict["checks"]["duplicates"]["items"];
  ASSERT_EQ(items.size(), r.verdict["duplicates"].get<size_t>());
  for (const nlohmann::json& item : items) {
    const uint64_t value = item["value"].get<uint64_t>();
    // The script's tries of this value: how many may have written it (all
    // but those that failed for certain), and how the first ended.
    size_t may_have_written = 0;
    std::optional<check::OpType> first_outcome;
    for (const check::Op& op : h.ops()) {
      if (op.f != check::OpFunction::send || op.value != value || h.process_name(op.process) != "producer") continue;
      if (op.type == check::OpType::invoke) continue;
      if (op.type != check::OpType::fail) ++may_have_written;
      if (!first_outcome) first_outcome = op.type;
    }
    // Each copy is a try of the script's: at most one copy a try.
    EXPECT_GE(item["final_positions"].size(), 2u) << item;
    EXPECT_LE(item["final_positions"].size(), may_have_written) << item;
    EXPECT_EQ(first_outcome, check::OpType::info) << item;
  }
}

}  // namespace
}  // namespace scenario
