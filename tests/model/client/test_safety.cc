// Issue 5's safety tests, through the real clients: a client::Producer and a
// client::Consumer record the history (model/check/checkers.h shapes), the
// final state is read from the brokers (model/check/final_state.h), and the
// checkers judge.
//   a. acks=1 loses an acknowledged value when the leader's host loses power
//      between appending it and a follower fetching it; acks=all with
//      idempotence and min.insync.replicas=2 loses nothing on the same
//      schedules.
//   b. a produce request that times out after the broker wrote it is retried
//      and written twice without idempotence; with it the broker drops the
//      retry.
//   c. rapidcheck: the safe configuration under random kills, pauses and
//      network cuts loses nothing and duplicates nothing.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "check_property.h"
#include "client/harness.h"
#include "kafka/cluster.h"
#include "model/client/config.h"
#include "model/properties.h"

namespace kafka::testing {
namespace {

using sim::Duration;

check::CheckOptions check_options(Cluster& c) {
  check::CheckOptions o;
  o.end_time_us = c.world().now().us();
  return o;
}

std::string bootstrap_list(SafetyRun& run) {
  std::string s;
  for (const client::BootstrapServer& b : run.bootstrap()) s += fmt::format("{}{}:{}", s.empty() ? "" : ",", b.host, b.port);
  return s;
}

// Client configurations by librdkafka's property names, validated as a real
// client validates them (idempotence forces acks=all and at most 5 in flight).
client::ProducerConfig producer_config(SafetyRun& run, std::map<std::string, std::string> props) {
  props["bootstrap.servers"] = bootstrap_list(run);
  return client::parse_producer_config(model::from_map(props, "producer properties"));
}

client::ConsumerConfig consumer_config(SafetyRun& run) {
  return client::parse_consumer_config(model::from_map(
      {{"bootstrap.servers", bootstrap_list(run)}, {"auto.offset.reset", "earliest"}, {"enable.auto.commit", "false"}},
      "consumer properties"));
}

// --- a. acks=1 loses an acknowledged value on a leader power-off --------------------

struct PowerOffOutcome {
  check::LostResult lost;
  check::DuplicatesResult duplicates;
  uint64_t acknowledged = 0;
  std::string settle;  // "" or what did not settle
  std::string summary;
};

// RF 3, one partition led by a broker that is not the controller; a producer
// sends a value every millisecond. Five seconds in (plus up to 2 ms drawn
// from the seed) the leader's host loses power and the producer stops soon
// after; a follower is elected from
// the ISR; after 30 s the host comes back and the run ends (heal, everything
// up, the consumer reads to the end).
constexpr Duration kBeforePowerOff = Duration::seconds(5);

PowerOffOutcome leader_power_off(uint64_t seed, bool safe) {
  std::map<std::string, std::string> broker_props;
  if (safe) broker_props["min.insync.replicas"] = "2";
  SafetyRun run({.brokers = 3, .seed = seed, .broker_properties = broker_props});
  InvariantChecker check(run.cluster);
  Cluster& c = run.cluster;
  c.start();
  PowerOffOutcome out;
  if (!c.await_ready()) {
    out.settle = "the cluster never became ready";
    return out;
  }
  const BrokerId leader = non_controller(c);
  if (c.create_topic("t", 1, 3, {}, {{0, leader_first(c, leader)}}) != ErrorCode::none) {
    out.settle = "topic creation failed";
    return out;
  }
  std::map<std::string, std::string> pp = {{"linger.ms", "0"}};
  if (safe) {
    pp["acks"] = "all";
    pp["enable.idempotence"] = "true";
  } else {
    pp["acks"] = "1";
  }
  run.start_clients("t", producer_config(run, pp), consumer_config(run),
                    {.topic = "t", .interval = Duration::millis(1), .max_outstanding = 1000, .value_size = 100});
  c.run_for(kBeforePowerOff);
  sim::Rng rng = c.world().rng("safety-schedule");
  c.run_for(rng.uniform(Duration::zero(), Duration::millis(2)));
  c.power_off_broker(leader);
  // What acks=1 can lose is decided in the moment of the power-off; sending
  // on through the failover would only make the run longer.
  c.run_for(Duration::millis(100));
  run.producer()->stop();
  c.run_for(Duration::seconds(30));
  c.power_on_broker(leader);
  out.settle = run.finish();
  const check::FinalState fs = run.final_state();
  out.lost = check::check_lost(run.history, fs);
  out.duplicates = check::check_duplicates(run.history, fs);
  out.acknowledged = run.producer()->acknowledged();
  out.summary = check::check_all(run.history, fs, check_options(c)).summary();
  return out;
}

// Whether acks=1 loses a value here hangs on which records the followers had
// fetched in the instant the power went: a few seeds in thirty (the first is
// seed 22 with the producer of 2026-12-05; a change in the clients' timing
// moves which). The acks=1 test looks until the first loss,
// up to kLossSearchSeeds; the acks=all test runs the first kPowerOffSeeds
// of the same schedules.
constexpr uint64_t kLossSearchSeeds = 60;
constexpr uint64_t kPowerOffSeeds = 24;

TEST(ClientSafety, AcksOneLosesAnAcknowledgedValueWhenTheLeaderLosesPower) {
  std::optional<uint64_t> first;
  std::string report;
  for (uint64_t seed = 1; seed <= kLossSearchSeeds && !first; ++seed) {
    const PowerOffOutcome o = leader_power_off(seed, /*safe=*/false);
    ASSERT_EQ(o.settle, "") << "seed " << seed;
    ASSERT_GT(o.acknowledged, 1000u) << "seed " << seed;
    report += fmt::format("  seed {}: {}\n", seed, o.summary);
    if (o.lost.lost == 0) continue;
    if (!first) first = seed;
    // What was lost was acknowledged just before the power went: the tail.
    for (const auto& item : o.lost.items) {
      EXPECT_GE(item.ack_time_us, kBeforePowerOff.us()) << "seed " << seed;
    }
  }
  ASSERT_TRUE(first.has_value()) << "no seed in 1.." << kLossSearchSeeds
                                 << " lost an acknowledged value with acks=1:\n" << report;
  // The acks=all test must run the schedule that loses here.
  EXPECT_LE(*first, kPowerOffSeeds) << "raise kPowerOffSeeds to cover the first losing seed";
  std::cout << fmt::format("acks=1 lost acknowledged values first on seed {}:\n{}", *first, report);
}

TEST(ClientSafety, AcksAllWithIdempotenceLosesNothingOnTheSameSchedules) {
  for (uint64_t seed = 1; seed <= kPowerOffSeeds; ++seed) {
    const PowerOffOutcome o = leader_power_off(seed, /*safe=*/true);
    ASSERT_EQ(o.settle, "") << "seed " << seed;
    EXPECT_GT(o.acknowledged, 1000u) << "seed " << seed;
    EXPECT_EQ(o.lost.lost, 0u) << "seed " << seed << ": " << o.summary;
    EXPECT_EQ(o.duplicates.duplicated, 0u) << "seed " << seed << ": " << o.summary;
  }
}

// --- b. a timed-out request that was written is written again -----------------------

struct TimeoutOutcome {
  check::DuplicatesResult duplicates;
  check::LostResult lost;
  uint64_t acknowledged = 0;
  std::string settle;
  std::string summary;
  std::map<std::string, int> errors;
};

// Starts the cluster and creates topic "t" (one partition, RF 3) led by a
// broker other than the controller, as `leader`. "" on success, else what
// went wrong.
std::string start_with_topic_led_by_a_non_controller(Cluster& c, BrokerId& leader) {
  c.start();
  if (!c.await_ready()) return "the cluster never became ready";
  leader = non_controller(c);
  if (c.create_topic("t", 1, 3, {}, {{0, leader_first(c, leader)}}) != ErrorCode::none) return "topic creation failed";
  return "";
}

// The leader's packets stop reaching the clients' host for 5 s (one way: the
// producer's requests still arrive and are written; the answers do not come
// back). request.timeout.ms is 2 s, so the producer gives up on the requests
// in flight, reconnects and sends them again once the path is back.
TimeoutOutcome response_lost(uint64_t seed, bool idempotent) {
  SafetyRun run({.brokers = 3, .seed = seed, .broker_properties = {{"min.insync.replicas", "2"}}});
  InvariantChecker check(run.cluster);
  Cluster& c = run.cluster;
  TimeoutOutcome out;
  BrokerId leader = kNoBroker;
  out.settle = start_with_topic_led_by_a_non_controller(c, leader);
  if (!out.settle.empty()) return out;
  std::map<std::string, std::string> pp = {{"acks", "all"},
                                           {"linger.ms", "0"},
                                           {"request.timeout.ms", "2000"},
                                           {"socket.timeout.ms", "2000"},
                                           {"message.timeout.ms", "120000"},
                                           {"max.in.flight", "5"}};
  if (idempotent) pp["enable.idempotence"] = "true";
  run.start_clients("t", producer_config(run, pp), consumer_config(run),
                    {.topic = "t", .interval = Duration::millis(100), .max_outstanding = 100, .value_size = 100});
  c.run_for(Duration::seconds(5));
  const sim::HostId clients = *c.world().find_host("clients");
  c.world().network().block(c.broker_host(leader), clients);
  c.run_for(Duration::seconds(5));
  c.world().network().heal();
  c.run_for(Duration::seconds(10));
  out.settle = run.finish();
  const check::FinalState fs = run.final_state();
  out.duplicates = check::check_duplicates(run.history, fs);
  out.lost = check::check_lost(run.history, fs);
  out.acknowledged = run.producer()->acknowledged();
  out.errors = run.producer()->errors();
  out.summary = check::check_all(run.history, fs, check_options(c)).summary();
  return out;
}

std::string describe(const check::DuplicatesResult& d) {
  std::string s;
  for (const auto& item : d.items) {
    s += fmt::format(" value {} at", item.value);
    for (const auto& [p, o] : item.final_positions) s += fmt::format(" {}:{}", p, o);
    s += ";";
  }
  return s;
}

TEST(ClientSafety, RetryAfterARequestTimeoutDuplicatesWithoutIdempotence) {
  const TimeoutOutcome o = response_lost(1, /*idempotent=*/false);
  ASSERT_EQ(o.settle, "");
  EXPECT_GE(o.duplicates.duplicated, 1u) << o.summary;
  // Each duplicated value sits at two offsets of the final log: the first
  // write (whose answer was lost) and the retry's.
  for (const auto& item : o.duplicates.items) {
    EXPECT_EQ(item.final_positions.size(), 2u) << "value " << item.value << describe(o.duplicates);
  }
  EXPECT_EQ(o.lost.lost, 0u) << o.summary;
  std::cout << "without idempotence: " << o.summary << ";" << describe(o.duplicates) << "\n";
}

TEST(ClientSafety, IdempotentProducerIsNotDuplicatedByTheSameRetry) {
  const TimeoutOutcome o = response_lost(1, /*idempotent=*/true);
  ASSERT_EQ(o.settle, "");
  EXPECT_GT(o.acknowledged, 100u);
  EXPECT_EQ(o.duplicates.duplicated, 0u) << o.summary << describe(o.duplicates);
  EXPECT_EQ(o.lost.lost, 0u) << o.summary;
  // The same schedule did time requests out and retry them.
  const TimeoutOutcome plain = response_lost(1, /*idempotent=*/false);
  EXPECT_GE(plain.duplicates.duplicated, 1u) << "the schedule must bite without idempotence";
}

// --- b2. an idempotent producer recovers from records that time out -----------------

// RF 3, one partition led by a broker that is not the controller, min.insync
// 2; an idempotent acks=all producer with the lab's timeouts
// (request.timeout.ms = message.timeout.ms = 10 s) sends a value every 5 ms.
// The leader's host loses power: the request in flight to it times out at
// the moment its records' message timeout runs out, so they fail for good and
// leave a gap in the partition's sequence numbers. librdkafka drains and
// bumps its epoch, and the records queued meanwhile go to the new leader
// numbered from 0; a producer that kept numbering on would be answered
// OUT_OF_ORDER_SEQUENCE_NUMBER until each record timed out (seed-000's
// acks=all scenario).
struct TimeoutGapOutcome {
  uint64_t acked_before = 0;          // acknowledged when the power went
  int64_t first_ack_after_us = -1;    // first ok of a value sent after the power-off
  uint64_t acked_in_window = 0;       // ok of values sent in [off + 22 s, off + 40 s)
  uint64_t sent_in_window = 0;
  check::LostResult lost;
  check::DuplicatesResult duplicates;
  std::string settle;
  std::string summary;
};

// The controller moves leadership once the dead broker's ZooKeeper session
// expires (about 15 s after the power-off here); requests that went to the
// dead leader before the producer's metadata knew time out 10 s after they
// were sent (at about 20 s). From 22 s on every send must be acknowledged.
constexpr Duration kWindowFrom = Duration::seconds(22);
constexpr Duration kWindowTo = Duration::seconds(40);

TimeoutGapOutcome idempotent_timeout_gap(uint64_t seed) {
  SafetyRun run({.brokers = 3, .seed = seed, .broker_properties = {{"min.insync.replicas", "2"}}});
  InvariantChecker check(run.cluster);
  Cluster& c = run.cluster;
  TimeoutGapOutcome out;
  BrokerId leader = kNoBroker;
  out.settle = start_with_topic_led_by_a_non_controller(c, leader);
  if (!out.settle.empty()) return out;
  run.start_clients("t",
                    producer_config(run, {{"acks", "all"},
                                          {"enable.idempotence", "true"},
                                          {"linger.ms", "0"},
                                          {"request.timeout.ms", "10000"},
                                          {"socket.timeout.ms", "10000"},
                                          {"message.timeout.ms", "10000"}}),
                    consumer_config(run),
                    {.topic = "t", .interval = Duration::millis(5), .max_outstanding = 1000, .value_size = 100});
  c.run_for(Duration::seconds(5));
  out.acked_before = run.producer()->acknowledged();
  const int64_t off_us = c.world().now().us();
  c.power_off_broker(leader);
  c.run_for(Duration::seconds(45));
  run.producer()->stop();
  c.power_on_broker(leader);
  out.settle = run.finish();
  std::map<uint64_t, int64_t> invoked_us;
  for (const check::Op& op : run.history.ops()) {
    if (op.f != check::OpFunction::send) continue;
    if (op.type == check::OpType::invoke) {
      invoked_us[op.value] = op.time_us;
      continue;
    }
    const int64_t sent_us = invoked_us.at(op.value);
    const bool in_window = sent_us >= off_us + kWindowFrom.us() && sent_us < off_us + kWindowTo.us();
    if (op.type != check::OpType::ok) continue;
    if (sent_us > off_us && out.first_ack_after_us < 0) out.first_ack_after_us = op.time_us - off_us;
    if (in_window) ++out.acked_in_window;
  }
  for (const auto& [value, at] : invoked_us) {
    if (at >= off_us + kWindowFrom.us() && at < off_us + kWindowTo.us()) ++out.sent_in_window;
  }
  const check::FinalState fs = run.final_state();
  out.lost = check::check_lost(run.history, fs);
  out.duplicates = check::check_duplicates(run.history, fs);
  out.summary = check::check_all(run.history, fs, check_options(c)).summary();
  return out;
}

TEST(ClientSafety, IdempotentProducerBumpsItsEpochAfterTimedOutRecordsAndProducesAgain) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    const TimeoutGapOutcome o = idempotent_timeout_gap(seed);
    ASSERT_EQ(o.settle, "");
    EXPECT_GT(o.acked_before, 500u);
    // Acknowledgements resume once the new leader is known (the election,
    // then the requests to the dead leader time out), not never: without
    // the epoch bump every later record was answered
    // OUT_OF_ORDER_SEQUENCE_NUMBER until it timed out.
    ASSERT_GE(o.first_ack_after_us, 0) << o.summary;
    EXPECT_LT(o.first_ack_after_us, kWindowFrom.us()) << o.summary;
    // From then on everything sent is acknowledged (one every 5 ms: 3600).
    EXPECT_GT(o.sent_in_window, 3000u);
    EXPECT_EQ(o.acked_in_window, o.sent_in_window) << o.summary;
    EXPECT_EQ(o.lost.lost, 0u) << o.summary;
    EXPECT_EQ(o.duplicates.duplicated, 0u) << o.summary << describe(o.duplicates);
  }
}

