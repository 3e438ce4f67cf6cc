// Unit tests for the simulated network, driven through a `World` the way a
// scenario drives it: processes record what their socket callbacks receive,
// with the virtual time, and each test checks what a real socket would show —
// refused, reset, eof, or silence until a kernel timeout.
//
// Most tests pin the one-way latency to a constant (kLatency = 1 ms) so that
// every arrival time is exact; the few that exercise random latency say so.
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/network.h"
#include "sim/world.h"

namespace sim {

// Readable failures: gtest finds these by argument-dependent lookup.
[[maybe_unused]] static void PrintTo(const Time& t, std::ostream* os) { *os << format_time(t); }
[[maybe_unused]] static void PrintTo(const Duration& d, std::ostream* os) { *os << d.us() << "us"; }
template <typename Tag, typename Rep>
[[maybe_unused]] static void PrintTo(const StrongId<Tag, Rep>& id, std::ostream* os) {
  *os << "#" << id.value;
}

namespace {

constexpr Duration kLatency = Duration::millis(1);
constexpr uint16_t kPort = 9092;

Time at_us(int64_t us) { return Time::from_us(us); }
Time at_ms(int64_t ms) { return Time::zero() + Duration::millis(ms); }

// One socket callback as a process saw it.
struct Seen {
  Time at;
  std::string what;  // accept, connected, connect_failed, message, closed
  SocketId socket;
  std::string detail;  // the error or close reason
  int value = -1;      // the payload of a message
};

// Everything one process (across all its incarnations) saw, in order.
struct Journal {
  std::vector<Seen> seen;

  std::vector<Seen> of(std::string_view what) const {
    std::vector<Seen> out;
    for (const Seen& s : seen) {
      if (s.what == what) out.push_back(s);
    }
    return out;
  }
  size_t count(std::string_view what) const { return of(what).size(); }
  std::vector<int> messages() const {
    std::vector<int> out;
    for (const Seen& s : of("message")) out.push_back(s.value);
    return out;
  }
  std::vector<Time> message_times() const {
    std::vector<Time> out;
    for (const Seen& s : of("message")) out.push_back(s.at);
    return out;
  }
  std::string dump() const {
    std::string out;
    for (const Seen& s : seen) {
      out += fmt::format("{} {} socket={} {} {}\n", format_time(s.at), s.what, s.socket.value,
                         s.detail, s.value);
    }
    return out;
  }
};

// A process that records every socket callback and otherwise does what the
// test tells it; with `echo` it answers each message with the same payload.
class Peer final : public Process {
 public:
  Peer(Journal* journal, std::optional<uint16_t> listen_port, bool echo)
      : journal_(journal), listen_port_(listen_port), echo_(echo) {}

  void on_start() override {
    if (listen_port_) ctx().listen(*listen_port_);
  }
  void on_accept(SocketId s, uint16_t port) override {
    record("accept", s, std::to_string(port));
    accepted_.push_back(s);
  }
  void on_connected(SocketId s) override { record("connected", s); }
  void on_connect_failed(SocketId s, ConnectError e) override {
    record("connect_failed", s, to_string(e));
  }
  void on_message(SocketId s, Payload& p) override {
    const int v = *sim::payload_cast<int>(&p);
    record("message", s, "", v);
    if (echo_) ctx().send(s, Payload(v));
  }
  void on_closed(SocketId s, CloseReason r) override { record("closed", s, to_string(r)); }

  SocketId connect(const std::string& address, uint16_t port) {
    return ctx().connect(address, port);
  }
  void send(SocketId s, int v) { ctx().send(s, Payload(v)); }
  void close(SocketId s) { ctx().close(s); }
  void exit() { ctx().exit(); }
  bool is_open(SocketId s) const { return ctx().is_open(s); }
  const std::vector<SocketId>& accepted() const { return accepted_; }

 private:
  void record(std::string what, SocketId s, std::string detail = "", int value = -1) {
    journal_->seen.push_back(Seen{ctx().now(), std::move(what), s, std::move(detail), value});
  }

  Journal* journal_;
  std::optional<uint16_t> listen_port_;
  bool echo_;
  std::vector<SocketId> accepted_;
};

WorldOptions with_latency(Duration d) {
  WorldOptions o;
  o.network.latency = LatencyModel::constant(d);
  return o;
}

// A world plus the journals of its processes.
struct Rig {
  explicit Rig(WorldOptions options = with_latency(kLatency), uint64_t seed = 1)
      : world(seed, options) {
    world.trace().keep_lines(true);
  }

  HostId host(const std::string& name, const std::string& address) {
    return world.add_host(name, address);
  }
  ProcessId server(HostId h, const std::string& name, bool echo = false) {
    return add(h, name, kPort, echo);
  }
  ProcessId client(HostId h, const std::string& name) { return add(h, name, std::nullopt, false); }
  ProcessId add(HostId h, const std::string& name, std::optional<uint16_t> port, bool echo) {
    const uint32_t index = static_cast<uint32_t>(world.process_count());
    Journal* journal = &journals[index];
    return world.add_process(
        h, name, [journal, port, echo] { return std::make_unique<Peer>(journal, port, echo); });
  }

  Peer& peer(ProcessId p) {
    Peer* x = world.process_as<Peer>(p);
    if (x == nullptr) throw std::logic_error("process is not running: " + world.process_name(p));
    return *x;
  }
  const Journal& log(ProcessId p) { return journals[p.value]; }

