#include "model/scenario/json_input.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>
#include <sstream>

#include <fmt/format.h>

#include "model/properties.h"

namespace scenario {

namespace {

std::string compose(const std::string& file, const std::string& path, const std::string& message) {
  if (path.empty()) return fmt::format("{}: {}", file, message);
  return fmt::format("{}: at {}: {}", file, path, message);
}


std::string range_text(int64_t min, int64_t max) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  if (min == lo && max == hi) return "an integer";
  if (max == hi) return fmt::format("an integer of at least {}", min);
  if (min == lo) return fmt::format("an integer of at most {}", max);
  return fmt::format("an integer from {} to {}", min, max);
}

std::string got(const nlohmann::json& j) {
  std::string shown = j.dump();
  if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
  return fmt::format("got {} ({})", shown, Value::describe(j));
}

}  // namespace

InputError::InputError(std::string file, std::string path, std::string message)
    : std::runtime_error(compose(file, path, message)),
      file_(std::move(file)),
      path_(std::move(path)),
      message_(std::move(message)) {}

// --- Value -----------------------------------------------------------------------

Value::Value(const std::string& file, const nlohmann::json& json, std::string path)
    : file_(&file), json_(&json), path_(std::move(path)) {}

void Value::fail(const std::string& message) const { throw InputError(*file_, path_, message); }

std::string Value::describe(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::object: return "an object";
    default: return "a value";
  }
}

int64_t Value::as_integer(int64_t min, int64_t max) const {
  const nlohmann::json& j = *json_;
  std::optional<int64_t> v;
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) v = static_cast<int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else if (j.is_number_float()) {
    // 3.0 is an integer written oddly; 3.5 is not one.
    const double d = j.get<double>();
    if (std::trunc(d) == d && d >= -9.2e18 && d <= 9.2e18) v = static_cast<int64_t>(d);
  }
  if (!v || *v < min || *v > max) fail(fmt::format("expected {}, {}", range_text(min, max), got(j)));
  return *v;
}

uint64_t Value::as_uint64() const {
  const nlohmann::json& j = *json_;
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  // 3.0 or 1e17 is an integer written oddly (a double that is a whole number
  // is exact, but above 2^53 it may not be the integer that was written).
  if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::trunc(d) == d && d >= 0 && d < 18446744073709551616.0) return static_cast<uint64_t>(d);
  }
  fail(fmt::format("expected an integer from 0 to {}, {}", std::numeric_limits<uint64_t>::max(), got(j)));
}

double Value::as_number(double min, double max) const {
  const nlohmann::json& j = *json_;
  if (!j.is_number()) fail(fmt::format("expected a number, {}", got(j)));
  const double d = j.get<double>();
  if (!(d >= min && d <= max)) fail(fmt::format("expected a number from {} to {}, {}", min, max, got(j)));
  return d;
}

std::string Value::as_string() const {
  if (!json_->is_string()) fail(fmt::format("expected a string, {}", got(*json_)));
  return json_->get<std::string>();
}

std::string Value::as_choice(const std::vector<std::string>& allowed) const {
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  if (!json_->is_string()) fail(fmt::format("expected one of {}, {}", list, got(*json_)));
  const std::string s = json_->get<std::string>();
  for (const std::string& a : allowed) {
    if (a == s) return s;
  }
  const std::optional<std::string> near = model::nearest(s, allowed);
  fail(fmt::format("expected one of {}, got \"{}\"{}", list, s,
                   near ? fmt::format(" (did you mean \"{}\"?)", *near) : ""));
}

bool Value::as_boolean() const {
  if (!json_->is_boolean()) fail(fmt::format("expected true or false, {}", got(*json_)));
  return json_->get<bool>();
}

std::vector<Value> Value::as_array(size_t min_size) const {
  if (!json_->is_array()) fail(fmt::format("expected an array, {}", got(*json_)));
  if (json_->size() < min_size) {
    fail(fmt::format("expected an array of at least {} element{}, got {}", min_size,
                     min_size == 1 ? "" : "s", json_->size()));
  }
  std::vector<Value> out;
  out.reserve(json_->size());
  for (size_t i = 0; i < json_->size(); ++i) {
    out.emplace_back(*file_, (*json_)[i], fmt::format("{}[{}]", path_, i));
  }
  return out;
}

std::string Value::as_property_value() const {
  const nlohmann::json& j = *json_;
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_integer() || j.is_number_unsigned()) return j.dump();
  if (j.is_number_float()) {
    const double d = j.get<double>();
    if (std::trunc(d) == d && std::fabs(d) < 1e15) return fmt::format("{}", static_cast<int64_t>(d));
    return fmt::format("{}", d);
  }
  fail(fmt::format("expected a property value (a string, a number or a boolean), {}", got(j)));
}

