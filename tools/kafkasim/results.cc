#include "tools/kafkasim/results.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "model/scenario/json_input.h"
#include "tools/kafkasim/args.h"

namespace cli {

std::string format_clock(int64_t us, int width) {
  std::string sign = us < 0 ? "-" : "";
  uint64_t a = us < 0 ? static_cast<uint64_t>(-(us + 1)) + 1 : static_cast<uint64_t>(us);
  std::string text = fmt::format("{}{}.{:03}s", sign, a / 1'000'000, (a % 1'000'000) / 1000);
  return fmt::format("{:>{}}", text, width);
}

std::string reproducer(const std::string& scenario_file, uint64_t seed) {
  return fmt::format("kafkasim run {} --seed {}", shell_quote(scenario_file), seed);
}

namespace {

// The first of `keys` present in `j` (or in j["verdict"] / j["headline"]).
const nlohmann::json* lookup(const nlohmann::json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (j.contains(k) && !j.at(k).is_null()) return &j.at(k);
  }
  for (const char* sub : {"headline", "verdict"}) {
    if (j.contains(sub) && j.at(sub).is_object()) {
      for (const char* k : keys) {
        if (j.at(sub).contains(k) && !j.at(sub).at(k).is_null()) return &j.at(sub).at(k);
      }
    }
  }
  return nullptr;
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

SeedResult parse_result_line(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  SeedResult r;
  const nlohmann::json* seed = lookup(j, {"seed"});
  if (seed == nullptr || !seed->is_number_unsigned()) throw std::runtime_error("no \"seed\" (an unsigned integer)");
  r.seed = seed->get<uint64_t>();
  const nlohmann::json* code = lookup(j, {"exit_code", "exit"});
  if (code == nullptr || !code->is_number_integer()) throw std::runtime_error("no \"exit\" (an integer)");
  // What `kafkasim run` exits with for a seed (0 held, 1 failed, 2 bad
  // input, 3 invariant broken): anything else was not written by a sweep,
  // and would count as neither a pass nor a failure.
  if (!code->is_number_unsigned() || code->get<uint64_t>() > 3) {
    throw std::runtime_error(fmt::format("\"exit\" is {}: not an exit code of a seed (0 to 3)", code->dump()));
  }
  r.exit_code = code->get<int>();
  if (const nlohmann::json* x = lookup(j, {"scenario"}); x != nullptr && x->is_string()) r.scenario = x->get<std::string>();
  const nlohmann::json* hash = lookup(j, {"scenario_hash", "hash"});
  if (hash == nullptr || !hash->is_string()) throw std::runtime_error("no \"scenario_hash\" (a string)");
  r.hash = hash->get<std::string>();
  if (j.contains("scenario_file") && j["scenario_file"].is_string()) r.scenario_file = j["scenario_file"];
  if (j.contains("commit") && j["commit"].is_string()) r.commit = j["commit"];
  if (const nlohmann::json* x = lookup(j, {"lost"}); x != nullptr && x->is_number()) r.lost = x->get<int64_t>();
  if (const nlohmann::json* x = lookup(j, {"duplicates"}); x != nullptr && x->is_number()) {
    r.duplicates = x->get<int64_t>();
  }
  if (const nlohmann::json* x = lookup(j, {"max_stall_s"}); x != nullptr && x->is_number()) {
    r.max_stall_s = x->get<double>();
  }
  for (auto [key, field] : {std::pair{"order_violations", &SeedResult::order_violations},
                             std::pair{"dirty_reads", &SeedResult::dirty_reads},
                             std::pair{"divergent", &SeedResult::divergent},
                             std::pair{"skipped", &SeedResult::skipped}}) {
    if (const nlohmann::json* x = lookup(j, {key}); x != nullptr && x->is_number()) r.*field = x->get<int64_t>();
  }
  if (j.contains("expectations") && j["expectations"].is_array()) {
    for (const nlohmann::json& e : j["expectations"]) {
      if (!e.is_object()) continue;
      SeedResult::Outcome o;
      o.text = e.contains("expect") && e["expect"].is_string() ? e["expect"].get<std::string>() : e.value("text", "");
      o.result = e.contains("result") && e["result"].is_string() ? lower(e["result"].get<std::string>()) : "";
      if (o.result == "pass") o.result = "held";
      if (o.result == "fail") o.result = "failed";
      o.detail = e.contains("detail") && e["detail"].is_string() ? e["detail"].get<std::string>() : "";
      r.expectations.push_back(std::move(o));
    }
  }
  if (j.contains("invariant") && j["invariant"].is_object()) {
    const nlohmann::json& inv = j["invariant"];
    r.invariant = inv.contains("message") && inv["message"].is_string() ? inv["message"].get<std::string>()
                                                                          : inv.dump();
    if (inv.contains("time_s") && inv["time_s"].is_number()) {
      r.invariant_time_us = static_cast<int64_t>(std::llround(inv["time_s"].get<double>() * 1e6));
    }
  } else if (j.contains("invariant") && j["invariant"].is_string()) {
    r.invariant = j["invariant"].get<std::string>();
  }
  r.line = j;
  return r;
}

ResultsFile read_results(const std::filesystem::path& path) {
  ResultsFile out;
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    // A directory (or a device, a FIFO) where the results go: reading it
    // would throw from inside the stream, or never end.
    throw BadInput(fmt::format("{}: not a regular file", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code missing_ec;
    if (!std::filesystem::exists(path, missing_ec) && !missing_ec) return out;
    throw BadInput(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  }
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < content.size()) {
    size_t nl = content.find('\n', pos);
    if (nl == std::string::npos) {
      out.partial_tail = true;  // an interrupted write: not a result
      break;
    }
    ++line_no;
    std::string_view line(content.data() + pos, nl - pos);
    pos = nl + 1;
    out.complete_bytes = pos;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      // The scenario reader's parser: it refuses JSON nested deeper than any
      // result line (the recursive parse would overflow the stack first).
      j = scenario::parse_json(path.string(), line);
    } catch (const scenario::InputError& e) {
      throw BadInput(fmt::format("{}: line {}: not a line kafkasim sweep writes: {}", path.string(), line_no,
                                 e.message()));
    }
    try {
      out.results.push_back(parse_result_line(j));
    } catch (const std::exception& e) {
      throw BadInput(fmt::format("{}: line {}: not a result line: {}", path.string(), line_no, e.what()));
    }
  }
  return out;
}

std::vector<SeedResult> by_seed(std::vector<SeedResult> results) {
  // Of two results of one seed (which only a determinism bug, or results of
  // different builds, can make differ) the one kept must not depend on the
  // order the files were read in: the worse exit code, then the
  // lexicographically smaller line (dumped only for such a pair).
  std::sort(results.begin(), results.end(), [](const SeedResult& x, const SeedResult& y) {
    if (x.seed != y.seed) return x.seed < y.seed;
    if (x.exit_code != y.exit_code) return x.exit_code > y.exit_code;
    return x.line.dump() < y.line.dump();
  });
  auto last = std::unique(results.begin(), results.end(),
                          [](const SeedResult& a, const SeedResult& b) { return a.seed == b.seed; });
  results.erase(last, results.end());
  return results;
}

int sweep_exit_code(const std::vector<SeedResult>& sorted) {
  bool invariant = false;
  bool bad = false;
  bool failed = false;
  for (const SeedResult& r : sorted) {
    invariant = invariant || r.exit_code == 3;
    bad = bad || r.exit_code == 2;
    failed = failed || r.exit_code == 1;
  }
  return invariant ? 3 : bad ? 2 : failed ? 1 : 0;
}

namespace {

// Nearest-rank percentile (q in percent) of sorted values.
template <typename T>
T percentile(const std::vector<T>& sorted, uint64_t q) {
  uint64_t n = sorted.size();
  uint64_t rank = (q * n + 99) / 100;  // ceil(q/100 * n), at least 1 for q > 0
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

template <typename T, typename F>
std::string distribution_row(const std::string& name, const std::vector<SeedResult>& rs, F get, bool real) {
  std::vector<T> values;
  uint64_t positive = 0;
  for (const SeedResult& r : rs) {
    if (auto v = get(r)) {
      values.push_back(*v);
      positive += *v > 0;
    }
  }
  auto show = [&](T v) { return real ? fmt::format("{:.3f}", static_cast<double>(v)) : fmt::format("{}", v); };
  if (values.empty()) return fmt::format("  {:<17}{:>10}{:>10}{:>10}{:>10}{:>12}{:>8}\n", name, "-", "-", "-", "-", "-", 0);
  std::sort(values.begin(), values.end());
  return fmt::format("  {:<17}{:>10}{:>10}{:>10}{:>10}{:>12}{:>8}\n", name, show(values.front()),
                     show(percentile(values, 50)), show(percentile(values, 90)), show(values.back()), positive,
                     values.size());
}

// What makes two failures the same: the invariant's message, or the set of
// expectations that failed or were errors.
std::string failure_signature(const SeedResult& r) {
  if (r.invariant) return fmt::format("INVARIANT  {}", *r.invariant);
  std::vector<std::string> parts;
  for (const SeedResult::Outcome& o : r.expectations) {
    if (o.result == "failed") parts.push_back("FAIL  " + o.text);
    if (o.result == "error") parts.push_back("ERROR " + o.text);
  }
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  if (parts.empty()) return fmt::format("exit {}", r.exit_code);
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "\n     ") + p;
  return s;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + (x.empty() ? std::string("?") : x);
  return out;
}

}  // namespace

std::string verdict_table(const std::vector<SeedResult>& sorted) {
  std::string out;
  if (sorted.empty()) return "no results\n";
  std::set<std::string> names, hashes, files, commits;
  for (const SeedResult& r : sorted) {
    names.insert(r.scenario);
    hashes.insert(r.hash);
    files.insert(r.scenario_file);
    commits.insert(r.commit);
  }
  const std::string& file = sorted.front().scenario_file;
  out += fmt::format("scenario    {} ({})\n", joined(names), joined(files));
  out += fmt::format("hash        {}\n", joined(hashes));
  out += fmt::format("commit      {}\n", joined(commits));
  bool contiguous = sorted.back().seed - sorted.front().seed + 1 == sorted.size();
  out += fmt::format("seeds run   {} ({}..{}{})\n", sorted.size(), sorted.front().seed, sorted.back().seed,
                     contiguous ? "" : ", with gaps");
  uint64_t by_code[4] = {0, 0, 0, 0};
  uint64_t other = 0;
  for (const SeedResult& r : sorted) {
    if (r.exit_code >= 0 && r.exit_code <= 3) {
      ++by_code[r.exit_code];
    } else {
      ++other;
    }
  }
  out += fmt::format("exit codes  0 held: {}   1 failed: {}   2 bad input: {}   3 invariant broken: {}", by_code[0],
                     by_code[1], by_code[2], by_code[3]);
  if (other > 0) out += fmt::format("   other: {}", other);
  out += "\n";

  // Expectations in the order the scenario lists them (the first seed's order).
  std::vector<std::string> texts;
  std::map<std::string, std::pair<uint64_t, uint64_t>> counts;  // text -> (failed, error)
  for (const SeedResult& r : sorted) {
    for (const SeedResult::Outcome& o : r.expectations) {
      if (!counts.contains(o.text)) texts.push_back(o.text);
      auto& c = counts[o.text];
      c.first += o.result == "failed";
      c.second += o.result == "error";
    }
  }
  if (!texts.empty()) {
    size_t width = 11;
    for (const std::string& t : texts) width = std::max(width, t.size());
    out += fmt::format("\n  {:<{}}  {:>12}  {:>12}\n", "expectation", width, "seeds failed", "errors");
    for (const std::string& t : texts) {
      out += fmt::format("  {:<{}}  {:>12}  {:>12}\n", t, width, fmt::format("{}/{}", counts[t].first, sorted.size()),
                         counts[t].second);
    }
  }

  out += fmt::format("\n  {:<17}{:>10}{:>10}{:>10}{:>10}{:>12}{:>8}\n", "", "min", "p50", "p90", "max", "seeds > 0",
                     "of");
  out += distribution_row<int64_t>("lost", sorted, [](const SeedResult& r) { return r.lost; }, false);
  out += distribution_row<int64_t>("duplicates", sorted, [](const SeedResult& r) { return r.duplicates; }, false);
  out += distribution_row<double>("max_stall_s", sorted, [](const SeedResult& r) { return r.max_stall_s; }, true);
  // The other checkers: one line naming those that every seed counted zero,
  // a row for each other one that some seed counted (its "of" column says
  // how many: a seed whose run broke an invariant, or a line of an older
  // build, has no count).
  std::string zero;
  for (auto [name, field] : {std::pair{"order_violations", &SeedResult::order_violations},
                             std::pair{"dirty_reads", &SeedResult::dirty_reads},
                             std::pair{"divergent", &SeedResult::divergent},
                             std::pair{"skipped", &SeedResult::skipped}}) {
    const auto counted = std::count_if(sorted.begin(), sorted.end(),
                                       [&](const SeedResult& r) { return (r.*field).has_value(); });
    const bool positive =
        std::any_of(sorted.begin(), sorted.end(), [&](const SeedResult& r) { return (r.*field).value_or(0) > 0; });
    if (counted == static_cast<std::ptrdiff_t>(sorted.size()) && !positive) {
      zero += fmt::format("{}{}", zero.empty() ? "" : ", ", name);
    } else if (counted > 0) {
      out += distribution_row<int64_t>(name, sorted, [field](const SeedResult& r) { return r.*field; }, false);
    }
  }
  if (!zero.empty()) out += fmt::format("  0 in every seed: {}\n", zero);

  // Distinct failures, in the order of their first seed.
  std::vector<std::string> order;
  std::map<std::string, std::pair<uint64_t, uint64_t>> failures;  // signature -> (first seed, seeds)
  for (const SeedResult& r : sorted) {
    if (r.exit_code == 0) continue;
    std::string sig = failure_signature(r);
    auto [it, fresh] = failures.try_emplace(sig, r.seed, 0);
    if (fresh) order.push_back(sig);
    ++it->second.second;
  }
  if (order.empty()) {
    out += "\nno failures\n";
  } else {
    out += fmt::format("\ndistinct failures: {}\n", order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const auto& [first, n] = failures[order[i]];
      out += fmt::format("  {}. {}\n     {} seed{}, first seed {}: {}\n", i + 1, order[i], n, n == 1 ? "" : "s", first,
                         reproducer(file, first));
    }
  }
  return out;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace

std::string junit_xml(const std::vector<SeedResult>& sorted) {
  uint64_t failures = 0;
  uint64_t errors = 0;
  for (const SeedResult& r : sorted) {
    failures += r.exit_code == 1;
    errors += r.exit_code != 0 && r.exit_code != 1;
  }
  std::string name = sorted.empty() ? "kafkasim" : sorted.front().scenario;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", sorted.size(), failures, errors);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n", xml_escape(name),
                     sorted.size(), failures, errors);
  for (const SeedResult& r : sorted) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"seed {}\">", xml_escape(name), r.seed);
    if (r.exit_code == 0) {
      out += "</testcase>\n";
      continue;
    }
    std::string body;
    std::string message;
    if (r.invariant) {
      message = "invariant broken: " + *r.invariant;
      body += message + "\n";
    }
    for (const SeedResult::Outcome& o : r.expectations) {
      if (o.result == "held") continue;
      std::string line = fmt::format("{} {}", o.result == "failed" ? "FAIL" : "ERROR", o.text);
      if (!o.detail.empty()) line += fmt::format(" ({})", o.detail);
      body += line + "\n";
      if (message.empty()) {
        message = o.text;
      } else if (!r.invariant) {
        message += "; " + o.text;
      }
    }
    body += "reproduce: " + reproducer(r.scenario_file, r.seed) + "\n";
    const char* tag = r.exit_code == 1 ? "failure" : "error";
    out += fmt::format("\n      <{} message=\"{}\" type=\"exit {}\">{}</{}>\n    </testcase>\n", tag,
                       xml_escape(message), r.exit_code, xml_escape(body), tag);
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw BadInput(fmt::format("{} {}: cannot open for writing: {}", what, path, std::strerror(errno)));
  out << text;
  out.flush();
  if (!out) throw BadInput(fmt::format("{} {}: write failed", what, path));
}

}  // namespace cli
