#include "tools/kafkasim/args.h"

#include <charconv>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

namespace cli {

Args::Args(std::string command, const std::vector<std::string>& args, std::vector<OptionSpec> spec)
    : command_(std::move(command)), spec_(std::move(spec)) {
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a == "-" || a.empty() || a[0] != '-') {
      positionals_.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string name;
    std::optional<std::string> inline_value;
    if (a == "-h") {
      name = "help";
    } else if (a.rfind("--", 0) == 0) {
      name = a.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
    } else {
      fail(fmt::format("unknown option '{}'", a));
    }
    const OptionSpec* s = find(name);
    if (s == nullptr) fail(fmt::format("unknown option '--{}'", name));
    std::vector<std::string>& slot = seen_[name];
    if (!slot.empty() && !s->repeatable) fail(fmt::format("option '--{}' given twice", name));
    if (!s->takes_value) {
      if (inline_value) fail(fmt::format("option '--{}' takes no value", name));
      slot.emplace_back();
      continue;
    }
    if (inline_value) {
      slot.push_back(*inline_value);
    } else {
      if (i + 1 >= args.size()) fail(fmt::format("option '--{}' needs a value", name));
      slot.push_back(args[++i]);
    }
  }
}

const OptionSpec* Args::find(const std::string& name) const {
  for (const OptionSpec& s : spec_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool Args::flag(const std::string& name) const { return seen_.contains(name); }

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = seen_.find(name);
  if (it == seen_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = seen_.find(name);
  if (it == seen_.end()) return {};
  return it->second;
}

void Args::expect_positionals(size_t min, size_t max, const std::string& what) const {
  if (positionals_.size() < min) fail(fmt::format("missing {}", what));
  if (positionals_.size() > max) fail(fmt::format("unexpected argument '{}'", positionals_[max]));
}

namespace {

std::optional<uint64_t> to_uint(std::string_view text) {
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

uint64_t parse_uint(const std::string& command, const std::string& option, const std::string& text,
                    uint64_t min, uint64_t max) {
  std::optional<uint64_t> v = to_uint(text);
  if (!v) throw UsageError(command, fmt::format("{}: expected a whole number, got '{}'", option, text));
  if (*v < min || *v > max) {
    throw UsageError(command, fmt::format("{}: {} is out of range ({}..{})", option, text, min, max));
  }
  return *v;
}

SeedRange parse_seeds(const std::string& command, const std::string& text) {
  size_t dots = text.find("..");
  std::optional<uint64_t> a = to_uint(dots == std::string::npos ? text : text.substr(0, dots));
  std::optional<uint64_t> b = dots == std::string::npos ? a : to_uint(text.substr(dots + 2));
  if (!a || !b) throw UsageError(command, fmt::format("--seeds: expected A..B (e.g. 1..1000), got '{}'", text));
  if (*a > *b) {
    throw UsageError(command, fmt::format("--seeds: {}: the first seed is above the last", text));
  }
  if (*a == 0 && *b == std::numeric_limits<uint64_t>::max()) {
    throw UsageError(command, fmt::format("--seeds: {}: too many seeds", text));
  }
  return SeedRange{.first = *a, .last = *b};
}

Shard parse_shard(const std::string& command, const std::string& text) {
  size_t slash = text.find('/');
  std::optional<uint64_t> i = slash == std::string::npos ? std::nullopt : to_uint(text.substr(0, slash));
  std::optional<uint64_t> n = slash == std::string::npos ? std::nullopt : to_uint(text.substr(slash + 1));
  if (!i || !n) throw UsageError(command, fmt::format("--shard: expected I/N (e.g. 2/4), got '{}'", text));
  if (*n == 0 || *i == 0 || *i > *n) {
    throw UsageError(command, fmt::format("--shard: {}: need 1 <= I <= N", text));
  }
  return Shard{.index = *i, .count = *n};
}

int64_t parse_seconds_us(const std::string& command, const std::string& option, const std::string& text) {
  size_t dot = text.find('.');
  std::string whole = text.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  std::optional<uint64_t> w = to_uint(whole);
  bool frac_ok = frac.size() <= 6 && (dot == std::string::npos || !frac.empty());
  for (char c : frac) frac_ok = frac_ok && c >= '0' && c <= '9';
  constexpr uint64_t kMaxSeconds = 366ULL * 24 * 3600 * 100;  // far above any scenario
  if (!w || !frac_ok || *w > kMaxSeconds) {
    throw UsageError(command,
                     fmt::format("{}: expected seconds (e.g. 12 or 12.5, at most 6 decimals), got '{}'", option, text));
  }
  int64_t us = static_cast<int64_t>(*w) * 1'000'000;
  int64_t scale = 100'000;
  for (char c : frac) {
    us += (c - '0') * scale;
    scale /= 10;
  }
  return us;
}

std::string parse_choice(const std::string& command, const std::string& option, const std::string& text,
                         const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a == text) return text;
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError(command, fmt::format("{}: expected one of {}, got '{}'", option, list, text));
}

std::string shell_quote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.' || c == '/' || c == ',' || c == ':' || c == '=' || c == '+' || c == '@';
    plain = plain && ok;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

void check_outputs(const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& inputs) {
  namespace fs = std::filesystem;
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return fs::weakly_canonical(fs::absolute(a, ec), ec).lexically_normal() ==
           fs::weakly_canonical(fs::absolute(b, ec), ec).lexically_normal();
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    std::error_code ec;
    if (path.empty()) throw UsageError(command, fmt::format("{}: expected a file name, got ''", option));
    if (fs::is_directory(path, ec)) throw UsageError(command, fmt::format("{} {}: is a directory", option, path));
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      throw UsageError(command, fmt::format("{} {}: the directory {} does not exist", option, path, parent.string()));
    }
    for (const auto& [what, input] : inputs) {
      if (same(path, input)) {
        throw UsageError(command, fmt::format("{} {}: that is {}; writing it would destroy it", option, path, what));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (same(path, outputs[j].second)) {
        throw UsageError(command, fmt::format("{} and {} name the same file ({})", outputs[j].first, option, path));
      }
    }
  }
}

}  // namespace cli
