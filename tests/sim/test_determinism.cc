// The determinism proof: the ping protocol under random kills, power-offs,
// pauses, terminations and partitions, run twice per seed for 200 seeds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "ping_protocol.h"
#include "sim/trace.h"

namespace sim::testing {
namespace {

constexpr uint64_t kSeeds = 200;

std::string explain_divergence(uint64_t seed) {
  PingRunOptions options;
  options.seed = seed;
  options.keep_lines = true;
  const PingRunResult a = run_ping_protocol(options);
  const PingRunResult b = run_ping_protocol(options);
  const auto line = first_difference(a.lines, b.lines);
  if (!line) return "the recorded lines are identical (the hash itself is unstable)";
  auto at = [](const std::vector<std::string>& v, size_t i) {
    return i < v.size() ? v[i] : std::string("<end of trace>");
  };
  return "first difference at record " + std::to_string(*line) + ":\n  run 1: " + at(a.lines, *line) +
         "\n  run 2: " + at(b.lines, *line);
}

TEST(Determinism, SameSeedGivesTheSameTraceHash200Seeds) {
  uint64_t total_faults = 0, total_pongs = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    PingRunOptions options;
    options.seed = seed;
    const PingRunResult first = run_ping_protocol(options);
    const PingRunResult second = run_ping_protocol(options);
    ASSERT_EQ(first.hash, second.hash)
        << "seed " << seed << " is not deterministic; " << explain_divergence(seed);
    ASSERT_EQ(first.events, second.events) << "seed " << seed;
    ASSERT_EQ(first.records, second.records) << "seed " << seed;
    // Each run did real work under real faults, or the proof proves nothing.
    EXPECT_GT(first.faults, 5u) << "seed " << seed;
    EXPECT_GT(first.pongs, 100u) << "seed " << seed;
    total_faults += first.faults;
    total_pongs += first.pongs;
  }
  RecordProperty("faults", static_cast<int>(total_faults));
  RecordProperty("pongs", static_cast<int>(total_pongs));
}

TEST(Determinism, DifferentSeedsGiveDifferentTraces) {
  std::set<uint64_t> hashes;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    PingRunOptions options;
    options.seed = seed;
    options.chaos = Duration::seconds(10);
    options.settle = Duration::seconds(2);
    hashes.insert(run_ping_protocol(options).hash);
  }
  EXPECT_EQ(hashes.size(), kSeeds);
}

TEST(Determinism, KeptLinesHashToTheReportedHash) {
  PingRunOptions options;
  options.seed = 3;
  options.keep_lines = true;
  const PingRunResult r = run_ping_protocol(options);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::string& line : r.lines) {
    for (const char c : line + "\n") {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
  }
  EXPECT_EQ(h, r.hash);
  EXPECT_EQ(r.lines.size(), r.records);
}

// A pinned seed's whole text trace, so that any change of behaviour shows up
// as a diff. Regenerate with KAFKASIM_UPDATE_GOLDEN=1 after a deliberate change.
TEST(Determinism, GoldenTraceOfSeed1) {
  PingRunOptions options;
  options.seed = 1;
  options.hosts = 3;
  options.chaos = Duration::seconds(12);
  options.settle = Duration::seconds(1);
  std::ostringstream text;
  options.text = &text;
  run_ping_protocol(options);
  const std::string path = std::string(KAFKASIM_SOURCE_DIR) + "/tests/sim/golden/ping_seed1.txt";
  if (std::getenv("KAFKASIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << text.str();
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with KAFKASIM_UPDATE_GOLDEN=1)";
  std::stringstream golden;
  golden << in.rdbuf();
  std::istringstream want(golden.str()), got(text.str());
  std::string w, g;
  for (int line = 1;; ++line) {
    const bool more_w = static_cast<bool>(std::getline(want, w));
    const bool more_g = static_cast<bool>(std::getline(got, g));
    if (!more_w && !more_g) break;
    ASSERT_EQ(more_w ? w : "<end>", more_g ? g : "<end>") << "golden trace differs at line " << line;
  }
}

}  // namespace
}  // namespace sim::testing
