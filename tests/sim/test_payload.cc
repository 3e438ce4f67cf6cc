// sim::Payload: a type-erased message body that keeps small values in place.
#include "sim/payload.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using sim::Payload;
using sim::payload_cast;

// Counts live objects, so that every construction is matched by one
// destruction whichever way the value travelled.
struct Counted {
  static int live;
  std::string text;
  explicit Counted(std::string t) : text(std::move(t)) { ++live; }
  Counted(const Counted& o) : text(o.text) { ++live; }
  Counted(Counted&& o) noexcept : text(std::move(o.text)) { ++live; }
  ~Counted() { --live; }
};
int Counted::live = 0;

// Too big to be kept in place.
struct Big {
  std::array<char, Payload::kInlineBytes + 1> bytes{};
  Counted tag{"big"};
};

TEST(Payload, EmptyHoldsNothing) {
  Payload p;
  EXPECT_FALSE(p.has_value());
  EXPECT_EQ(p.type(), typeid(void));
  EXPECT_EQ(payload_cast<int>(&p), nullptr);
  EXPECT_EQ(payload_cast<int>(static_cast<Payload*>(nullptr)), nullptr);
}

// Whether `value` lies inside the Payload object itself.
bool in_place(const Payload& p, const void* value) {
  const auto* begin = reinterpret_cast<const char*>(&p);
  const auto* v = static_cast<const char*>(value);
  return v >= begin && v < begin + sizeof(Payload);
}

TEST(Payload, KeepsPlainDataInPlaceAndTheRestBehindAPointer) {
  Payload plain = std::array<int, 8>{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(in_place(plain, payload_cast<std::array<int, 8>>(&plain)));
  Payload moved_plain = std::move(plain);
  EXPECT_TRUE(in_place(moved_plain, payload_cast<std::array<int, 8>>(&moved_plain)));
  EXPECT_EQ((*payload_cast<std::array<int, 8>>(&moved_plain))[7], 8);

  // A value with a costly move (here a vector) stays where it was made: a
  // move of the payload moves only the pointer.
  Payload rich = std::vector<int>{1, 2, 3};
  const std::vector<int>* at = payload_cast<std::vector<int>>(&rich);
  EXPECT_FALSE(in_place(rich, at));
  Payload moved_rich = std::move(rich);
  EXPECT_EQ(payload_cast<std::vector<int>>(&moved_rich), at);
  EXPECT_EQ(payload_cast<std::vector<int>>(&moved_rich)->back(), 3);
}

TEST(Payload, GivesBackOnlyTheTypeItHolds) {
  Payload p = 42;
  ASSERT_NE(payload_cast<int>(&p), nullptr);
  EXPECT_EQ(*payload_cast<int>(&p), 42);
  EXPECT_EQ(payload_cast<long>(&p), nullptr);
  EXPECT_EQ(payload_cast<unsigned>(&p), nullptr);
  EXPECT_EQ(p.type(), typeid(int));
  const Payload& c = p;
  EXPECT_EQ(*payload_cast<int>(&c), 42);
}

TEST(Payload, SmallAndLargeValuesMoveCopyAndDieOnce) {
  ASSERT_EQ(Counted::live, 0);
  {
    Payload small = Counted("in place");
    Payload large = Big{};
    EXPECT_EQ(Counted::live, 2);
    Payload small_copy = small;
    Payload large_copy = large;
    EXPECT_EQ(Counted::live, 4);
    EXPECT_EQ(payload_cast<Counted>(&small_copy)->text, "in place");
    EXPECT_EQ(payload_cast<Big>(&large_copy)->tag.text, "big");
    // A copy is a separate value.
    payload_cast<Counted>(&small_copy)->text = "changed";
    EXPECT_EQ(payload_cast<Counted>(&small)->text, "in place");

    Payload moved_small = std::move(small);
    Payload moved_large = std::move(large);
    EXPECT_FALSE(small.has_value());  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_FALSE(large.has_value());  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(Counted::live, 4);
    EXPECT_EQ(payload_cast<Counted>(&moved_small)->text, "in place");

    moved_small = std::move(moved_large);  // the old value dies, the big one moves in
    EXPECT_EQ(Counted::live, 3);
    EXPECT_EQ(payload_cast<Counted>(&moved_small), nullptr);
    EXPECT_EQ(payload_cast<Big>(&moved_small)->tag.text, "big");
    small_copy = large_copy;
    EXPECT_EQ(Counted::live, 3);
    small_copy.reset();
    EXPECT_EQ(Counted::live, 2);
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(Payload, AReceiverMayMoveTheValueOut) {
  Payload p = std::vector<int>{1, 2, 3};
  std::vector<int> taken = std::move(*payload_cast<std::vector<int>>(&p));
  EXPECT_EQ(taken, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(payload_cast<std::vector<int>>(&p)->empty());
}

TEST(Payload, MoveOnlyValuesTravel) {
  Payload p = std::make_unique<int>(7);
  Payload q = std::move(p);
  EXPECT_EQ(**payload_cast<std::unique_ptr<int>>(&q), 7);
  EXPECT_THROW(Payload{q}, std::logic_error);
}

}  // namespace