  // Connects `client` to `address` and runs until it is connected.
  SocketId connect(ProcessId client, const std::string& address) {
    const size_t before = log(client).count("connected");
    const SocketId s = peer(client).connect(address, kPort);
    const bool ok = world.run_until([&] { return log(client).count("connected") > before; },
                                    world.now() + Duration::seconds(1));
    if (!ok) throw std::logic_error("no connection:\n" + log(client).dump());
    return s;
  }

  bool traced(std::string_view kind) {
    const std::string needle = fmt::format("\"kind\":\"{}\"", kind);
    for (const std::string& line : world.trace().lines()) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  World world;
  std::map<uint32_t, Journal> journals;
};

// Two hosts: a client on node1 (10.0.0.1) and a listening server on node2
// (10.0.0.2), booted at time zero.
struct Pair : Rig {
  explicit Pair(WorldOptions options = with_latency(kLatency), uint64_t seed = 1, bool echo = false)
      : Rig(options, seed) {
    a = host("node1", "10.0.0.1");
    b = host("node2", "10.0.0.2");
    cli = client(a, "client");
    srv = server(b, "server", echo);
    world.boot();
  }
  HostId a, b;
  ProcessId cli, srv;
};

// --- connecting and delivering ------------------------------------------------

TEST(Network, ConnectAcceptsAndReportsBothEndsAtTheirArrivalTimes) {
  Pair rig;
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(10));
  // SYN lands at 1 ms (accept), the SYN-ACK at 2 ms (connected).
  ASSERT_EQ(rig.log(rig.srv).count("accept"), 1u) << rig.log(rig.srv).dump();
  EXPECT_EQ(rig.log(rig.srv).seen[0].at, at_ms(1));
  EXPECT_EQ(rig.log(rig.srv).seen[0].detail, "9092");
  ASSERT_EQ(rig.log(rig.cli).count("connected"), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(rig.log(rig.cli).seen[0].at, at_ms(2));
  EXPECT_EQ(rig.log(rig.cli).seen[0].socket, s);
  EXPECT_TRUE(rig.peer(rig.cli).is_open(s));
  EXPECT_TRUE(rig.peer(rig.srv).is_open(rig.peer(rig.srv).accepted()[0]));
  EXPECT_EQ(rig.world.network().peer_address(s), "10.0.0.2");
  EXPECT_EQ(rig.world.network().open_connections(), 1u);
}

TEST(Network, ConstantLatencyGivesExactArrivalTimesBothWays) {
  Pair rig(with_latency(kLatency), 1, /*echo=*/true);
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(5));
  rig.peer(rig.cli).send(s, 42);
  rig.world.run_until(at_ms(20));
  ASSERT_EQ(rig.log(rig.srv).messages(), std::vector<int>{42});
  EXPECT_EQ(rig.log(rig.srv).message_times()[0], at_ms(6));
  ASSERT_EQ(rig.log(rig.cli).messages(), std::vector<int>{42});
  EXPECT_EQ(rig.log(rig.cli).message_times()[0], at_ms(7));
}

TEST(Network, ManyMessagesWithRandomLatencyArriveInOrderBothWays) {
  // Latency spread (100 us .. 20 ms) far wider than the 100 us between sends:
  // without the stream discipline, messages would overtake each other.
  WorldOptions options;
  options.network.latency = LatencyModel::uniform(Duration::micros(100), Duration::millis(20));
  Pair rig(options, 5, /*echo=*/true);
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  constexpr int kCount = 500;
  std::vector<Time> sent;
  for (int i = 0; i < kCount; ++i) {
    rig.world.run_for(Duration::micros(100));
    sent.push_back(rig.world.now());
    rig.peer(rig.cli).send(s, i);
  }
  rig.world.run_for(Duration::seconds(1));

  std::vector<int> expected(kCount);
  for (int i = 0; i < kCount; ++i) expected[i] = i;
  EXPECT_EQ(rig.log(rig.srv).messages(), expected);
  EXPECT_EQ(rig.log(rig.cli).messages(), expected);

  const std::vector<Time> arrived = rig.log(rig.srv).message_times();
  ASSERT_EQ(arrived.size(), sent.size());
  int held_back = 0;  // messages that landed later than their own latency said
  for (int i = 0; i < kCount; ++i) {
    EXPECT_GE(arrived[i] - sent[i], Duration::micros(100)) << i;
    EXPECT_LE(arrived[i] - sent[i], Duration::millis(20)) << i;
    if (i == 0) continue;
    EXPECT_GE(arrived[i], arrived[i - 1]) << i;
    if (arrived[i] == arrived[i - 1]) ++held_back;
  }
  // The spread really was in play: many messages waited for a slower one.
  EXPECT_GT(held_back, 50);
}

TEST(Network, ABurstSentAtOneInstantArrivesInOrder) {
  WorldOptions options;
  options.network.latency = LatencyModel::uniform(Duration::micros(200), Duration::millis(50));
  Pair rig(options, 9);
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  for (int i = 0; i < 200; ++i) rig.peer(rig.cli).send(s, i);
  rig.world.run_for(Duration::seconds(1));
  std::vector<int> expected(200);
  for (int i = 0; i < 200; ++i) expected[i] = i;
  EXPECT_EQ(rig.log(rig.srv).messages(), expected);
}

// --- refused, reset, eof --------------------------------------------------------

TEST(Network, ConnectionIsRefusedAtOnceWhenNoOneListens) {
  // Default latency: uniform 200..500 us one way.
  Rig rig(WorldOptions{});
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  const ProcessId cli = rig.client(a, "client");
  const ProcessId other = rig.client(b, "other");  // up, but not listening
  rig.world.boot();
  const SocketId s = rig.peer(cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(100));
  const Journal& log = rig.log(cli);
  ASSERT_EQ(log.seen.size(), 1u) << log.dump();
  EXPECT_EQ(log.seen[0].what, "connect_failed");
  EXPECT_EQ(log.seen[0].detail, "refused");
  EXPECT_EQ(log.seen[0].socket, s);
  // Two one-way trips: no sooner than 2 x 200 us, no later than 2 x 500 us.
  EXPECT_GE(log.seen[0].at, at_us(400));
  EXPECT_LE(log.seen[0].at, at_us(1000));
  EXPECT_TRUE(rig.log(other).seen.empty());
  EXPECT_TRUE(rig.traced("connection_refused"));
  EXPECT_FALSE(rig.peer(cli).is_open(s));
}

TEST(Network, ConnectionToAKilledListenerIsRefused) {
  Pair rig;
  rig.world.kill(rig.srv);
  rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(100));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 1u) << log.dump();
  EXPECT_EQ(log.seen[0].what, "connect_failed");
  EXPECT_EQ(log.seen[0].detail, "refused");
  EXPECT_EQ(log.seen[0].at, at_ms(2));
}

