#include "model/client/workload.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace client {

using check::Op;
using check::OpFunction;
using check::OpType;

void record_exit(check::History& history, std::string_view process, int64_t time_us,
                 std::string_view reason, std::string_view detail) {
  Op op;
  op.time_us = time_us;
  op.process = history.process(process);
  op.type = OpType::info;
  op.f = OpFunction::exit;
  op.error = history.intern(reason);
  op.detail = history.intern(detail);
  history.add(op);
}

bool last_op_is_exit(const check::History& history, std::string_view process) {
  // Looks the name up without interning it: a process with no ops has no exit.
  const std::vector<std::string>& names = history.processes();
  const auto it = std::find(names.begin(), names.end(), process);
  if (it == names.end() || it == names.begin()) return false;
  const uint32_t id = static_cast<uint32_t>(it - names.begin());
  const std::vector<Op>& ops = history.ops();
  for (auto op = ops.rbegin(); op != ops.rend(); ++op) {
    if (op->process == id) return op->f == OpFunction::exit;
  }
  return false;
}

// --- OpRecorder ------------------------------------------------------------------------

Op& OpRecorder::op(int64_t time_us, OpType type, OpFunction f) const {
  // The process is interned before the op is added, as it always was (ids
  // follow the order of first use), though adding an op interns nothing.
  const uint32_t process = history_->process(process_);
  Op& op = history_->append(time_us);
  op.process = process;
  op.type = type;
  op.f = f;
  return op;
}

void OpRecorder::send_invoke(int64_t time_us, const std::string& topic, uint64_t value) {
  if (history_ == nullptr) return;
  Op& o = op(time_us, OpType::invoke, OpFunction::send);
  o.topic = history_->intern(topic);
  o.value = value;
  o.producer = o.process;
}

void OpRecorder::send_done(int64_t time_us, const std::string& topic, uint64_t value,
                           const DeliveryReport& r) {
  if (history_ == nullptr) return;
  const OpType type = r.outcome == Outcome::ok     ? OpType::ok
                      : r.outcome == Outcome::fail ? OpType::fail
                                                   : OpType::info;
  Op& o = op(time_us, type, OpFunction::send);
  o.topic = history_->intern(topic);
  o.partition = r.partition;
  // The offset only with an acknowledgement (-1 with acks=0 already).
  o.offset = type == OpType::ok ? r.offset : -1;
  o.value = value;
  o.producer = o.process;
  o.error = history_->intern(type == OpType::ok ? "" : r.error);
}

void OpRecorder::poll_invoke(int64_t time_us, const std::string& topic) {
  if (history_ == nullptr) return;
  Op& o = op(time_us, OpType::invoke, OpFunction::poll);
  o.topic = history_->intern(topic);
}

void OpRecorder::poll_ok(int64_t time_us, const std::vector<ConsumedRecord>& records) {
  if (history_ == nullptr) return;
  if (records.empty()) {
    op(time_us, OpType::ok, OpFunction::poll);  // partition -1: nothing returned
    return;
  }
  for (const ConsumedRecord& r : records) {
    Op& o = op(time_us, OpType::ok, OpFunction::poll);
    o.topic = history_->intern(r.tp.topic);
    o.partition = r.tp.partition;
    o.offset = r.offset;
    o.value = r.value;
    if (producer_of_) {
      if (const std::optional<std::string> name = producer_of_(r.value)) o.producer = history_->process(*name);
    }
  }
}

void OpRecorder::poll_error(int64_t time_us, OpType type, const std::string& topic,
                            const std::string& error) {
  if (history_ == nullptr) return;
  Op& o = op(time_us, type, OpFunction::poll);
  o.topic = history_->intern(topic);
  o.error = history_->intern(error);
}

void OpRecorder::connect(int64_t time_us, const std::string& event, int32_t node) {
  if (history_ == nullptr) return;
  Op& o = op(time_us, OpType::info, OpFunction::connect);
  o.error = history_->intern(event);
  o.detail = history_->intern(fmt::format("node={}", node));
}

void OpRecorder::exit(int64_t time_us, const std::string& error, const std::string& detail) {
  if (history_ == nullptr) return;
  record_exit(*history_, process_, time_us, error, detail);
}

void OpRecorder::note_start(int64_t time_us, uint64_t incarnation) {
  if (history_ == nullptr || incarnation <= 1) return;
  const std::vector<std::string>& names = history_->processes();
  if (std::find(names.begin(), names.end(), process_) == names.end()) return;  // never recorded anything
  if (last_op_is_exit(*history_, process_)) return;
  record_exit(*history_, process_, time_us, "killed", "recorded at restart");
}

// --- PollLoop ------------------------------------------------------------------------

PollLoop::PollLoop(sim::ProcessContext& ctx, OpRecorder& recorder, Options options, Deliver deliver,
                   std::function<void()> on_poll)
    : ctx_(ctx),
      recorder_(recorder),
      options_(std::move(options)),
      deliver_(std::move(deliver)),
      on_poll_(std::move(on_poll)) {}

void PollLoop::start() {
  if (!waiting_) begin();
}

void PollLoop::begin() {
  waiting_ = true;
  ++polls_;
  recorder_.poll_invoke(ctx_.now().us(), options_.topic);
  if (on_poll_) on_poll_();
  if (!buffer_.empty()) {
    complete();
    return;
  }
  timer_ = ctx_.after(options_.timeout, [this] {
    ++empty_polls_;
    waiting_ = false;
    recorder_.poll_ok(ctx_.now().us(), {});
    begin();
  });
}

void PollLoop::add(const std::vector<ConsumedRecord>& records) {
  buffer_.insert(buffer_.end(), records.begin(), records.end());
  if (waiting_ && !buffer_.empty()) complete();
}

void PollLoop::complete() {
  ctx_.cancel(timer_);
  waiting_ = false;
  const size_t n = std::min(buffer_.size(), options_.max_records);
  std::vector<ConsumedRecord> out;
  if (n == buffer_.size()) {
    out.swap(buffer_);  // the usual case: the poll takes everything buffered
  } else {
    out.assign(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(n));
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  recorder_.poll_ok(ctx_.now().us(), out);
  if (deliver_) deliver_(out);
  begin();
}

void PollLoop::fail(const std::string& error) {
  if (!waiting_) return;
  ctx_.cancel(timer_);
  waiting_ = false;
  recorder_.poll_error(ctx_.now().us(), OpType::fail, options_.topic, error);
  begin();
}

}  // namespace client
