// Strict reading of JSON input (scenario files): every value is read through
// a cursor that knows its file and JSON path, so that any mistake is reported
// as "FILE: at $.hosts[2].processes[0].id: expected an integer from 1 to
// 255, got \"x\"" — and a field nobody read is an error too, with a
// did-you-mean ("unknown field 'zookeper' (did you mean 'zookeeper'?)"), never
// silently ignored.
//
// Usage: read an object's fields with the typed getters, then call finish()
// to reject the fields that were not read.
//
//   ObjectReader host(file_value);                    // throws unless an object
//   std::string name = host.string("name");           // required
//   int64_t port = host.integer("port", 9092, 1, 65535);  // optional, in range
//   host.finish();                                    // unknown fields → InputError
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace scenario {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string path, std::string message);
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }  // "$", "$.hosts[2].name"; "" for a file-level error
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string path_;
  std::string message_;
};

// A JSON value with where it came from.
class Value {
 public:
  Value(const std::string& file, const nlohmann::json& json, std::string path);
  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return *json_; }

  // An error at this value: "FILE: at PATH: message".
  [[noreturn]] void fail(const std::string& message) const;

  // Typed reads of this value (they throw InputError naming what was expected).
  int64_t as_integer(int64_t min, int64_t max) const;
  // Any integer from 0 to 2^64 - 1 (a seed).
  uint64_t as_uint64() const;
  double as_number(double min, double max) const;  // integers too
  std::string as_string() const;
  // One of `allowed`; the error lists them.
  std::string as_choice(const std::vector<std::string>& allowed) const;
  bool as_boolean() const;
  std::vector<Value> as_array(size_t min_size = 0) const;
  // A value for a Java-properties key: a string, a number or a boolean,
  // written the way a properties file would hold it ("3", "true", "0.5").
  std::string as_property_value() const;

  // " (a string)" style description of the JSON kind, for messages.
  static std::string describe(const nlohmann::json& j);

 private:
  const std::string* file_;
  const nlohmann::json* json_;
  std::string path_;
};

class ObjectReader {
 public:
  // Throws unless `v` is an object.
  explicit ObjectReader(const Value& v);

  const Value& value() const { return value_; }
  bool has(std::string_view key) const;

  // The field, marked as read; nullopt when absent.
  std::optional<Value> optional(std::string_view key);
  // The field, marked as read; an error naming it when absent.
  Value required(std::string_view key);

  // Typed fields: required when no default is given.
  int64_t integer(std::string_view key, int64_t min, int64_t max);
  int64_t integer(std::string_view key, int64_t fallback, int64_t min, int64_t max);
  double number(std::string_view key, double min, double max);
  double number(std::string_view key, double fallback, double min, double max);
  std::string string(std::string_view key);
  std::string string(std::string_view key, std::string fallback);
  std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  std::string choice(std::string_view key, std::string fallback, const std::vector<std::string>& allowed);
  bool boolean(std::string_view key, bool fallback);
  // A {"key": value} object of properties, values as as_property_value.
  std::map<std::string, std::string> properties(std::string_view key);

  // An error about a field that may have been left out (its default then in
  // effect): at the field when it is there, else at this object, naming it.
  // The field counts as read.
  [[noreturn]] void fail_at(std::string_view key, const std::string& message);

  // Fields that were not read are errors, with a did-you-mean among the
  // fields that were (or could have been) read. `also_known` lists fields a
  // caller accepts but did not read this time (alternatives, say).
  void finish(const std::vector<std::string>& also_known = {}) const;

 private:
  Value value_;
  std::set<std::string, std::less<>> read_;
};

// The JSON path of `key` under `parent`: .name for plain names, ["odd name"]
// otherwise ("$.clients.producer[\"enable.idempotence\"]").
std::string child_path(const std::string& parent, std::string_view key);

// Parses a file's text; malformed JSON is an InputError with line and column.
nlohmann::json parse_json(const std::string& file, std::string_view text);
// A file's bytes; nullopt when it cannot be read, is a directory or the name is empty.
std::optional<std::string> read_file_text(const std::string& path);
// Why read_file_text gave nullopt for `path`: "no such file", "it is a
// directory", "an empty file name" or the system's reason.
std::string why_unreadable(const std::string& path);
// A file's bytes; a file that cannot be read is an InputError saying why.
std::string read_input_file(const std::string& file);
// Reads and parses a file; a file that cannot be read is an InputError.
nlohmann::json read_json_file(const std::string& file);

}  // namespace scenario
