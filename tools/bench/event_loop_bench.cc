// Event loop throughput in the classic "hold model".
//
// N events are pending at all times: the harness prefills N events at random
// times, then repeatedly takes the earliest and schedules one new event at
// (its time + a random increment). For each N it reports millions of events
// per second for:
//
//   EventLoop  sim::EventLoop; each event's callback schedules the next one
//              with `loop.after(increment, callback)`, driven by `loop.step()`.
//   baseline   the naive loop one would otherwise write: a std::priority_queue
//              of {int64 time, uint64 seq, std::function<void()>} ordered by
//              (time, seq); pop copies top() out, then pops. Each callback
//              pushes the next event, exactly as above.
//   pod_pq     for transparency, a std::priority_queue of plain
//              {time, seq, uint32 id} entries doing the same hold model with
//              no callbacks at all: roughly the cost of the ordering alone.
//
// All three consume the same precomputed increments and number events from
// one sequence counter in scheduling order, so they execute the very same
// events in the very same order: the harness checks that the event counts and
// the checksums (sum of the executed events' times) agree, and exits 1 if not.
// The checksum is printed so the optimizer cannot discard the work.
//
// Each figure is the best of `--reps` timed runs of `--ops` events each,
// after one shorter warm-up run; the three variants take turns within every
// repetition so that drift (frequency scaling, a noisy neighbour) hits them
// alike. Wall-clock time is fine here: tools/ is outside the deterministic
// core.
//
//   kafkasim_bench_event_loop [--quick] [--sizes 1000,100000] [--ops N]
//                             [--reps R] [--dist uniform|exponential]
//                             [--capture 8|32] [--seed S]

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/event_loop.h"
#include "sim/random.h"
#include "sim/time.h"

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Workload: the increments every variant consumes, in the same order.

constexpr size_t kIncrementBits = 16;
constexpr size_t kIncrementMask = (size_t{1} << kIncrementBits) - 1;

struct Workload {
  std::vector<int64_t> prefill;     // times of the N initial events
  std::vector<int64_t> increments;  // 2^16 increments, used cyclically
};

enum class Dist { kUniform, kExponential };

int64_t draw(sim::Rng& rng, Dist dist) {
  // Uniform on [0, 1000] us, or exponential with a 500 us mean: either way a
  // few events share an instant now and then, which exercises the seq order.
  return dist == Dist::kUniform ? rng.uniform(0, 1000)
                                : rng.exponential(sim::Duration::micros(500)).us();
}

Workload make_workload(size_t n, Dist dist, uint64_t seed) {
  sim::Rng root(seed);
  sim::Rng prefill_rng = root.fork("prefill");
  sim::Rng increment_rng = root.fork("increments");
  Workload w;
  w.prefill.reserve(n);
  for (size_t i = 0; i < n; ++i) w.prefill.push_back(draw(prefill_rng, dist));
  w.increments.reserve(kIncrementMask + 1);
  for (size_t i = 0; i <= kIncrementMask; ++i) w.increments.push_back(draw(increment_rng, dist));
  return w;
}

struct Result {
  double seconds = 0;
  uint64_t executed = 0;
  uint64_t checksum = 0;  // sum of the executed events' times
};

// Closures capture a context pointer and `PadWords` extra words: the default
// (8 bytes) fits both std::function's and sim::Callback's inline storage;
// `--capture 32` models a closure with a pointer and a few ids, which
// std::function must heap-allocate.
template <size_t PadWords>
struct Pad {
  std::array<uint64_t, PadWords> words{};
};
template <>
struct Pad<0> {};

// ---------------------------------------------------------------------------
// (a) sim::EventLoop

struct LoopCtx {
  sim::EventLoop* loop;
  const int64_t* increments;
  size_t next = 0;
  uint64_t checksum = 0;
};

template <size_t PadWords>
struct LoopHop {
  LoopCtx* ctx;
  [[no_unique_address]] Pad<PadWords> pad;
  void operator()() const {
    LoopCtx& c = *ctx;
    c.checksum += static_cast<uint64_t>(c.loop->now().us());
    const int64_t inc = c.increments[c.next++ & kIncrementMask];
    c.loop->after(sim::Duration::micros(inc), LoopHop{ctx, pad});
  }
};

template <size_t PadWords>
Result run_event_loop(const Workload& w, uint64_t ops) {
  sim::EventLoop loop;
  LoopCtx ctx{&loop, w.increments.data()};
  for (int64_t t : w.prefill) loop.at(sim::Time::from_us(t), LoopHop<PadWords>{&ctx, {}});
  const auto start = Clock::now();
  for (uint64_t k = 0; k < ops; ++k) loop.step();
  const auto stop = Clock::now();
  return {std::chrono::duration<double>(stop - start).count(), loop.executed(), ctx.checksum};
}