// --- c. the safe configuration under random faults (rapidcheck) -----------------------

enum class Fault : uint8_t { kill, pause, isolate, cut_leader_from_followers, cut_leader_from_zookeeper, block };
enum class Target : uint8_t { broker, controller, leader };

const char* enumerator(Fault f) {
  switch (f) {
    case Fault::kill: return "Fault::kill";
    case Fault::pause: return "Fault::pause";
    case Fault::isolate: return "Fault::isolate";
    case Fault::cut_leader_from_followers: return "Fault::cut_leader_from_followers";
    case Fault::cut_leader_from_zookeeper: return "Fault::cut_leader_from_zookeeper";
    case Fault::block: return "Fault::block";
  }
  return "?";
}

const char* enumerator(Target t) {
  switch (t) {
    case Target::broker: return "Target::broker";
    case Target::controller: return "Target::controller";
    case Target::leader: return "Target::leader";
  }
  return "?";
}

struct Episode {
  int64_t gap_ms = 0;  // after the previous episode began
  Fault fault = Fault::kill;
  Target target = Target::broker;
  int index = 0;  // broker 1 + index % 3, or partition index % 2
  int64_t duration_ms = 0;
};

struct SafeCase {
  uint64_t seed = 1;
  int zookeepers = 1;
  std::vector<Episode> schedule;
};

