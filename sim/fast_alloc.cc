// The replacement global operator new and delete (fast_alloc.h explains why
// and how). This file is compiled into the `kafkasim_fast_alloc` object
// library only, never into kafkasim_sim: linking it is what turns it on.
#include "sim/fast_alloc.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

#if KAFKASIM_FAST_ALLOC

namespace {

constexpr size_t kGranule = 16;
constexpr size_t kClasses = sim::fast_alloc::kMaxSmall / kGranule + 1;  // class 0: large
constexpr size_t kChunkBytes = 256 * 1024;

// Sits before every block; 16 bytes so that the payload keeps the 16-byte
// alignment of the chunk (malloc's) it was carved from.
struct alignas(16) Header {
  uint64_t size_class = 0;
  uint64_t unused = 0;
};
static_assert(sizeof(Header) == 16);

struct FreeBlock {
  FreeBlock* next;
};

// Plain data, zero-initialised: no constructor, no guard on each access.
struct ThreadCache {
  FreeBlock* free[kClasses];
  char* chunk_next;
  char* chunk_end;
  sim::fast_alloc::Stats stats;
};
thread_local ThreadCache cache;

[[gnu::noinline]] void* carve(size_t size_class) {
  const size_t block = sizeof(Header) + size_class * kGranule;
  if (static_cast<size_t>(cache.chunk_end - cache.chunk_next) < block) {
    // The rest of the old chunk (less than one block of this class) is left.
    auto* chunk = static_cast<char*>(std::malloc(kChunkBytes));
    if (chunk == nullptr) throw std::bad_alloc();
    cache.chunk_next = chunk;
    cache.chunk_end = chunk + kChunkBytes;
    ++cache.stats.chunks;
  }
  char* p = cache.chunk_next;
  cache.chunk_next += block;
  ::new (p) Header{size_class, 0};
  return p + sizeof(Header);
}

void* allocate(size_t n) {
  if (n <= sim::fast_alloc::kMaxSmall) {
    const size_t size_class = n == 0 ? 1 : (n + kGranule - 1) / kGranule;
    ++cache.stats.small_allocations;
    if (FreeBlock* b = cache.free[size_class]) {
      cache.free[size_class] = b->next;
      return b;
    }
    return carve(size_class);
  }
  ++cache.stats.large_allocations;
  if (n > SIZE_MAX - sizeof(Header)) throw std::bad_alloc();  // the header would wrap the size
  void* raw = std::malloc(sizeof(Header) + n);
  if (raw == nullptr) throw std::bad_alloc();
  ::new (raw) Header{0, 0};
  return static_cast<char*>(raw) + sizeof(Header);
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  auto* header = reinterpret_cast<Header*>(static_cast<char*>(p) - sizeof(Header));
  const size_t size_class = header->size_class;
  if (size_class == 0) {
    std::free(header);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = cache.free[size_class];
  cache.free[size_class] = b;
}

}  // namespace

void* operator new(size_t n) { return allocate(n); }
void* operator new[](size_t n) { return allocate(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, size_t) noexcept { release(p); }
void operator delete[](void* p, size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }

namespace {
// Large blocks (a log's records, a history, a segment file's bytes) come from
// malloc, which gives memory at the top of a heap back to the system as soon
// as 128 KiB of it is free. A sweep runs seed after seed on each thread, so
// the next seed faulted the same pages in again: 5-12 % of a sweep's time in
// the kernel. Keeping up to 64 MiB of slack at the top of each heap (one per
// thread that allocates) ends that: a 2-job sweep holds about 20 MiB more.
// Setting it also fixes malloc's mmap threshold at its 128 KiB default
// instead of letting it grow; a sweep measured no difference with the
// threshold raised too. Set before main, for every executable that links
// this library.
const bool kTopPadSet = mallopt(M_TOP_PAD, 64 << 20) == 1;
}  // namespace

namespace sim::fast_alloc {
bool active() { return true; }
bool keeps_freed_memory() { return kTopPadSet; }
Stats thread_stats() { return cache.stats; }
}  // namespace sim::fast_alloc

#else

namespace sim::fast_alloc {
bool active() { return false; }
bool keeps_freed_memory() { return false; }
Stats thread_stats() { return {}; }
}  // namespace sim::fast_alloc

#endif
