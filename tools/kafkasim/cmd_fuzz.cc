// `kafkasim fuzz [--property NAME] [--runs N] [--seed S] [--out DIR] ...`:
// property-based search for a fault schedule that breaks a property
// (model/fuzz/fuzz.h, docs/fuzzing.md). Progress goes to stderr; for a
// failure the shrunk case is written to DIR as a scenario file, and the
// command prints how to replay it and rapidcheck's reproduce string.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/fuzz/fuzz.h"
#include "model/kafka/config.h"
#include "model/scenario/json_input.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"

namespace cli {

namespace {

constexpr const char* kCommand = "fuzz";

std::pair<int32_t, int32_t> parse_count_range(const std::string& option, const std::string& text, int32_t min,
                                              int32_t max) {
  const size_t dots = text.find("..");
  const std::string lo = dots == std::string::npos ? text : text.substr(0, dots);
  const std::string hi = dots == std::string::npos ? text : text.substr(dots + 2);
  const auto a = static_cast<int32_t>(parse_uint(kCommand, option, lo, static_cast<uint64_t>(min), static_cast<uint64_t>(max)));
  const auto b = static_cast<int32_t>(parse_uint(kCommand, option, hi, static_cast<uint64_t>(min), static_cast<uint64_t>(max)));
  if (a > b) throw UsageError(kCommand, fmt::format("{}: {} is not a range (A..B with A <= B)", option, text));
  return {a, b};
}

std::string kind_list() {
  std::string s;
  for (fuzz::FaultKind k : fuzz::all_fault_kinds()) s += fmt::format("{}{}", s.empty() ? "" : ", ", fuzz::to_string(k));
  return s;
}

// The command line that runs this search again (and, with --reproduce, its failure).
std::string command_line(const std::vector<std::string>& args, fuzz::Property p) {
  std::string s = "kafkasim fuzz";
  bool has_property = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--reproduce" || args[i].rfind("--reproduce=", 0) == 0 || args[i] == "--out" ||
        args[i].rfind("--out=", 0) == 0) {
      if (args[i] == "--reproduce" || args[i] == "--out") ++i;
      continue;
    }
    has_property = has_property || args[i] == "--property" || args[i].rfind("--property=", 0) == 0;
    s += " " + shell_quote(args[i]);
  }
  if (!has_property) s += fmt::format(" --property {}", fuzz::to_string(p));
  return s;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw BadInput(fmt::format("--out: cannot write {}: {}", path, std::strerror(errno)));
  out << text;
  if (!out.flush()) throw BadInput(fmt::format("--out: cannot write {}: {}", path, std::strerror(errno)));
}

}  // namespace