void showValue(const Episode& e, std::ostream& os) {
  os << fmt::format("{{.gap_ms = {}, .fault = {}, .target = {}, .index = {}, .duration_ms = {}}}", e.gap_ms,
                    enumerator(e.fault), enumerator(e.target), e.index, e.duration_ms);
}

void showValue(const SafeCase& k, std::ostream& os) {
  os << fmt::format("SafeCase{{.seed = {}, .zookeepers = {}, .schedule = {{\n", k.seed, k.zookeepers);
  for (const Episode& e : k.schedule) {
    os << "    ";
    showValue(e, os);
    os << ",\n";
  }
  os << "}}";
}

rc::Gen<Episode> gen_episode() {
  return rc::gen::build<Episode>(
      rc::gen::set(&Episode::gap_ms, rc::gen::inRange<int64_t>(0, 12000)),
      rc::gen::set(&Episode::fault, rc::gen::weightedElement<Fault>({
                                        {4, Fault::kill},
                                        {3, Fault::pause},
                                        {2, Fault::isolate},
                                        {3, Fault::cut_leader_from_followers},
                                        {2, Fault::cut_leader_from_zookeeper},
                                        {1, Fault::block},
                                    })),
      rc::gen::set(&Episode::target, rc::gen::weightedElement<Target>({
                                         {2, Target::broker},
                                         {2, Target::controller},
                                         {4, Target::leader},
                                     })),
      rc::gen::set(&Episode::index, rc::gen::inRange(0, 6)),
      // Restarts within the 18 s session timeout (the broker exits at
      // startup, as a real one does) and after it.
      rc::gen::set(&Episode::duration_ms, rc::gen::weightedOneOf<int64_t>({
                                              {1, rc::gen::inRange<int64_t>(200, 15000)},
                                              {2, rc::gen::inRange<int64_t>(19000, 40000)},
                                          })));
}

