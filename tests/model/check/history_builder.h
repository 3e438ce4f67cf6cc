// A fluent builder for hand-written histories, shared by the checker tests:
// one call per op, readable as a timeline, field setters applying to the op
// just begun:
//
//   b.send(1'000, "producer", OpType::invoke, 10)
//    .send(2'000, "producer", OpType::ok, 10).at(1, 4)
//    .record(3'000, "consumer", 1, 4, 10);
#pragma once

#include <cstdint>
#include <optional>

#include "model/check/history.h"

namespace check::testing {

// A small fluent builder for hand-written histories: one call per op,
// readable as a timeline; field setters apply to the op just begun.
class Builder {
 public:
  Builder& op(int64_t t_us, const char* process, OpType type, OpFunction f) {
    flush();
    Op o;
    o.time_us = t_us;
    o.process = h_.process(process);
    o.type = type;
    o.f = f;
    pending_ = o;
    return *this;
  }
  Builder& topic(const char* t) { return set([&](Op& o) { o.topic = h_.intern(t); }); }
  Builder& at(int32_t partition, int64_t offset = -1) {
    return set([&](Op& o) {
      o.partition = partition;
      o.offset = offset;
    });
  }
  Builder& value(uint64_t v) { return set([&](Op& o) { o.value = v; }); }
  Builder& producer(const char* p) { return set([&](Op& o) { o.producer = h_.process(p); }); }
  Builder& error(const char* e) { return set([&](Op& o) { o.error = h_.intern(e); }); }
  Builder& detail(const char* d) { return set([&](Op& o) { o.detail = h_.intern(d); }); }

  // A send of value v to topic "t" by `process` (its own producer).
  Builder& send(int64_t t_us, const char* process, OpType type, uint64_t v) {
    return op(t_us, process, type, OpFunction::send).topic("t").value(v).producer(process);
  }
  // A poll op; for an ok record, follow with .record(...).
  Builder& poll(int64_t t_us, const char* process, OpType type) {
    return op(t_us, process, type, OpFunction::poll);
  }
  // One record read from topic "t".
  Builder& record(int64_t t_us, const char* process, int32_t partition, int64_t offset,
                  uint64_t v) {
    return poll(t_us, process, OpType::ok).topic("t").at(partition, offset).value(v);
  }

  const History& history() {
    flush();
    return h_;
  }

 private:
  template <typename F>
  Builder& set(F f) {
    f(*pending_);
    return *this;
  }
  void flush() {
    if (pending_) h_.add(*pending_);
    pending_.reset();
  }

  History h_;
  std::optional<Op> pending_;
};

}  // namespace check::testing
