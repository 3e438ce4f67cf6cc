// Unit tests for the world: starting processes and the faults that befall
// them (kill, terminate, pause, power), the random streams processes get, and
// how a broken invariant surfaces. Each test drives a tiny scripted process
// and checks what it observed, with virtual times, and what the trace says.
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/deadline_timer.h"
#include "sim/world.h"

namespace sim {

[[maybe_unused]] static void PrintTo(const Time& t, std::ostream* os) { *os << format_time(t); }

namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::millis(ms); }

// A process whose reactions are given by the test.
class Scripted final : public Process {
 public:
  using Hook = std::function<void(Scripted&)>;
  explicit Scripted(Hook on_start, Hook on_terminate = nullptr)
      : start_(std::move(on_start)), terminate_(std::move(on_terminate)) {}

  void on_start() override {
    if (start_) start_(*this);
  }
  void on_terminate() override {
    if (terminate_) {
      terminate_(*this);
    } else {
      Process::on_terminate();
    }
  }
  ProcessContext& context() { return ctx(); }

 private:
  Hook start_;
  Hook terminate_;
};

ProcessFactory scripted(Scripted::Hook on_start, Scripted::Hook on_terminate = nullptr) {
  return [on_start, on_terminate] { return std::make_unique<Scripted>(on_start, on_terminate); };
}

// One observation: what happened, when, in which incarnation.
struct Note {
  std::string what;
  Time at;
  uint64_t incarnation = 0;
  friend bool operator==(const Note&, const Note&) = default;
};

void PrintTo(const Note& n, std::ostream* os) {
  *os << n.what << "@" << format_time(n.at) << "#" << n.incarnation;
}

// The trace records of `kind` for process `proc`, as (time) values.
std::vector<Time> traced(World& world, std::string_view proc, std::string_view kind) {
  const std::string needle = fmt::format("\"proc\":\"{}\",\"kind\":\"{}\"", proc, kind);
  std::vector<Time> out;
  for (const std::string& line : world.trace().lines()) {
    if (line.find(needle) == std::string::npos) continue;
    long long us = -1;
    std::sscanf(line.c_str(), "{\"t_us\":%lld", &us);
    out.push_back(Time::from_us(us));
  }
  return out;
}

// --- starting -----------------------------------------------------------------

