// Strong ids for the engine's objects. An id is an index into a vector owned
// by the world (hosts and processes are kept in the order they were added), so
// iterating by id is deterministic.
#pragma once

#include <compare>
#include <cstdint>

namespace sim {

template <typename Tag, typename Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

struct HostTag {};
struct ProcessTag {};
struct SocketTag {};
using HostId = StrongId<HostTag, uint32_t>;
using ProcessId = StrongId<ProcessTag, uint32_t>;
using SocketId = StrongId<SocketTag, uint64_t>;

}  // namespace sim
