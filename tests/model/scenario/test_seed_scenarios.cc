// The seed scenarios (scenarios/seeds/001_* .. 004_*): each reproduces an
// experiment of a lab notebook in ../shared/seeds/ and expects what its author
// saw. They are regression checks, so every expectation must hold on every
// seed: each test runs its file for seeds 1..3 and prints every expectation
// that did not hold (text and detail). scenarios/README.md says which
// notebook lines each file stands for.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "check_property.h"
#include "model/scenario/run.h"
#include "model/scenario/scenario.h"

namespace scenario {
namespace {

std::string seed_path(const std::string& file) {
  return std::string(KAFKASIM_SOURCE_DIR) + "/scenarios/seeds/" + file;
}

// Every expectation that did not hold, and the invariant break if any, one
// per line.
std::string failures_of(const RunResult& r) {
  std::ostringstream out;
  for (const ExpectationOutcome& e : r.expectations) {
    if (e.result == Expectation::Result::Outcome::held) continue;
    out << "  " << (e.result == Expectation::Result::Outcome::failed ? "failed: " : "error: ") << e.text
        << "\n    -> " << e.detail << "\n";
  }
  if (r.invariant) {
    out << "  invariant broke at " << format_seconds(r.invariant->time_us) << " s: " << r.invariant->message
        << " (" << r.invariant->where << ")\n";
  }
  return out.str();
}

// Seeds 1..3 (fewer with KAFKASIM_TEST_SCALE_PERCENT: kafkasim::testing::scaled).
void run_seeds(const std::string& file, int seeds = 3) {
  const Scenario s = load_scenario(seed_path(file));
  ASSERT_FALSE(s.expectations.empty()) << file << " expects nothing";
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(kafkasim::testing::scaled(seeds)); ++seed) {
    const RunResult r = run_scenario(s, seed);
    EXPECT_EQ(r.exit_code(), kExitHeld) << file << " seed " << seed << ":\n" << failures_of(r);
    EXPECT_EQ(r.expectations.size(), s.expectations.size()) << file << " seed " << seed;
  }
}

// The files this suite runs, by notebook. A file added under scenarios/seeds/
// (other than the lead's 000_*) without a test here fails EveryFileIsTested.
const std::vector<std::string> kFiles = {
    "001_578ad19232a6a95d.json",
    "002_f91f21d96ab8d48d_controller_failover.json",
    "002_f91f21d96ab8d48d_partition_state.json",
    "002_f91f21d96ab8d48d_tiny_segments.json",
    "002_f91f21d96ab8d48d_groups_1_consumer.json",
    "002_f91f21d96ab8d48d_groups_2_consumers.json",
    "002_f91f21d96ab8d48d_groups_3_consumers.json",
    "003_b6fdaae158f491f1_new_address.json",
    "003_b6fdaae158f491f1_stable_address.json",
    "004_8adab1636424708d_one_host_three_brokers.json",
    "004_8adab1636424708d_two_hosts.json",
};

TEST(SeedScenarios, EveryFileLoadsAndIsTested) {
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(seed_path(""))) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name.rfind("000_", 0) != 0) on_disk.insert(name);
  }
  const std::set<std::string> listed(kFiles.begin(), kFiles.end());
  EXPECT_EQ(on_disk, listed);
  for (const std::string& f : kFiles) {
    SCOPED_TRACE(f);
    const Scenario s = load_scenario(seed_path(f));
    EXPECT_FALSE(s.description.empty());
    EXPECT_FALSE(s.expectations.empty());
  }
}

// 1 ZooKeeper, 3 brokers, light_bulb (3 partitions, RF 3): stop kafka3, kafka2,
// kafka1; leaders, ISR and availability after each.
TEST(SeedScenarios, Seed001StopBrokersOneByOne) { run_seeds("001_578ad19232a6a95d.json"); }

// 3 ZooKeeper, 2 brokers: stopping the controller bumps the epoch once and a
// returning broker does not take the controller back.
TEST(SeedScenarios, Seed002ControllerFailover) { run_seeds("002_f91f21d96ab8d48d_controller_failover.json"); }

// playground (4 partitions, RF 2): leaders and ISR after stopping kafka2, no
// immediate give-back on its return, the preferred leaders after the
// imbalance check.
TEST(SeedScenarios, Seed002PartitionState) { run_seeds("002_f91f21d96ab8d48d_partition_state.json"); }

