// NoPayload, the payload type of a sort of keys alone, and what a payload type adds to each key:
// the one place both the host facade (device_sorter.hpp) and the kernels take them from.
#pragma once

#include <type_traits>

namespace gpusort::gpu {

// Payload type of a sort of keys alone.
struct NoPayload {};

// Whether a sort with this payload type carries a payload along with its keys.
template <class Payload>
inline constexpr bool kIsPayload = !std::is_same_v<Payload, NoPayload>;

// Bytes of payload per key: 0 for NoPayload.
template <class Payload>
inline constexpr int kPayloadBytes = kIsPayload<Payload> ? static_cast<int>(sizeof(Payload)) : 0;

}  // namespace gpusort::gpu
