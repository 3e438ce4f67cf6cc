#include "model/properties.h"

#include <cctype>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace model {
namespace {

std::string format_what(const std::string& source, const std::string& key,
                        const std::string& message) {
  if (key.empty()) return fmt::format("{}: {}", source, message);
  return fmt::format("{}: key '{}': {}", source, key, message);
}

// java.util.Properties' whitespace: space, tab and form feed.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Reads the four hex digits of a \uXXXX escape starting at raw[i].
std::optional<uint32_t> read_hex4(std::string_view raw, size_t i) {
  if (i + 4 > raw.size()) return std::nullopt;
  uint32_t v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const char c = raw[k];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

struct Unescaped {
  std::string text;
  bool ok = true;
};

// Resolves escapes. With `trim_trailing`, drops trailing whitespace that was
// not itself escaped.
Unescaped unescape(std::string_view raw, bool trim_trailing) {
  Unescaped out;
  size_t keep = 0;  // length of `text` up to the last character to keep
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\') {
      out.text.push_back(c);
      if (!is_blank(c)) keep = out.text.size();
      continue;
    }
    if (i + 1 == raw.size()) break;  // a lone backslash at the very end: dropped, as in Java
    const char e = raw[++i];
    switch (e) {
      case 't': out.text.push_back('\t'); break;
      case 'n': out.text.push_back('\n'); break;
      case 'r': out.text.push_back('\r'); break;
      case 'f': out.text.push_back('\f'); break;
      case 'u': {
        std::optional<uint32_t> cp = read_hex4(raw, i + 1);
        if (!cp) {
          out.ok = false;
          return out;
        }
        i += 4;
        // A UTF-16 surrogate pair written as two escapes is one character.
        if (*cp >= 0xd800 && *cp <= 0xdbff) {
          std::optional<uint32_t> low;
          if (i + 2 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u') {
            low = read_hex4(raw, i + 3);
          }
          if (!low || *low < 0xdc00 || *low > 0xdfff) {
            out.ok = false;
            return out;
          }
          i += 6;
          cp = 0x10000 + ((*cp - 0xd800) << 10) + (*low - 0xdc00);
        } else if (*cp >= 0xdc00 && *cp <= 0xdfff) {
          out.ok = false;
          return out;
        }
        append_utf8(out.text, *cp);
        break;
      }
      default: out.text.push_back(e); break;  // \\ \= \: \# \! and "\ " stand for themselves
    }
    keep = out.text.size();
  }
  if (trim_trailing) out.text.resize(keep);
  return out;
}

// Splits a logical line (leading whitespace already gone) into its raw key
// and raw value, as java.util.Properties.load does.
std::pair<std::string_view, std::string_view> split_line(std::string_view line) {
  size_t key_end = 0;
  bool has_separator = false;
  size_t value_start = line.size();
  while (key_end < line.size()) {
    const char c = line[key_end];
    if (c == '\\') {
      key_end += 2;
      continue;
    }
    if (c == '=' || c == ':') {
      has_separator = true;
      value_start = key_end + 1;
      break;
    }
    if (is_blank(c)) {
      value_start = key_end + 1;
      break;
    }
    ++key_end;
  }
  key_end = std::min(key_end, line.size());
  while (value_start < line.size()) {
    const char c = line[value_start];
    if (is_blank(c)) {
      ++value_start;
    } else if (!has_separator && (c == '=' || c == ':')) {
      has_separator = true;
      ++value_start;
    } else {
      break;
    }
  }
  value_start = std::min(value_start, line.size());
  return {line.substr(0, key_end), line.substr(value_start)};
}

size_t trailing_backslashes(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[s.size() - 1 - n] == '\\') ++n;
  return n;
}

std::optional<int64_t> parse_int(std::string_view s) {
  // Java's Integer.parseInt accepts one leading sign, '+' or '-'.
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "a positive integer (milliseconds, at most 600000)".
std::string describe_int(int64_t min, int64_t max, std::string_view unit) {
  constexpr int64_t kNoMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();
  const char* kind = min == 1   ? "a positive integer"
                     : min == 0 ? "a non-negative integer"
                                : "an integer";
  std::vector<std::string> parts;
  if (!unit.empty()) parts.emplace_back(unit);
  if (min == 0 || min == 1 || min == kNoMin) {
    if (max != kNoMax) parts.push_back(fmt::format("at most {}", max));
  } else if (max != kNoMax) {
    parts.push_back(fmt::format("from {} to {}", min, max));
  } else {
    parts.push_back(fmt::format("at least {}", min));
  }
  if (parts.empty()) return kind;
  return fmt::format("{} ({})", kind, fmt::join(parts, ", "));
}

}  // namespace