TEST(World, StartCallsOnStartWithIncarnationOneAndRestartMakesAFreshObject) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int made = 0;
  std::vector<uint64_t> incarnations;
  std::vector<int> counters_at_start;
  struct Counter final : Process {
    explicit Counter(int* made, std::vector<uint64_t>* inc, std::vector<int>* counters)
        : inc_(inc), counters_(counters) {
      ++*made;
    }
    void on_start() override {
      inc_->push_back(ctx().incarnation());
      counters_->push_back(count_++);
    }
    std::vector<uint64_t>* inc_;
    std::vector<int>* counters_;
    int count_ = 0;  // fresh per object: a restart recovers nothing from memory
  };
  const ProcessId p = world.add_process(h, "proc", [&] {
    return std::make_unique<Counter>(&made, &incarnations, &counters_at_start);
  });
  EXPECT_EQ(made, 0);
  EXPECT_FALSE(world.is_running(p));
  EXPECT_EQ(world.process(p), nullptr);
  world.boot();
  EXPECT_TRUE(world.is_running(p));
  EXPECT_NE(world.process_as<Counter>(p), nullptr);
  EXPECT_EQ(incarnations, std::vector<uint64_t>{1});
  world.start(p);  // already running: nothing happens
  EXPECT_EQ(made, 1);
  world.kill(p);
  EXPECT_FALSE(world.is_running(p));
  EXPECT_EQ(world.process(p), nullptr);
  world.run_for(Duration::seconds(1));
  world.start(p);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(incarnations, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(counters_at_start, (std::vector<int>{0, 0}));
  EXPECT_EQ(traced(world, "proc", "started"), (std::vector<Time>{at_ms(0), at_ms(1'000)}));
  EXPECT_EQ(traced(world, "proc", "killed"), (std::vector<Time>{at_ms(0)}));
}

TEST(World, BootStartsOnlyAutostartProcesses) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId yes = world.add_process(h, "yes", scripted(nullptr));
  const ProcessId no = world.add_process(h, "no", scripted(nullptr), Autostart::no);
  world.boot();
  EXPECT_TRUE(world.is_running(yes));
  EXPECT_FALSE(world.is_running(no));
  world.start(no);
  EXPECT_TRUE(world.is_running(no));
}

TEST(World, NamesAndTopologyAreFoundByName) {
  World world(1);
  const HostId a = world.add_host("node1", "10.0.0.1");
  const HostId b = world.add_host("node2", "10.0.0.2");
  const ProcessId p = world.add_process(b, "zk", scripted(nullptr));
  EXPECT_EQ(world.find_host("node2"), b);
  EXPECT_EQ(world.find_host("node1"), a);
  EXPECT_FALSE(world.find_host("node3").has_value());
  EXPECT_EQ(world.find_process("zk"), p);
  EXPECT_FALSE(world.find_process("kafka").has_value());
  EXPECT_EQ(world.host_of(p), b);
  EXPECT_EQ(world.host_name(b), "node2");
  EXPECT_EQ(world.process_name(p), "zk");
  EXPECT_EQ(world.host_count(), 2u);
  EXPECT_EQ(world.process_count(), 1u);
  std::string seen_host, seen_address, seen_name;
  world.add_process(b, "probe", scripted([&](Scripted& s) {
                      seen_host = s.context().host_name();
                      seen_address = s.context().address();
                      seen_name = s.context().name();
                    }));
  world.boot();
  EXPECT_EQ(seen_host, "node2");
  EXPECT_EQ(seen_address, "10.0.0.2");
  EXPECT_EQ(seen_name, "probe");
}

// --- kill ---------------------------------------------------------------------

TEST(World, KillStopsTheProcessTimersEvenAcrossARestart) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Note> notes;
  const ProcessId p =
      world.add_process(h, "proc", scripted([&](Scripted& s) {
                          ProcessContext& ctx = s.context();
                          ctx.after(Duration::seconds(1), [&notes, &ctx] {
                            notes.push_back({"timer", ctx.now(), ctx.incarnation()});
                          });
                        }));
  world.boot();
  world.run_until(at_ms(500));
  world.kill(p);
  world.run_until(at_ms(600));
  world.start(p);  // its own timer is due at 1.6 s
  world.run_until(at_ms(5'000));
  // The first incarnation's timer (due at 1 s) never fires, not even into the
  // second incarnation.
  EXPECT_EQ(notes, (std::vector<Note>{{"timer", at_ms(1'600), 2}}));
}

TEST(World, CancelledTimersDoNotFire) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int fired = 0;
  world.add_process(h, "proc", scripted([&](Scripted& s) {
                      const TimerId t = s.context().after(Duration::seconds(1), [&] { ++fired; });
                      s.context().after(Duration::seconds(2), [&] { ++fired; });
                      EXPECT_TRUE(s.context().cancel(t));
                    }));
  world.boot();
  world.run_until(at_ms(5'000));
  EXPECT_EQ(fired, 1);
}

// --- deadline timer -------------------------------------------------------------

// A DeadlineTimer is due at the earliest deadline armed since it last fired;
// a later one does not move it, an earlier one brings it forward, and once it
// has fired the next arming sets it afresh.
TEST(DeadlineTimer, IsDueAtTheEarliestDeadlineArmedSinceItFired) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<std::string> fired;
  DeadlineTimer timer;
  ProcessContext* ctx = nullptr;
  world.add_process(h, "proc", scripted([&](Scripted& s) {
                      ctx = &s.context();
                      timer.arm(*ctx, at_ms(300), [&] { fired.push_back(fmt::format("a@{}", format_time(ctx->now()))); });
                      timer.arm(*ctx, at_ms(500), [&] { fired.push_back("b"); });  // later: no change
                      timer.arm(*ctx, at_ms(200), [&] { fired.push_back(fmt::format("c@{}", format_time(ctx->now()))); });
                    }));
  world.boot();
  EXPECT_EQ(timer.due(), at_ms(200));
  world.run_until(at_ms(1'000));
  EXPECT_EQ(fired, (std::vector<std::string>{fmt::format("c@{}", format_time(at_ms(200)))}));
  EXPECT_EQ(timer.due(), Time::max()) << "not armed once it fired";
  timer.arm(*ctx, at_ms(1'500), [&] { fired.push_back(fmt::format("d@{}", format_time(ctx->now()))); });
  world.run_until(at_ms(2'000));
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[1], fmt::format("d@{}", format_time(at_ms(1'500))));
}

// --- terminate ----------------------------------------------------------------

TEST(World, TerminateKillsAProcessThatDoesNotExitAtTheGraceDeadline) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Time> sigterm;
  const ProcessId p = world.add_process(
      h, "stubborn", scripted(nullptr, [&](Scripted& s) { sigterm.push_back(s.context().now()); }));
  world.boot();
  world.run_until(at_ms(1'000));
  world.terminate(p, Duration::seconds(5));
  EXPECT_EQ(sigterm, std::vector<Time>{at_ms(1'000)});
  world.run_until(at_ms(5'999));
  EXPECT_TRUE(world.is_running(p));
  world.run_until(at_ms(10'000));
  EXPECT_FALSE(world.is_running(p));
  EXPECT_EQ(traced(world, "stubborn", "terminating"), std::vector<Time>{at_ms(1'000)});
  EXPECT_EQ(traced(world, "stubborn", "killed"), std::vector<Time>{at_ms(6'000)});
  EXPECT_TRUE(traced(world, "stubborn", "exited").empty());
}

TEST(World, TerminateOfAProcessThatExitsIsNotFollowedByAKill) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  // The default on_terminate exits at once.
  const ProcessId quick = world.add_process(h, "quick", scripted(nullptr));
  // This one finishes its shutdown two seconds later.
  const ProcessId slow =
      world.add_process(h, "slow", scripted(nullptr, [](Scripted& s) {
                          ProcessContext& ctx = s.context();
                          ctx.after(Duration::seconds(2), [&ctx] { ctx.exit(); });
                        }));
  world.boot();
  world.run_until(at_ms(1'000));
  world.terminate(quick, Duration::seconds(5));
  world.terminate(slow, Duration::seconds(5));
  EXPECT_FALSE(world.is_running(quick));
  EXPECT_TRUE(world.is_running(slow));
  world.run_until(at_ms(20'000));
  EXPECT_FALSE(world.is_running(slow));
  EXPECT_EQ(traced(world, "quick", "exited"), std::vector<Time>{at_ms(1'000)});
  EXPECT_EQ(traced(world, "slow", "exited"), std::vector<Time>{at_ms(3'000)});
  EXPECT_TRUE(traced(world, "quick", "killed").empty());
  EXPECT_TRUE(traced(world, "slow", "killed").empty());
}

TEST(World, TheGraceKillDoesNotHitALaterIncarnation) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId p = world.add_process(h, "proc", scripted(nullptr));
  world.boot();
  world.terminate(p, Duration::seconds(5));  // exits at once
  world.start(p);
  world.run_until(at_ms(10'000));
  EXPECT_TRUE(world.is_running(p));
  EXPECT_TRUE(traced(world, "proc", "killed").empty());
}

TEST(World, SigtermToAPausedProcessWaitsForResumeButTheDeadlineDoesNot) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Time> sigterm;
  const ProcessId p = world.add_process(
      h, "proc", scripted(nullptr, [&](Scripted& s) { sigterm.push_back(s.context().now()); }));
  world.boot();
  world.pause(p);
  world.terminate(p, Duration::seconds(5));
  world.run_until(at_ms(10'000));
  EXPECT_TRUE(sigterm.empty());
  EXPECT_FALSE(world.is_running(p));
  EXPECT_EQ(traced(world, "proc", "killed"), std::vector<Time>{at_ms(5'000)});
}

// --- pause and resume ------------------------------------------------------------

TEST(World, PauseDefersTimersWhichFireInOrderAtTheResumeTime) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Note> notes;
  const ProcessId p = world.add_process(
      h, "proc", scripted([&](Scripted& s) {
        ProcessContext& ctx = s.context();
        for (int i = 1; i <= 3; ++i) {
          ctx.after(Duration::seconds(i), [&notes, &ctx, i] {
            notes.push_back({fmt::format("t{}", i), ctx.now(), ctx.incarnation()});
          });
        }
        ctx.after(Duration::seconds(10), [&notes, &ctx] {
          notes.push_back({"t10", ctx.now(), ctx.incarnation()});
        });
      }));
  world.boot();
  world.run_until(at_ms(500));
  world.pause(p);
  EXPECT_TRUE(world.is_paused(p));
  EXPECT_TRUE(world.is_running(p));
  world.run_until(at_ms(5'000));
  EXPECT_TRUE(notes.empty());
  world.resume(p);
  EXPECT_FALSE(world.is_paused(p));
  world.run_until(at_ms(20'000));
  EXPECT_EQ(notes, (std::vector<Note>{{"t1", at_ms(5'000), 1},
                                      {"t2", at_ms(5'000), 1},
                                      {"t3", at_ms(5'000), 1},
                                      {"t10", at_ms(10'000), 1}}));
  EXPECT_EQ(traced(world, "proc", "paused"), std::vector<Time>{at_ms(500)});
  EXPECT_EQ(traced(world, "proc", "resumed"), std::vector<Time>{at_ms(5'000)});
}

TEST(World, ATimerDueAtTheResumeInstantRunsAfterTheDeferredOnes) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<std::string> order;
  ProcessId p;
  // The resume is scheduled before the process arms its timers, so the 2 s
  // timer's event comes after the resume's in the queue.
  world.loop().at(at_ms(2'000), [&] { world.resume(p); });
  p = world.add_process(
      h, "proc", scripted([&](Scripted& s) {
        s.context().after(Duration::seconds(1), [&] { order.push_back("due at 1 s"); });
        s.context().after(Duration::seconds(2), [&] { order.push_back("due at 2 s"); });
      }));
  world.boot();
  world.pause(p);
  world.run_until(at_ms(3'000));
  EXPECT_EQ(order, (std::vector<std::string>{"due at 1 s", "due at 2 s"}));
}

TEST(World, KillingAPausedProcessDropsWhatWasDeferred) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int fired = 0;
  const ProcessId p =
      world.add_process(h, "proc", scripted([&](Scripted& s) {
                          if (s.context().incarnation() == 1)
                            s.context().after(Duration::seconds(1), [&] { ++fired; });
                        }));
  world.boot();
  world.pause(p);
  world.run_until(at_ms(2'000));
  world.kill(p);
  world.resume(p);  // not running: no effect
  world.start(p);
  world.run_until(at_ms(5'000));
  EXPECT_EQ(fired, 0);
  EXPECT_FALSE(world.is_paused(p));
}

TEST(World, PauseAndResumeTwiceKeepsTheOrder) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Note> notes;
  const ProcessId p =
      world.add_process(h, "proc", scripted([&](Scripted& s) {
                          ProcessContext& ctx = s.context();
                          for (int i = 1; i <= 4; ++i) {
                            ctx.after(Duration::seconds(i), [&notes, &ctx, i] {
                              notes.push_back({fmt::format("t{}", i), ctx.now(), 1});
                            });
                          }
                        }));
  world.boot();
  world.pause(p);
  world.run_until(at_ms(1'500));
  world.resume(p);  // t1 runs now
  world.run_until(at_ms(1'600));
  world.pause(p);
  world.run_until(at_ms(3'500));
  world.resume(p);
  world.run_until(at_ms(10'000));
  EXPECT_EQ(notes, (std::vector<Note>{{"t1", at_ms(1'500), 1},
                                      {"t2", at_ms(3'500), 1},
                                      {"t3", at_ms(3'500), 1},
                                      {"t4", at_ms(4'000), 1}}));
}

// --- power ---------------------------------------------------------------------

// Listens on 9092 or connects to 10.0.0.2:9092, and notes every socket event.
class Netter final : public Process {
 public:
  Netter(bool listen, std::vector<Note>* notes) : listen_(listen), notes_(notes) {}
  void on_start() override {
    if (listen_) {
      ctx().listen(9092);
    } else {
      ctx().connect("10.0.0.2", 9092);
    }
  }
  void on_accept(SocketId, uint16_t) override { note("accept"); }
  void on_connected(SocketId) override { note("connected"); }
  void on_connect_failed(SocketId, ConnectError e) override {
    note(std::string("connect_failed:") + to_string(e));
  }
  void on_message(SocketId, Payload&) override { note("message"); }
  void on_closed(SocketId, CloseReason r) override { note(std::string("closed:") + to_string(r)); }

 private:
  void note(std::string what) {
    notes_->push_back({std::move(what), ctx().now(), ctx().incarnation()});
  }
  bool listen_;
  std::vector<Note>* notes_;
};

TEST(World, PowerOffStopsProcessesWithoutANoticeOnTheNetwork) {
  WorldOptions options;
  options.network.latency = LatencyModel::constant(Duration::millis(1));
  World world(1, options);
  world.trace().keep_lines(true);
  const HostId a = world.add_host("node1", "10.0.0.1");
  const HostId b = world.add_host("node2", "10.0.0.2");
  std::vector<Note> client_notes, server_notes;
  const ProcessId cli = world.add_process(
      a, "client", [&] { return std::make_unique<Netter>(false, &client_notes); });
  const ProcessId srv =
      world.add_process(b, "server", [&] { return std::make_unique<Netter>(true, &server_notes); });
  world.boot();
  world.run_until(at_ms(100));
  ASSERT_EQ(client_notes, (std::vector<Note>{{"connected", at_ms(2), 1}}));
  world.power_off(b);
  EXPECT_FALSE(world.is_up(b));
  EXPECT_FALSE(world.is_running(srv));
  EXPECT_TRUE(world.is_running(cli));
  world.run_until(at_ms(600'000));
  EXPECT_EQ(client_notes.size(), 1u);  // no reset, no eof
  EXPECT_EQ(server_notes.size(), 1u);  // the accept, before the power went
  EXPECT_EQ(traced(world, "server", "lost_power"), std::vector<Time>{at_ms(100)});
  EXPECT_TRUE(traced(world, "server", "killed").empty());
  EXPECT_EQ(traced(world, "host", "power_off"), std::vector<Time>{at_ms(100)});
}

TEST(World, PowerOnRestartsAutostartProcessesAfterTheBootDelay) {
  WorldOptions options;
  options.boot_delay = Duration::seconds(20);
  World world(1, options);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Note> notes;
  auto noting = [&](Scripted& s) {
    notes.push_back({s.context().name(), s.context().now(), s.context().incarnation()});
  };
  const ProcessId autostart = world.add_process(h, "auto", scripted(noting));
  const ProcessId manual = world.add_process(h, "manual", scripted(noting), Autostart::no);
  world.boot();
  world.start(manual);
  world.run_until(at_ms(1'000));
  world.power_off(h);
  EXPECT_FALSE(world.is_running(autostart));
  EXPECT_FALSE(world.is_running(manual));
  world.run_until(at_ms(5'000));
  world.power_on(h);
  EXPECT_TRUE(world.is_up(h));
  world.run_until(at_ms(24'999));
  EXPECT_FALSE(world.is_running(autostart));
  world.run_until(at_ms(60'000));
  EXPECT_TRUE(world.is_running(autostart));
  EXPECT_FALSE(world.is_running(manual));
  EXPECT_EQ(notes,
            (std::vector<Note>{
                {"auto", at_ms(0), 1}, {"manual", at_ms(0), 1}, {"auto", at_ms(25'000), 2}}));
  EXPECT_EQ(traced(world, "host", "power_on"), std::vector<Time>{at_ms(5'000)});
}

TEST(World, APowerCycleWithinTheBootDelayBootsOnlyOnce) {
  WorldOptions options;
  options.boot_delay = Duration::seconds(20);
  World world(1, options);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<Time> starts;
  world.add_process(h, "auto", scripted([&](Scripted& s) { starts.push_back(s.context().now()); }));
  world.boot();
  world.power_off(h);
  world.power_on(h);  // boot at 20 s ...
  world.run_until(at_ms(10'000));
  world.power_off(h);  // ... abandoned
  world.power_on(h);   // boot at 30 s
  world.run_until(at_ms(60'000));
  EXPECT_EQ(starts, (std::vector<Time>{at_ms(0), at_ms(30'000)}));
}

TEST(World, StartOnAPoweredOffHostIsRefused) {
  World world(1);
  world.trace().keep_lines(true);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int starts = 0;
  const ProcessId p =
      world.add_process(h, "proc", scripted([&](Scripted&) { ++starts; }), Autostart::no);
  world.power_off(h);
  world.run_until(at_ms(1'000));
  world.start(p);
  EXPECT_FALSE(world.is_running(p));
  EXPECT_EQ(starts, 0);
  EXPECT_EQ(traced(world, "proc", "start_refused"), std::vector<Time>{at_ms(1'000)});
  world.power_on(h);
  world.run_for(Duration::seconds(1));
  EXPECT_FALSE(world.is_running(p));  // Autostart::no
  world.start(p);
  EXPECT_TRUE(world.is_running(p));
  EXPECT_EQ(starts, 1);
}

// --- random streams ------------------------------------------------------------

// The first three draws of each incarnation of one process, under `seed`.
std::vector<std::vector<uint64_t>> draws(uint64_t seed, const std::string& name) {
  World world(seed);
  const HostId h = world.add_host("node1", "10.0.0.1");
  std::vector<std::vector<uint64_t>> out;
  const ProcessId p =
      world.add_process(h, name, scripted([&](Scripted& s) {
                          Rng& rng = s.context().rng();
                          out.push_back({rng.next_u64(), rng.next_u64(), rng.next_u64()});
                        }));
  world.boot();
  world.kill(p);
  world.start(p);
  return out;
}

TEST(World, ProcessRandomStreamsDifferByIncarnationAndAreReproducible) {
  const auto first = draws(42, "broker-1");
  ASSERT_EQ(first.size(), 2u);
  EXPECT_NE(first[0], first[1]);                  // a restart does not replay the dice
  EXPECT_EQ(draws(42, "broker-1"), first);        // the same seed does
  EXPECT_NE(draws(43, "broker-1")[0], first[0]);  // another seed does not
  EXPECT_NE(draws(42, "broker-2")[0], first[0]);  // nor another process
}

TEST(World, NamedStreamsDependOnlyOnSeedAndName) {
  World a(7), b(7), c(8);
  Rng x = a.rng("nemesis"), y = b.rng("nemesis"), z = c.rng("nemesis"), w = a.rng("other");
  const uint64_t vx = x.next_u64();
  EXPECT_EQ(vx, y.next_u64());
  EXPECT_NE(vx, z.next_u64());
  EXPECT_NE(vx, w.next_u64());
  EXPECT_EQ(a.seed(), 7u);
}

// --- invariants -----------------------------------------------------------------

TEST(World, TheInvariantCheckRunsAfterEveryEvent) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int value = 0;
  std::vector<int> checked;
  world.add_process(h, "proc", scripted([&](Scripted& s) {
                      for (int i = 1; i <= 5; ++i)
                        s.context().after(Duration::millis(i), [&value, i] { value = i; });
                    }));
  world.set_invariant_check([&] { checked.push_back(value); });
  world.boot();
  world.run_until_quiet();
  // Once per event, each time seeing that event's effect.
  EXPECT_EQ(checked, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(world.loop().executed(), 5u);
}

// World::activity tells an after-event check which processes an event may
// have changed: it moves when the process's own timer runs, when it is
// started, paused, resumed or killed, and not when another process runs;
// World::runs moves at every entry into the loop.
TEST(World, ActivityMovesOnlyForTheProcessWhoseCodeRanOrWhoseLifecycleChanged) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId a = world.add_process(h, "a", scripted([](Scripted& s) {
                                          s.context().after(Duration::millis(10), [] {});
                                        }));
  const ProcessId b = world.add_process(h, "b", scripted([](Scripted& s) {
                                          s.context().after(Duration::millis(20), [] {});
                                        }));
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (a, b) after each event
  world.set_invariant_check([&] { seen.emplace_back(world.activity(a), world.activity(b)); });
  const uint64_t a0 = world.activity(a);
  world.boot();  // starts both
  const uint64_t a1 = world.activity(a);
  const uint64_t b1 = world.activity(b);
  EXPECT_GT(a1, a0);
  const uint64_t runs0 = world.runs();
  world.run_until_quiet();
  EXPECT_GT(world.runs(), runs0);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_GT(seen[0].first, a1);  // a's timer ran: a moved ...
  EXPECT_EQ(seen[0].second, b1);  // ... b did not
  EXPECT_EQ(seen[1].first, seen[0].first);  // b's timer ran: a stayed ...
  EXPECT_GT(seen[1].second, b1);            // ... b moved
  uint64_t before = world.activity(a);
  world.pause(a);
  EXPECT_GT(world.activity(a), before);
  before = world.activity(a);
  world.resume(a);
  EXPECT_GT(world.activity(a), before);
  before = world.activity(b);
  world.kill(a);
  EXPECT_GT(world.activity(a), before);
  EXPECT_EQ(world.activity(b), before);
}

TEST(World, AFailedAssertionInsideAnEventCarriesTheSeedAndTheTime) {
  World world(42);
  const HostId h = world.add_host("node1", "10.0.0.1");
  world.add_process(h, "proc", scripted([](Scripted& s) {
                      s.context().after(Duration::seconds(1), [] {
                        const int leaders = 2;
                        SIM_ASSERT(leaders == 1, "{} leaders in one epoch", leaders);
                      });
                    }));
  world.boot();
  try {
    world.run_until(at_ms(5'000));
    FAIL() << "the assertion did not surface";
  } catch (const InvariantViolation& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("seed=42"), std::string::npos) << what;
    EXPECT_NE(what.find("t=1.000000s"), std::string::npos) << what;
    EXPECT_NE(what.find("2 leaders in one epoch"), std::string::npos) << what;
    EXPECT_EQ(e.seed(), std::optional<uint64_t>(42));
    EXPECT_EQ(e.at(), std::optional<Time>(at_ms(1'000)));
  }
}

TEST(World, AFailingInvariantCheckStopsTheRunAtTheEventThatBrokeIt) {
  World world(9);
  const HostId h = world.add_host("node1", "10.0.0.1");
  int value = 0;
  world.add_process(h, "proc", scripted([&](Scripted& s) {
                      for (int i = 1; i <= 5; ++i)
                        s.context().after(Duration::millis(250 * i), [&value, i] { value = i; });
                    }));
  world.set_invariant_check([&] { SIM_ASSERT(value < 3, "value reached {}", value); });
  world.boot();
  try {
    world.run_until_quiet();
    FAIL() << "the invariant violation did not surface";
  } catch (const InvariantViolation& e) {
    EXPECT_NE(std::string(e.what()).find("seed=9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t=0.750000s"), std::string::npos) << e.what();
    EXPECT_EQ(value, 3);
  }
}

}  // namespace
}  // namespace sim

namespace sim {
namespace {

// systemd's Restart=always, RestartSec=10 (seeds/000's kafka.service): a
// process that exits on its own or is killed comes back 10 s later; one
// stopped with terminate (systemctl stop) or whose host lost power does not.
TEST(World, TheServiceManagerRestartsWhatExitsOrIsKilledButNotWhatWasStopped) {
  World world(1, [] {
    WorldOptions o;
    o.boot_delay = Duration::seconds(5);
    return o;
  }());
  const HostId h = world.add_host("node1", "10.0.0.1");
  int exits_left = 1;
  const ProcessId p = world.add_process(h, "kafka", scripted([&](Scripted& s) {
    // The first incarnation dies of a fatal error one second in.
    if (exits_left-- > 0) s.context().after(Duration::seconds(1), [&s] { s.context().exit(); });
  }));
  world.set_restart(p, RestartPolicy::always, Duration::seconds(10));
  world.trace().keep_lines(true);
  world.boot();
  world.run_until(at_ms(10'999));
  EXPECT_FALSE(world.is_running(p)) << "not before RestartSec";
  world.run_until(at_ms(11'000));
  EXPECT_TRUE(world.is_running(p));
  EXPECT_EQ(world.incarnation(p), 2u);

  world.kill(p);  // kill -9
  world.run_until(at_ms(21'000));
  EXPECT_TRUE(world.is_running(p));
  EXPECT_EQ(world.incarnation(p), 3u);
  EXPECT_EQ(traced(world, "kafka", "restarted_by_service_manager"), (std::vector<Time>{at_ms(11'000), at_ms(21'000)}));

  world.terminate(p, Duration::seconds(30));  // systemctl stop: the process exits on SIGTERM
  world.run_until(at_ms(60'000));
  EXPECT_FALSE(world.is_running(p));

  world.start(p);
  world.power_off(h);
  world.run_until(at_ms(90'000));
  EXPECT_FALSE(world.is_running(p)) << "a power loss takes the service manager with it";
  world.power_on(h);
  world.run_until(at_ms(95'000));
  EXPECT_TRUE(world.is_running(p)) << "the host's boot starts it";
  EXPECT_EQ(world.incarnation(p), 5u);
}

// A restart scheduled for a process that someone else started meanwhile
// does not start a second incarnation.
TEST(World, TheServiceManagerDoesNotRestartAProcessAlreadyStartedAgain) {
  World world(1);
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId p = world.add_process(h, "zk", scripted(nullptr));
  world.set_restart(p, RestartPolicy::always, Duration::seconds(10));
  world.boot();
  world.kill(p);
  world.run_until(at_ms(2'000));
  world.start(p);
  world.run_until(at_ms(30'000));
  EXPECT_EQ(world.incarnation(p), 2u);
}

}  // namespace
}  // namespace sim