// --- ObjectReader ------------------------------------------------------------------

ObjectReader::ObjectReader(const Value& v) : value_(v) {
  if (!v.json().is_object()) v.fail(fmt::format("expected an object, {}", got(v.json())));
}

bool ObjectReader::has(std::string_view key) const {
  return value_.json().find(std::string(key)) != value_.json().end();
}

std::optional<Value> ObjectReader::optional(std::string_view key) {
  read_.emplace(key);
  auto it = value_.json().find(std::string(key));
  if (it == value_.json().end()) return std::nullopt;
  return Value(value_.file(), *it, child_path(value_.path(), key));
}

Value ObjectReader::required(std::string_view key) {
  std::optional<Value> v = optional(key);
  if (!v) {
    // A field not read yet that is one or two edits away is most likely it,
    // misspelt ("producer" for "producers"): say so, as finish() would.
    std::vector<std::string> unread;
    for (auto it = value_.json().begin(); it != value_.json().end(); ++it) {
      if (read_.count(it.key()) == 0) unread.push_back(it.key());
    }
    const std::optional<std::string> near = model::nearest(key, unread);
    value_.fail(fmt::format("missing the required field \"{}\"{}", key,
                            near ? fmt::format(" (is \"{}\" it, misspelt?)", *near) : ""));
  }
  return *v;
}

void ObjectReader::fail_at(std::string_view key, const std::string& message) {
  if (std::optional<Value> v = optional(key)) v->fail(message);
  value_.fail(fmt::format("\"{}\" (not given, so at its default): {}", key, message));
}

int64_t ObjectReader::integer(std::string_view key, int64_t min, int64_t max) {
  return required(key).as_integer(min, max);
}
int64_t ObjectReader::integer(std::string_view key, int64_t fallback, int64_t min, int64_t max) {
  std::optional<Value> v = optional(key);
  return v ? v->as_integer(min, max) : fallback;
}
double ObjectReader::number(std::string_view key, double min, double max) {
  return required(key).as_number(min, max);
}
double ObjectReader::number(std::string_view key, double fallback, double min, double max) {
  std::optional<Value> v = optional(key);
  return v ? v->as_number(min, max) : fallback;
}
std::string ObjectReader::string(std::string_view key) { return required(key).as_string(); }
std::string ObjectReader::string(std::string_view key, std::string fallback) {
  std::optional<Value> v = optional(key);
  return v ? v->as_string() : fallback;
}
std::string ObjectReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  return required(key).as_choice(allowed);
}
std::string ObjectReader::choice(std::string_view key, std::string fallback,
                                 const std::vector<std::string>& allowed) {
  std::optional<Value> v = optional(key);
  return v ? v->as_choice(allowed) : fallback;
}
bool ObjectReader::boolean(std::string_view key, bool fallback) {
  std::optional<Value> v = optional(key);
  return v ? v->as_boolean() : fallback;
}

std::map<std::string, std::string> ObjectReader::properties(std::string_view key) {
  std::map<std::string, std::string> out;
  std::optional<Value> v = optional(key);
  if (!v) return out;
  if (!v->json().is_object()) v->fail(fmt::format("expected an object of properties, {}", got(v->json())));
  for (auto it = v->json().begin(); it != v->json().end(); ++it) {
    const Value item(v->file(), it.value(), child_path(v->path(), it.key()));
    // A properties file cannot have an empty key either ("=x" is a line of
    // its own key "" to Java, never a setting).
    if (it.key().empty()) item.fail("a property needs a name");
    out[it.key()] = item.as_property_value();
  }
  return out;
}

void ObjectReader::finish(const std::vector<std::string>& also_known) const {
  std::vector<std::string> known(read_.begin(), read_.end());
  known.insert(known.end(), also_known.begin(), also_known.end());
  for (auto it = value_.json().begin(); it != value_.json().end(); ++it) {
    const std::string& key = it.key();
    bool ok = read_.count(key) != 0;
    for (const std::string& k : also_known) ok = ok || k == key;
    if (ok) continue;
    const std::optional<std::string> near = model::nearest(key, known);
    const std::string hint = near ? fmt::format(" (did you mean \"{}\"?)", *near) : "";
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InputError(value_.file(), child_path(value_.path(), key),
                     fmt::format("unknown field \"{}\"{}; known fields here: {}", key, hint, list));
  }
}

