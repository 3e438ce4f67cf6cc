// Java properties, as ZooKeeper reads zoo.cfg and Kafka reads
// server.properties (java.util.Properties.load), and the typed look-ups the
// configuration parsers share.
//
// The same Properties value also carries configuration that comes inline from
// a scenario file (from_map), so that every error names where the value came
// from: a file name, or a JSON path such as "scenario.json:$.zookeeper.config".
//
// Two departures from java.util.Properties, both on purpose (DESIGN.md, "Bad
// input": never a silently ignored key):
//   - a key given twice is an error, where Java keeps the last value;
//   - trailing whitespace of a value is dropped, where Java keeps it (ZooKeeper
//     and Kafka trim most values themselves; an escaped "\ " is kept).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace model {

// A malformed, out-of-range, unknown or inconsistent configuration value.
// what() reads "zoo.cfg: key 'tickTime': expected a positive integer
// (milliseconds, at most 600000), got 'abc'", or "zoo.cfg: <message>" when no
// single key is to blame.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string source, std::string key, std::string message);
  const std::string& source() const { return source_; }
  const std::string& key() const { return key_; }  // may be empty
  const std::string& message() const { return message_; }

 private:
  std::string source_;
  std::string key_;
  std::string message_;
};

struct Properties {
  std::string source;  // a file name or a description of where the values came from
  std::map<std::string, std::string> values;
  std::map<std::string, int> lines;  // line of each key; 0 when not from a file

  bool has(const std::string& key) const { return values.count(key) != 0; }
  std::optional<std::string> get(const std::string& key) const;

  // The value of `key` as an integer in [min, max], or `default_value` when
  // the key is absent. `unit` ("milliseconds", "ticks") goes into the message.
  int64_t get_int(const std::string& key, int64_t default_value,
                  int64_t min = std::numeric_limits<int64_t>::min(),
                  int64_t max = std::numeric_limits<int64_t>::max(),
                  std::string_view unit = {}) const;
  // true/false or yes/no, in any case (Kafka writes true/false; ZooKeeper's
  // forceSync is yes/no).
  bool get_bool(const std::string& key, bool default_value) const;
  std::string get_string(const std::string& key, const std::string& default_value) const;

  // Throws for the first key (in sorted order) that is neither in
  // `known_keys` nor accepted by `also_known` (for patterns such as server.N).
  // The message suggests the nearest known key when one is within two edits.
  void reject_unknown(const std::vector<std::string>& known_keys,
                      const std::function<bool(const std::string&)>& also_known = {}) const;

  // An error about `key`, with this source.
  ConfigError error(const std::string& key, const std::string& message) const;
};

// Parses the java.util.Properties text format: key=value, key:value or
// key value; # and ! comment lines; a line ending in an odd number of
// backslashes continues on the next; \t \n \r \f \uXXXX escapes, and a
// backslash before any other character stands for that character. Throws
// ConfigError for a key given twice, a key-less value or a malformed \u escape.
Properties parse_properties(std::string_view text, std::string source);

// Properties from already-split pairs (an inline JSON object); no line numbers.
Properties from_map(std::map<std::string, std::string> values, std::string source);

// ASCII lower case, and a view without leading and trailing white space:
// the small string chores every configuration parser shares.
std::string lower(std::string_view s);
std::string_view trim(std::string_view s);

// `text` for a message: each control byte (below 0x20, and 0x7f) as \xNN, so
// that a NUL does not end the message where it is printed as a C string, and
// a newline does not break its one line.
std::string printable(std::string_view text);

// Optimal-string-alignment edit distance (a transposition counts as one edit).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest `word` within two edits (the first on a tie), or
// nullopt: what a "did you mean" offers.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace model