ConfigError::ConfigError(std::string source, std::string key, std::string message)
    : std::runtime_error(format_what(source, key, message)),
      source_(std::move(source)),
      key_(std::move(key)),
      message_(std::move(message)) {}

ConfigError Properties::error(const std::string& key, const std::string& message) const {
  return ConfigError(source, key, message);
}

std::optional<std::string> Properties::get(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

int64_t Properties::get_int(const std::string& key, int64_t default_value, int64_t min, int64_t max,
                            std::string_view unit) const {
  auto it = values.find(key);
  if (it == values.end()) return default_value;
  const std::optional<int64_t> v = parse_int(it->second);
  if (!v || *v < min || *v > max) {
    throw error(key,
                fmt::format("expected {}, got '{}'", describe_int(min, max, unit), it->second));
  }
  return *v;
}

bool Properties::get_bool(const std::string& key, bool default_value) const {
  auto it = values.find(key);
  if (it == values.end()) return default_value;
  const std::string v = lower(it->second);
  if (v == "true" || v == "yes") return true;
  if (v == "false" || v == "no") return false;
  throw error(key, fmt::format("expected true/false or yes/no, got '{}'", it->second));
}

std::string Properties::get_string(const std::string& key, const std::string& default_value) const {
  auto it = values.find(key);
  return it == values.end() ? default_value : it->second;
}

void Properties::reject_unknown(const std::vector<std::string>& known_keys,
                                const std::function<bool(const std::string&)>& also_known) const {
  for (const auto& [key, value] : values) {
    if (std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end()) continue;
    if (also_known && also_known(key)) continue;
    // The nearest known key within two edits; on a tie, the first listed.
    const std::string* best = nullptr;
    size_t best_distance = 3;
    for (const std::string& candidate : known_keys) {
      const size_t d = edit_distance(key, candidate);
      if (d < best_distance && d < key.size()) {
        best = &candidate;
        best_distance = d;
      }
    }
    if (best != nullptr) {
      throw error(key, fmt::format("unknown key; did you mean '{}'?", *best));
    }
    throw error(key, "unknown key");
  }
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = 3;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(c, word);
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  return best == nullptr ? std::nullopt : std::optional<std::string>(*best);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the optimal-string-alignment table.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

Properties parse_properties(std::string_view text, std::string source) {
  Properties props;
  props.source = std::move(source);

  // Natural lines, ended by \n, \r\n or \r.
  std::vector<std::string_view> natural;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      natural.push_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) natural.push_back(text.substr(start));

  for (size_t n = 0; n < natural.size(); ++n) {
    const int line_no = static_cast<int>(n) + 1;
    // A control character (a NUL, say) means this is not a text file: a
    // binary given by mistake. Java would read it; the message would be
    // unprintable.
    for (const char c : natural[n]) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\t' && c != '\f') {
        throw ConfigError(props.source, "",
                          fmt::format("line {}: control character 0x{:02x}: not a properties file", line_no, u));
      }
    }
    std::string_view first = natural[n];
    while (!first.empty() && is_blank(first.front())) first.remove_prefix(1);
    if (first.empty() || first.front() == '#' || first.front() == '!') continue;

    // Join continuation lines: an odd number of trailing backslashes means
    // the last one escapes the line break. The next line's leading
    // whitespace is skipped.
    std::string logical;
    std::string_view part = first;
    while (true) {
      if (trailing_backslashes(part) % 2 == 1) {
        logical.append(part.substr(0, part.size() - 1));
        if (n + 1 >= natural.size()) break;
        part = natural[++n];
        while (!part.empty() && is_blank(part.front())) part.remove_prefix(1);
        continue;
      }
      logical.append(part);
      break;
    }

    const auto [raw_key, raw_value] = split_line(logical);
    const Unescaped key = unescape(raw_key, false);
    if (!key.ok) {
      throw ConfigError(props.source, "",
                        fmt::format("line {}: malformed \\uXXXX escape in a key", line_no));
    }
    if (key.text.empty()) {
      throw ConfigError(props.source, "", fmt::format("line {}: a value without a key", line_no));
    }
    const Unescaped value = unescape(raw_value, true);
    if (!value.ok) throw props.error(key.text, "malformed \\uXXXX escape in the value");
    if (auto it = props.lines.find(key.text); it != props.lines.end()) {
      throw props.error(key.text, fmt::format("duplicate key, first at line {}", it->second));
    }
    props.values.emplace(key.text, value.text);
    props.lines.emplace(key.text, line_no);
  }
  return props;
}

Properties from_map(std::map<std::string, std::string> values, std::string source) {
  Properties props;
  props.source = std::move(source);
  props.values = std::move(values);
  for (const auto& [key, value] : props.values) props.lines.emplace(key, 0);
  return props;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace model