// tiny (segment.ms 60 s, retention.ms 600 s): a segment a minute, the oldest
// deleted after ten minutes.
TEST(SeedScenarios, Seed002TinySegments) { run_seeds("002_f91f21d96ab8d48d_tiny_segments.json"); }

// Group foo on 2 partitions with 1, 2 and 3 consumers (one idle).
TEST(SeedScenarios, Seed002GroupOneConsumer) { run_seeds("002_f91f21d96ab8d48d_groups_1_consumer.json"); }
TEST(SeedScenarios, Seed002GroupTwoConsumers) { run_seeds("002_f91f21d96ab8d48d_groups_2_consumers.json"); }
TEST(SeedScenarios, Seed002GroupThreeConsumers) { run_seeds("002_f91f21d96ab8d48d_groups_3_consumers.json"); }

// ZooKeeper servers replaced under new addresses while the brokers keep the
// old zookeeper.connect, and the same with stable addresses.
// The replacements say "update_ensemble": Exhibitor rewrites every server's
// zoo.cfg, and the file's stop/start pairs are its rolling restart.
TEST(SeedScenarios, Seed003NewAddress) { run_seeds("003_b6fdaae158f491f1_new_address.json"); }
TEST(SeedScenarios, Seed003StableAddress) { run_seeds("003_b6fdaae158f491f1_stable_address.json"); }

// Three brokers on one host; two hosts with a two-server ensemble.
TEST(SeedScenarios, Seed004OneHostThreeBrokers) { run_seeds("004_8adab1636424708d_one_host_three_brokers.json"); }
TEST(SeedScenarios, Seed004TwoHosts) { run_seeds("004_8adab1636424708d_two_hosts.json"); }

// With every broker stopped (kafka1, the last, is killed 10 s after its stop
// at 90 s), each client keeps one metadata retry going, reconnect.backoff.ms
// (100 ms; the model's backoff is fixed, librdkafka's would grow) apart — not
// a new retry chain for every caller that asked for fresh metadata: the
// model once sent a few hundred requests a second here, more every second
// (client::Metadata::refresh). Neither client restarts in that window (a
// restarted one would rightly ask at once).
TEST(SeedScenarios, Seed001ClientsKeepOneMetadataRetryWhileEveryBrokerIsDown) {
  const Scenario s = load_scenario(seed_path("001_578ad19232a6a95d.json"));
  std::ostringstream trace;
  RunOptions o;
  o.trace_json = &trace;
  const RunResult r = run_scenario(s, 1, o);
  ASSERT_EQ(r.exit_code(), kExitHeld) << failures_of(r);
  constexpr int64_t kAllDownFromUs = 101'000'000;
  constexpr int64_t kBackoffUs = 100'000;
  std::map<std::string, std::vector<int64_t>> requests;  // client -> times
  std::istringstream lines(trace.str());
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("kind", "") != "metadata_request" || j["t_us"].get<int64_t>() < kAllDownFromUs) continue;
    requests[j["proc"].get<std::string>()].push_back(j["t_us"].get<int64_t>());
  }
  ASSERT_EQ(requests.size(), 2u) << "the producer and the consumer both keep asking";
  for (const auto& [client, times] : requests) {
    // 19 s of retries, one per backoff and round trip.
    EXPECT_GE(times.size(), 150u) << client;
    EXPECT_LE(times.size(), 191u) << client;
    for (size_t i = 1; i < times.size(); ++i) {
      ASSERT_GE(times[i] - times[i - 1], kBackoffUs) << client << ": requests at " << times[i - 1] << " and "
                                                     << times[i] << " us";
    }
  }
}

// Same file, same seed: the same run, byte for byte.
TEST(SeedScenarios, Seed001IsDeterministic) {
  const Scenario s = load_scenario(seed_path("001_578ad19232a6a95d.json"));
  const RunResult a = run_scenario(s, 5);
  const RunResult b = run_scenario(s, 5);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_GT(a.events, 0u);
  const RunResult c = run_scenario(s, 6);
  EXPECT_NE(a.trace_hash, c.trace_hash) << "the seed changes nothing";
}

}  // namespace
}  // namespace scenario
