// The kafkasim command line, end to end: the built binary (KAFKASIM_BINARY)
// runs in a fresh temporary directory on small scenario files written by the
// tests (1 ZooKeeper server, 2 brokers, the lab workload, 30 virtual
// seconds: a seed runs in well under a second). Exit codes, the first lines
// of `run`, error messages (file + JSON path), the sweep's resume and merge
// guarantees (byte-identical tables), explore's rows and describe's format.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using kafkasim::cli_testing::finish_kafkasim;
using kafkasim::cli_testing::kSmall;
using kafkasim::cli_testing::lines;
using kafkasim::cli_testing::Output;
using kafkasim::cli_testing::slurp;
using kafkasim::cli_testing::start_kafkasim;

std::string replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

bool parses(const std::string& text) {
  return nlohmann::json::accept(text);
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "kafkasim-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    write("small.json", kSmall);
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out << text;
  }

  // Starts kafkasim in the temporary directory with stdout/stderr to files.
  pid_t start(const std::vector<std::string>& args, const std::string& tag) {
    return start_kafkasim(dir_, args, tag);
  }

  Output finish(pid_t pid, const std::string& tag) { return finish_kafkasim(dir_, pid, tag); }

  Output kafkasim(const std::vector<std::string>& args) {
    std::string tag = "call" + std::to_string(calls_++);
    return finish(start(args, tag), tag);
  }

  // The verdict table of a sweep or merge (its stdout), after checking the exit code.
  std::string table(const std::vector<std::string>& args, int code = 0) {
    Output r = kafkasim(args);
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_NE(r.out.find("seeds run"), std::string::npos) << r.out;
    return r.out;
  }

  fs::path dir_;
  int calls_ = 0;
};

// ---- run ----

