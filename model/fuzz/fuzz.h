// Property-based fuzzing of the model (docs/fuzzing.md): rapidcheck draws a
// case — a cluster shape, deviations from a configuration, a timed fault
// schedule — the case becomes an ordinary scenario (model/scenario), the
// scenario runs, and a property judges the run. A failing case is shrunk by
// rapidcheck (fewer faults, earlier and shorter, fewer nodes, configuration
// back to its defaults) and written out as a scenario file that `kafkasim
// run` replays.
//
//   fuzz::Space space = fuzz::default_space(fuzz::Property::durability);
//   fuzz::pin(space, "acks", "1");                 // a known-unsafe what-if
//   fuzz::FuzzResult r = fuzz::fuzz(space, {.runs = 200, .seed = 7});
//   if (r.counterexample) write(r.scenario_json);  // a replayable scenario
//
// A case is valid by construction, whatever the shrinker does to it: node
// and target indices are taken modulo what exists, a replication factor is
// clamped to the broker count, every fault is undone inside the fault window,
// and a fault whose target is still faulted when it starts (or whose shape
// needs more hosts than the case has) is left out of the schedule, as the
// nemesis does (model/scenario/nemesis.h). So every value rapidcheck can
// reach is a scenario the parser accepts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <rapidcheck.h>

#include "model/scenario/run.h"
#include "model/scenario/scenario.h"