int cmd_fuzz(const std::vector<std::string>& args) {
  Args a(kCommand, args,
         {{.name = "property", .takes_value = true},
          {.name = "runs", .takes_value = true},
          {.name = "seed", .takes_value = true},
          {.name = "out", .takes_value = true},
          {.name = "set", .takes_value = true, .repeatable = true},
          {.name = "faults", .takes_value = true},
          {.name = "brokers", .takes_value = true},
          {.name = "zookeepers", .takes_value = true},
          {.name = "max-faults", .takes_value = true},
          {.name = "group-members", .takes_value = true},
          {.name = "version", .takes_value = true},
          {.name = "reproduce", .takes_value = true},
          {.name = "quiet"},
          {.name = "help"}});
  if (a.flag("help")) {
    std::fputs(usage(kCommand).c_str(), stdout);
    return 0;
  }
  a.expect_positionals(0, 0, "");
  std::vector<fuzz::Property> properties = fuzz::all_properties();
  if (auto p = a.value("property")) {
    std::vector<std::string> names;
    for (fuzz::Property q : fuzz::all_properties()) names.push_back(fuzz::to_string(q));
    properties = {*fuzz::property_from(parse_choice(kCommand, "--property", *p, names))};
  }
  if (a.value("reproduce") && !a.value("property")) a.fail("--reproduce needs the --property it was found for");
  fuzz::FuzzOptions options;
  if (auto r = a.value("runs")) options.runs = static_cast<int>(parse_uint(kCommand, "--runs", *r, 1, 1'000'000));
  if (auto s = a.value("seed")) options.seed = parse_uint(kCommand, "--seed", *s, 0, UINT64_MAX);
  if (auto r = a.value("reproduce")) {
    // An empty string would mean "no reproduce string" and run a fresh search.
    if (r->empty()) a.fail("--reproduce: expected the reproduce string a failure printed, got ''");
    options.reproduce = *r;
  }
  const std::string out_dir = a.value("out").value_or("fuzz-out");
  const bool quiet = a.flag("quiet");

  int exit_code = 0;
  for (fuzz::Property property : properties) {
    fuzz::Space space = fuzz::default_space(property);
    if (auto v = a.value("version")) {
      std::vector<std::string> lines;
      for (kafka::VersionProfile p : kafka::kVersionProfiles) lines.emplace_back(kafka::to_string(p));
      space.version = parse_choice(kCommand, "--version", *v, lines);
    }
    for (const std::string& kv : a.values("set")) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) {
        a.fail(fmt::format("--set: expected KEY=VALUE, got '{}'", kv));
      }
      if (kv.substr(0, eq) == "version") a.fail("--set: the version profile is --version, not --set version=");
      fuzz::pin(space, kv.substr(0, eq), kv.substr(eq + 1));
    }
    if (auto f = a.value("faults")) {
      space.kinds.clear();
      size_t start = 0;
      while (start <= f->size()) {
        const size_t comma = std::min(f->find(',', start), f->size());
        const std::string name = f->substr(start, comma - start);
        const auto k = fuzz::fault_kind_from(name);
        if (!k) a.fail(fmt::format("--faults: unknown fault kind '{}'; kinds: {}", name, kind_list()));
        space.kinds.push_back(*k);
        start = comma + 1;
      }
    }
    if (auto b = a.value("brokers")) std::tie(space.min_brokers, space.max_brokers) = parse_count_range("--brokers", *b, 1, 6);
    if (auto z = a.value("zookeepers")) {
      std::tie(space.min_zookeepers, space.max_zookeepers) = parse_count_range("--zookeepers", *z, 1, 5);
    }
    if (auto g = a.value("group-members")) {
      std::tie(space.min_group_members, space.max_group_members) = parse_count_range("--group-members", *g, 0, 6);
    }
    if (auto m = a.value("max-faults")) space.max_faults = static_cast<int32_t>(parse_uint(kCommand, "--max-faults", *m, 0, 20));
    space.max_replication_factor = std::min(space.max_replication_factor, space.max_brokers);
    space.min_replication_factor = std::min(space.min_replication_factor, space.max_replication_factor);
    try {
      fuzz::validate(space);
      // A pinned key or value the parsers reject: before anything is printed.
      (void)fuzz::build(fuzz::smallest_case(space),
                        space);
    } catch (const std::invalid_argument& e) {
      a.fail(e.what());
    } catch (const scenario::InputError& e) {
      throw BadInput(e.what());
    }

    const char* name = fuzz::to_string(property);
    std::fprintf(stderr, "fuzz %s: up to %d cases, seed %llu\n", name, options.runs,
                 static_cast<unsigned long long>(options.seed));
    const auto progress = [&](const fuzz::Progress& p) {
      if (quiet) return;
      switch (p.kind) {
        case fuzz::Progress::Kind::case_passed:
          if (p.cases % 10 == 0) std::fprintf(stderr, "  %d cases held\n", p.cases);
          break;
        case fuzz::Progress::Kind::case_failed:
          std::fprintf(stderr, "  case %d failed (%d faults); shrinking\n", p.cases, p.faults);
          break;
        case fuzz::Progress::Kind::shrink_accepted:
          std::fprintf(stderr, "  shrunk: %d faults (%d of %d shrinks kept)\n", p.faults, p.shrinks_accepted,
                       p.shrinks_tried);
          break;
        case fuzz::Progress::Kind::shrink_rejected: break;
      }
    };
    fuzz::FuzzResult r;
    try {
      r = fuzz::fuzz(space, options, progress);
    } catch (const scenario::InputError& e) {
      throw BadInput(e.what());
    } catch (const std::invalid_argument& e) {
      a.fail(e.what());
    }
    if (!r.error.empty()) throw std::runtime_error(fmt::format("rapidcheck: {}", r.error));
    if (!r.counterexample) {
      std::printf("%s: held for %d cases\n", name, r.cases);
      continue;
    }
    exit_code = 1;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw BadInput(fmt::format("--out {}: {}", out_dir, ec.message()));
    const std::string file = fmt::format("{}/{}-seed{}.json", out_dir, name, options.seed);
    nlohmann::json doc = r.built.document;
    const std::string replay = command_line(args, property) + " --reproduce " + shell_quote(r.reproduce);
    doc["name"] = fmt::format("fuzz {} seed {}", name, options.seed);
    doc["description"] = fmt::format(
        "Found by `kafkasim fuzz` and shrunk: the property {} failed ({}). Shrunk case: {}. Search again with: {}",
        name, r.message, fuzz::describe(*r.counterexample, space), replay);
    write_file(file, doc.dump(2) + "\n");
    std::printf("%s: FAILED after %d cases, shrunk in %d steps to %d faults\n", name, r.cases, r.shrinks_accepted,
                r.built.faults);
    std::printf("  %s\n", r.message.c_str());
    std::printf("  case: %s\n", fuzz::describe(*r.counterexample, space).c_str());
    std::printf("  wrote %s; replay: kafkasim run %s\n", file.c_str(), shell_quote(file).c_str());
    std::printf("  reproduce: %s\n", replay.c_str());
  }
  return exit_code;
}

}  // namespace cli
