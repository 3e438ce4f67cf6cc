// `kafkasim run SCENARIO [--seed N] [--trace FILE] [--history FILE] [--format text|json]`
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/check/history.h"
#include "model/properties.h"
#include "model/scenario/run.h"
#include "model/scenario/scenario.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"
#include "tools/kafkasim/results.h"

namespace cli {

namespace {

// A field of the verdict as text; "-" when absent (a run that broke an
// invariant has no verdict).
std::string show(const nlohmann::json& v, const char* key) {
  if (!v.is_object() || !v.contains(key)) return "-";
  const nlohmann::json& x = v.at(key);
  if (x.is_number_float()) return fmt::format("{:.3f}", x.get<double>());
  if (x.is_boolean()) return x.get<bool>() ? "yes" : "no";
  if (x.is_string()) return x.get<std::string>();
  return x.dump();
}

const char* label(scenario::Expectation::Result::Outcome o) {
  switch (o) {
    case scenario::Expectation::Result::Outcome::held:
      return "PASS ";
    case scenario::Expectation::Result::Outcome::failed:
      return "FAIL ";
    case scenario::Expectation::Result::Outcome::error:
      return "ERROR";
  }
  return "?";
}

std::ofstream open_output(const std::string& option, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw BadInput(fmt::format("{} {}: cannot open for writing: {}", option, path, std::strerror(errno)));
  return out;
}

void print_text(const std::string& file, const scenario::Scenario& s, const scenario::RunResult& r) {
  std::string out;
  out += fmt::format("seed      {}\n", r.seed);
  out += fmt::format("scenario  {} ({})\n", s.name, file);
  out += fmt::format("hash      {}\n", r.scenario_hash);
  out += fmt::format("commit    {}\n", build_commit());
  out += fmt::format("run       {} events, virtual time {}s, trace hash {:016x}\n", r.events,
                     scenario::format_seconds(r.end_time_us), r.trace_hash);
  out += "\ntimeline\n";
  for (const scenario::TimelineEntry& e : r.timeline) {
    out += fmt::format("{}  {}\n", format_clock(e.time_us), e.text);
  }
  const nlohmann::json& v = r.verdict;
  if (v.is_object()) {
    out += "\nverdict\n";
    out += fmt::format("  lost {}  duplicates {}  order violations {}  dirty reads {}  divergent {}  skipped {}\n",
                       show(v, "lost"), show(v, "duplicates"), show(v, "order_violations"), show(v, "dirty_reads"),
                       show(v, "divergent"), show(v, "skipped"));
    out += fmt::format("  sent {}  acknowledged {}  consumed {}\n", show(v, "sent"), show(v, "acknowledged"),
                       show(v, "consumed"));
    out += fmt::format("  max stall {}s  producer gave up {}  controller epoch changes {}\n", show(v, "max_stall_s"),
                       show(v, "producer_gave_up"), show(v, "controller_epoch_changes"));
    if (v.contains("clients") && v["clients"].is_object()) {
      for (const auto& [name, c] : v["clients"].items()) {
        std::string state = c.value("running", false) ? "running" : (c.value("exited", false) ? "exited" : "down");
        out += fmt::format("  {:<12} {:<8}  ok {}  longest stall {}s  {}\n", name, show(c, "role"), show(c, "ok"),
                           show(c, "longest_stall_s"), state);
      }
    }
  }
  if (!r.expectations.empty()) {
    out += "\nexpectations\n";
    for (const scenario::ExpectationOutcome& e : r.expectations) {
      out += fmt::format("  {}  {}", label(e.result), e.text);
      if (!e.detail.empty()) out += fmt::format("    ({})", e.detail);
      out += '\n';
    }
  }
  int code = r.exit_code();
  out += '\n';
  if (r.invariant) {
    out += fmt::format("INVARIANT BROKEN (a kafkasim bug) at {}s: {}\n", scenario::format_seconds(r.invariant->time_us),
                       r.invariant->message);
    if (!r.invariant->where.empty()) out += fmt::format("  where      {}\n", r.invariant->where);
    out += fmt::format("  seed       {}\n", r.seed);
  }
  size_t failed = 0;
  size_t errors = 0;
  for (const scenario::ExpectationOutcome& e : r.expectations) {
    failed += e.result == scenario::Expectation::Result::Outcome::failed;
    errors += e.result == scenario::Expectation::Result::Outcome::error;
  }
  const char* what = code == scenario::kExitHeld     ? "held"
                     : code == scenario::kExitFailed ? "failed"
                     : code == scenario::kExitBadInput
                         ? "bad input"
                         : "invariant broken";
  out += fmt::format("result: {} ({} expectations: {} held, {} failed, {} errors) — exit {}\n", what,
                     r.expectations.size(), r.expectations.size() - failed - errors, failed, errors, code);
  if (code != scenario::kExitHeld) out += fmt::format("reproduce: {}\n", reproducer(file, r.seed));
  std::fputs(out.c_str(), stdout);
}

// An expectation that could not be evaluated (a field the verdict lacks, a
// type error) is bad input in the scenario file: besides its ERROR line in the
// results, it is reported on stderr as the reader reports one, so that a script
// that keeps only stderr still learns why the exit code is 2.
void report_expectation_errors(const std::string& file, const scenario::RunResult& r) {
  for (size_t i = 0; i < r.expectations.size(); ++i) {
    const scenario::ExpectationOutcome& e = r.expectations[i];
    if (e.result != scenario::Expectation::Result::Outcome::error) continue;
    std::fprintf(stderr, "%s: at $.expect[%zu]: %s: %s\n", file.c_str(), i, model::printable(e.text).c_str(),
                 model::printable(e.detail).c_str());
  }
}

}  // namespace

int cmd_run(const std::vector<std::string>& argv) {
  Args a("run", argv,
         {{.name = "seed", .takes_value = true, .repeatable = false},
          {.name = "trace", .takes_value = true, .repeatable = false},
          {.name = "history", .takes_value = true, .repeatable = false},
          {.name = "format", .takes_value = true, .repeatable = false},
          {.name = "help", .takes_value = false, .repeatable = false}});
  if (a.flag("help")) {
    std::fputs(usage("run").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, 1, "SCENARIO");
  std::string format = parse_choice("run", "--format", a.value("format").value_or("text"), {"text", "json"});
  uint64_t seed_arg = 0;
  if (auto v = a.value("seed")) seed_arg = parse_uint("run", "--seed", *v, 0, std::numeric_limits<uint64_t>::max());
  const std::string& file = a.positionals()[0];
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const char* option : {"trace", "history"}) {
    if (auto path = a.value(option)) outputs.emplace_back(std::string("--") + option, *path);
  }
  scenario::Scenario s = scenario::load_scenario(file);
  std::vector<std::pair<std::string, std::string>> inputs = {{"the scenario file", file}};
  for (const std::string& f : s.referenced_files) inputs.emplace_back("a file the scenario references", f);
  check_outputs("run", outputs, inputs);
  uint64_t seed = a.value("seed") ? seed_arg : s.seed;

  scenario::RunOptions options;
  std::ofstream trace;
  if (auto path = a.value("trace")) {
    trace = open_output("--trace", *path);
    options.trace_json = &trace;
  }
  std::ofstream history_file;
  check::History history;
  if (auto path = a.value("history")) {
    history_file = open_output("--history", *path);
    options.history_out = &history;
  }

  scenario::RunResult r = scenario::run_scenario(s, seed, options);

  if (trace.is_open()) {
    trace.flush();
    if (!trace) throw BadInput(fmt::format("--trace {}: write failed", *a.value("trace")));
  }
  if (history_file.is_open()) {
    history.write_jsonl(history_file);
    history_file.flush();
    if (!history_file) throw BadInput(fmt::format("--history {}: write failed", *a.value("history")));
  }

  if (format == "json") {
    nlohmann::json j = r.to_json();
    if (!j.is_object()) j = nlohmann::json{{"result", j}};
    j["commit"] = build_commit();
    j["scenario_file"] = file;
    nlohmann::json timeline = nlohmann::json::array();
    for (const scenario::TimelineEntry& e : r.timeline) {
      timeline.push_back({{"time_us", e.time_us}, {"text", e.text}});
    }
    j["timeline"] = timeline;
    j["verdict"] = r.verdict;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    if (r.invariant) {
      // The document has it too; a person watching the terminal should not miss it.
      std::fprintf(stderr, "INVARIANT BROKEN (a kafkasim bug) at %ss: %s\n  seed       %llu\n  reproduce: %s\n",
                   scenario::format_seconds(r.invariant->time_us).c_str(), r.invariant->message.c_str(),
                   static_cast<unsigned long long>(r.seed), reproducer(file, r.seed).c_str());
    }
  } else {
    print_text(file, s, r);
  }
  report_expectation_errors(file, r);
  return r.exit_code();
}

}  // namespace cli