TEST(Network, KillingThePeerProcessResetsTheConnection) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");  // connected at 2 ms
  rig.world.run_until(at_ms(10));
  rig.world.kill(rig.srv);
  rig.world.run_until(at_ms(100));
  const std::vector<Seen> closed = rig.log(rig.cli).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(closed[0].detail, "reset");
  EXPECT_EQ(closed[0].socket, s);
  EXPECT_EQ(closed[0].at, at_ms(11));
  EXPECT_FALSE(rig.peer(rig.cli).is_open(s));
  // Sending on the reset socket is allowed and goes nowhere.
  rig.peer(rig.cli).send(s, 1);
  rig.world.run_until(at_ms(200));
  EXPECT_EQ(rig.log(rig.cli).seen.size(), 2u) << rig.log(rig.cli).dump();
}

TEST(Network, DataSentBeforeAKillStillLandsAheadOfTheReset) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  Peer& server = rig.peer(rig.srv);
  server.send(server.accepted().at(0), 1);
  server.send(server.accepted().at(0), 2);
  rig.world.kill(rig.srv);  // its kernel still delivers what it had sent
  rig.world.run_until(at_ms(100));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 4u) << log.dump();
  EXPECT_EQ(log.messages(), (std::vector<int>{1, 2}));
  EXPECT_EQ(log.seen[3].what, "closed");
  EXPECT_EQ(log.seen[3].detail, "reset");
  EXPECT_EQ(log.seen[3].socket, s);
  EXPECT_EQ(log.seen[3].at, at_ms(11));
}

TEST(Network, DataInFlightToAKilledPeerDoesNotReportTheCloseTwice) {
  // The client writes after the peer died but before the reset reached it;
  // the peer's kernel resets that write too. The client's socket is closed
  // once: it must hear about it once.
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.kill(rig.srv);  // reset lands at 11 ms
  rig.world.run_until(at_us(10'500));
  rig.peer(rig.cli).send(s, 1);  // lands at 11.5 ms, reset back at 12.5 ms
  rig.world.run_until(at_ms(100));
  const std::vector<Seen> closed = rig.log(rig.cli).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(closed[0].detail, "reset");
  EXPECT_EQ(closed[0].at, at_ms(11));
}

TEST(Network, AnOrderlyExitOfThePeerGivesEofAfterWhatItSent) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  Peer& server = rig.peer(rig.srv);
  const SocketId accepted = server.accepted().at(0);
  server.send(accepted, 1);
  server.send(accepted, 2);
  server.exit();
  rig.world.run_until(at_ms(100));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 4u) << log.dump();  // connected, 1, 2, eof
  EXPECT_EQ(log.messages(), (std::vector<int>{1, 2}));
  EXPECT_EQ(log.seen[3].what, "closed");
  EXPECT_EQ(log.seen[3].detail, "eof");
  EXPECT_EQ(log.seen[3].socket, s);
  EXPECT_EQ(log.seen[3].at, at_ms(11));
  EXPECT_FALSE(rig.world.is_running(rig.srv));
}

TEST(Network, ClosingASocketGivesThePeerEofAndTheCloserNoCallback) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.peer(rig.cli).send(s, 7);
  rig.peer(rig.cli).close(s);
  EXPECT_FALSE(rig.peer(rig.cli).is_open(s));
  rig.world.run_until(at_ms(100));
  const Journal& server = rig.log(rig.srv);
  ASSERT_EQ(server.seen.size(), 3u) << server.dump();  // accept, 7, eof
  EXPECT_EQ(server.seen[1].value, 7);
  EXPECT_EQ(server.seen[2].what, "closed");
  EXPECT_EQ(server.seen[2].detail, "eof");
  EXPECT_EQ(server.seen[2].at, at_ms(11));
  EXPECT_EQ(rig.log(rig.cli).seen.size(), 1u) << rig.log(rig.cli).dump();  // connected only
}