rc::Gen<SafeCase> gen_safe_case() {
  return rc::gen::build<SafeCase>(
      rc::gen::set(&SafeCase::seed, rc::gen::noShrink(rc::gen::resize(100, rc::gen::inRange<uint64_t>(1, 1ULL << 48)))),
      rc::gen::set(&SafeCase::zookeepers, rc::gen::resize(100, rc::gen::element(1, 3))),
      rc::gen::set(&SafeCase::schedule,
                   rc::gen::resize(6, rc::gen::container<std::vector<Episode>>(rc::gen::resize(100, gen_episode())))));
}

struct SafeVerdict {
  std::optional<std::string> failure;
  std::vector<std::string> timeline;
  std::string summary;
};

// RF 3, min.insync.replicas=2, unclean election off, leader-epoch
// truncation (the defaults of 2.8 otherwise), two partitions on three
// brokers; a producer with acks=all and enable.idempotence=true sending a
// value every 50 ms; a consumer reading both partitions from the earliest
// offset throughout. The schedule runs, then the run ends as every safety run
// does (SafetyRun::finish), and the checkers judge. message.timeout.ms is
// librdkafka's default (300 s), longer than any schedule: records that time
// out make the idempotent producer bump its epoch, and a record of another
// partition whose retry was pending is then renumbered and may be written
// twice — idempotence does not cover that (librdkafka issue #4953).
SafeVerdict safe_case(const SafeCase& k) {
  SafeVerdict v;
  SafetyRun run({.zookeepers = k.zookeepers, .brokers = 3, .seed = k.seed,
                 .broker_properties = {{"min.insync.replicas", "2"}, {"unclean.leader.election.enable", "false"}}});
  Cluster& c = run.cluster;
  auto note = [&](const std::string& what) {
    v.timeline.push_back(fmt::format("{:>10.3f}s  {}", static_cast<double>(c.world().now().us()) / 1e6, what));
  };
  try {
    InvariantChecker check(c);
    c.start();
    if (!c.await_ready()) {
      v.failure = "setup: the cluster never became ready";
      return v;
    }
    if (c.create_topic("t", 2, 3) != ErrorCode::none) {
      v.failure = "setup: topic creation failed";
      return v;
    }
    run.start_clients("t",
                      producer_config(run, {{"acks", "all"},
                                            {"enable.idempotence", "true"},
                                            {"linger.ms", "5"},
                                            {"message.timeout.ms", "300000"}}),
                      consumer_config(run),
                      {.topic = "t", .interval = Duration::millis(50), .max_outstanding = 200, .value_size = 100});
    c.run_for(Duration::seconds(3));

    // The schedule: each episode begins `gap_ms` after the previous one and
    // is undone `duration_ms` later.
    struct Step {
      sim::Time at;
      size_t episode;
      bool begin;
    };
    std::vector<Step> steps;
    sim::Time t = c.world().now();
    for (size_t i = 0; i < k.schedule.size(); ++i) {
      t += Duration::millis(k.schedule[i].gap_ms);
      steps.push_back({t, i, true});
      steps.push_back({t + Duration::millis(k.schedule[i].duration_ms), i, false});
    }
    std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
    struct Applied {
      std::optional<sim::ProcessId> process;
      std::vector<std::vector<sim::HostId>> groups;
      std::vector<std::pair<sim::HostId, sim::HostId>> blocked;
      std::optional<sim::HostId> isolated;
      bool cut = false;
    };
    std::map<size_t, Applied> applied;
    auto apply_cuts = [&] {
      sim::Network& net = c.world().network();
      net.heal();
      for (const auto& [_, a] : applied) {
        if (!a.cut) continue;
        if (!a.groups.empty()) net.partition(a.groups);
        if (a.isolated) net.isolate(*a.isolated);
        for (const auto& [from, to] : a.blocked) net.block(from, to);
      }
    };
    auto victim = [&](const Episode& e) -> std::optional<BrokerId> {
      switch (e.target) {
        case Target::broker: return static_cast<BrokerId>(1 + e.index % 3);
        case Target::controller: return c.controller();
        case Target::leader: {
          auto s = c.state({"t", e.index % 2});
          if (!s || s->leader == kNoBroker) return std::nullopt;
          return s->leader;
        }
      }
      return std::nullopt;
    };
    for (const Step& s : steps) {
      c.world().run_until(s.at);
      const Episode& e = k.schedule[s.episode];
      Applied& a = applied[s.episode];
      if (!s.begin) {
        if (a.process) {
          if (e.fault == Fault::pause) {
            c.world().resume(*a.process);
          } else {
            c.world().start(*a.process);
          }
          note(fmt::format("#{} ends: {} {}{}", s.episode, e.fault == Fault::pause ? "resume" : "start",
                           c.world().process_name(*a.process),
                           c.world().is_running(*a.process) ? "" : " (exited at startup)"));
          a.process.reset();
        }
        if (a.cut) {
          a.cut = false;
          note(fmt::format("#{} ends: cut removed", s.episode));
          apply_cuts();
        }
        continue;
      }
      const std::optional<BrokerId> b = victim(e);
      if (!b) {
        note(fmt::format("#{} {}: no victim, skipped", s.episode, enumerator(e.fault)));
        continue;
      }
      const sim::ProcessId p = c.broker_process(*b);
      switch (e.fault) {
        case Fault::kill:
        case Fault::pause:
          if (!c.world().is_running(p) || c.world().is_paused(p)) {
            note(fmt::format("#{} {} broker {}: not running, skipped", s.episode, enumerator(e.fault), *b));
            continue;
          }
          if (e.fault == Fault::kill) c.world().kill(p);
          if (e.fault == Fault::pause) c.world().pause(p);
          a.process = p;
          break;
        case Fault::isolate:
          a.isolated = c.broker_host(*b);
          a.cut = true;
          break;
        case Fault::cut_leader_from_followers:
        case Fault::cut_leader_from_zookeeper: {
          std::vector<sim::HostId> others;
          if (e.fault == Fault::cut_leader_from_zookeeper) {
            for (int i = 1; i <= k.zookeepers; ++i) others.push_back(c.world().host_of(c.zk_process(i)));
          } else {
            for (BrokerId o : c.broker_ids()) {
              if (o != *b) others.push_back(c.broker_host(o));
            }
          }
          a.groups = {{c.broker_host(*b)}, others};
          a.cut = true;
          break;
        }
        case Fault::block:
          // The broker's packets stop reaching the clients (one way).
          a.blocked.emplace_back(c.broker_host(*b), *c.world().find_host("clients"));
          a.cut = true;
          break;
      }
      note(fmt::format("#{} {} {} (broker {})", s.episode, enumerator(e.fault), enumerator(e.target), *b));
      if (a.cut) apply_cuts();
    }
    note("heal; everything up; producer stopped; the consumer reads to the end");
    const std::string settle = run.finish();
    if (!settle.empty()) {
      v.failure = "liveness after the heal: " + settle;
      return v;
    }
    const check::FinalState fs = run.final_state();
    const check::Verdict verdict = check::check_all(run.history, fs, check_options(c));
    v.summary = fmt::format("{} (sent {}, acknowledged {})", verdict.summary(), run.producer()->sent(),
                            run.producer()->acknowledged());
    note("end: " + v.summary);
    if (verdict.lost.lost != 0) {
      const auto& i = verdict.lost.items.front();
      v.failure = fmt::format("{} acknowledged values lost; first: value {} acknowledged at {}-{}@{} at {} us",
                              verdict.lost.lost, i.value, i.topic, i.partition, i.offset, i.ack_time_us);
    } else if (verdict.duplicates.duplicated != 0) {
      v.failure = fmt::format("{} values duplicated;{}", verdict.duplicates.duplicated, describe(verdict.duplicates));
    }
  } catch (const sim::InvariantViolation& e) {
    v.failure = fmt::format("invariant: {}", e.what());
  }
  return v;
}

std::string describe(const SafeVerdict& v) {
  std::string out = v.failure.value_or("passed") + "\ntimeline:\n";
  for (const std::string& line : v.timeline) out += line + "\n";
  return out;
}

using kafkasim::testing::check_property;

constexpr int kSafeCases = 50;

TEST(ClientSafetyProperties, SafeConfigurationLosesAndDuplicatesNothingThroughTheClients) {
  check_property(
      [] {
        const SafeCase k = *gen_safe_case();
        const SafeVerdict v = safe_case(k);
        if (!v.failure) return;
        RC_LOG() << describe(v);
        RC_FAIL(*v.failure);
      },
      kSafeCases);
}

}  // namespace
}  // namespace kafka::testing
