// The nemesis: a random fault schedule drawn from the run's seed, as ordinary
// Fault entries (path "$.nemesis") that the runner merges into the file's
// timed schedule. In the spirit of Jepsen's nemeses: faults arrive as a
// Poisson process, each one is undone after a random duration, and the end
// of the run is quiet so that the cluster can recover before it is judged.
//
//   std::vector<Fault> f = generate_nemesis(s, *s.nemesis, s.duration_us, world_rng.fork("nemesis"));
//
// What it draws (docs/scenario-format.md, "Nemesis", says the same):
//  - fault start times: spec.start_us plus exponential gaps of mean
//    spec.mean_interval_us; no start at or after end = duration - quiet_us;
//  - for each start: a kind uniform among spec.kinds, a target uniform among
//    the kind's candidates (below), a duration uniform in
//    [min_duration_us, max_duration_us], clipped so that the undo happens no
//    later than end;
//  - candidates: spec.targets expanded ("brokers" → every kafka<id>,
//    "zookeepers" → every zk<id>, "clients" → every client) and then
//    resolved per kind: process kinds (kill, stop, pause) take processes,
//    a host naming every process on it; host kinds (power_off, isolate) and
//    partition take hosts, a process naming its host. Duplicates are
//    dropped (first appearance wins);
//  - partition: the candidate hosts shuffled and cut into two non-empty
//    groups (the cut uniform in [1, n-1]); hosts outside the target list
//    are in no group and keep reaching everyone;
//  - undo: kill, stop → start; pause → resume; power_off → power_on;
//    partition, isolate → heal.
// Overlap rule: a drawn fault whose target is still faulted at its start is
// skipped (its draws are still consumed, so the rest of the schedule does
// not depend on it). "Still faulted" means: a process fault locks the
// process, a power_off locks the host and every process on it (the
// processes until the environment's boot delay after the power_on), and
// partition/isolate lock the network as a whole (heal removes every cut, so
// two network faults never overlap). The nemesis does not look at the
// file's own `faults`.
// After the last undo, when any partition or isolate was scheduled, one
// final heal at `end`.
//
// Output: sorted by time, stable (at one time, an undo comes before a fault
// that starts when it ends, and the final heal last). Deterministic: a
// function of (scenario, spec, duration, rng's key). Gap times and the
// other draws come from two forks of `rng` ("times" and "faults"), so the
// start times do not change when kinds or targets do.
#pragma once

#include <cstdint>
#include <vector>

#include "model/scenario/scenario.h"
#include "sim/random.h"

namespace scenario {

// Throws InputError(s.file, "$.nemesis.targets", ...) when a kind of
// spec.kinds has no candidate (a process kind whose targets name no process,
// a host kind with no host, a partition with fewer than two hosts).
std::vector<Fault> generate_nemesis(const Scenario& s, const NemesisSpec& spec, int64_t duration_us,
                                    sim::Rng rng);

// The undo of a nemesis fault kind (kill → start, ...); heal for partition
// and isolate. Asserts on a kind the nemesis does not draw.
FaultAction nemesis_undo(FaultAction kind);

}  // namespace scenario