TEST(Network, AbandoningAnAcceptedHandshakeResetsTheServerSocket) {
  Pair rig;
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_us(1'500));  // accepted at 1 ms; SYN-ACK due at 2 ms
  ASSERT_EQ(rig.log(rig.srv).count("accept"), 1u);
  rig.peer(rig.cli).close(s);
  rig.world.run_until(at_ms(100));
  EXPECT_TRUE(rig.log(rig.cli).seen.empty()) << rig.log(rig.cli).dump();
  const std::vector<Seen> closed = rig.log(rig.srv).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.srv).dump();
  EXPECT_EQ(closed[0].detail, "reset");
  EXPECT_EQ(closed[0].at, at_us(2'500));
}

TEST(Network, MisuseOfASocketIsAnInvariantViolation) {
  Pair rig;
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  EXPECT_THROW(rig.peer(rig.cli).send(s, 1), InvariantViolation);  // not yet connected
  rig.world.run_until(at_ms(10));
  rig.peer(rig.cli).close(s);
  EXPECT_THROW(rig.peer(rig.cli).send(s, 1), InvariantViolation);  // closed by its process
  // A second live listener on a taken port.
  const ProcessId other = rig.add(rig.b, "other", std::nullopt, false);
  rig.world.start(other);
  EXPECT_THROW(rig.world.network().listen(rig.b, kPort, Endpoint{other, 1}), InvariantViolation);
}

// --- silence: power, addresses, partitions ---------------------------------------

TEST(Network, APoweredOffPeerIsSilenceUntilTheDataRetransmissionsGiveUp) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.power_off(rig.b);
  rig.peer(rig.cli).send(s, 1);  // reaches nothing at 11 ms, retransmitted
  // tcp_retries2 = 15 from a 200 ms RTO: 924.6 s after the first attempt.
  const Time give_up = at_ms(11) + Duration::micros(924'600'000);
  rig.world.run_until(give_up - Duration::micros(1));
  EXPECT_EQ(rig.log(rig.cli).seen.size(), 1u) << rig.log(rig.cli).dump();  // connected only
  EXPECT_TRUE(rig.peer(rig.cli).is_open(s));
  rig.world.run_until(give_up + Duration::seconds(1));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 2u) << log.dump();
  EXPECT_EQ(log.seen[1].what, "closed");
  EXPECT_EQ(log.seen[1].detail, "timed_out");
  EXPECT_EQ(log.seen[1].at, give_up);
  EXPECT_TRUE(rig.traced("connection_timed_out"));
}

// On one L2 segment (host_unreachable_after set) a connect to a powered-off
// host fails with "No route to host" once ARP gives up, not after the SYN
// retries; a host cut off by a partition still answers ARP, so there the
// SYN just goes unanswered.
TEST(Network, ConnectToAPoweredOffHostOnOneSegmentIsUnreachableAfterArpGivesUp) {
  WorldOptions options = with_latency(kLatency);
  options.network.host_unreachable_after = Duration::seconds(3);
  Pair rig(options);
  rig.world.power_off(rig.b);
  rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_for(Duration::seconds(10));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.count("connect_failed"), 1u) << log.dump();
  EXPECT_EQ(log.of("connect_failed")[0].detail, "unreachable");
  // ARP starts when the SYN would have left (one latency in), gives up 3 s on.
  EXPECT_EQ(log.of("connect_failed")[0].at, Time::zero() + kLatency + Duration::seconds(3));
  EXPECT_TRUE(rig.traced("host_unreachable"));
}

TEST(Network, APartitionedHostIsNeverUnreachableOnlySilent) {
  WorldOptions options = with_latency(kLatency);
  options.network.host_unreachable_after = Duration::seconds(3);
  Pair rig(options);
  rig.world.network().isolate(rig.b);
  rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_for(Duration::seconds(200));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.count("connect_failed"), 1u) << log.dump();
  EXPECT_EQ(log.of("connect_failed")[0].detail, "timed_out");
}

TEST(Network, AnIdleConnectionToAPoweredOffPeerHearsNothing) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.power_off(rig.b);
  rig.world.run_for(Duration::seconds(3600));
  EXPECT_EQ(rig.log(rig.cli).seen.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_TRUE(rig.peer(rig.cli).is_open(s));
}