// ---------------------------------------------------------------------------
// (b) baseline: std::priority_queue of std::function events

struct BaseEvent {
  int64_t time;
  uint64_t seq;
  std::function<void()> fn;
};

struct BaseLater {
  bool operator()(const BaseEvent& a, const BaseEvent& b) const {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
};

struct BaseLoop {
  std::priority_queue<BaseEvent, std::vector<BaseEvent>, BaseLater> queue;
  int64_t now = 0;
  uint64_t next_seq = 1;
  uint64_t executed = 0;

  void at(int64_t t, std::function<void()> fn) {
    queue.push(BaseEvent{t, next_seq++, std::move(fn)});
  }
  void after(int64_t d, std::function<void()> fn) { at(now + d, std::move(fn)); }
  bool step() {
    if (queue.empty()) return false;
    BaseEvent e = queue.top();  // the naive way: copy the top out, then pop
    queue.pop();
    now = e.time;
    ++executed;
    e.fn();
    return true;
  }
};

struct BaseCtx {
  BaseLoop* loop;
  const int64_t* increments;
  size_t next = 0;
  uint64_t checksum = 0;
};

template <size_t PadWords>
struct BaseHop {
  BaseCtx* ctx;
  [[no_unique_address]] Pad<PadWords> pad;
  void operator()() const {
    BaseCtx& c = *ctx;
    c.checksum += static_cast<uint64_t>(c.loop->now);
    const int64_t inc = c.increments[c.next++ & kIncrementMask];
    c.loop->after(inc, BaseHop{ctx, pad});
  }
};

template <size_t PadWords>
Result run_baseline(const Workload& w, uint64_t ops) {
  BaseLoop loop;
  BaseCtx ctx{&loop, w.increments.data()};
  for (int64_t t : w.prefill) loop.at(t, BaseHop<PadWords>{&ctx, {}});
  const auto start = Clock::now();
  for (uint64_t k = 0; k < ops; ++k) loop.step();
  const auto stop = Clock::now();
  return {std::chrono::duration<double>(stop - start).count(), loop.executed, ctx.checksum};
}

// ---------------------------------------------------------------------------
// (c) std::priority_queue of POD entries, no callbacks

struct PodEntry {
  int64_t time;
  uint64_t seq;
  uint32_t id;
};

struct PodLater {
  bool operator()(const PodEntry& a, const PodEntry& b) const {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
};

Result run_pod_queue(const Workload& w, uint64_t ops) {
  std::priority_queue<PodEntry, std::vector<PodEntry>, PodLater> queue;
  uint64_t next_seq = 1;
  uint32_t id = 0;
  for (int64_t t : w.prefill) queue.push(PodEntry{t, next_seq++, id++});
  const int64_t* increments = w.increments.data();
  size_t next = 0;
  uint64_t checksum = 0;
  uint64_t executed = 0;
  const auto start = Clock::now();
  for (uint64_t k = 0; k < ops; ++k) {
    const PodEntry e = queue.top();
    queue.pop();
    ++executed;
    checksum += static_cast<uint64_t>(e.time);
    queue.push(PodEntry{e.time + increments[next++ & kIncrementMask], next_seq++, e.id});
  }
  const auto stop = Clock::now();
  return {std::chrono::duration<double>(stop - start).count(), executed, checksum};
}

// ---------------------------------------------------------------------------
// Driver

struct Options {
  std::vector<size_t> sizes{100, 1'000, 10'000, 100'000, 1'000'000};
  uint64_t ops = 3'000'000;
  uint64_t warmup_ops = 300'000;
  int reps = 3;
  Dist dist = Dist::kUniform;
  size_t capture = 8;
  uint64_t seed = 1;
};

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: kafkasim_bench_event_loop [--quick] [--sizes N,N,...] [--ops N]\n"
               "                                 [--reps R] [--dist uniform|exponential]\n"
               "                                 [--capture 8|32] [--seed S]\n"
               "  --quick     a smoke run: 20000 ops per measurement, 1 repetition\n"
               "  --sizes     pending-event counts (default 100,1000,10000,100000,1000000)\n"
               "  --ops       events per timed run (default 3000000)\n"
               "  --reps      timed runs per variant; the best is reported (default 3)\n"
               "  --dist      increment distribution: uniform on [0,1000]us (default)\n"
               "              or exponential with a 500us mean\n"
               "  --capture   closure size in bytes: 8 (a pointer; default) or 32\n"
               "              (a pointer and three ids: beyond std::function's inline buffer)\n");
  std::exit(code);
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

Options parse(int argc, char** argv) {
  Options o;
  bool quick = false;
  bool ops_given = false;
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", argv[i]);
        usage(2);
      }
      return argv[++i];
    };
    auto number = [&](std::string_view s) -> uint64_t {
      uint64_t v = 0;
      if (!parse_u64(s, v) || v == 0) {
        std::fprintf(stderr, "bad number for %s: '%.*s'\n", std::string(arg).c_str(),
                     static_cast<int>(s.size()), s.data());
        usage(2);
      }
      return v;
    };
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--sizes") {
      o.sizes.clear();
      std::string_view list = value();
      while (!list.empty()) {
        const size_t comma = list.find(',');
        o.sizes.push_back(static_cast<size_t>(number(list.substr(0, comma))));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
      if (o.sizes.empty()) usage(2);
    } else if (arg == "--ops") {
      o.ops = number(value());
      ops_given = true;
    } else if (arg == "--reps") {
      o.reps = static_cast<int>(std::min<uint64_t>(number(value()), 100));
      reps_given = true;
    } else if (arg == "--dist") {
      const std::string_view d = value();
      if (d == "uniform") {
        o.dist = Dist::kUniform;
      } else if (d == "exponential") {
        o.dist = Dist::kExponential;
      } else {
        usage(2);
      }
    } else if (arg == "--capture") {
      o.capture = static_cast<size_t>(number(value()));
      if (o.capture != 8 && o.capture != 32) usage(2);
    } else if (arg == "--seed") {
      const std::string_view s = value();
      if (!parse_u64(s, o.seed)) usage(2);
    } else if (arg == "--help" || arg == "-h") {
      usage(0);
    } else {
      std::fprintf(stderr, "unknown argument: %s\n", argv[i]);
      usage(2);
    }
  }
  if (quick) {
    if (!ops_given) o.ops = 20'000;
    if (!reps_given) o.reps = 1;
  }
  o.warmup_ops = std::max<uint64_t>(o.ops / 10, 1);
  return o;
}

