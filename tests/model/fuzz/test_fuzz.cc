// The fuzzer (model/fuzz/fuzz.h): its cases are valid scenarios whatever
// rapidcheck draws or shrinks to; the four properties hold in their spaces
// (RC properties, each case a whole cluster run); the known-unsafe
// configurations are caught and shrunk to at most three faults; and the cases
// it found and shrank, kept under scenarios/regressions/, still show what
// they showed.
#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "check_property.h"
#include "model/fuzz/fuzz.h"
#include "model/scenario/run.h"

namespace fuzz {
namespace {

using scenario::Fault;
using scenario::FaultAction;

// The scenario's faults of one action.
std::vector<const Fault*> faults_of(const Built& b, FaultAction a) {
  std::vector<const Fault*> out;
  for (const Fault& f : b.scenario.faults) {
    if (f.action == a) out.push_back(&f);
  }
  return out;
}

FuzzOptions options(int runs, uint64_t seed, std::string reproduce = "") {
  FuzzOptions o;
  o.runs = runs;
  o.seed = seed;
  o.reproduce = std::move(reproduce);
  return o;
}

Case three_brokers(std::vector<FaultStep> faults) {
  Case c;
  c.zookeepers = 1;
  c.colocated = true;
  c.brokers = 3;
  c.replication_factor = 3;
  c.faults = std::move(faults);
  return c;
}

// --- generation and building ------------------------------------------------------------

TEST(FuzzBuild, EveryGeneratedCaseIsAScenarioWithItsFaultsInsideTheWindow) {
  for (Property p : all_properties()) {
    const Space space = default_space(p);
    const bool held = kafkasim::testing::check_property(
        [&] {
          const Case c = *gen_case(space);
          const Built b = build(c, space);  // throws (fails the case) if the parser rejects it
          RC_ASSERT(b.faults <= space.max_faults);
          RC_ASSERT(b.faults <= static_cast<int32_t>(c.faults.size()));
          const int64_t window_start = space.window_start_ms * 1000;
          for (const Fault& f : b.scenario.faults) {
            RC_ASSERT(f.at_us >= window_start);
            RC_ASSERT(f.at_us <= b.heal_us);
          }
          RC_ASSERT(b.scenario.duration_us > b.heal_us + b.bound_us);
          RC_ASSERT(b.scenario.brokers.size() == static_cast<size_t>(c.brokers));
          RC_ASSERT(b.scenario.zookeepers.size() == static_cast<size_t>(c.zookeepers));
          RC_ASSERT(b.scenario.topics.front().replication_factor <= c.brokers);
          // Every fault is undone: as many undos as faults of each kind.
          RC_ASSERT(faults_of(b, FaultAction::kill).size() + faults_of(b, FaultAction::stop).size() ==
                    faults_of(b, FaultAction::start).size());
          RC_ASSERT(faults_of(b, FaultAction::pause).size() == faults_of(b, FaultAction::resume).size());
          RC_ASSERT(faults_of(b, FaultAction::power_off).size() == faults_of(b, FaultAction::power_on).size());
          RC_ASSERT(faults_of(b, FaultAction::replace_address).size() % 2 == 0);
          const size_t cuts = faults_of(b, FaultAction::partition).size() + faults_of(b, FaultAction::isolate).size();
          RC_ASSERT(faults_of(b, FaultAction::heal).size() == (cuts == 0 ? 0 : cuts + 1));
          if (p == Property::durability) RC_ASSERT(faults_of(b, FaultAction::power_off).empty());
          // The consumers: one without a group, or the group's members.
          const scenario::SteadyWorkload& w = b.scenario.workload.steady;
          RC_ASSERT(c.group_members >= space.min_group_members && c.group_members <= space.max_group_members);
          RC_ASSERT(w.consumers.size() == static_cast<size_t>(std::max(1, c.group_members)));
          RC_ASSERT(w.options.groups.size() == (c.group_members > 0 ? 1u : 0u));
          RC_ASSERT(w.consumers_start_us.has_value() == (c.group_members == 0));
        },
        100);
    EXPECT_TRUE(held) << to_string(p);
  }
}

TEST(FuzzBuild, HalfTheCasesHaveAGroupOfOneToThreeMembers) {
  const Space space = default_space(Property::safety);
  std::map<int32_t, int> counts;
  // 400 draws at sizes 0..99, straight from the generator (not scaled).
  const rc::Gen<Case> gen = gen_case(space);
  rc::Random random(7);
  for (int i = 0; i < 400; ++i) ++counts[gen(random.split(), i % 100).value().group_members];
  for (int32_t n : {0, 1, 2, 3}) EXPECT_GT(counts[n], 40) << n << " members";
  EXPECT_GT(counts[0], 140);
  EXPECT_EQ(counts.size(), 4u);
  // A space can ask for groups only, or none.
  Space only = space;
  only.min_group_members = only.max_group_members = 2;
  Space none = space;
  none.max_group_members = 0;
  EXPECT_TRUE(kafkasim::testing::check_property([&] { RC_ASSERT((*gen_case(only)).group_members == 2); }, 50));
  EXPECT_TRUE(kafkasim::testing::check_property([&] { RC_ASSERT((*gen_case(none)).group_members == 0); }, 50));
  none.min_group_members = 1;
  EXPECT_THROW(validate(none), std::invalid_argument);
  only.max_group_members = 7;
  EXPECT_THROW(validate(only), std::invalid_argument);
}

TEST(FuzzBuild, AGroupCaseRunsItsMembersThroughTheFaultsAndJudgesTheirCommits) {
  Case c = three_brokers({{FaultKind::isolate, 5'000, 10'000, 0, 0}});
  c.group_members = 2;
  const Built durable = build(c, default_space(Property::durability));
  const nlohmann::json& w = durable.document["workload"];
  EXPECT_EQ(w["consumers"], (nlohmann::json{"member1", "member2"}));
  EXPECT_EQ(w["groups"], (nlohmann::json{"g"}));
  EXPECT_FALSE(w.contains("consumers_start_s"));
  EXPECT_EQ(durable.expectation,
            "lost == 0 && duplicates == 0 && divergent == 0 && dirty_reads == 0 && skipped == 0");
  const Built live = build(c, default_space(Property::liveness));
  EXPECT_NE(live.expectation.find("final.groups.g.members == 2"), std::string::npos) << live.expectation;
  EXPECT_NE(live.expectation.find("(phases.after_bound.clients.member2.longest_stall_s < 5 || "
                                   "len(checks.groups[0].assignment.member2) == 0)"),
            std::string::npos)
      << live.expectation;
  // Both hold on this case, and the commits were judged.
  for (const Built* b : {&durable, &live}) {
    const scenario::RunResult r = scenario::run_scenario(b->scenario, b->scenario.seed);
    std::string failed;
    for (const scenario::ExpectationOutcome& e : r.expectations) failed += e.text + ": " + e.detail + "\n";
    EXPECT_EQ(r.exit_code(), scenario::kExitHeld) << failed;
    EXPECT_GT(r.verdict["checks"]["skips"]["commits_checked"].get<int64_t>(), 0);
  }
  EXPECT_NE(describe(c, default_space(Property::durability)).find("a group of 2 consumers"), std::string::npos);
  // Without a group, the expectations are as before.
  c.group_members = 0;
  EXPECT_EQ(build(c, default_space(Property::durability)).expectation,
            "lost == 0 && duplicates == 0 && divergent == 0");
}

TEST(FuzzBuild, ValuesOutsideTheGeneratorsRangesStillBuild) {
  // What a shrinker or a hand-written case might hold: negative and huge
  // indices, starts past the window, zero durations, unknown config indices.
  const Space space = default_space(Property::safety);
  const bool held = kafkasim::testing::check_property(
      [&] {
        Case c;
        c.zookeepers = *rc::gen::inRange(1, 6);
        c.colocated = *rc::gen::arbitrary<bool>();
        c.brokers = *rc::gen::inRange(1, 7);
        c.partitions = *rc::gen::inRange(-2, 5);
        c.replication_factor = *rc::gen::inRange(-1, 9);
        c.config = *rc::gen::container<std::vector<int32_t>>(rc::gen::arbitrary<int32_t>());
        c.group_members = *rc::gen::arbitrary<int32_t>();
        c.faults = *rc::gen::container<std::vector<FaultStep>>(rc::gen::apply(
            [](FaultKind k, int64_t at, int64_t d, int32_t t, int32_t o) { return FaultStep{k, at, d, t, o}; },
            rc::gen::elementOf(all_fault_kinds()), rc::gen::arbitrary<int64_t>(),
            rc::gen::inRange<int64_t>(-10, 100'000), rc::gen::arbitrary<int32_t>(), rc::gen::arbitrary<int32_t>()));
        const Built b = build(c, space);
        RC_ASSERT(b.faults <= static_cast<int32_t>(c.faults.size()));
      },
      200);
  EXPECT_TRUE(held);
}

TEST(FuzzBuild, AFaultOnATargetStillFaultedIsLeftOut) {
  const Space space = default_space(Property::safety);
  // Processes are zk1, kafka1, kafka2, kafka3 (targets 0..3).
  const Built b = build(three_brokers({{FaultKind::kill, 0, 20'000, 1, 0},
                                       {FaultKind::pause, 5'000, 5'000, 1, 0},    // kafka1 still killed
                                       {FaultKind::power_off, 6'000, 5'000, 1, 0},  // node2
                                       {FaultKind::stop, 7'000, 1'000, 2, 0},     // kafka2: its host is off
                                       {FaultKind::halves, 8'000, 10'000, 0, 0},
                                       {FaultKind::isolate, 9'000, 10'000, 0, 0}}),  // the network is cut
                      space);
  EXPECT_EQ(b.faults, 3);
  ASSERT_EQ(faults_of(b, FaultAction::kill).size(), 1u);
  EXPECT_EQ(faults_of(b, FaultAction::kill)[0]->target, "kafka1");
  EXPECT_TRUE(faults_of(b, FaultAction::pause).empty());
  EXPECT_TRUE(faults_of(b, FaultAction::stop).empty());
  EXPECT_TRUE(faults_of(b, FaultAction::isolate).empty());
  ASSERT_EQ(faults_of(b, FaultAction::power_off).size(), 1u);
  EXPECT_EQ(faults_of(b, FaultAction::power_off)[0]->target, "node2");
  // The halves over node1..3 and the client host, rotated by 0, cut after 1.
  ASSERT_EQ(faults_of(b, FaultAction::partition).size(), 1u);
  EXPECT_EQ(faults_of(b, FaultAction::partition)[0]->groups,
            (std::vector<std::vector<std::string>>{{"node1"}, {"node2", "node3", "client"}}));
  // Undone at start + duration, and one final heal at the window's end.
  EXPECT_EQ(faults_of(b, FaultAction::start)[0]->at_us, (space.window_start_ms + 20'000) * 1000);
  const auto heals = faults_of(b, FaultAction::heal);
  ASSERT_EQ(heals.size(), 2u);
  EXPECT_EQ(heals[0]->at_us, (space.window_start_ms + 18'000) * 1000);
  EXPECT_EQ(heals[1]->at_us, b.heal_us);
}

TEST(FuzzBuild, BridgeAndMajorityRingAreWrittenAsCuts) {
  const Space space = default_space(Property::safety);
  Case c = three_brokers({{FaultKind::bridge, 0, 5'000, 0, 0}, {FaultKind::majority_ring, 10'000, 5'000, 0, 0}});
  c.brokers = 5;
  c.zookeepers = 5;
  const Built b = build(c, space);
  const auto parts = faults_of(b, FaultAction::partition);
  ASSERT_EQ(parts.size(), 2u);
  // Bridge over node1..5: node1, node2 | node3 | node4, node5.
  EXPECT_EQ(parts[0]->cuts, (std::vector<std::pair<std::string, std::string>>{
                                {"node1", "node4"}, {"node1", "node5"}, {"node2", "node4"}, {"node2", "node5"}}));
  // Majority ring of five: each host reaches its two neighbours, so the
  // pairs two apart are cut.
  EXPECT_EQ(parts[1]->cuts, (std::vector<std::pair<std::string, std::string>>{{"node1", "node3"},
                                                                              {"node1", "node4"},
                                                                              {"node2", "node4"},
                                                                              {"node2", "node5"},
                                                                              {"node3", "node5"}}));
  // Too few hosts for either shape: left out.
  c.brokers = 2;
  c.zookeepers = 1;
  EXPECT_EQ(build(c, space).faults, 0);
}

TEST(FuzzBuild, TheLivenessBoundComesFromTheTimeouts) {
  Space space = default_space(Property::liveness);
  const Built a = build(three_brokers({}), space);
  // 3.9: session 18 s + initLimit 10 x tickTime 2 s + restart 10 s + the
  // producer's own wait (socket.timeout.ms, 60 s) + 10 s.
  EXPECT_EQ(a.bound_us, (18 + 20 + 10 + 60 + 10) * 1'000'000LL);
  pin(space, "zookeeper.session.timeout.ms", "6000");
  pin(space, "producer.socket.timeout.ms", "5000");
  const Built b = build(three_brokers({}), space);
  EXPECT_EQ(b.bound_us, (6 + 20 + 10 + 5 + 10) * 1'000'000LL);
  EXPECT_EQ(b.document["kafka"]["properties"]["zookeeper.session.timeout.ms"], "6000");
  EXPECT_EQ(b.document["clients"]["producer"]["socket.timeout.ms"], "5000");
  // The broker's ack timeout (request.timeout.ms) does not bound the wait.
  Space acks = space;
  pin(acks, "producer.socket.timeout.ms", "60000");
  pin(acks, "producer.request.timeout.ms", "5000");
  EXPECT_EQ(build(three_brokers({}), acks).bound_us, (6 + 20 + 10 + 60 + 10) * 1'000'000LL);
  // A message timeout shorter than socket.timeout.ms cuts the wait.
  pin(acks, "producer.message.timeout.ms", "20000");
  EXPECT_EQ(build(three_brokers({}), acks).bound_us, (6 + 20 + 10 + 20 + 10) * 1'000'000LL);
  // Group members run through the faults, and a fetch that went into a
  // power-off is answered by nothing until the consumer's request timeout
  // (librdkafka's socket.timeout.ms, 60 s) when it is the longer.
  Case grouped = three_brokers({});
  grouped.group_members = 2;
  EXPECT_EQ(build(grouped, space).bound_us, (6 + 20 + 10 + 60 + 10) * 1'000'000LL);
  pin(space, "consumer.socket.timeout.ms", "3000");
  EXPECT_EQ(build(grouped, space).bound_us, (6 + 20 + 10 + 5 + 10) * 1'000'000LL);
}

// The case `kafkasim fuzz --property liveness --seed 901` found: a member's
// fetch reached the leader just before its host lost power for a second.
// Nothing was left to retransmit, so the member heard nothing until its
// request timed out 60 s later, and only then asked who leads. The liveness
// bound must wait that long (it flagged the member as stalled before).
TEST(FuzzBuild, AMemberWhoseFetchWentIntoAPowerOffFlowsAgainWithinTheBound) {
  // `kafkasim fuzz --property liveness --seed 901 --version 2.8 --faults
  // pause,kill,power_off,isolate,replace_address --zookeepers 1..3`, shrunk:
  // a group of 2, broker host node1 powered off at 66.3 s for 1 s.
  Space space = default_space(Property::liveness);
  space.version = "2.8";
  space.kinds = {FaultKind::pause, FaultKind::kill, FaultKind::power_off, FaultKind::isolate,
                 FaultKind::replace_address};
  space.min_zookeepers = 1;
  space.max_zookeepers = 3;
  const FuzzResult r = fuzz(space, options(150, 901,
                                           "reproduce=B0gZ1pnevwWa2VmblN3c4pxuQ5VWfS0OHy2_MmmEGvAICSXJRvZEMFyz5"
                                           "WxNz4HgACEAVEGAAAAEAAQAEQgBGYwCLsQDSYxFZA seed=0"));
  // The case replayed and held: rapidcheck says so in its own words.
  EXPECT_FALSE(r.counterexample.has_value()) << r.message;
  EXPECT_EQ(r.error, "Reproduced result is not a failure");
}

// A broker that starts while its host is at a temporary address advertises
// that address while it runs, as Kafka does (docs/fuzzing.md): a liveness
// failure no heal undoes. So no replace_address starts while a broker may
// still be exiting, restarting or registering after a fault: for the longer
// of the session and connection timeouts, two restart delays and the boot
// delay after any fault ended, on any host (a cut, or ZooKeeper down
// elsewhere, keeps a starting broker cycling too).
TEST(FuzzBuild, NoAddressIsReplacedWhileABrokerMayStillRestart) {
  Space space = default_space(Property::liveness);
  pin(space, "zookeeper.session.timeout.ms", "6000");
  // Host and time in the window of each move to a temporary address.
  using Moves = std::vector<std::pair<std::string, int64_t>>;
  const auto moves = [&](const Built& built) {
    Moves out;
    for (const Fault* f : faults_of(built, FaultAction::replace_address)) {
      if (f->address.rfind("10.0.2.", 0) == 0) out.emplace_back(f->target, f->at_us / 1000 - space.window_start_ms);
    }
    return out;
  };
  // Settled 6 s + 2 x 10 s + 1 s = 27 s after a fault ends. Processes are
  // zk1, kafka1, kafka2, kafka3 (targets 0..3); hosts node1..3 (0..2).
  const Built b = build(three_brokers({{FaultKind::kill, 0, 2'000, 1, 0},               // kafka1, to 2 s
                                       {FaultKind::replace_address, 20'000, 5'000, 0, 0},  // node1: before 29 s
                                       {FaultKind::replace_address, 21'000, 5'000, 1, 0},  // node2: too
                                       {FaultKind::replace_address, 29'000, 5'000, 1, 0},  // node2: settled
                                       {FaultKind::replace_address, 50'000, 5'000, 0, 0}}),  // before 34 + 27 s
                        space);
  EXPECT_EQ(moves(b), (Moves{{"node2", 29'000}}));
  EXPECT_EQ(b.faults, 2);
  // A cut counts as well.
  const Built cut = build(three_brokers({{FaultKind::isolate, 0, 2'000, 2, 0},
                                         {FaultKind::replace_address, 20'000, 5'000, 0, 0},
                                         {FaultKind::replace_address, 29'000, 5'000, 0, 0}}),
                          space);
  EXPECT_EQ(moves(cut), (Moves{{"node1", 29'000}}));
  // A kill of kafka1 to 2 s, then node1 replaced at `early` and at `late`:
  // the moves kept.
  const auto after_kill = [&](int64_t early, int64_t late) {
    return moves(build(three_brokers({{FaultKind::kill, 0, 2'000, 1, 0},
                                      {FaultKind::replace_address, early, 5'000, 0, 0},
                                      {FaultKind::replace_address, late, 5'000, 0, 0}}),
                       space));
  };
  // With a longer session timeout it takes longer to settle: 18 + 20 + 1 s.
  pin(space, "zookeeper.session.timeout.ms", "18000");
  EXPECT_EQ(after_kill(29'000, 41'000), (Moves{{"node1", 41'000}}));
  // So does a connection timeout longer than the session timeout: 30 + 20 + 1 s.
  pin(space, "zookeeper.session.timeout.ms", "6000");
  pin(space, "zookeeper.connection.timeout.ms", "30000");
  EXPECT_EQ(after_kill(41'000, 53'000), (Moves{{"node1", 53'000}}));
}

TEST(FuzzBuild, ABadPinnedKeyIsAnInputErrorNamingSet) {
  Space space = default_space(Property::durability);
  pin(space, "zookeeper.session.tmeout.ms", "6000");
  try {
    (void)fuzz(space, options(1, 1));
    FAIL() << "no error";
  } catch (const scenario::InputError& e) {
    EXPECT_EQ(e.file(), "--set");
    EXPECT_NE(std::string(e.what()).find("zookeeper.session.tmeout.ms"), std::string::npos) << e.what();
  }
}

// --- the properties, as rapidcheck properties ---------------------------------------------
// Each case is a whole cluster run of ~180 virtual seconds (tens of
// milliseconds in the release build); rapidcheck's case count (100, or
// RC_PARAMS "max_success=N") applies. The sanitizer build (-Og, about 15
// times slower) runs each through check_property, so that
// KAFKASIM_TEST_SCALE_PERCENT can shorten it: 100 cases unless told.

void holds(Property p) {
  static const std::map<Property, Space> spaces = {
      {Property::safety, default_space(Property::safety)},
      {Property::determinism, default_space(Property::determinism)},
      {Property::durability, default_space(Property::durability)},
      {Property::liveness, default_space(Property::liveness)},
  };
  const Space& space = spaces.at(p);
  const Case c = *gen_case(space);
  const Built b = build(c, space);
  const Judgement j = judge(b, space);
  if (!j.held) RC_FAIL(j.message + "\n" + describe(c, space));
}

#if KAFKASIM_SANITIZED
#define KAFKASIM_FUZZ_PROPERTY(name, property) \
  TEST(FuzzProperties, name) { EXPECT_TRUE(kafkasim::testing::check_property([] { holds(property); }, 100)); }
#else
#define KAFKASIM_FUZZ_PROPERTY(name, property) \
  RC_GTEST_PROP(FuzzProperties, name, ()) { holds(property); }
#endif

KAFKASIM_FUZZ_PROPERTY(SafetyNoInvariantBreaksForAnyShapeConfigurationOrSchedule, Property::safety)
KAFKASIM_FUZZ_PROPERTY(DeterminismEveryCaseRunTwiceGivesTheSameTrace, Property::determinism)
KAFKASIM_FUZZ_PROPERTY(DurabilityTheSafeConfigurationLosesNothingWithoutPowerLoss, Property::durability)
KAFKASIM_FUZZ_PROPERTY(LivenessClientsFlowAgainWithinTheBoundAfterTheHeal, Property::liveness)

// --- known-unsafe configurations are caught and shrunk -------------------------------------

// The search runs in the release gate; under the sanitizers the kept
// regressions below stand for it (check_property.h, run_fuzz_searches).
void finds_and_shrinks(Space space, uint64_t seed) {
  if (!kafkasim::testing::run_fuzz_searches()) GTEST_SKIP() << "the search runs in the release gate";
  space.min_brokers = space.max_brokers = 3;
  space.min_zookeepers = space.max_zookeepers = 1;
  const FuzzResult r = fuzz(space, options(1000, seed));
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_TRUE(r.counterexample.has_value()) << "no counterexample in " << r.cases << " cases";
  EXPECT_LE(r.built.faults, 3) << describe(*r.counterexample, space);
  EXPECT_GE(r.built.faults, 1) << describe(*r.counterexample, space);
  EXPECT_GT(r.shrinks_accepted, 0);
  // The shrunk case fails on its own, as the scenario written for it.
  EXPECT_FALSE(judge(r.built, space).held);
  const scenario::RunResult again = scenario::run_scenario(r.built.scenario, seed);
  EXPECT_EQ(again.exit_code(), scenario::kExitFailed);
  EXPECT_GT(again.verdict["lost"].get<int64_t>(), 0);
  // The reproduce string replays exactly that case.
  const FuzzResult replay = fuzz(space, options(1000, seed, r.reproduce));
  ASSERT_TRUE(replay.counterexample.has_value());
  EXPECT_EQ(replay.built.document, r.built.document);
}

TEST(FuzzFindsAndShrinks, AcksOneLosesAnAcknowledgedTailOnLeaderFailure) {
  Space space = default_space(Property::durability);
  pin(space, "producer.acks", "1");
  pin(space, "producer.enable.idempotence", "false");
  finds_and_shrinks(space, 1);
}

TEST(FuzzFindsAndShrinks, UncleanLeaderElectionLosesAcknowledgedData) {
  Space space = default_space(Property::durability);
  pin(space, "unclean.leader.election.enable", "true");
  space.kinds = {FaultKind::stop, FaultKind::isolate, FaultKind::halves, FaultKind::one_way};
  finds_and_shrinks(space, 2);
}

TEST(FuzzFindsAndShrinks, PowerOffOfEveryReplicaWithTheDefaultFlushPolicyLosesAcknowledgedData) {
  Space space = default_space(Property::durability);
  space.kinds = {FaultKind::power_off};
  finds_and_shrinks(space, 2);
}

TEST(FuzzFindsAndShrinks, TruncationByHighWatermarkLosesAnAcknowledgedMessage) {
  Space space = default_space(Property::durability);
  pin(space, "kafkasim.truncation", "high-watermark");
  finds_and_shrinks(space, 1);
}

TEST(FuzzSearch, TheSameSeedFindsTheSameCase) {
  if (!kafkasim::testing::run_fuzz_searches()) GTEST_SKIP() << "the search runs in the release gate";
  Space space = default_space(Property::durability);
  pin(space, "producer.acks", "1");
  pin(space, "producer.enable.idempotence", "false");
  space.min_brokers = space.max_brokers = 3;
  space.min_zookeepers = space.max_zookeepers = 1;
  const FuzzResult a = fuzz(space, options(200, 1));
  const FuzzResult b = fuzz(space, options(200, 1));
  ASSERT_TRUE(a.counterexample && b.counterexample);
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.built.document, b.built.document);
  EXPECT_EQ(a.reproduce, b.reproduce);
}

TEST(FuzzSearch, ASafeSpaceReportsNoCounterexample) {
  const Space space = default_space(Property::durability);
  const FuzzResult r = fuzz(space, options(kafkasim::testing::scaled(10), 3));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_FALSE(r.counterexample.has_value()) << r.message;
  EXPECT_EQ(r.cases, kafkasim::testing::scaled(10));
  EXPECT_EQ(r.shrinks_tried, 0);
}

// --- the kept cases --------------------------------------------------------------------

// Every file under scenarios/regressions/ holds its expectations on its own
// seed: the known anomalies still show (their expectations say what was
// lost), and the model bugs the fuzzer found stay fixed.
TEST(FuzzRegressions, EveryKeptCaseHoldsItsExpectations) {
  const std::filesystem::path dir = std::filesystem::path(KAFKASIM_SOURCE_DIR) / "scenarios" / "regressions";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 4u);
  for (const std::filesystem::path& f : files) {
    const scenario::Scenario s = scenario::load_scenario(f.string());
    ASSERT_FALSE(s.expectations.empty()) << f;
    const scenario::RunResult r = scenario::run_scenario(s, s.seed);
    std::string detail;
    for (const scenario::ExpectationOutcome& e : r.expectations) {
      if (e.result != scenario::Expectation::Result::Outcome::held) detail += e.text + ": " + e.detail + "\n";
    }
    if (r.invariant) detail += "invariant: " + r.invariant->message + "\n";
    EXPECT_EQ(r.exit_code(), scenario::kExitHeld) << f.filename() << "\n" << detail;
  }
}

// The kept KAFKA-12686 case is 2.8's own: from 3.0 a LeaderAndIsr leaves
// the change in flight in the AlterIsr manager, which refuses the leader's
// next proposal until that change is answered (OPERATION_NOT_ATTEMPTED), so
// the answer removes only that change and the leader proposes again. On the 3.1 and 3.9 profiles the
// same schedule recovers: the ISR grows back and writes are acknowledged
// after the faults, so both of the case's expectations fail.
TEST(FuzzRegressions, TheKafka12686CaseRecoversFrom30) {
  const std::filesystem::path f = std::filesystem::path(KAFKASIM_SOURCE_DIR) / "scenarios" / "regressions" /
                                  "alter_isr_answer_drops_newer_change_28.json";
  const scenario::Scenario s = scenario::load_scenario(f.string());
  ASSERT_EQ(s.version, kafka::VersionProfile::v2_8);
  for (const char* version : {"3.1", "3.9"}) {
    SCOPED_TRACE(version);
    std::ostringstream trace;
    scenario::RunOptions o;
    o.trace_json = &trace;
    const scenario::RunResult r = scenario::run_scenario(scenario::with_overrides(s, {{"version", version}}), s.seed, o);
    EXPECT_FALSE(r.invariant.has_value());
    // The leader's new proposal after the LeaderAndIsr is refused while the
    // old one is in flight, and proposed again once that one is answered.
    EXPECT_NE(trace.str().find("OPERATION_NOT_ATTEMPTED"), std::string::npos);
    ASSERT_EQ(r.expectations.size(), 2u);
    for (const scenario::ExpectationOutcome& e : r.expectations) {
      EXPECT_EQ(e.result, scenario::Expectation::Result::Outcome::failed) << e.text << ": " << e.detail;
    }
    EXPECT_EQ(r.exit_code(), scenario::kExitFailed);
  }
}

}  // namespace
}  // namespace fuzz
