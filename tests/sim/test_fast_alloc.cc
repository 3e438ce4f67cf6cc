// The replacement operator new (sim/fast_alloc.h): blocks are aligned, do not
// overlap, are reused after a delete, and the large path and the array and
// nothrow forms work; a block freed on another thread is still a good block.
#include "sim/fast_alloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

TEST(FastAlloc, IsInUseOutsideTheSanitizer) {
#if KAFKASIM_FAST_ALLOC
  EXPECT_TRUE(sim::fast_alloc::active());
#else
  EXPECT_FALSE(sim::fast_alloc::active());
#endif
}

// malloc accepted the request to keep freed memory for the next seed.
TEST(FastAlloc, MallocKeepsFreedMemoryForReuse) {
  EXPECT_EQ(sim::fast_alloc::keeps_freed_memory(), sim::fast_alloc::active());
}

TEST(FastAlloc, ASizeTheHeaderWouldWrapIsRefused) {
  if (!sim::fast_alloc::active()) GTEST_SKIP() << "the sanitizer's allocator is in use";
  volatile size_t huge = SIZE_MAX - 8;  // not a constant: the compiler would warn
  EXPECT_THROW((void)::operator new(huge), std::bad_alloc);
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
}

TEST(FastAlloc, EverySizeGetsAnAlignedBlockOfItsOwn) {
  // Every size from 0 to past the small limit, each block filled with its own
  // byte: if two overlapped, one fill would show in the other.
  std::vector<std::pair<unsigned char*, size_t>> blocks;
  for (size_t n = 0; n <= sim::fast_alloc::kMaxSmall + 64; ++n) {
    auto* p = static_cast<unsigned char*>(::operator new(n));
    ASSERT_TRUE(aligned16(p)) << n;
    std::memset(p, static_cast<int>(n % 251), n);
    blocks.emplace_back(p, n);
  }
  for (const auto& [p, n] : blocks) {
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], static_cast<unsigned char>(n % 251)) << n;
  }
  for (const auto& [p, n] : blocks) ::operator delete(p, n);
}

TEST(FastAlloc, AFreedSmallBlockIsReusedForItsClass) {
  if (!sim::fast_alloc::active()) GTEST_SKIP() << "the sanitizer's allocator is in use";
  void* a = ::operator new(40);
  ::operator delete(a);  // unsized: the header knows the class
  void* b = ::operator new(48);  // same 16-byte class as 40
  EXPECT_EQ(a, b);
  ::operator delete(b, 48);
  const auto before = sim::fast_alloc::thread_stats();
  void* big = ::operator new(sim::fast_alloc::kMaxSmall + 1);
  const auto after = sim::fast_alloc::thread_stats();
  EXPECT_EQ(after.large_allocations, before.large_allocations + 1);
  EXPECT_EQ(after.small_allocations, before.small_allocations);
  ::operator delete(big);
}

TEST(FastAlloc, ArrayAndNothrowFormsRoundTrip) {
  auto* ints = new int[1000];
  ints[999] = 7;
  EXPECT_EQ(ints[999], 7);
  delete[] ints;
  auto* small = new (std::nothrow) char[10];
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(aligned16(small));
  delete[] small;
  void* p = ::operator new(24, std::nothrow);
  ASSERT_NE(p, nullptr);
  ::operator delete(p, std::nothrow);
}

TEST(FastAlloc, ContainersChurnWithoutCorruption) {
  // Many chunks' worth of mixed sizes, freed in another order than made.
  std::map<int, std::string> m;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 20000; ++i) m[i * 7 % 20011] = std::string(static_cast<size_t>(i % 300), 'x');
    for (int i = 0; i < 20000; i += 2) m.erase(i * 7 % 20011);
  }
  size_t total = 0;
  for (const auto& [k, v] : m) {
    for (char c : v) ASSERT_EQ(c, 'x');
    total += v.size();
  }
  EXPECT_GT(total, 0u);
}

TEST(FastAlloc, ABlockFreedOnAnotherThreadStaysGood) {
  std::vector<std::unique_ptr<std::string>> made;
  for (int i = 0; i < 1000; ++i) made.push_back(std::make_unique<std::string>(100, 'a'));
  std::thread other([&made] { made.clear(); });  // joins that thread's free lists
  other.join();
  // This thread carries on, and the other thread's blocks were plain memory.
  std::vector<std::string> again(1000, std::string(100, 'b'));
  for (const std::string& s : again) ASSERT_EQ(s, std::string(100, 'b'));
}

}  // namespace