namespace fuzz {

// The properties `kafkasim fuzz --property NAME` checks.
enum class Property {
  safety,       // no invariant of the model breaks (exit 3 is a failure)
  determinism,  // the case run twice gives the same trace hash
  durability,   // lost == 0, duplicates == 0, no divergence below the high watermark
  liveness,     // after the final heal, producing and consuming resume within a bound
};
const char* to_string(Property p);
std::optional<Property> property_from(std::string_view name);
std::vector<Property> all_properties();

// What a fault step does, and its undo at the step's end:
//   kill → start, stop → start, pause → resume (processes: ZooKeeper servers
//   and brokers); power_off → power_on, isolate → heal (hosts of the
//   cluster); halves, one_way, bridge, majority_ring → heal (partitions over
//   the cluster's hosts; halves and one_way may cut the client host too);
//   replace_address → the host's own address again.
enum class FaultKind {
  kill,
  stop,
  pause,
  power_off,
  isolate,
  halves,
  one_way,
  bridge,
  majority_ring,
  replace_address,
};
const char* to_string(FaultKind k);
std::optional<FaultKind> fault_kind_from(std::string_view name);
std::vector<FaultKind> all_fault_kinds();

struct FaultStep {
  FaultKind kind = FaultKind::kill;
  int64_t at_ms = 0;           // from the start of the fault window
  int64_t duration_ms = 1000;  // until its undo (clipped to the window's end)
  int32_t target = 0;          // index into the kind's candidates, modulo their count
  int32_t other = 0;           // halves: where the cut falls; one_way: the other end
};

struct Case {
  int32_t zookeepers = 1;
  bool colocated = true;  // ZooKeeper server i on broker i's host
  int32_t brokers = 1;
  int32_t partitions = 1;
  int32_t replication_factor = 1;  // clamped to the broker count
  std::vector<int32_t> config;     // per Space::dimensions: an index into its values (0: the default)
  std::vector<FaultStep> faults;
  // 0: one consumer without a group that reads everything once the faults
  // are over. n > 0: n members of one consumer group that run throughout
  // instead, committing as they go.
  int32_t group_members = 0;
};

// A configuration key the generator may move away from its default; values[0]
// is the default and is not written. Keys as `explore --grid` takes them
// (model/scenario/run.h, with_overrides): a broker key bare, "producer." /
// "consumer." for one client, "zookeeper." + a zoo.cfg key.
struct Dimension {
  std::string key;
  std::vector<std::string> values;
};

// What the generator draws from, and what the property is checked under.
struct Space {
  Property property = Property::safety;
  std::string version = "3.9";
  int32_t min_zookeepers = 1, max_zookeepers = 5;
  int32_t min_brokers = 1, max_brokers = 6;
  int32_t max_partitions = 3;
  int32_t min_group_members = 0, max_group_members = 3;  // Case::group_members
  int32_t min_replication_factor = 1, max_replication_factor = 3;
  bool colocation_varies = true;  // else every case is co-located
  std::vector<FaultKind> kinds = all_fault_kinds();
  int32_t max_faults = 5;
  int64_t window_start_ms = 10'000;  // the workload runs from about 1.2 s
  int64_t window_ms = 60'000;        // faults start and end inside
  int64_t min_duration_ms = 1'000;
  int64_t max_duration_ms = 30'000;
  int32_t rate_per_s = 20;  // the steady producer's messages per second
  // Keys every case has (the property's configuration, then --set).
  std::map<std::string, std::string> pinned;
  std::vector<Dimension> dimensions;
};

// The space a property is checked in (docs/fuzzing.md lists each):
//  - safety, determinism: any shape, every fault kind, the declared
//    configuration space around the version's defaults;
//  - durability: three to five brokers, RF 3, the safe configuration pinned
//    (acks=all, enable.idempotence=true, min.insync.replicas=2, unclean
//    election off, truncation by leader epoch) and no fault that loses power;
//  - liveness: the same shapes and configuration, every fault kind (each
//    is undone before the final heal, so the cluster is whole again).
Space default_space(Property p);
// Pins `key` to `value` in every case (`--set KEY=VALUE`): a dimension of the
// same key is dropped. The key and value are checked when a case is built.
void pin(Space& space, const std::string& key, const std::string& value);
// Throws std::invalid_argument naming what is wrong (min above max, no fault
// kind, a window shorter than the shortest fault ...).
void validate(const Space& space);

// A case as a scenario, ready to run.
struct Built {
  nlohmann::json document;  // the scenario file's JSON
  scenario::Scenario scenario;
  int32_t faults = 0;        // fault steps in the schedule (left-out ones not counted)
  int64_t heal_us = 0;       // the final heal: the end of the fault window
  int64_t bound_us = 0;      // liveness: how long after the heal the clients must flow again
  std::string expectation;   // the property as an expectation over the verdict ("" for none)
};
// `seed` is the scenario's "seed", the one `kafkasim run FILE` uses. Throws
// scenario::InputError for a pinned key or value the parsers reject.
Built build(const Case& c, const Space& space, uint64_t seed = 1);

// The property's judgement of one case, run with the scenario's seed.
struct Judgement {
  bool held = true;
  std::string message;  // for a failure: what was seen
};
Judgement judge(const Built& b, const Space& space);

// The generator of cases in `space`.
rc::Gen<Case> gen_case(const Space& space);
// The case of the space's smallest shape, without faults (what a pinned
// configuration is checked on before a search).
Case smallest_case(const Space& space);

// One line per fault step ("kill target=1 at=12.5s for 3s"), for rapidcheck's
// counterexample and progress messages.
std::string describe(const Case& c, const Space& space);
void showValue(const Case& c, std::ostream& os);

struct FuzzOptions {
  int runs = 100;      // cases before the property is taken to hold
  uint64_t seed = 1;   // rapidcheck's seed; also each case's simulation seed
  std::string reproduce;  // rapidcheck's reproduce string: replay that one failure
  int max_size = 100;     // rapidcheck's maxSize
};

struct Progress {
  enum class Kind { case_passed, case_failed, shrink_accepted, shrink_rejected };
  Kind kind = Kind::case_passed;
  int cases = 0;           // cases run so far
  int shrinks_tried = 0;
  int shrinks_accepted = 0;
  int32_t faults = 0;      // of the current smallest failure
};

struct FuzzResult {
  int cases = 0;           // cases that ran
  int shrinks_tried = 0;
  int shrinks_accepted = 0;
  std::optional<Case> counterexample;  // the shrunk failing case
  Built built;                         // it as a scenario (when counterexample)
  std::string message;                 // the property's message about it
  std::string reproduce;               // rapidcheck's reproduce string (RC_PARAMS="reproduce=...")
  std::string error;                   // rapidcheck gave up or failed itself
};
FuzzResult fuzz(const Space& space, const FuzzOptions& options,
                const std::function<void(const Progress&)>& progress = {});

}  // namespace fuzz