TEST(Network, ConnectToAPoweredOffHostTimesOutAfterTheSynRetries) {
  // Default latency (200..500 us) for the first SYN, then 1+2+...+64 s.
  Pair rig(WorldOptions{});
  rig.world.power_off(rig.b);
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(127'000));
  EXPECT_TRUE(rig.log(rig.cli).seen.empty()) << rig.log(rig.cli).dump();
  rig.world.run_until(at_ms(200'000));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 1u) << log.dump();
  EXPECT_EQ(log.seen[0].what, "connect_failed");
  EXPECT_EQ(log.seen[0].detail, "timed_out");
  EXPECT_EQ(log.seen[0].socket, s);
  EXPECT_GE(log.seen[0].at, at_ms(127'000) + Duration::micros(200));
  EXPECT_LE(log.seen[0].at, at_ms(127'000) + Duration::micros(500));
  EXPECT_TRUE(rig.traced("connect_timed_out"));
}

TEST(Network, ConnectToAnAddressNoHostHoldsTimesOut) {
  Pair rig;
  rig.peer(rig.cli).connect("10.0.0.99", kPort);
  const Time expected = at_ms(1) + Duration::seconds(127);
  rig.world.run_until(expected - Duration::micros(1));
  EXPECT_TRUE(rig.log(rig.cli).seen.empty()) << rig.log(rig.cli).dump();
  rig.world.run_until(at_ms(200'000));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 1u) << log.dump();
  EXPECT_EQ(log.seen[0].detail, "timed_out");
  EXPECT_EQ(log.seen[0].at, expected);
}

TEST(Network, APartitionStallsTheStreamAndHealResumesItAtTheNextRetransmission) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.network().partition({{rig.a}, {rig.b}});
  for (int i = 0; i < 5; ++i) rig.peer(rig.cli).send(s, i);  // stall at 11 ms
  rig.world.run_until(at_ms(5'000));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  rig.world.network().heal();
  // Not at once: retransmissions 200 ms, 400, 800, 1.6 s, 3.2 s after 11 ms
  // put the next one at 11 ms + 6.2 s.
  rig.world.run_until(at_ms(5'500));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  for (int i = 5; i < 10; ++i) rig.peer(rig.cli).send(s, i);  // queued behind the stall
  const Time resumed = at_ms(11) + Duration::millis(6'200);
  rig.world.run_until(resumed - Duration::micros(1));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  rig.world.run_until(at_ms(10'000));
  EXPECT_EQ(rig.log(rig.srv).messages(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  for (Time t : rig.log(rig.srv).message_times()) EXPECT_EQ(t, resumed);
  EXPECT_TRUE(rig.peer(rig.cli).is_open(s));
  EXPECT_EQ(rig.log(rig.cli).count("closed"), 0u);
}

TEST(Network, APartitionLongerThanTheAbortTimeClosesTheStalledSender) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.network().partition({{rig.a}, {rig.b}});
  rig.peer(rig.cli).send(s, 1);
  rig.world.run_until(at_ms(2'000'000));
  const std::vector<Seen> closed = rig.log(rig.cli).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(closed[0].detail, "timed_out");
  EXPECT_EQ(closed[0].at, at_ms(11) + Duration::micros(924'600'000));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  // The receiver, which sent nothing, noticed nothing.
  EXPECT_EQ(rig.log(rig.srv).count("closed"), 0u);
}

TEST(Network, AOneWayBlockStallsOnlyTheBlockedDirection) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.network().block(rig.a, rig.b);
  EXPECT_FALSE(rig.world.network().reachable(rig.a, rig.b));
  EXPECT_TRUE(rig.world.network().reachable(rig.b, rig.a));
  rig.peer(rig.srv).send(rig.peer(rig.srv).accepted().at(0), 100);
  rig.peer(rig.cli).send(s, 7);
  rig.world.run_until(at_ms(10'000));
  // b -> a is open: delivered after one latency.
  ASSERT_EQ(rig.log(rig.cli).messages(), std::vector<int>{100});
  EXPECT_EQ(rig.log(rig.cli).message_times()[0], at_ms(11));
  // a -> b is cut: stalled since 11 ms.
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  rig.world.network().heal();
  rig.world.run_until(at_ms(20'000));
  ASSERT_EQ(rig.log(rig.srv).messages(), std::vector<int>{7});
  // Retransmissions at 11 ms + 0.2, 0.6, 1.4, 3.0, 6.2, 12.6 s.
  EXPECT_EQ(rig.log(rig.srv).message_times()[0], at_ms(11) + Duration::millis(12'600));
}

TEST(Network, ConnectWhoseSynAckPathIsCutTimesOutAfterTheSynRetries) {
  // The SYN gets through but nothing can come back: to the client that is
  // silence, and its connect must time out like any other.
  Pair rig;
  rig.world.network().block(rig.b, rig.a);
  rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(300'000));
  const Journal& log = rig.log(rig.cli);
  ASSERT_EQ(log.seen.size(), 1u) << log.dump();
  EXPECT_EQ(log.seen[0].what, "connect_failed");
  EXPECT_EQ(log.seen[0].detail, "timed_out");
  EXPECT_EQ(log.seen[0].at, at_ms(1) + Duration::seconds(127));
  EXPECT_TRUE(rig.log(rig.srv).seen.empty()) << rig.log(rig.srv).dump();
  EXPECT_TRUE(rig.world.run_until_quiet(at_ms(400'000)));
}

TEST(Network, IsolateCutsOneHostFromAllOthersBothWays) {
  Rig rig;
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  const HostId c = rig.host("node3", "10.0.0.3");
  const ProcessId ca = rig.client(a, "client");
  const ProcessId sb = rig.server(b, "server-b");
  const ProcessId sc = rig.server(c, "server-c");
  rig.world.boot();
  Network& net = rig.world.network();
  net.isolate(c);
  EXPECT_TRUE(net.reachable(a, b));
  EXPECT_TRUE(net.reachable(b, a));
  EXPECT_FALSE(net.reachable(a, c));
  EXPECT_FALSE(net.reachable(c, a));
  EXPECT_FALSE(net.reachable(b, c));
  EXPECT_FALSE(net.reachable(c, b));
  EXPECT_TRUE(net.reachable(c, c));
  EXPECT_EQ(net.components(), (std::vector<std::vector<HostId>>{{a, b}, {c}}));

  rig.peer(ca).connect("10.0.0.2", kPort);
  rig.peer(ca).connect("10.0.0.3", kPort);
  rig.world.run_until(at_ms(100));
  EXPECT_EQ(rig.log(ca).count("connected"), 1u) << rig.log(ca).dump();
  EXPECT_EQ(rig.log(sb).count("accept"), 1u);
  EXPECT_TRUE(rig.log(sc).seen.empty());
}

TEST(Network, ComponentsAreSortedGroupsOrderedByTheirSmallestHost) {
  Rig rig;
  std::vector<HostId> h;
  for (int i = 0; i < 5; ++i) {
    h.push_back(rig.host(fmt::format("node{}", i), fmt::format("10.0.0.{}", i)));
  }
  Network& net = rig.world.network();
  EXPECT_EQ(net.components(), (std::vector<std::vector<HostId>>{{h[0], h[1], h[2], h[3], h[4]}}));
  net.partition({{h[4], h[1]}, {h[3]}, {h[2], h[0]}});
  EXPECT_EQ(net.components(),
            (std::vector<std::vector<HostId>>{{h[0], h[2]}, {h[1], h[4]}, {h[3]}}));
  EXPECT_FALSE(net.reachable(h[1], h[3]));
  EXPECT_TRUE(net.reachable(h[1], h[4]));
  EXPECT_TRUE(net.reachable(h[4], h[1]));
  // Cuts accumulate until heal.
  net.partition({{h[0]}, {h[2]}});
  EXPECT_EQ(net.components(),
            (std::vector<std::vector<HostId>>{{h[0]}, {h[1], h[4]}, {h[2]}, {h[3]}}));
  net.heal();
  EXPECT_EQ(net.components(), (std::vector<std::vector<HostId>>{{h[0], h[1], h[2], h[3], h[4]}}));
  for (HostId x : h) {
    for (HostId y : h) EXPECT_TRUE(net.reachable(x, y));
  }
}

TEST(Network, AOneWayCutSplitsAComponent) {
  Rig rig;
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  Network& net = rig.world.network();
  net.block(a, b);
  EXPECT_EQ(net.components(), (std::vector<std::vector<HostId>>{{a}, {b}}));
}

TEST(Network, AHostInNoGroupKeepsItsLinks) {
  Rig rig;
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  const HostId c = rig.host("node3", "10.0.0.3");
  Network& net = rig.world.network();
  net.partition({{a}, {b}});
  EXPECT_FALSE(net.reachable(a, b));
  EXPECT_FALSE(net.reachable(b, a));
  EXPECT_TRUE(net.reachable(a, c));
  EXPECT_TRUE(net.reachable(c, a));
  EXPECT_TRUE(net.reachable(b, c));
  EXPECT_TRUE(net.reachable(c, b));
}

TEST(Network, HostsAddedAfterAPartitionReachEveryone) {
  Rig rig;
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  Network& net = rig.world.network();
  net.partition({{a}, {b}});
  const HostId c = rig.host("node3", "10.0.0.3");
  EXPECT_FALSE(net.reachable(a, b));
  EXPECT_TRUE(net.reachable(a, c));
  EXPECT_TRUE(net.reachable(c, b));
}

// --- addresses and reboots ----------------------------------------------------

TEST(Network, ReplacingAnAddressSilencesTheOldOneAndAnswersOnTheNew) {
  Pair rig;
  const SocketId old_socket = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.replace_address(rig.b, "10.0.0.22");
  Network& net = rig.world.network();
  EXPECT_EQ(net.address(rig.b), "10.0.0.22");
  EXPECT_FALSE(net.host_at("10.0.0.2").has_value());
  EXPECT_EQ(net.host_at("10.0.0.22"), rig.b);

  rig.peer(rig.cli).send(old_socket, 1);                                 // old connection
  const SocketId fresh = rig.peer(rig.cli).connect("10.0.0.22", kPort);  // new address
  const SocketId stale = rig.peer(rig.cli).connect("10.0.0.2", kPort);   // old address
  rig.world.run_until(at_ms(120'000));
  const Journal& log = rig.log(rig.cli);
  // Only the new address answered; the old connection and address are silent.
  ASSERT_EQ(log.count("connected"), 2u) << log.dump();
  EXPECT_EQ(log.of("connected")[1].socket, fresh);
  EXPECT_EQ(log.of("connected")[1].at, at_ms(12));
  EXPECT_EQ(net.peer_address(fresh), "10.0.0.22");
  EXPECT_EQ(log.count("connect_failed"), 0u);
  EXPECT_EQ(log.count("closed"), 0u);
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());

  rig.world.run_until(at_ms(2'000'000));
  const std::vector<Seen> failed = log.of("connect_failed");
  ASSERT_EQ(failed.size(), 1u) << log.dump();
  EXPECT_EQ(failed[0].socket, stale);
  EXPECT_EQ(failed[0].detail, "timed_out");
  EXPECT_EQ(failed[0].at, at_ms(11) + Duration::seconds(127));
  const std::vector<Seen> closed = log.of("closed");
  ASSERT_EQ(closed.size(), 1u) << log.dump();
  EXPECT_EQ(closed[0].socket, old_socket);
  EXPECT_EQ(closed[0].detail, "timed_out");
  EXPECT_EQ(closed[0].at, at_ms(11) + Duration::micros(924'600'000));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
}

// Each SYN retransmission goes to whoever holds the address at that moment:
// a connect started while no host had the address reaches the host that
// takes it back before the connect gives up (its SYN at 1 s finds nobody,
// the one at 3 s finds node2).
TEST(Network, AConnectRetryingToAnAddressReachesTheHostThatTakesIt) {
  Pair rig;
  rig.world.run_until(at_ms(10));
  rig.world.replace_address(rig.b, "10.0.0.22");
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(2'000));
  EXPECT_EQ(rig.log(rig.cli).count("connected"), 0u) << rig.log(rig.cli).dump();
  rig.world.replace_address(rig.b, "10.0.0.2");
  rig.world.run_until(at_ms(10'000));
  const std::vector<Seen> connected = rig.log(rig.cli).of("connected");
  ASSERT_EQ(connected.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(connected[0].socket, s);
  EXPECT_EQ(connected[0].at, at_ms(10) + Duration::seconds(3) + Duration::millis(2));
  EXPECT_EQ(rig.world.network().peer_address(s), "10.0.0.2");
  EXPECT_EQ(rig.log(rig.cli).count("connect_failed"), 0u);
}

TEST(Network, ARebootedHostResetsAStaleConnectionOnItsNextPacket) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.power_off(rig.b);
  rig.world.power_on(rig.b);
  rig.world.run_until(at_ms(1'000));
  ASSERT_TRUE(rig.world.is_running(rig.srv));  // restarted, listening again
  EXPECT_TRUE(rig.log(rig.cli).of("closed").empty());
  rig.peer(rig.cli).send(s, 1);
  rig.world.run_until(at_ms(2'000));
  const std::vector<Seen> closed = rig.log(rig.cli).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(closed[0].detail, "reset");
  EXPECT_EQ(closed[0].at, at_ms(1'002));
  EXPECT_TRUE(rig.log(rig.srv).messages().empty());
  // A new connection reaches the new incarnation.
  rig.peer(rig.cli).close(s);
  rig.connect(rig.cli, "10.0.0.2");
  EXPECT_EQ(rig.peer(rig.srv).accepted().size(), 1u);
}

TEST(Network, ARetransmissionReachingARebootedHostIsReset) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.power_off(rig.b);
  rig.peer(rig.cli).send(s, 1);  // stalls at 11 ms
  rig.world.run_until(at_ms(10'000));
  rig.world.power_on(rig.b);
  // The retransmission at 11 ms + 12.6 s finds the new kernel, which resets.
  const Time reset = at_ms(11) + Duration::millis(12'600) + kLatency;
  rig.world.run_until(reset - Duration::micros(1));
  EXPECT_TRUE(rig.log(rig.cli).of("closed").empty()) << rig.log(rig.cli).dump();
  rig.world.run_until(at_ms(20'000));
  const std::vector<Seen> closed = rig.log(rig.cli).of("closed");
  ASSERT_EQ(closed.size(), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(closed[0].detail, "reset");
  EXPECT_EQ(closed[0].at, reset);
}

// --- paused receivers, loopback, latency ----------------------------------------

TEST(Network, APausedReceiverIsStillConnectedAndGetsItsMessagesInOrderOnResume) {
  Pair rig;
  rig.world.pause(rig.srv);
  const SocketId s = rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(10));
  // The server's kernel accepted: the client is connected at 2 ms.
  ASSERT_EQ(rig.log(rig.cli).count("connected"), 1u) << rig.log(rig.cli).dump();
  EXPECT_EQ(rig.log(rig.cli).seen[0].at, at_ms(2));
  for (int i = 0; i < 5; ++i) rig.peer(rig.cli).send(s, i);
  rig.world.run_until(at_ms(9'000));
  EXPECT_TRUE(rig.log(rig.srv).seen.empty()) << rig.log(rig.srv).dump();
  rig.world.resume(rig.srv);
  rig.world.run_until(at_ms(9'500));
  const Journal& log = rig.log(rig.srv);
  ASSERT_EQ(log.seen.size(), 6u) << log.dump();
  EXPECT_EQ(log.seen[0].what, "accept");
  EXPECT_EQ(log.messages(), (std::vector<int>{0, 1, 2, 3, 4}));
  for (const Seen& seen : log.seen) EXPECT_EQ(seen.at, at_ms(9'000));
}

TEST(Network, AMessageLandingAtTheResumeInstantQueuesBehindTheHeldOnes) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.pause(rig.srv);
  rig.peer(rig.cli).send(s, 1);  // lands at 11 ms, held
  // The resume is scheduled before the second message's arrival event.
  rig.world.loop().at(at_ms(5'000), [&] { rig.world.resume(rig.srv); });
  rig.world.run_until(at_ms(4'999));
  rig.peer(rig.cli).send(s, 2);  // lands at exactly 5 s
  rig.world.run_until(at_ms(6'000));
  EXPECT_EQ(rig.log(rig.srv).messages(), (std::vector<int>{1, 2}));
}

TEST(Network, AMessageToAPausedProcessThatIsKilledIsNeverDelivered) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  rig.world.pause(rig.srv);
  rig.peer(rig.cli).send(s, 1);
  rig.world.run_until(at_ms(100));
  rig.world.kill(rig.srv);
  rig.world.start(rig.srv);
  rig.world.run_until(at_ms(200));
  // accept from the first incarnation only; the held message died with it.
  EXPECT_EQ(rig.log(rig.srv).seen.size(), 1u) << rig.log(rig.srv).dump();
  EXPECT_EQ(rig.log(rig.cli).of("closed").size(), 1u);
  EXPECT_EQ(rig.log(rig.cli).of("closed")[0].detail, "reset");
}

TEST(Network, LoopbackTrafficIgnoresPartitions) {
  Rig rig;
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  const ProcessId srv = rig.server(a, "server", /*echo=*/true);
  const ProcessId cli = rig.client(a, "client");
  rig.world.boot();
  rig.world.network().isolate(a);
  rig.world.network().partition({{a}, {b}});
  const SocketId s = rig.peer(cli).connect("10.0.0.1", kPort);
  rig.world.run_until(at_us(100));
  // Loopback latency: 30 us each way.
  ASSERT_EQ(rig.log(cli).count("connected"), 1u) << rig.log(cli).dump();
  EXPECT_EQ(rig.log(cli).seen[0].at, at_us(60));
  EXPECT_EQ(rig.log(srv).seen[0].at, at_us(30));
  rig.peer(cli).send(s, 5);
  rig.world.run_until(at_ms(1));
  EXPECT_EQ(rig.log(srv).message_times(), std::vector<Time>{at_us(130)});
  EXPECT_EQ(rig.log(cli).message_times(), std::vector<Time>{at_us(160)});
}

TEST(Network, APerLinkLatencyOverridesTheDefaultInItsDirectionOnly) {
  Rig rig;  // default 1 ms
  const HostId a = rig.host("node1", "10.0.0.1");
  const HostId b = rig.host("node2", "10.0.0.2");
  const HostId c = rig.host("node3", "10.0.0.3");
  const ProcessId srv = rig.server(b, "server", /*echo=*/true);
  const ProcessId ca = rig.client(a, "client-a");
  const ProcessId cc = rig.client(c, "client-c");
  rig.world.boot();
  Network& net = rig.world.network();
  net.set_link_latency(a, b, LatencyModel::constant(Duration::millis(7)));
  net.set_link_latency(b, a, LatencyModel::constant(Duration::millis(3)));
  const SocketId sa = rig.peer(ca).connect("10.0.0.2", kPort);
  rig.peer(cc).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(50));
  ASSERT_EQ(rig.log(ca).count("connected"), 1u);
  EXPECT_EQ(rig.log(ca).of("connected")[0].at, at_ms(10));  // 7 there, 3 back
  ASSERT_EQ(rig.log(cc).count("connected"), 1u);
  EXPECT_EQ(rig.log(cc).of("connected")[0].at, at_ms(2));  // the default
  const std::vector<Seen> accepts = rig.log(srv).of("accept");
  ASSERT_EQ(accepts.size(), 2u);
  EXPECT_EQ(accepts[0].at, at_ms(1));  // from c
  EXPECT_EQ(accepts[1].at, at_ms(7));  // from a
  rig.peer(ca).send(sa, 9);
  rig.world.run_until(at_ms(100));
  EXPECT_EQ(rig.log(srv).message_times(), std::vector<Time>{at_ms(57)});
  EXPECT_EQ(rig.log(ca).message_times(), std::vector<Time>{at_ms(60)});
}

TEST(Network, ConstantLatencyModelAndUniformBoundsAreRespectedBySample) {
  Rng rng(3);
  EXPECT_EQ(LatencyModel::constant(Duration::millis(4)).sample(rng), Duration::millis(4));
  const LatencyModel u = LatencyModel::uniform(Duration::micros(100), Duration::micros(900));
  bool saw_low_half = false, saw_high_half = false;
  for (int i = 0; i < 1000; ++i) {
    const Duration d = u.sample(rng);
    ASSERT_GE(d, Duration::micros(100));
    ASSERT_LE(d, Duration::micros(900));
    saw_low_half |= d < Duration::micros(500);
    saw_high_half |= d >= Duration::micros(500);
  }
  EXPECT_TRUE(saw_low_half);
  EXPECT_TRUE(saw_high_half);
}

// The two tests below read freed memory in Network::process_exited before
// its fix; the asan preset is what catches that.
TEST(Network, KillingAProcessWithAConnectInProgressForgetsTheConnection) {
  Pair rig;
  rig.world.power_off(rig.b);
  rig.peer(rig.cli).connect("10.0.0.2", kPort);
  rig.world.run_until(at_ms(5'000));
  EXPECT_EQ(rig.world.network().open_connections(), 1u);
  rig.world.kill(rig.cli);
  EXPECT_EQ(rig.world.network().open_connections(), 0u);
  EXPECT_TRUE(rig.world.run_until_quiet(at_ms(300'000)));
  EXPECT_TRUE(rig.log(rig.cli).seen.empty());
}

TEST(Network, KillingAProcessThatIgnoredAResetForgetsTheConnection) {
  Pair rig;
  rig.connect(rig.cli, "10.0.0.2");
  rig.world.run_until(at_ms(10));
  rig.world.kill(rig.srv);
  rig.world.run_until(at_ms(20));
  ASSERT_EQ(rig.log(rig.cli).count("closed"), 1u);  // the client never closes its socket
  EXPECT_EQ(rig.world.network().open_connections(), 1u);
  rig.world.kill(rig.cli);
  EXPECT_EQ(rig.world.network().open_connections(), 0u);
  EXPECT_TRUE(rig.world.run_until_quiet(at_ms(1'000)));
}

TEST(Network, ConnectionsAreForgottenOnceBothEndsHaveClosed) {
  Pair rig;
  const SocketId s = rig.connect(rig.cli, "10.0.0.2");
  EXPECT_EQ(rig.world.network().open_connections(), 1u);
  rig.peer(rig.cli).close(s);
  rig.world.run_until(at_ms(100));
  EXPECT_EQ(rig.world.network().open_connections(), 1u);  // the server has not closed
  rig.peer(rig.srv).close(rig.peer(rig.srv).accepted().at(0));
  rig.world.run_until(at_ms(200));
  EXPECT_EQ(rig.world.network().open_connections(), 0u);
  EXPECT_TRUE(rig.world.run_until_quiet(at_ms(300)));
}

}  // namespace
}  // namespace sim