double mevents_per_s(const Result& r) {
  return r.seconds > 0 ? static_cast<double>(r.executed) / r.seconds / 1e6 : 0.0;
}

bool same_work(const Result& a, const Result& b) {
  return a.executed == b.executed && a.checksum == b.checksum;
}

template <size_t PadWords>
int run(const Options& o) {
  static_assert(sizeof(LoopHop<PadWords>) == 8 + 8 * PadWords);
  static_assert(sizeof(BaseHop<PadWords>) == 8 + 8 * PadWords);
  fmt::print("hold model: {} ops per run, best of {}, increments {}, closure {} bytes\n", o.ops,
             o.reps,
             o.dist == Dist::kUniform ? "uniform [0,1000]us" : "exponential mean 500us",
             sizeof(LoopHop<PadWords>));
  fmt::print("{:>9} {:>11} {:>11} {:>7} {:>9} {:>8}  {}\n", "N", "EventLoop", "baseline",
             "ratio", "pod_pq", "loop/pod", "checksum");
  fmt::print("{:>9} {:>11} {:>11} {:>7} {:>9} {:>8}\n", "", "Mev/s", "Mev/s", "", "Mev/s", "");
  std::fflush(stdout);
  bool ok = true;
  for (size_t n : o.sizes) {
    const Workload w = make_workload(n, o.dist, o.seed);
    // Warm-up: page in the allocator, train the branch predictors.
    run_event_loop<PadWords>(w, o.warmup_ops);
    run_baseline<PadWords>(w, o.warmup_ops);
    run_pod_queue(w, o.warmup_ops);

    Result best_loop, best_base, best_pod;
    for (int rep = 0; rep < o.reps; ++rep) {
      const Result loop = run_event_loop<PadWords>(w, o.ops);
      const Result base = run_baseline<PadWords>(w, o.ops);
      const Result pod = run_pod_queue(w, o.ops);
      if (loop.executed != o.ops || !same_work(loop, base) || !same_work(loop, pod)) {
        fmt::print(stderr,
                   "N={}: variants did different work: EventLoop {} events (checksum {}), "
                   "baseline {} ({}), pod_pq {} ({})\n",
                   n, loop.executed, loop.checksum, base.executed, base.checksum, pod.executed,
                   pod.checksum);
        ok = false;
      }
      if (rep == 0 || loop.seconds < best_loop.seconds) best_loop = loop;
      if (rep == 0 || base.seconds < best_base.seconds) best_base = base;
      if (rep == 0 || pod.seconds < best_pod.seconds) best_pod = pod;
    }
    const double l = mevents_per_s(best_loop);
    const double b = mevents_per_s(best_base);
    const double p = mevents_per_s(best_pod);
    fmt::print("{:>9} {:>11.2f} {:>11.2f} {:>7.2f} {:>9.2f} {:>8.2f}  {}\n", n, l, b,
               b > 0 ? l / b : 0.0, p, p > 0 ? l / p : 0.0, best_loop.checksum);
    std::fflush(stdout);
  }
  if (!ok) {
    fmt::print(stderr, "FAILED: EventLoop and the reference queues executed different events\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return o.capture == 32 ? run<3>(o) : run<0>(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
