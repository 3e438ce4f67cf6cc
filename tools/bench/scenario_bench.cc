// A scenario run end to end, as `kafkasim run` and `sweep` do it: the
// seed-000 scenario (16 virtual minutes of the lab workload through a rolling
// power-off) by default.
//
// Reported, for --seeds serial runs (seeds 1..N, one after the other, after
// one untimed warm-up run; the two variants below take turns seed by seed):
//   wall time per seed, simulated-to-wall ratio, events per second, and the
//   process's peak resident memory — for two variants of the same runs:
//     baseline    scenario::RunOptions::check_invariants = false
//     invariants  the default: kafka::Invariants::check() after every event
//   and the ratio invariants/baseline (what the checks cost);
// then a sweep of --sweep-seeds seeds on --jobs threads of a
// boost::asio::thread_pool, one simulation per thread (as `kafkasim sweep`):
//   seeds per minute, and the time a 1,000-seed sweep takes at that rate.
// Both variants of a seed must end with the same trace hash (the checks only
// read); the harness exits 1 if not. Wall-clock time is fine here: tools/ is
// outside the deterministic core.
//
//   kafkasim_bench_scenario [--scenario FILE] [--seeds N] [--sweep-seeds M] [--jobs J]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <fmt/format.h>

#include "model/scenario/run.h"

namespace {

struct Options {
  std::string scenario = KAFKASIM_SOURCE_DIR "/scenarios/seeds/000_f0aa22d7ff924a8b.json";
  int seeds = 10;
  int sweep_seeds = 100;
  int jobs = 2;
};

[[noreturn]] void usage(const std::string& error) {
  fmt::print(stderr, "kafkasim_bench_scenario: {}\nusage: kafkasim_bench_scenario [--scenario FILE] [--seeds N] "
                     "[--sweep-seeds M] [--jobs J]\n", error);
  std::exit(2);
}

int positive(const std::string& flag, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || v < 1 || v > 1'000'000) usage(flag + " wants a positive integer");
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage("missing value after " + a);
    if (a == "--scenario") o.scenario = argv[++i];
    else if (a == "--seeds") o.seeds = positive(a, argv[++i]);
    else if (a == "--sweep-seeds") o.sweep_seeds = positive(a, argv[++i]);
    else if (a == "--jobs") o.jobs = positive(a, argv[++i]);
    else usage("unknown option " + a);
  }
  return o;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: KiB
}

struct Figures {
  double wall_s = 0;
  double simulated_s = 0;
  uint64_t events = 0;
  std::vector<uint64_t> hashes;
};

void run_into(Figures& f, const scenario::Scenario& s, int seed, bool invariants) {
  scenario::RunOptions o;
  o.check_invariants = invariants;
  const double start = now_s();
  const scenario::RunResult r = scenario::run_scenario(s, static_cast<uint64_t>(seed), o);
  f.wall_s += now_s() - start;
  f.simulated_s += static_cast<double>(r.end_time_us) / 1e6;
  f.events += r.events;
  f.hashes.push_back(r.trace_hash);
}

// Both variants over seeds 1..N, interleaved: an untimed run first (the
// first run of a process pays for faulting in the allocator's memory and
// for cold caches), then each seed in both variants, in turns (baseline
// first on odd seeds, invariants first on even ones), so that a drift in
// the machine's speed during the runs weighs on both alike. Run one
// variant's seeds after the other's and the second came out up to a third
// faster on this VM, whichever it was.
void serial(const scenario::Scenario& s, int seeds, Figures& base, Figures& checked) {
  (void)scenario::run_scenario(s, 1, scenario::RunOptions{});
  for (int seed = 1; seed <= seeds; ++seed) {
    const bool base_first = seed % 2 == 1;
    run_into(base_first ? base : checked, s, seed, !base_first);
    run_into(base_first ? checked : base, s, seed, base_first);
  }
}

void print_row(const char* name, const Figures& f, int seeds) {
  fmt::print("{:<11} {:>12.1f} {:>12.0f} {:>14.0f} {:>12}\n", name, 1000.0 * f.wall_s / seeds,
             f.simulated_s / f.wall_s, static_cast<double>(f.events) / f.wall_s, f.events / static_cast<uint64_t>(seeds));
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  scenario::Scenario s;
  try {
    s = scenario::load_scenario(o.scenario);
  } catch (const scenario::InputError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  fmt::print("scenario {} ({}), {} virtual s per seed\n", s.name, s.hash, s.duration_us / 1e6);
  fmt::print("{:<11} {:>12} {:>12} {:>14} {:>12}\n", "variant", "ms/seed", "sim/wall", "events/s", "events/seed");
  Figures base;
  Figures checked;
  serial(s, o.seeds, base, checked);
  print_row("baseline", base, o.seeds);
  print_row("invariants", checked, o.seeds);
  fmt::print("ratio invariants/baseline: wall {:.2f}x\n", checked.wall_s / base.wall_s);
  if (base.hashes != checked.hashes) {
    fmt::print(stderr, "the variants ran different events: trace hashes differ\n");
    return 1;
  }

  std::atomic<int> failed{0};
  const double start = now_s();
  {
    boost::asio::thread_pool pool(static_cast<size_t>(o.jobs));
    for (int seed = 1; seed <= o.sweep_seeds; ++seed) {
      boost::asio::post(pool, [&s, &failed, seed] {
        try {
          const scenario::RunResult r = scenario::run_scenario(s, static_cast<uint64_t>(seed));
          if (r.exit_code() == scenario::kExitInvariant) failed.fetch_add(1);
        } catch (const std::exception& e) {
          fmt::print(stderr, "seed {}: {}\n", seed, e.what());
          failed.fetch_add(1);
        }
      });
    }
    pool.join();
  }
  const double sweep_s = now_s() - start;
  const double per_minute = 60.0 * o.sweep_seeds / sweep_s;
  fmt::print("sweep: {} seeds on {} jobs in {:.1f} s: {:.0f} seeds/minute; 1000 seeds would take {:.0f} s\n",
             o.sweep_seeds, o.jobs, sweep_s, per_minute, 1000.0 * sweep_s / o.sweep_seeds);
  fmt::print("peak resident memory: {:.0f} MiB\n", peak_rss_mib());
  if (failed.load() != 0) {
    fmt::print(stderr, "{} seeds broke an invariant or failed\n", failed.load());
    return 1;
  }
  return 0;
}
