// A small test-only protocol that exercises every part of the engine, and the
// random fault schedule that drives it. Used by the determinism proof: the
// same seed must give the same trace hash, run after run.
//
// Five hosts each run a `PingNode`. Every 50-150 ms a node picks a random peer,
// connects if it has no connection (giving up after its own 2 s timeout),
// and sends a ping; the receiver appends to a counter file on its disk
// (fsyncing every fourth record) and answers with a pong. On start a node
// recovers its counter from disk, dropping a torn last record, and asserts the
// durable records are consecutive — a check on the disk model itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/world.h"

namespace sim::testing {

struct PingRunOptions {
  uint64_t seed = 1;
  int hosts = 5;
  Duration chaos = Duration::seconds(30);   // random faults during this span
  Duration settle = Duration::seconds(10);  // then everything healed and restarted
  bool keep_lines = false;                  // keep the JSON lines, to compare runs
  std::ostream* text = nullptr;             // the human-readable trace, if wanted
};

struct PingRunResult {
  uint64_t hash = 0;
  uint64_t records = 0;
  uint64_t events = 0;
  uint64_t pongs = 0;   // pongs received across all nodes
  uint64_t faults = 0;  // faults the nemesis injected
  std::vector<std::string> lines;
};

PingRunResult run_ping_protocol(const PingRunOptions& options);

}  // namespace sim::testing