TEST_F(Cli, RunPrintsSeedHashCommitFirstThenTimelineVerdictExpectations) {
  Output r = kafkasim({"run", "small.json", "--seed", "3"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::vector<std::string> l = lines(r.out);
  ASSERT_GE(l.size(), 4u);
  EXPECT_EQ(l[0], "seed      3");
  EXPECT_EQ(l[1], "scenario  cli small (small.json)");
  EXPECT_TRUE(std::regex_match(l[2], std::regex("hash      [0-9a-f]{16}"))) << l[2];
  EXPECT_TRUE(std::regex_match(l[3], std::regex("commit    ([0-9a-f]{12}(-dirty)?|unknown)"))) << l[3];
  EXPECT_NE(r.out.find("\n  15.000s  kill kafka2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nverdict\n  lost 0  duplicates 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  PASS   lost == 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  PASS   acknowledged > 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("reproduce:"), std::string::npos) << "only a failure prints a reproducer";

  // The same seed again: the same output, byte for byte.
  Output again = kafkasim({"run", "small.json", "--seed", "3"});
  EXPECT_EQ(again.out, r.out);
}

TEST_F(Cli, RunFailedExpectationExitsOneWithReproducer) {
  write("fail.json", replace(kSmall, "\"acknowledged > 0\"", "\"acknowledged == 0\""));
  Output r = kafkasim({"run", "fail.json", "--seed", "2"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("  FAIL   acknowledged == 0    (acknowledged = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  PASS   lost == 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nreproduce: kafkasim run fail.json --seed 2\n"), std::string::npos) << r.out;
}

TEST_F(Cli, RunExpectationNamingAMissingFieldIsBadInput) {
  write("typo.json", replace(kSmall, "\"lost == 0\"", "\"lsot == 0\""));
  Output r = kafkasim({"run", "typo.json", "--seed", "1"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("  ERROR  lsot == 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(did you mean 'lost'?)"), std::string::npos) << r.out;
  // And on stderr as the reader reports bad input, with the file and the path.
  EXPECT_NE(r.err.find("typo.json: at $.expect[0]: lsot == 0: no field 'lsot' in the top level (did you mean "
                       "'lost'?)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(kafkasim({"run", "typo.json", "--seed", "1", "--format", "json"}).err, r.err);
}

TEST_F(Cli, RunOfAnUnreadableFileSaysWhy) {
  Output empty = kafkasim({"run", ""});
  EXPECT_EQ(empty.code, 2);
  EXPECT_EQ(empty.err, "\"\": cannot read the file: an empty file name\n");
  fs::create_directories(dir_ / "adir");
  Output directory = kafkasim({"run", "adir"});
  EXPECT_EQ(directory.code, 2);
  EXPECT_EQ(directory.err, "adir: cannot read the file: it is a directory\n");
  Output missing = kafkasim({"run", "missing.json"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "missing.json: cannot read the file: no such file\n");
}

TEST_F(Cli, RunJsonIsOneDocumentWithTheVerdict) {
  Output r = kafkasim({"run", "small.json", "--seed", "4", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails the test) unless one JSON document
  EXPECT_EQ(j["seed"], 4);
  EXPECT_EQ(j["exit"], 0);
  EXPECT_EQ(j["scenario"], "cli small");
  EXPECT_TRUE(j["scenario_hash"].is_string());
  EXPECT_TRUE(j["commit"].is_string());
  EXPECT_EQ(j["verdict"]["lost"], 0);
  EXPECT_TRUE(j["verdict"]["final"].is_object()) << "the whole verdict, not only the headline";
  ASSERT_TRUE(j["timeline"].is_array());
  bool kill_seen = false;
  for (const auto& e : j["timeline"]) kill_seen = kill_seen || (e["time_us"] == 15000000 && e["text"] == "kill kafka2");
  EXPECT_TRUE(kill_seen) << j["timeline"].dump();
  ASSERT_EQ(j["expectations"].size(), 2u);
  EXPECT_EQ(j["expectations"][0]["result"], "held");
}

TEST_F(Cli, RunWritesHistoryAndTrace) {
  Output r = kafkasim({"run", "small.json", "--seed", "5", "--history", "h.jsonl", "--trace", "t.jsonl"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> h = lines(slurp(dir_ / "h.jsonl"));
  ASSERT_GT(h.size(), 100u);
  nlohmann::json first = nlohmann::json::parse(h.front());
  EXPECT_TRUE(first.contains("t_us"));
  EXPECT_TRUE(first.contains("process"));
  std::vector<std::string> t = lines(slurp(dir_ / "t.jsonl"));
  ASSERT_GT(t.size(), 10u);
  EXPECT_TRUE(parses(t.back())) << t.back();
}

// ---- bad input: exit 2, the message names the file and the JSON path ----

TEST_F(Cli, MalformedJsonIsExitTwoWithLineAndColumn) {
  write("bad.json", "{\"name\": \"x\",\n");
  Output r = kafkasim({"run", "bad.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("bad.json: malformed JSON at line 2, column 1", 0), 0u) << r.err;
}

TEST_F(Cli, UnknownFieldIsExitTwoWithPath) {
  write("unk.json", replace(kSmall, "\"duration_s\": 30,", "\"duration_s\": 30, \"duraton\": 3,"));
  Output r = kafkasim({"run", "unk.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("unk.json: at $.duraton: unknown field", 0), 0u) << r.err;
}

TEST_F(Cli, MisspeltPropertyIsExitTwoWithPathAndDidYouMean) {
  write("misspelt.json", replace(kSmall, "\"workload\"",
                                 "\"kafka\": {\"properties\": {\"zookeeper.session.tmeout.ms\": 6000}}, \"workload\""));
  for (const char* cmd : {"run", "sweep", "explore", "describe"}) {
    std::vector<std::string> args = {cmd, "misspelt.json"};
    if (std::string(cmd) == "sweep") args.insert(args.end(), {"--seeds", "1..2"});
    if (std::string(cmd) == "explore") args.insert(args.end(), {"--seeds", "1..2", "--grid", "acks=1,all"});
    if (std::string(cmd) == "describe") args.insert(args.end(), {"--seed", "1", "--at", "5"});
    Output r = kafkasim(args);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.err,
              "misspelt.json: at $.kafka.properties[\"zookeeper.session.tmeout.ms\"]: unknown key; did you mean "
              "'zookeeper.session.timeout.ms'?\n")
        << cmd;
  }
}

TEST_F(Cli, MissingFileIsExitTwo) {
  Output r = kafkasim({"run", "nope.json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nope.json"), std::string::npos) << r.err;
}

TEST_F(Cli, BadUsageIsExitTwoWithMessageAndUsage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"sweep", "small.json", "--seeds", "5..3"}, "kafkasim sweep: --seeds: 5..3: the first seed is above the last"},
      {{"sweep", "small.json", "--seeds", "1-3"}, "kafkasim sweep: --seeds: expected A..B"},
      {{"sweep", "small.json"}, "kafkasim sweep: missing --seeds A..B"},
      {{"sweep", "small.json", "--seeds", "1..3", "--shard", "3/2"}, "kafkasim sweep: --shard: 3/2: need 1 <= I <= N"},
      {{"sweep", "small.json", "--seeds", "1..3", "--jobs", "0"}, "kafkasim sweep: --jobs: 0 is out of range"},
      {{"run", "small.json", "--sed", "3"}, "kafkasim run: unknown option '--sed'"},
      {{"run", "small.json", "--seed"}, "kafkasim run: option '--seed' needs a value"},
      {{"run", "small.json", "--seed", "x"}, "kafkasim run: --seed: expected a whole number, got 'x'"},
      {{"run", "small.json", "--format", "xml"}, "kafkasim run: --format: expected one of text, json, got 'xml'"},
      {{"run", "small.json", "--seed", "1", "--seed", "2"}, "kafkasim run: option '--seed' given twice"},
      {{"run"}, "kafkasim run: missing SCENARIO"},
      {{"run", "small.json", "other.json"}, "kafkasim run: unexpected argument 'other.json'"},
      {{"describe", "small.json", "--seed", "1"}, "kafkasim describe: missing --at T"},
      {{"describe", "small.json", "--at", "1.2345678"}, "kafkasim describe: --at: expected seconds"},
      {{"explore", "small.json", "--seeds", "1..2", "--grid", "acks"}, "kafkasim explore: --grid: expected KEY=V1,V2"},
      {{"explore", "small.json", "--seeds", "1..2"}, "kafkasim explore: missing --grid"},
      {{"frobnicate"}, "kafkasim: unknown command 'frobnicate'"},
  };
  for (const Case& c : cases) {
    Output r = kafkasim(c.args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << "expected: " << c.message << "\ngot: " << r.err;
    EXPECT_NE(r.err.find("usage: kafkasim"), std::string::npos) << r.err;
  }
  Output none = kafkasim({});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("usage: kafkasim COMMAND"), std::string::npos);
}

TEST_F(Cli, DescribeAfterTheEndIsBadInput) {
  Output r = kafkasim({"describe", "small.json", "--seed", "1", "--at", "31"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--at 31: after the end of small.json"), std::string::npos) << r.err;
}

TEST_F(Cli, ExtraWordsAfterHelpOrVersionAreUsageErrors) {
  EXPECT_EQ(kafkasim({"help", "bogus"}).code, 2);
  EXPECT_EQ(kafkasim({"help", "run", "extra"}).code, 2);
  EXPECT_EQ(kafkasim({"--version", "extra"}).code, 2);
  EXPECT_EQ(kafkasim({"help", "run"}).code, 0);
}

TEST_F(Cli, HelpExitsZero) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--help"}, {"help"}, {"help", "sweep"}, {"sweep", "--help"}, {"run", "-h"}, {"zk", "--help"}}) {
    Output r = kafkasim(args);
    EXPECT_EQ(r.code, 0) << args[0];
    EXPECT_EQ(r.out.rfind("usage: kafkasim", 0), 0u) << r.out;
  }
  EXPECT_NE(kafkasim({"sweep", "--help"}).out.find("--resume"), std::string::npos);
}

// ---- sweep, resume, merge ----

TEST_F(Cli, SweepWritesOneLinePerSeedAndATable) {
  Output r = kafkasim({"sweep", "small.json", "--seeds", "1..4", "--jobs", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> l = lines(slurp(dir_ / "sweep-small" / "results.jsonl"));
  ASSERT_EQ(l.size(), 4u);
  std::set<uint64_t> seeds;
  for (const std::string& line : l) seeds.insert(nlohmann::json::parse(line)["seed"].get<uint64_t>());
  EXPECT_EQ(seeds, (std::set<uint64_t>{1, 2, 3, 4}));
  EXPECT_NE(r.out.find("seeds run   4 (1..4)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit codes  0 held: 4   1 failed: 0   2 bad input: 0   3 invariant broken: 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nno failures\n"), std::string::npos) << r.out;
  // Not a terminal: plain progress lines on stderr, the last one complete.
  EXPECT_NE(r.err.find("sweep: 4/4 seeds"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);

  // Again into the same directory without --resume: refused, nothing touched.
  Output again = kafkasim({"sweep", "small.json", "--seeds", "1..4"});
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("sweep-small/results.jsonl already holds results (4 seeds); use --resume"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(lines(slurp(dir_ / "sweep-small" / "results.jsonl")).size(), 4u);
}

TEST_F(Cli, SweepOfFailingSeedsExitsOneWithReproducersAndJunit) {
  write("fail.json", replace(kSmall, "\"acknowledged > 0\"", "\"acknowledged == 0\""));
  Output r = kafkasim({"sweep", "fail.json", "--seeds", "1..3", "--out", "f", "--junit", "junit.xml"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("exit codes  0 held: 0   1 failed: 3"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("  acknowledged == 0 +3/3 +0\n"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("  lost == 0 +0/3 +0\n"))) << r.out;
  EXPECT_NE(r.out.find("distinct failures: 1\n  1. FAIL  acknowledged == 0\n     3 seeds, first seed 1: "
                       "kafkasim run fail.json --seed 1\n"),
            std::string::npos)
      << r.out;
  std::string junit = slurp(dir_ / "junit.xml");
  EXPECT_NE(junit.find("<testsuite name=\"cli small\" tests=\"3\" failures=\"3\" errors=\"0\">"), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<testcase classname=\"cli small\" name=\"seed 2\">"), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"acknowledged == 0\" type=\"exit 1\">FAIL acknowledged == 0 (acknowledged = "),
            std::string::npos)
      << junit;
}

// A resumed sweep's table is its own range's, even when the file holds more
// seeds from an earlier, wider sweep.
TEST_F(Cli, ResumeWithANarrowerRangeTablesOnlyThatRange) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..4", "--out", "wide"}).code, 0);
  Output narrow = kafkasim({"sweep", "small.json", "--seeds", "2..3", "--out", "wide", "--resume"});
  ASSERT_EQ(narrow.code, 0) << narrow.err;
  EXPECT_NE(narrow.out.find("seeds run   2 (2..3)\n"), std::string::npos) << narrow.out;
}

TEST_F(Cli, SweepResumedAfterATornWriteGivesTheSameTable) {
  std::string clean = table({"sweep", "small.json", "--seeds", "1..8", "--out", "clean"});

  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..4", "--out", "cut"}).code, 0);
  // Emulate an interrupt: the last two results never made it, and a write was torn.
  fs::path results = dir_ / "cut" / "results.jsonl";
  std::vector<std::string> l = lines(slurp(results));
  ASSERT_EQ(l.size(), 4u);
  {
    std::ofstream out(results, std::ios::binary | std::ios::trunc);
    out << l[0] << "\n" << l[1] << "\n" << l[2].substr(0, l[2].size() / 2);
  }
  Output resumed = kafkasim({"sweep", "small.json", "--seeds", "1..8", "--out", "cut", "--resume"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("dropped a partial last line"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.out, clean);
  std::vector<std::string> after = lines(slurp(results));
  EXPECT_EQ(after.size(), 8u);
  for (const std::string& line : after) EXPECT_TRUE(parses(line)) << line;

  // Resuming a finished sweep runs nothing and prints the same table again.
  Output noop = kafkasim({"sweep", "small.json", "--seeds", "1..8", "--out", "cut", "--resume"});
  EXPECT_EQ(noop.code, 0);
  EXPECT_EQ(noop.out, clean);
  EXPECT_EQ(lines(slurp(results)).size(), 8u);
}

TEST_F(Cli, ResumeOfAnotherScenarioIsRefused) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "d"}).code, 0);
  write("other.json", replace(kSmall, "\"duration_s\": 30", "\"duration_s\": 31"));
  Output r = kafkasim({"sweep", "other.json", "--seeds", "1..4", "--out", "d", "--resume"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("was run with scenario hash"), std::string::npos) << r.err;
}

TEST_F(Cli, MergeOfOneTwoThreeShardsGivesIdenticalTables) {
  std::string whole = table({"sweep", "small.json", "--seeds", "1..6", "--out", "s1"});
  for (const char* shard : {"1/2", "2/2"}) {
    table({"sweep", "small.json", "--seeds", "1..6", "--shard", shard, "--out", std::string("s2-") + shard[0]});
  }
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    table({"sweep", "small.json", "--seeds", "1..6", "--shard", shard, "--jobs", "1", "--out",
           std::string("s3-") + shard[0]});
  }
  // Shard 2/3 holds seeds 2 and 5.
  std::set<uint64_t> seeds;
  for (const std::string& line : lines(slurp(dir_ / "s3-2" / "results.jsonl"))) {
    seeds.insert(nlohmann::json::parse(line)["seed"].get<uint64_t>());
  }
  EXPECT_EQ(seeds, (std::set<uint64_t>{2, 5}));

  std::string one = table({"merge", "s1"});
  std::string two = table({"merge", "s2-1", "s2-2"});
  std::string three = table({"merge", "s3-3", "s3-1", "s3-2"});
  EXPECT_EQ(one, whole);
  EXPECT_EQ(two, whole);
  EXPECT_EQ(three, whole);
  // Overlapping inputs are de-duplicated; the same seed run on 2 threads and on
  // 1 gave the same line (merge warns when two results of a seed differ).
  Output overlap = kafkasim({"merge", "s1", "s2-1", "s3-2"});
  EXPECT_EQ(overlap.code, 0);
  EXPECT_EQ(overlap.out, whole);
  EXPECT_EQ(overlap.err, "");
}

TEST_F(Cli, MergeOfDifferentScenariosIsRefused) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "a"}).code, 0);
  write("other.json", replace(kSmall, "\"duration_s\": 30", "\"duration_s\": 31"));
  ASSERT_EQ(kafkasim({"sweep", "other.json", "--seeds", "3..4", "--out", "b"}).code, 0);
  Output r = kafkasim({"merge", "a", "b"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not the same scenario"), std::string::npos) << r.err;
  Output missing = kafkasim({"merge", "a", "nowhere"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nowhere: no results.jsonl"), std::string::npos) << missing.err;
  fs::create_directories(dir_ / "empty");
  write("empty/results.jsonl", "");
  Output empty = kafkasim({"merge", "empty"});
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("no results in the given directories"), std::string::npos) << empty.err;
}

// A results line nested deeper than the reader's limit (the recursive parse
// would overflow the stack), or with an exit code no seed has, is not a result.
TEST_F(Cli, MergeRefusesLinesNoSweepWrites) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..1", "--out", "ok"}).code, 0);
  const std::string line = lines(slurp(dir_ / "ok" / "results.jsonl")).at(0);
  fs::create_directories(dir_ / "deep");
  const size_t depth = 100000;
  write("deep/results.jsonl", line.substr(0, line.size() - 1) + ", \"x\": " + std::string(depth, '[') +
                                  std::string(depth, ']') + "}\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"merge", "deep"},
        std::vector<std::string>{"sweep", "small.json", "--seeds", "1..2", "--out", "deep", "--resume"}}) {
    Output r = kafkasim(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("deep/results.jsonl: line 1: not a line kafkasim sweep writes: the JSON nests more than "
                         "512 levels deep"),
              std::string::npos)
        << r.err;
  }
  for (const char* exit : {"7", "-1"}) {
    nlohmann::json j = nlohmann::json::parse(line);
    j["exit"] = nlohmann::json::parse(exit);
    fs::create_directories(dir_ / "odd");
    write("odd/results.jsonl", j.dump() + "\n");
    Output r = kafkasim({"merge", "odd"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(std::string("odd/results.jsonl: line 1: not a result line: \"exit\" is ") + exit +
                         ": not an exit code of a seed (0 to 3)"),
              std::string::npos)
        << r.err;
  }
}

// Two different results of one seed (a determinism bug, or two builds):
// merge keeps the worse, so the table and exit code do not depend on the
// order of the directories.
TEST_F(Cli, MergeOfTwoResultsOfOneSeedDoesNotDependOnTheOrder) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "p"}).code, 0);
  std::string worse;
  for (const std::string& line : lines(slurp(dir_ / "p" / "results.jsonl"))) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["seed"] != 2) continue;
    j["exit"] = 1;
    j["expectations"][1]["result"] = "failed";
    worse = j.dump() + "\n";
  }
  ASSERT_FALSE(worse.empty());
  fs::create_directories(dir_ / "q");
  write("q/results.jsonl", worse);
  Output pq = kafkasim({"merge", "p", "q"});
  Output qp = kafkasim({"merge", "q", "p"});
  EXPECT_EQ(pq.code, 1) << pq.err;
  EXPECT_EQ(qp.code, 1) << qp.err;
  EXPECT_EQ(pq.out, qp.out);
  EXPECT_NE(pq.out.find("1 seed, first seed 2: kafkasim run small.json --seed 2"), std::string::npos) << pq.out;
  EXPECT_NE(pq.err.find("warning: seed 2 has two different results"), std::string::npos) << pq.err;
}

TEST_F(Cli, MergeOfAResultsPathThatIsADirectoryIsBadInput) {
  fs::create_directories(dir_ / "m" / "results.jsonl");
  Output r = kafkasim({"merge", "m"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("m/results.jsonl: not a regular file"), std::string::npos) << r.err;
}

// A sweep of no seeds would let a CI job pass unchecked, as merge says.
TEST_F(Cli, SweepOfAShardWithoutSeedsIsBadInput) {
  Output r = kafkasim({"sweep", "small.json", "--seeds", "1..2", "--shard", "3/4", "--out", "none"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("--shard 3/4: seeds 1..2 are only 2, so this shard has none"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "none"));
}

TEST_F(Cli, ResumeWarnsOfASeedWithTwoDifferentResults) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "d"}).code, 0);
  std::vector<std::string> l = lines(slurp(dir_ / "d" / "results.jsonl"));
  ASSERT_EQ(l.size(), 2u);
  nlohmann::json edited = nlohmann::json::parse(l[0]);
  edited["lost"] = 99;
  write("d/results.jsonl", l[0] + "\n" + l[1] + "\n" + edited.dump() + "\n");
  Output r = kafkasim({"sweep", "small.json", "--seeds", "1..3", "--out", "d", "--resume"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: seed " + edited["seed"].dump() + " has two different results"), std::string::npos)
      << r.err;
}

// No valid scenario breaks an invariant (that would be a kafkasim bug), so the
// table's handling of exit 3 is checked on a results file whose line for seed
// 2 is edited to look like one.
TEST_F(Cli, MergeReportsAnInvariantBreakWithExitThree) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..3", "--out", "inv"}).code, 0);
  fs::path results = dir_ / "inv" / "results.jsonl";
  std::string edited;
  for (const std::string& line : lines(slurp(results))) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["seed"] == 2) {
      j["exit"] = 3;
      j["invariant"] = {{"time_s", 12.5}, {"message", "two leaders for t-0 in epoch 3"}, {"where", "x.cc:1"}};
      j["verdict"] = nlohmann::json::object();
    }
    edited += j.dump() + "\n";
  }
  write("inv/results.jsonl", edited);
  Output r = kafkasim({"merge", "inv", "--junit", "inv.xml"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.out.find("exit codes  0 held: 2   1 failed: 0   2 bad input: 0   3 invariant broken: 1\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  1. INVARIANT  two leaders for t-0 in epoch 3\n     1 seed, first seed 2: "
                       "kafkasim run small.json --seed 2\n"),
            std::string::npos)
      << r.out;
  // The distributions are over the seeds that have a verdict.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  lost +0 +0 +0 +0 +0 +2\n"))) << r.out;
  std::string junit = slurp(dir_ / "inv.xml");
  EXPECT_NE(junit.find("<error message=\"invariant broken: two leaders for t-0 in epoch 3\" type=\"exit 3\">"),
            std::string::npos)
      << junit;
}

// The other checkers' counts: a row for each that some seed counted above
// zero, one line for those every seed counted zero, nothing for counts the
// lines do not have (a results file from an older build).
TEST_F(Cli, TheTableShowsTheOtherCheckersCountsThatAreNotZero) {
  ASSERT_EQ(kafkasim({"sweep", "small.json", "--seeds", "1..3", "--out", "d"}).code, 0);
  const std::vector<std::string> original = lines(slurp(dir_ / "d" / "results.jsonl"));
  std::string edited;
  std::string older;
  for (const std::string& line : original) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["seed"] == 2) j["verdict"]["dirty_reads"] = 4;
    edited += j.dump() + "\n";
    for (const char* k : {"order_violations", "dirty_reads", "divergent", "skipped"}) j["verdict"].erase(k);
    older += j.dump() + "\n";
  }
  write("d/results.jsonl", edited);
  Output r = kafkasim({"merge", "d"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  dirty_reads +0 +0 +4 +4 +1 +3\n"))) << r.out;
  EXPECT_NE(r.out.find("\n  0 in every seed: order_violations, divergent, skipped\n"), std::string::npos) << r.out;
  write("d/results.jsonl", older);
  r = kafkasim({"merge", "d"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("dirty_reads"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0 in every seed"), std::string::npos) << r.out;
  // Seed 1 from an older build, 2 and 3 from this one: zero where counted,
  // but not in every seed, so rows that say of how many.
  const std::vector<std::string> older_lines = lines(older);
  const std::vector<std::string> edited_lines = lines(edited);
  std::string mixed;
  for (size_t i = 0; i < edited_lines.size(); ++i) {
    const bool first = nlohmann::json::parse(edited_lines[i])["seed"] == 1;
    mixed += (first ? older_lines[i] : edited_lines[i]) + "\n";
  }
  write("d/results.jsonl", mixed);
  r = kafkasim({"merge", "d"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  skipped +0 +0 +0 +0 +0 +2\n"))) << r.out;
  EXPECT_EQ(r.out.find("0 in every seed"), std::string::npos) << r.out;
}

TEST_F(Cli, SigintStopsTheSweepKeepsCompleteLinesAndResumes) {
  pid_t pid = start({"sweep", "small.json", "--seeds", "1..400", "--jobs", "2", "--out", "big"}, "sigint");
  fs::path results = dir_ / "big" / "results.jsonl";
  // Wait (at most 60 s) for the first results, then interrupt.
  for (int i = 0; i < 600; ++i) {
    std::error_code ec;
    if (fs::exists(results) && fs::file_size(results, ec) > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  Output r = finish(pid, "sigint");
  ASSERT_EQ(r.code, 130) << r.err;
  EXPECT_NE(r.err.find("resume with: kafkasim sweep small.json --seeds 1..400 --jobs 2 --out big --resume"),
            std::string::npos)
      << r.err;
  std::string content = slurp(results);
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content.back(), '\n') << "only complete lines";
  std::set<uint64_t> done;
  for (const std::string& line : lines(content)) done.insert(nlohmann::json::parse(line)["seed"].get<uint64_t>());
  ASSERT_LT(done.size(), 400u);
  // Resume over a range a little past what was done, and compare with a clean sweep of it.
  std::string range = "1.." + std::to_string(*done.rbegin() + 2);
  std::string resumed = table({"sweep", "small.json", "--seeds", range, "--out", "big", "--resume"});
  EXPECT_EQ(resumed, table({"sweep", "small.json", "--seeds", range, "--out", "clean"}));
}

// ---- explore ----

TEST_F(Cli, ExploreGridGivesOneRowPerCombination) {
  Output text = kafkasim({"explore", "small.json", "--grid", "acks=1,all", "--seeds", "1..3"});
  ASSERT_EQ(text.code, 0) << text.err;
  std::vector<std::string> l = lines(text.out);
  std::vector<std::string> rows;
  for (const std::string& line : l) {
    if (line.rfind("1 ", 0) == 0 || line.rfind("all ", 0) == 0) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), 2u) << text.out;
  EXPECT_TRUE(std::regex_search(rows[0], std::regex("^1 +3 +0 +0\\.0% \\[ +0\\.0, +56\\.1\\]"))) << rows[0];

  Output csv = kafkasim({"explore", "small.json", "--grid", "acks=1,all", "--seeds", "1..3", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::vector<std::string> c = lines(csv.out);
  ASSERT_EQ(c.size(), 3u) << csv.out;
  EXPECT_EQ(c[0],
            "acks,seeds,invariant_broken,lost_seeds,lost_share,lost_low,lost_high,duplicates_seeds,duplicates_share,"
            "duplicates_low,duplicates_high,stalled_seeds,stalled_share,stalled_low,stalled_high");
  EXPECT_EQ(c[1].rfind("1,3,0,", 0), 0u) << c[1];
  EXPECT_EQ(c[2].rfind("all,3,0,", 0), 0u) << c[2];

  Output json = kafkasim({"explore", "small.json", "--grid", "acks=1,all", "--grid", "min.insync.replicas=1,2",
                          "--seeds", "1..2", "--format", "json", "--stall-bound", "5"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  // The first --grid varies slowest.
  EXPECT_EQ(j["rows"][0]["overrides"], (nlohmann::json{{"acks", "1"}, {"min.insync.replicas", "1"}}));
  EXPECT_EQ(j["rows"][1]["overrides"], (nlohmann::json{{"acks", "1"}, {"min.insync.replicas", "2"}}));
  EXPECT_EQ(j["rows"][3]["overrides"], (nlohmann::json{{"acks", "all"}, {"min.insync.replicas", "2"}}));
  EXPECT_EQ(j["stall_bound_s"], 5.0);
  // kafka2 is killed at 15 s and the lab consumer waits out the session: every seed stalls > 5 s.
  EXPECT_EQ(j["rows"][0]["stalled"]["seeds"], 2);
}

// --stall-metric picks the verdict path the stall column compares: the
// consumer's stall in the small scenario stays short while the whole run's
// does not.
TEST_F(Cli, ExploreStallMetricIsAVerdictPath) {
  Output whole = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "1..2", "--format", "json",
                           "--stall-bound", "5"});
  ASSERT_EQ(whole.code, 0) << whole.err;
  Output calm = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "1..2", "--format", "json",
                          "--stall-bound", "1000", "--stall-metric", "clients.consumer.longest_stall_s"});
  ASSERT_EQ(calm.code, 0) << calm.err;
  const nlohmann::json w = nlohmann::json::parse(whole.out);
  const nlohmann::json c = nlohmann::json::parse(calm.out);
  EXPECT_EQ(w["rows"][0]["stalled"]["seeds"], 2);
  EXPECT_EQ(c["rows"][0]["stalled"]["seeds"], 0);
  EXPECT_EQ(c["stall_metric"], "clients.consumer.longest_stall_s");
  Output bad = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "1..1", "--stall-metric",
                         "clients.consumr.longest_stall_s"});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--stall-metric"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("(did you mean 'consumer'?)"), std::string::npos) << bad.err;
  // A syntax error's column is one of the text given, not of "TEXT > bound".
  Output syntax = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "1..1", "--stall-metric", "lost +"});
  EXPECT_EQ(syntax.code, 2);
  EXPECT_NE(syntax.err.find("--stall-metric lost +: not a path of the verdict (column 7: expected a value"),
            std::string::npos)
      << syntax.err;
  Output malformed = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "1..1", "--stall-metric",
                               "phases..x"});
  EXPECT_EQ(malformed.code, 2) << malformed.err;
}

TEST_F(Cli, ExploreBadGridKeyOrValueIsExitTwo) {
  Output key = kafkasim({"explore", "small.json", "--grid", "ackz=1,all", "--seeds", "1..2"});
  EXPECT_EQ(key.code, 2) << key.err;
  EXPECT_EQ(key.err.rfind("--grid", 0), 0u) << key.err;
  Output value = kafkasim({"explore", "small.json", "--grid", "acks=1,al", "--seeds", "1..2"});
  EXPECT_EQ(value.code, 2) << value.err;
  EXPECT_NE(value.err.find("acks=al"), std::string::npos) << value.err;
  Output version = kafkasim({"explore", "small.json", "--grid", "version=2.2,2.4", "--seeds", "1..2"});
  EXPECT_EQ(version.code, 2) << version.err;
  EXPECT_NE(version.err.find("version=2.4"), std::string::npos) << version.err;
  EXPECT_NE(version.err.find("expected one of 2.2, 2.3, 2.8, 3.1, 3.9"), std::string::npos) << version.err;
}

// `version` as a grid key: one row per version profile, and each row's runs
// are that profile's (its own scenario hash, so its own seeds' results).
TEST_F(Cli, ExploreGridsOverVersionProfiles) {
  Output json = kafkasim({"explore", "small.json", "--grid", "version=2.2,3.9", "--seeds", "1..2", "--format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["overrides"], (nlohmann::json{{"version", "2.2"}}));
  EXPECT_EQ(j["rows"][1]["overrides"], (nlohmann::json{{"version", "3.9"}}));
  // kafka2 is killed at 15 s and the clients wait until its session
  // expires: 6 s later on 2.2, 18 s on 3.9 (KIP-537), past the end of the
  // run. So every 3.9 seed stalls past 15 s, and 2.2's mostly do not.
  Output bound = kafkasim({"explore", "small.json", "--grid", "version=2.2,3.9", "--seeds", "1..4", "--format",
                           "json", "--stall-bound", "15"});
  ASSERT_EQ(bound.code, 0) << bound.err;
  nlohmann::json b = nlohmann::json::parse(bound.out);
  EXPECT_LT(b["rows"][0]["stalled"]["seeds"].get<int>(), 4) << bound.out;
  EXPECT_EQ(b["rows"][1]["stalled"]["seeds"], 4) << bound.out;
}

// ---- fuzz ----

TEST_F(Cli, FuzzFindsShrinksAndWritesAReplayableScenario) {
  Output r = kafkasim({"fuzz", "--property", "durability", "--set", "producer.acks=1", "--set",
                       "producer.enable.idempotence=false", "--brokers", "3..3", "--zookeepers", "1..1", "--seed",
                       "1", "--runs", "200", "--out", "found"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("durability: FAILED after"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lost = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduce: kafkasim fuzz --property durability"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("shrinking"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(dir_ / "found" / "durability-seed1.json")) << r.out;
  const std::string file = slurp(dir_ / "found" / "durability-seed1.json");
  EXPECT_NE(file.find("lost == 0 && duplicates == 0 && divergent == 0"), std::string::npos);
  // The file is an ordinary scenario: run replays the failure.
  Output replay = kafkasim({"run", "found/durability-seed1.json"});
  EXPECT_EQ(replay.code, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("FAIL   lost == 0"), std::string::npos) << replay.out;
  // The reproduce string finds the same case again, without a search.
  const size_t at = r.out.find("--reproduce '");
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t end = r.out.find('\'', at + 13);
  const std::string reproduce = r.out.substr(at + 13, end - at - 13);
  Output again = kafkasim({"fuzz", "--property", "durability", "--set", "producer.acks=1", "--set",
                           "producer.enable.idempotence=false", "--brokers", "3..3", "--zookeepers", "1..1",
                           "--seed", "1", "--runs", "200", "--out", "again", "--reproduce", reproduce});
  EXPECT_EQ(again.code, 1) << again.err;
  EXPECT_EQ(slurp(dir_ / "again" / "durability-seed1.json"), file);
}

TEST_F(Cli, FuzzThatHoldsExitsZero) {
  Output r = kafkasim({"fuzz", "--property", "safety", "--runs", "3", "--seed", "4"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "safety: held for 3 cases\n");
  EXPECT_FALSE(fs::exists(dir_ / "fuzz-out"));
}

TEST_F(Cli, FuzzBadOptionsAndABadSetAreExitTwo) {
  Output property = kafkasim({"fuzz", "--property", "liveliness"});
  EXPECT_EQ(property.code, 2);
  EXPECT_NE(property.err.find("--property: expected one of safety, determinism, durability, liveness, got 'liveliness'"),
            std::string::npos)
      << property.err;
  Output kind = kafkasim({"fuzz", "--faults", "kill,poweroff"});
  EXPECT_EQ(kind.code, 2);
  EXPECT_NE(kind.err.find("unknown fault kind 'poweroff'"), std::string::npos) << kind.err;
  Output range = kafkasim({"fuzz", "--brokers", "4..2"});
  EXPECT_EQ(range.code, 2);
  EXPECT_NE(range.err.find("--brokers: 4..2 is not a range"), std::string::npos) << range.err;
  Output members = kafkasim({"fuzz", "--group-members", "0..7"});
  EXPECT_EQ(members.code, 2);
  EXPECT_NE(members.err.find("--group-members"), std::string::npos) << members.err;
  Output set = kafkasim({"fuzz", "--property", "durability", "--set", "zookeeper.session.tmeout.ms=6000"});
  EXPECT_EQ(set.code, 2);
  EXPECT_NE(set.err.find("--set: at zookeeper.session.tmeout.ms: "), std::string::npos) << set.err;
  EXPECT_NE(set.err.find("did you mean"), std::string::npos) << set.err;
  Output version = kafkasim({"fuzz", "--property", "safety", "--set", "version=2.2"});
  EXPECT_EQ(version.code, 2);
  EXPECT_NE(version.err.find("--set: the version profile is --version"), std::string::npos) << version.err;
  Output bad_version = kafkasim({"fuzz", "--property", "safety", "--version", "2.4"});
  EXPECT_EQ(bad_version.code, 2);
  EXPECT_NE(bad_version.err.find("2.2, 2.3, 2.8, 3.1, 3.9"), std::string::npos) << bad_version.err;
  Output reproduce = kafkasim({"fuzz", "--reproduce", "x"});
  EXPECT_EQ(reproduce.code, 2);
  EXPECT_NE(reproduce.err.find("--reproduce needs the --property"), std::string::npos) << reproduce.err;
  Output empty = kafkasim({"fuzz", "--property", "safety", "--reproduce", ""});
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("--reproduce: expected the reproduce string"), std::string::npos) << empty.err;
}

// ---- describe, zk ----

TEST_F(Cli, DescribePrintsKafkaTopicsLines) {
  Output r = kafkasim({"describe", "small.json", "--seed", "1", "--at", "10"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Topic: t\tPartitionCount: 1\tReplicationFactor: 2", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\tTopic: t\tPartition: 0\tLeader: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\tReplicas: 1,2\tIsr: "), std::string::npos) << r.out;
}

TEST_F(Cli, ZkTreeAndGet) {
  Output tree = kafkasim({"zk", "small.json", "--seed", "1", "--at", "10", "/brokers"});
  ASSERT_EQ(tree.code, 0) << tree.err;
  std::vector<std::string> l = lines(tree.out);
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(l[0], "/brokers");
  EXPECT_NE(tree.out.find("/brokers/ids/1\n"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("/brokers/topics/t\n"), std::string::npos) << tree.out;

  Output get = kafkasim({"zk", "small.json", "--seed", "1", "--at", "10", "/controller", "--get"});
  ASSERT_EQ(get.code, 0) << get.err;
  EXPECT_NE(get.out.find("\"brokerid\":"), std::string::npos) << get.out;
  EXPECT_NE(get.out.find("ephemeralOwner = 0x"), std::string::npos) << get.out;

  Output missing = kafkasim({"zk", "small.json", "--seed", "1", "--at", "10", "/nope", "--get"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/nope: no such node"), std::string::npos) << missing.err;

  for (const char* path : {"/brokers/", "//brokers", "/brokers/../x", "brokers"}) {
    Output bad = kafkasim({"zk", "small.json", "--at", "10", path});
    EXPECT_EQ(bad.code, 2) << path;
    EXPECT_NE(bad.err.find("is not a ZooKeeper path"), std::string::npos) << bad.err;
  }
}

TEST_F(Cli, DescribeAndZkWithNoZooKeeperRunningSaySo) {
  write("zkdown.json", replace(kSmall, R"({"at": 15, "action": "kill", "target": "kafka2"})",
                               R"({"at": 10, "action": "kill", "target": "zk1"})"));
  Output d = kafkasim({"describe", "zkdown.json", "--at", "20"});
  EXPECT_EQ(d.code, 2);
  EXPECT_NE(d.err.find("no ZooKeeper server running at 20s"), std::string::npos) << d.err;
  Output z = kafkasim({"zk", "zkdown.json", "--at", "20", "/brokers"});
  EXPECT_EQ(z.code, 2);
  EXPECT_NE(z.err.find("zk: no ZooKeeper server running at 20s"), std::string::npos) << z.err;
  // Before the topics exist: nothing on stdout, a note on stderr, exit 0.
  Output early = kafkasim({"describe", "small.json", "--at", "0"});
  EXPECT_EQ(early.code, 0) << early.err;
  EXPECT_EQ(early.out, "");
  EXPECT_NE(early.err.find("no topics at 0s"), std::string::npos) << early.err;
}

// ---- output files and huge ranges ----

TEST_F(Cli, OutputsThatWouldClobberTheScenarioOrEachOtherAreRefusedBeforeRunning) {
  Output same = kafkasim({"run", "small.json", "--trace", "out.jsonl", "--history", "./out.jsonl"});
  EXPECT_EQ(same.code, 2);
  EXPECT_NE(same.err.find("--trace and --history name the same file"), std::string::npos) << same.err;
  EXPECT_FALSE(fs::exists(dir_ / "out.jsonl"));
  Output clobber = kafkasim({"run", "small.json", "--history", "small.json"});
  EXPECT_EQ(clobber.code, 2);
  EXPECT_NE(clobber.err.find("that is the scenario file"), std::string::npos) << clobber.err;
  EXPECT_EQ(slurp(dir_ / "small.json"), kSmall);
  write("server.properties", "num.partitions=1\n");
  write("withfile.json", replace(kSmall, "\"name\": \"cli small\",", "\"name\": \"cli small\", \"kafka\": {\"file\": \"server.properties\"},"));
  Output props = kafkasim({"run", "withfile.json", "--trace", "server.properties"});
  EXPECT_EQ(props.code, 2);
  EXPECT_NE(props.err.find("that is a file the scenario references"), std::string::npos) << props.err;
  EXPECT_EQ(slurp(dir_ / "server.properties"), "num.partitions=1\n");
  Output junit = kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "j", "--junit", "nodir/x.xml"});
  EXPECT_EQ(junit.code, 2);
  EXPECT_NE(junit.err.find("the directory nodir does not exist"), std::string::npos) << junit.err;
  EXPECT_FALSE(fs::exists(dir_ / "j" / "results.jsonl"));  // refused before any seed ran
  // A report inside a fresh --out is fine; over the results file it is not.
  Output inside = kafkasim({"sweep", "small.json", "--seeds", "1..1", "--out", "fresh", "--junit", "fresh/j.xml"});
  EXPECT_EQ(inside.code, 0) << inside.err;
  EXPECT_TRUE(fs::exists(dir_ / "fresh" / "j.xml"));
  Output over = kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "fresh", "--resume", "--junit",
                          "fresh/results.jsonl"});
  EXPECT_EQ(over.code, 2);
  EXPECT_NE(over.err.find("that is the sweep's results file"), std::string::npos) << over.err;
  Output merge = kafkasim({"merge", "fresh", "--junit", "fresh/results.jsonl"});
  EXPECT_EQ(merge.code, 2);
  EXPECT_NE(merge.err.find("that is a results file being merged"), std::string::npos) << merge.err;
  Output dir = kafkasim({"run", "small.json", "--trace", "."});
  EXPECT_EQ(dir.code, 2);
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
}

TEST_F(Cli, ResultsFileThatIsADirectoryIsBadInput) {
  fs::create_directories(dir_ / "r" / "results.jsonl");
  Output r = kafkasim({"sweep", "small.json", "--seeds", "1..2", "--out", "r"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("results.jsonl: not a regular file"), std::string::npos) << r.err;
}

TEST_F(Cli, AShardOfAHugeRangeStartsAtOnceAndStopsOnSigint) {
  // 2^64 seeds in 10^12 shards: ~1.8e7 seeds for this one, worked out rather
  // than listed (listing them hung), and none queued ahead.
  pid_t pid = start({"sweep", "small.json", "--seeds", "1..18446744073709551615", "--shard", "3/1000000000000",
                     "--out", "huge", "--jobs", "1"},
                    "huge");
  const fs::path results = dir_ / "huge" / "results.jsonl";
  for (int i = 0; i < 600 && !(fs::exists(results) && fs::file_size(results) > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGINT);
  Output r = finish(pid, "huge");
  EXPECT_EQ(r.code, 130) << r.err;
  std::vector<std::string> l = lines(slurp(results));
  ASSERT_FALSE(l.empty());
  EXPECT_EQ(nlohmann::json::parse(l[0])["seed"], 3u);  // first + (index - 1)
  if (l.size() > 1) {
    EXPECT_EQ(nlohmann::json::parse(l[1])["seed"], 1000000000003u);
  }
  EXPECT_NE(r.err.find("of 18446745 seeds"), std::string::npos) << r.err;
  Output over = kafkasim({"sweep", "small.json", "--seeds", "0..18446744073709551615", "--out", "over"});
  EXPECT_EQ(over.code, 2);
  EXPECT_NE(over.err.find("too many seeds"), std::string::npos) << over.err;
  Output cap = kafkasim({"sweep", "small.json", "--seeds", "1..100000001", "--out", "cap"});
  EXPECT_EQ(cap.code, 2);
  EXPECT_NE(cap.err.find("more than 100 million seeds"), std::string::npos) << cap.err;
  Output explore = kafkasim({"explore", "small.json", "--grid", "acks=1", "--seeds", "0..18446744073709551615"});
  EXPECT_EQ(explore.code, 2);
  EXPECT_NE(explore.err.find("too many seeds"), std::string::npos) << explore.err;
}

TEST_F(Cli, ExploreStopsAtTheFirstBadStallMetric) {
  Output bad = kafkasim({"explore", "small.json", "--grid", "acks=1,all", "--seeds", "1..40", "--jobs", "1",
                         "--stall-metric", "lsot"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("did you mean 'lost'"), std::string::npos) << bad.err;
  // One worker: the first run finds the mistake and nothing else runs.
  EXPECT_NE(bad.err.find("stopped after 1 of 80 runs"), std::string::npos) << bad.err;
}

TEST_F(Cli, UnwritableStandardOutputIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::string cmd = std::string(KAFKASIM_BINARY) + " run " + (dir_ / "small.json").string() + " > /dev/full 2>/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
