// The example in README.md, compiled and checked, so the README stays true.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "sim/world.h"

namespace {

using sim::Duration;

// Answers every message with the same payload.
class EchoServer final : public sim::Process {
 public:
  void on_start() override { ctx().listen(9092); }
  void on_message(sim::SocketId s, sim::Payload& p) override { ctx().send(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason) override { ctx().close(s); }
};

// Sends one request at a time, a second after the last reply, and gives up on
// a request after its own 5 s timeout.
class Client final : public sim::Process {
 public:
  Client(std::string address, uint16_t port) : address_(std::move(address)), port_(port) {}
  void on_start() override { socket_ = ctx().connect(address_, port_); }
  void on_connected(sim::SocketId) override { request(); }
  void on_message(sim::SocketId, sim::Payload& p) override {
    ctx().cancel(timeout_);
    ctx().trace("reply", {{"n", *sim::payload_cast<int>(&p)}});
    ctx().after(Duration::seconds(1), [this] { request(); });
  }
  void on_closed(sim::SocketId, sim::CloseReason reason) override {
    ctx().trace("closed", {{"reason", to_string(reason)}});
  }

 private:
  void request() {
    const int n = ++sent_;
    ctx().send(socket_, sim::Payload(n));
    timeout_ = ctx().after(Duration::seconds(5), [this, n] {
      ctx().trace("request_timed_out", {{"n", n}});
      ctx().close(socket_);
    });
  }
  std::string address_;
  uint16_t port_;
  sim::SocketId socket_;
  sim::TimerId timeout_;
  int sent_ = 0;
};

TEST(ReadmeExample, PowerOffIsSilenceUntilTheClientsOwnTimeout) {
  std::ostringstream text;
  auto run = [&](std::ostream* out) {
    sim::World world(/*seed=*/42);
    world.trace().set_text_sink(out);
    const auto a = world.add_host("node1", "10.0.0.1");
    const auto b = world.add_host("node2", "10.0.0.2");
    world.add_process(b, "server", [] { return std::make_unique<EchoServer>(); });
    world.add_process(a, "client", [] { return std::make_unique<Client>("10.0.0.2", 9092); });
    world.boot();
    world.run_for(sim::Duration::seconds(5));
    world.power_off(b);  // unsynced writes on node2 are lost
    world.run_for(sim::Duration::seconds(30));
    return world.trace().hash();
  };
  const uint64_t hash = run(&text);
  EXPECT_EQ(hash, run(nullptr));  // same seed, same hash
  const std::string trace = text.str();
  // Five replies before the power went, none after, no reset or eof: the
  // client finds out by its own timeout, five seconds after its last request.
  EXPECT_NE(trace.find("reply  n=5"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("reply  n=6"), std::string::npos) << trace;
  EXPECT_EQ(trace.find("closed"), std::string::npos) << trace;
  const size_t timed_out = trace.find("request_timed_out  n=6");
  ASSERT_NE(timed_out, std::string::npos) << trace;
  // At 10.0s, as the README says: request 6 went a second after reply 5,
  // just after the power went at 5 s, and its timeout is 5 s.
  const size_t line = trace.rfind('\n', timed_out) + 1;  // npos + 1 == 0 on the first line
  const double at_s = std::stod(trace.substr(line, trace.find('s', line) - line));
  EXPECT_GE(at_s, 10.0) << trace.substr(line, timed_out - line);
  EXPECT_LT(at_s, 10.1) << trace.substr(line, timed_out - line);
}

}  // namespace