// --- files -----------------------------------------------------------------------------

std::string child_path(const std::string& parent, std::string_view key) {
  bool plain = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
  for (const char c : key) {
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_');
  }
  if (plain) return fmt::format("{}.{}", parent, key);
  return fmt::format("{}[{}]", parent, nlohmann::json(std::string(key)).dump());
}

namespace {

// Line and column (1-based) of the byte before `byte` (nlohmann's positions
// are 1-based, at or just after the offending character).
std::pair<size_t, size_t> line_and_column(std::string_view text, size_t byte) {
  const size_t at = byte == 0 ? 0 : std::min<size_t>(byte - 1, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// A SAX pass over the text before it is parsed for real: it finds what the
// DOM parser would hide or turn into a bare exception — a field named twice
// in one object (nlohmann keeps the last silently; we would read a value the
// author did not mean), and the position of any error, including a number
// too large for a double ("1e999"), which the DOM parser reports without one.
class Checker : public nlohmann::json_sax<nlohmann::json> {
 public:
  struct Found {
    std::string path;     // for a duplicate field
    size_t position = 0;  // for a parse error: nlohmann's byte position
    std::string message;
  };
  std::optional<Found> found;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    if (too_deep()) return false;
    frames_.push_back(Frame{true, path(), {}, {}, 0});
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      found = Found{f.path, 0, fmt::format("the field \"{}\" appears twice", k)};
      return false;
    }
    f.key = k;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    value();
    if (too_deep()) return false;
    frames_.push_back(Frame{false, path(), {}, {}, 0});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at
    // line 1, column 5: syntax error while parsing value - invalid literal;
    // last read: 'tru,'", or "[json.exception.out_of_range.406] number
    // overflow parsing '1e999'".
    std::string why = e.what();
    if (const size_t syntax = why.find("syntax error"); syntax != std::string::npos) {
      why = why.substr(syntax);
    } else if (const size_t close = why.find("] "); close != std::string::npos) {
      why = why.substr(close + 2);
    }
    found = Found{"", position, why};
    return false;
  }

 private:
  struct Frame {
    bool object;
    std::string path;
    std::set<std::string> keys;  // the fields seen so far, in an object
    std::string key;             // the field being read, in an object
    size_t index;                // the next element, in an array
  };
  // The path of the value about to be read.
  std::string path() const {
    if (frames_.empty()) return "$";
    const Frame& f = frames_.back();
    return f.object ? child_path(f.path, f.key) : fmt::format("{}[{}]", f.path, f.index - 1);
  }
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  // Far beyond any scenario, and short of what the recursive code that reads
  // and prints JSON values (ours and nlohmann's dump) can take on a stack.
  static constexpr size_t kMaxDepth = 512;
  bool too_deep() {
    if (frames_.size() < kMaxDepth) return false;
    found = Found{"$", 0, fmt::format("the JSON nests more than {} levels deep", kMaxDepth)};
    return true;
  }
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json parse_json(const std::string& file, std::string_view text) {
  Checker checker;
  nlohmann::json::sax_parse(text.begin(), text.end(), &checker);
  if (checker.found && checker.found->message.empty()) checker.found->message = "malformed JSON";
  if (checker.found) {
    if (!checker.found->path.empty()) throw InputError(file, checker.found->path, checker.found->message);
    const auto [line, column] = line_and_column(text, checker.found->position);
    throw InputError(file, "",
                     fmt::format("malformed JSON at line {}, column {}: {}", line, column, checker.found->message));
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // The SAX pass above reads the same grammar: anything left is ours.
    throw InputError(file, "", fmt::format("malformed JSON: {}", e.what()));
  }
}

std::optional<std::string> read_file_text(const std::string& path) {
  // An ifstream opens a directory without complaint and reads nothing.
  std::error_code ec;
  if (path.empty() || std::filesystem::is_directory(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

std::string why_unreadable(const std::string& path) {
  if (path.empty()) return "an empty file name";
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    return ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "no such file";
  }
  if (std::filesystem::is_directory(st)) return "it is a directory";
  std::ifstream in(path, std::ios::binary);
  return in ? "a read error" : std::strerror(errno);
}

std::string read_input_file(const std::string& file) {
  std::optional<std::string> text = read_file_text(file);
  if (!text) throw InputError(file.empty() ? "\"\"" : file, "", "cannot read the file: " + why_unreadable(file));
  return std::move(*text);
}

nlohmann::json read_json_file(const std::string& file) {
  return parse_json(file, read_input_file(file));
}

}  // namespace scenario
