// `kafkasim explore SCENARIO --grid KEY=V1,V2 [--grid ...] --seeds A..B`:
// the what-if table. For each combination of the grid's values (the
// cartesian product, the first --grid varying slowest) the seeds run with
// RunOptions::overrides = that combination; each row reports the share of
// seeds that lost data, duplicated, or stalled longer than the bound, with a
// 95% Wilson score interval.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/scenario/json_input.h"
#include "model/scenario/expect.h"
#include "model/scenario/run.h"
#include "model/scenario/scenario.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"
#include "tools/kafkasim/workers.h"

namespace cli {

namespace {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

GridAxis parse_grid(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError("explore", fmt::format("--grid: expected KEY=V1,V2,..., got '{}'", text));
  }
  GridAxis axis{.key = text.substr(0, eq), .values = {}};
  std::string rest = text.substr(eq + 1);
  size_t pos = 0;
  while (true) {
    size_t comma = rest.find(',', pos);
    std::string v = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (v.empty()) throw UsageError("explore", fmt::format("--grid {}: an empty value", text));
    for (const std::string& seen : axis.values) {
      if (seen == v) throw UsageError("explore", fmt::format("--grid {}: value '{}' given twice", text, v));
    }
    axis.values.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return axis;
}

// A share with its 95% Wilson score interval (Wilson 1927; the interval
// stays inside [0, 1] and is sensible for k = 0 or k = n, unlike the normal
// approximation):
//   p = k/n, z = 1.959964 (the 97.5th percentile of the standard normal)
//   centre = (p + z²/2n) / (1 + z²/n)
//   half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)
struct Share {
  uint64_t k = 0;
  uint64_t n = 0;
  double share() const { return n == 0 ? 0.0 : static_cast<double>(k) / static_cast<double>(n); }
  std::pair<double, double> wilson95() const {
    if (n == 0) return {0.0, 1.0};
    constexpr double z = 1.959963984540054;
    double nn = static_cast<double>(n);
    double p = share();
    double z2 = z * z;
    double denom = 1.0 + z2 / nn;
    double centre = (p + z2 / (2.0 * nn)) / denom;
    double half = z / denom * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
    double lo = centre - half;
    double hi = centre + half;
    return {lo < 0 ? 0.0 : lo, hi > 1 ? 1.0 : hi};
  }
};

struct Row {
  std::map<std::string, std::string> overrides;
  std::vector<std::string> values;  // in grid order
  uint64_t seeds = 0;               // seeds run
  uint64_t invariant = 0;           // seeds that broke an invariant (no verdict)
  Share lost, duplicates, stalled;  // over the seeds with a verdict
};

struct SeedOutcome {
  bool has_verdict = false;
  bool lost = false;
  bool duplicates = false;
  bool stalled = false;
};

double number(const nlohmann::json& v, const char* key) {
  if (!v.is_object() || !v.contains(key) || !v.at(key).is_number()) return 0.0;
  return v.at(key).get<double>();
}

std::string percent_cell(const Share& s) {
  auto [lo, hi] = s.wilson95();
  return fmt::format("{:>3} {:5.1f}% [{:5.1f}, {:5.1f}]", s.k, 100.0 * s.share(), 100.0 * lo, 100.0 * hi);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

nlohmann::json share_json(const Share& s) {
  auto [lo, hi] = s.wilson95();
  return {{"seeds", s.k}, {"share", s.share()}, {"low", lo}, {"high", hi}};
}

}  // namespace

int cmd_explore(const std::vector<std::string>& argv) {
  Args a("explore", argv,
         {{.name = "grid", .takes_value = true, .repeatable = true},
          {.name = "seeds", .takes_value = true, .repeatable = false},
          {.name = "jobs", .takes_value = true, .repeatable = false},
          {.name = "stall-bound", .takes_value = true, .repeatable = false},
          {.name = "stall-metric", .takes_value = true, .repeatable = false},
          {.name = "format", .takes_value = true, .repeatable = false},
          {.name = "help", .takes_value = false, .repeatable = false}});
  if (a.flag("help")) {
    std::fputs(usage("explore").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, 1, "SCENARIO");
  if (!a.value("seeds")) a.fail("missing --seeds A..B");
  if (a.values("grid").empty()) a.fail("missing --grid KEY=V1,V2");
  SeedRange range = parse_seeds("explore", *a.value("seeds"));
  uint64_t jobs = a.value("jobs") ? parse_uint("explore", "--jobs", *a.value("jobs"), 1, 1024) : 2;
  int64_t bound_us = a.value("stall-bound") ? parse_seconds_us("explore", "--stall-bound", *a.value("stall-bound"))
                                            : 20'000'000;
  std::string format =
      parse_choice("explore", "--format", a.value("format").value_or("text"), {"text", "csv", "json"});
  // Which stall counts: a path of the verdict (docs/scenario-format.md), e.g.
  // phases.rolling.max_stall_s for a scenario with a planned outage.
  const std::string stall_metric = a.value("stall-metric").value_or("max_stall_s");
  std::optional<scenario::Expectation> stalled_when;
  try {
    // Alone first, so that a syntax error's column is one of the text given.
    (void)scenario::Expectation::parse(stall_metric);
    stalled_when = scenario::Expectation::parse(
        fmt::format("{} > {}", stall_metric, scenario::format_seconds(bound_us)));
  } catch (const std::exception& e) {
    a.fail(fmt::format("--stall-metric {}: not a path of the verdict ({})", stall_metric, e.what()));
  }
  std::vector<GridAxis> grid;
  for (const std::string& g : a.values("grid")) {
    GridAxis axis = parse_grid(g);
    for (const GridAxis& other : grid) {
      if (other.key == axis.key) a.fail(fmt::format("--grid: key '{}' given twice", axis.key));
    }
    grid.push_back(std::move(axis));
  }
  uint64_t combos = 1;
  for (const GridAxis& axis : grid) {
    combos *= axis.values.size();
    if (combos > 100000) a.fail("--grid: more than 100000 combinations");
  }
  if (range.count() > 10'000'000 / combos) a.fail("--grid x --seeds: more than 10 million runs");
  const std::string& file = a.positionals()[0];
  scenario::Scenario base = scenario::load_scenario(file);

  // Every combination is checked before anything runs: a bad key or value is
  // an InputError naming --grid (exit 2).
  std::vector<Row> rows;
  std::vector<scenario::Scenario> variants;
  for (uint64_t c = 0; c < combos; ++c) {
    Row row;
    uint64_t rest = c;
    std::vector<size_t> index(grid.size());
    for (size_t i = grid.size(); i-- > 0;) {  // the last axis varies fastest
      index[i] = rest % grid[i].values.size();
      rest /= grid[i].values.size();
    }
    for (size_t i = 0; i < grid.size(); ++i) {
      row.overrides[grid[i].key] = grid[i].values[index[i]];
      row.values.push_back(grid[i].values[index[i]]);
    }
    variants.push_back(scenario::with_overrides(base, row.overrides));
    rows.push_back(std::move(row));
  }

  const uint64_t per_row = range.count();  // at most 10 million (checked above)
  const uint64_t total = combos * per_row;
  std::vector<SeedOutcome> outcomes(total);

  std::mutex mutex;
  uint64_t finished = 0;
  std::optional<std::string> error;
  int error_code = 0;
  double bound_s = static_cast<double>(bound_us) / 1e6;
  // All runs stop at the first error: a mistyped --stall-metric shows after
  // the first run, not after all of them.
  std::atomic<bool> stop{false};
  uint64_t last_tenth = 0;
  run_on_workers(
      jobs, total,
      [&](uint64_t t) {
        SeedOutcome o;
        std::optional<std::string> err;
        int code = 0;
        const uint64_t seed = range.first + t % per_row;
        try {
          scenario::Scenario mine = variants[t / per_row];
          scenario::RunResult r = scenario::run_scenario(mine, seed);
          o.has_verdict = r.verdict.is_object();
          o.lost = number(r.verdict, "lost") > 0;
          o.duplicates = number(r.verdict, "duplicates") > 0;
          const scenario::Expectation::Result stall = stalled_when->evaluate(r.verdict);
          if (stall.outcome == scenario::Expectation::Result::Outcome::error) {
            throw scenario::InputError("--stall-metric", stall_metric, stall.detail);
          }
          o.stalled = stall.outcome == scenario::Expectation::Result::Outcome::held;
        } catch (const scenario::InputError& e) {
          err = e.what();
          code = scenario::kExitBadInput;
        } catch (const std::exception& e) {
          err = fmt::format("internal error (a kafkasim bug) in seed {}: {}", seed, e.what());
          code = scenario::kExitInvariant;
        }
        std::lock_guard lock(mutex);
        outcomes[t] = o;
        if (err) {
          stop.store(true);
          if (!error) {
            error = err;
            error_code = code;
          }
        }
        ++finished;
      },
      [&] { return stop.load(); },
      [&] {
        std::lock_guard lock(mutex);
        const uint64_t tenth = finished * 10 / total;
        if (tenth > last_tenth && !error) {
          std::fprintf(stderr, "explore: %llu/%llu runs\n", static_cast<unsigned long long>(finished),
                       static_cast<unsigned long long>(total));
          last_tenth = tenth;
        }
      });
  if (error) {
    std::fprintf(stderr, "%s\n", error->c_str());
    std::fprintf(stderr, "kafkasim explore: stopped after %llu of %llu runs\n",
                 static_cast<unsigned long long>(finished), static_cast<unsigned long long>(total));
    return error_code;
  }

  uint64_t invariant_breaks = 0;
  for (uint64_t t = 0; t < total; ++t) {
    Row& row = rows[t / per_row];
    const SeedOutcome& o = outcomes[t];
    ++row.seeds;
    if (!o.has_verdict) {
      ++row.invariant;
      ++invariant_breaks;
      continue;
    }
    for (Share* s : {&row.lost, &row.duplicates, &row.stalled}) ++s->n;
    row.lost.k += o.lost;
    row.duplicates.k += o.duplicates;
    row.stalled.k += o.stalled;
  }

  std::string bound_text = scenario::format_seconds(bound_us);
  std::string out;
  if (format == "csv") {
    std::string header;
    for (const GridAxis& axis : grid) header += csv_field(axis.key) + ",";
    header += "seeds,invariant_broken";
    for (const char* m : {"lost", "duplicates", "stalled"}) {
      header += fmt::format(",{0}_seeds,{0}_share,{0}_low,{0}_high", m);
    }
    out += header + "\n";
    for (const Row& row : rows) {
      std::string line;
      for (const std::string& v : row.values) line += csv_field(v) + ",";
      line += fmt::format("{},{}", row.seeds, row.invariant);
      for (const Share* s : {&row.lost, &row.duplicates, &row.stalled}) {
        auto [lo, hi] = s->wilson95();
        line += fmt::format(",{},{:.4f},{:.4f},{:.4f}", s->k, s->share(), lo, hi);
      }
      out += line + "\n";
    }
  } else if (format == "json") {
    nlohmann::json j;
    j["scenario"] = base.name;
    j["scenario_file"] = file;
    j["hash"] = base.hash;
    j["commit"] = build_commit();
    j["seeds"] = {{"first", range.first}, {"last", range.last}};
    j["stall_bound_s"] = bound_s;
    j["stall_metric"] = stall_metric;
    j["rows"] = nlohmann::json::array();
    for (const Row& row : rows) {
      nlohmann::json r;
      r["overrides"] = row.overrides;
      r["seeds"] = row.seeds;
      r["invariant_broken"] = row.invariant;
      r["lost"] = share_json(row.lost);
      r["duplicates"] = share_json(row.duplicates);
      r["stalled"] = share_json(row.stalled);
      j["rows"].push_back(r);
    }
    out = j.dump(2) + "\n";
  } else {
    out += fmt::format("scenario    {} ({})\nhash        {}\ncommit      {}\n", base.name, file, base.hash,
                       build_commit());
    out += fmt::format("seeds       {}..{} per combination ({} runs); shares with 95% Wilson intervals\n\n",
                       range.first, range.last, total);
    std::vector<size_t> widths;
    std::string header;
    for (const GridAxis& axis : grid) {
      size_t w = axis.key.size();
      for (const std::string& v : axis.values) w = std::max(w, v.size());
      widths.push_back(w);
      header += fmt::format("{:<{}}  ", axis.key, w);
    }
    std::string stall_head = stall_metric == "max_stall_s" ? fmt::format("stall > {}s", bound_text)
                                                           : fmt::format("{} > {}s", stall_metric, bound_text);
    constexpr size_t kCell = 26;
    header += fmt::format("{:>5}  {:<{}}  {:<{}}  {:<{}}", "seeds", "lost > 0", kCell, "duplicates > 0", kCell,
                          stall_head, kCell);
    bool any_invariant = invariant_breaks > 0;
    if (any_invariant) header += "  invariant broken";
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out += header + "\n";
    for (const Row& row : rows) {
      std::string line;
      for (size_t i = 0; i < row.values.size(); ++i) line += fmt::format("{:<{}}  ", row.values[i], widths[i]);
      line += fmt::format("{:>5}  {:<{}}  {:<{}}  {:<{}}", row.seeds, percent_cell(row.lost), kCell,
                          percent_cell(row.duplicates), kCell, percent_cell(row.stalled), kCell);
      if (any_invariant) line += fmt::format("  {}", row.invariant);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  std::fputs(out.c_str(), stdout);
  return invariant_breaks > 0 ? scenario::kExitInvariant : scenario::kExitHeld;
}

}  // namespace cli
