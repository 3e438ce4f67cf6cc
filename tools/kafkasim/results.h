// What kafkasim prints about results: the one-run report helpers, and the
// sweep's results file (results.jsonl: one JSON object per seed, as
// RunResult::to_json() writes it plus "scenario_file" and "commit") with the
// verdict table and JUnit report computed from it.
//
// The table is a function of the file's lines alone (ordered by seed,
// de-duplicated), never of what a process had in memory, so that a sweep,
// a resumed sweep and a merge of shards print byte-identical tables.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cli {

// "  12.500s": virtual microseconds as seconds with three decimals, right-aligned in `width`.
std::string format_clock(int64_t us, int width = 9);

// One seed's line of a results file, with the fields the table reads.
struct SeedResult {
  uint64_t seed = 0;
  int exit_code = 0;
  std::string scenario;       // the scenario's name
  std::string hash;           // the scenario's hash
  std::string scenario_file;  // as given to `sweep`, for reproducer lines
  std::string commit;
  std::optional<int64_t> lost;
  std::optional<int64_t> duplicates;
  std::optional<double> max_stall_s;
  // The other checkers' counts (absent from lines of older builds).
  std::optional<int64_t> order_violations;
  std::optional<int64_t> dirty_reads;
  std::optional<int64_t> divergent;
  std::optional<int64_t> skipped;
  struct Outcome {
    std::string text;
    std::string result;  // "held", "failed", "error"
    std::string detail;
  };
  std::vector<Outcome> expectations;
  std::optional<std::string> invariant;  // message, when an invariant broke
  std::optional<int64_t> invariant_time_us;
  nlohmann::json line;  // the whole line
};

// Reads a SeedResult from a line's JSON (RunResult::to_json() + extras).
// Throws std::runtime_error naming what is missing.
SeedResult parse_result_line(const nlohmann::json& j);

struct ResultsFile {
  std::vector<SeedResult> results;  // in file order
  // Bytes up to the end of the last complete line; a trailing partial line
  // (an interrupted write) is not counted.
  uint64_t complete_bytes = 0;
  bool partial_tail = false;
};
// Reads `path`; a missing file is empty. A complete line that does not parse
// is a BadInput naming the file and line.
ResultsFile read_results(const std::filesystem::path& path);

// Sorted by seed, one per seed: of two results of one seed, the one with the
// higher exit code, then the one whose JSON line is lexicographically smaller
// — whatever order they came in.
std::vector<SeedResult> by_seed(std::vector<SeedResult> results);

// The verdict table (see docs/cli.md).
std::string verdict_table(const std::vector<SeedResult>& sorted);
// 0 every seed held; 3 any invariant broke; else 2 any bad input; else 1 any failed.
int sweep_exit_code(const std::vector<SeedResult>& sorted);
// JUnit XML, one testcase per seed.
std::string junit_xml(const std::vector<SeedResult>& sorted);
// Writes `text` to `path` (BadInput when it cannot).
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

// The command that reproduces one seed.
std::string reproducer(const std::string& scenario_file, uint64_t seed);

}  // namespace cli
