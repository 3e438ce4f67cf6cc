// The structured trace of a run.
//
// Components put every state change they want on record here: the virtual
// time, the host, the process, a kind ("elected", "power_off") and a few
// fields. Each record is rendered once as a canonical JSON line; the line's
// bytes are folded into a running 64-bit FNV-1a hash whether or not anyone
// writes the lines out, so the same scenario and seed must end with the same
// hash — that is how a run proves its own determinism.
//
// Two renderings:
//   JSON lines  {"t_us":12204000,"host":"node1","proc":"zk","kind":"elected","epoch":3}
//   text        "   12.204000s  node1       zk          elected  epoch=3"
// The text columns are: virtual time in seconds (right-aligned, 13 wide),
// host (left, 10 wide), process (left, 10 wide), kind, then the fields as
// key=value in the order they were given. A column wider than its slot pushes
// the rest right; two spaces always separate columns.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sim/time.h"

namespace sim {

// One key=value of a trace record. Strings are viewed, not copied: the record
// is rendered before `emit` returns.
class TraceField {
 public:
  using Value = std::variant<int64_t, uint64_t, bool, std::string_view>;
  TraceField(std::string_view key, int v) : key_(key), value_(int64_t{v}) {}
  TraceField(std::string_view key, long v) : key_(key), value_(int64_t{v}) {}
  TraceField(std::string_view key, long long v) : key_(key), value_(int64_t{v}) {}
  TraceField(std::string_view key, unsigned v) : key_(key), value_(uint64_t{v}) {}
  TraceField(std::string_view key, unsigned long v) : key_(key), value_(uint64_t{v}) {}
  TraceField(std::string_view key, unsigned long long v) : key_(key), value_(uint64_t{v}) {}
  TraceField(std::string_view key, bool v) : key_(key), value_(v) {}
  TraceField(std::string_view key, std::string_view v) : key_(key), value_(v) {}
  TraceField(std::string_view key, const char* v) : key_(key), value_(std::string_view(v)) {}
  TraceField(std::string_view key, const std::string& v) : key_(key), value_(std::string_view(v)) {}
  // Durations are recorded in microseconds under the given key.
  TraceField(std::string_view key, Duration d) : key_(key), value_(int64_t{d.us()}) {}

  std::string_view key() const { return key_; }
  const Value& value() const { return value_; }

 private:
  std::string_view key_;
  Value value_;
};

// A record as an observer sees it: views into the emitter's arguments, valid
// only during the call.
struct TraceRecord {
  Time time;
  std::string_view host;
  std::string_view process;
  std::string_view kind;
  std::initializer_list<TraceField> fields;
  // The value of the first field named `key`, or null.
  const TraceField::Value* field(std::string_view key) const;
};

class Trace {
 public:
  // Sees every record as it is emitted (after it is hashed), in the order the
  // observers were added. For recorders that want events the components put
  // on record, across process restarts, without reaching into the
  // components (a checker's recorder, say). An observer must not act
  // on the simulation: it runs inside whichever component emitted.
  using Observer = std::function<void(const TraceRecord&)>;
  // Returns a handle for remove_observer.
  uint64_t add_observer(Observer o);
  void remove_observer(uint64_t handle);

  explicit Trace(const Time* now) : now_(now) {}

  // Where to write rendered records; null turns a rendering off.
  void set_json_sink(std::ostream* out) { json_ = out; }
  void set_text_sink(std::ostream* out) { text_ = out; }
  // Keeps every JSON line in memory, so two runs can be compared line by line.
  void keep_lines(bool keep) { keep_lines_ = keep; }

  void emit(std::string_view host, std::string_view process, std::string_view kind,
            std::initializer_list<TraceField> fields = {});

  uint64_t hash() const { return hash_; }
  uint64_t records() const { return records_; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  const Time* now_;
  std::ostream* json_ = nullptr;
  std::ostream* text_ = nullptr;
  bool keep_lines_ = false;
  std::vector<std::pair<uint64_t, Observer>> observers_;
  uint64_t next_observer_ = 1;
  uint64_t hash_ = 0xcbf29ce484222325ULL;
  uint64_t records_ = 0;
  std::vector<std::string> lines_;
  std::string buf_;
};

// Appends `s` to `out` as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view s);

// The index of the first line where two recorded traces differ (a missing line
// counts as a difference), or nullopt when they are identical.
std::optional<size_t> first_difference(const std::vector<std::string>& a,
                                       const std::vector<std::string>& b);

}  // namespace sim
