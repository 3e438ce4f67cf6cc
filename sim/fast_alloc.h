// A small-object allocator behind the global operator new and delete, for
// the executables that link the `kafkasim_fast_alloc` object library (the
// command line, the benchmarks and the tests).
//
// Why: a run of the seed-000 scenario makes about 1.8 million heap
// allocations, nearly all under 512 bytes and short-lived (a fetch's record
// vector, a request's closure); glibc's malloc and free cost about 165
// instructions for each pair, 7 % of the run. FoundationDB's FastAllocator
// answers the same problem the same way: per-thread free lists by size class.
//
// How: sizes up to kMaxSmall bytes are rounded up to a multiple of 16 and
// served from a free list of their class, refilled by carving 256 KiB chunks
// taken from malloc. Every block has a 16-byte header holding its class (0:
// a large block from malloc), so both sized and unsized deletes work, and
// the payload stays 16-byte aligned (what operator new promises). Free lists
// are per thread: a sweep runs one simulation per thread, each with its own
// lists and no locks; a block freed by another thread than the one that
// allocated it joins that thread's list, which is still correct. Memory taken
// for small blocks is never given back to the system: a simulation reuses
// the same sizes again and again, and the process ends with the run.
//
// Large blocks go to malloc, which is told (M_TOP_PAD) to keep 64 MiB of
// freed memory at the top of each heap, so that the seeds of a sweep reuse
// the pages the seed before them faulted in (fast_alloc.cc).
//
// Nothing here touches what a simulation computes: addresses are never part
// of a trace (iteration over pointer-keyed containers is banned), so a run
// gives the same bytes with or without it. Under AddressSanitizer the
// replacement is left out, so that the sanitizer sees every allocation.
#pragma once

#include <cstddef>
#include <cstdint>

// 1 where the replacement is compiled in (fast_alloc.cc), 0 under
// AddressSanitizer (GCC's macro, or Clang's feature test).
#if defined(__SANITIZE_ADDRESS__)
#define KAFKASIM_FAST_ALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KAFKASIM_FAST_ALLOC 0
#endif
#endif
#ifndef KAFKASIM_FAST_ALLOC
#define KAFKASIM_FAST_ALLOC 1
#endif

namespace sim::fast_alloc {

inline constexpr size_t kMaxSmall = 512;

// Whether the replacement operator new is in use (false under
// AddressSanitizer). Defined by the object library: only executables that
// link it may call these.
bool active();
// Whether malloc was told to keep freed memory at the top of its heaps for
// reuse (M_TOP_PAD) instead of handing it back at once (false when not active).
bool keeps_freed_memory();

struct Stats {
  uint64_t small_allocations = 0;  // served from a size class
  uint64_t large_allocations = 0;  // passed on to malloc
  uint64_t chunks = 0;             // 256 KiB chunks carved so far
};
// This thread's counts so far (all zero when not active).
Stats thread_stats();

}  // namespace sim::fast_alloc
