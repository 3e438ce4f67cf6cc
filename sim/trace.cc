#include "sim/trace.h"

#include <ostream>

#include <fmt/format.h>

namespace sim {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

void append_value_json(std::string& out, const TraceField::Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    fmt::format_to(std::back_inserter(out), "{}", *i);
  } else if (const auto* u = std::get_if<uint64_t>(&v)) {
    fmt::format_to(std::back_inserter(out), "{}", *u);
  } else if (const auto* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else {
    append_json_string(out, std::get<std::string_view>(v));
  }
}

void append_value_text(std::string& out, const TraceField::Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    fmt::format_to(std::back_inserter(out), "{}", *i);
  } else if (const auto* u = std::get_if<uint64_t>(&v)) {
    fmt::format_to(std::back_inserter(out), "{}", *u);
  } else if (const auto* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else {
    out += std::get<std::string_view>(v);
  }
}

}  // namespace

const TraceField::Value* TraceRecord::field(std::string_view key) const {
  for (const TraceField& f : fields) {
    if (f.key() == key) return &f.value();
  }
  return nullptr;
}

uint64_t Trace::add_observer(Observer o) {
  const uint64_t handle = next_observer_++;
  observers_.emplace_back(handle, std::move(o));
  return handle;
}

void Trace::remove_observer(uint64_t handle) {
  for (auto it = observers_.begin(); it != observers_.end(); ++it) {
    if (it->first == handle) {
      observers_.erase(it);
      return;
    }
  }
}

void Trace::emit(std::string_view host, std::string_view process, std::string_view kind,
                 std::initializer_list<TraceField> fields) {
  buf_.clear();
  fmt::format_to(std::back_inserter(buf_), "{{\"t_us\":{},\"host\":", now_->us());
  append_json_string(buf_, host);
  buf_ += ",\"proc\":";
  append_json_string(buf_, process);
  buf_ += ",\"kind\":";
  append_json_string(buf_, kind);
  for (const TraceField& f : fields) {
    buf_ += ',';
    append_json_string(buf_, f.key());
    buf_ += ':';
    append_value_json(buf_, f.value());
  }
  buf_ += "}\n";

  for (const char c : buf_) {
    hash_ ^= static_cast<unsigned char>(c);
    hash_ *= 0x100000001b3ULL;
  }
  ++records_;
  if (json_ != nullptr) json_->write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  if (keep_lines_) lines_.emplace_back(buf_.data(), buf_.size() - 1);

  if (text_ != nullptr) {
    std::string line = fmt::format("{:>13}  {:<10}  {:<10}  {}", format_time(*now_), host,
                                   process, kind);
    for (const TraceField& f : fields) {
      line += "  ";
      line += f.key();
      line += '=';
      append_value_text(line, f.value());
    }
    line += '\n';
    text_->write(line.data(), static_cast<std::streamsize>(line.size()));
  }

  if (!observers_.empty()) {
    const TraceRecord record{*now_, host, process, kind, fields};
    for (const auto& [_, observer] : observers_) observer(record);
  }
}

std::optional<size_t> first_difference(const std::vector<std::string>& a,
                                       const std::vector<std::string>& b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return i;
  }
  if (a.size() != b.size()) return n;
  return std::nullopt;
}

}  // namespace sim
