// KeyType: the ten element types a file of keys may hold, their names, widths and kinds; KeyOrder:
// the order a file of such keys is sorted in. Widths and kinds are constexpr, so that the GPU
// layer (through src/keys/key_rules.hpp) reads them from here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace gpusort {

enum class KeyType { u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 };

// What a key's bits mean, which decides how it is normalised (src/keys/key_rules.hpp). Byte
// strings of key specs are unsigned big-endian numbers, 8 bytes at a time.
enum class KeyKind : std::uint8_t { unsigned_int, signed_int, floating };

inline constexpr KeyType kAllKeyTypes[] = {KeyType::u8,  KeyType::u16, KeyType::u32, KeyType::u64,
                                           KeyType::i8,  KeyType::i16, KeyType::i32, KeyType::i64,
                                           KeyType::f32, KeyType::f64};

constexpr std::size_t key_width(KeyType type) {
    switch (type) {
    case KeyType::u8:
    case KeyType::i8: return 1;
    case KeyType::u16:
    case KeyType::i16: return 2;
    case KeyType::u32:
    case KeyType::i32:
    case KeyType::f32: return 4;
    default: return 8;
    }
}

constexpr KeyKind key_kind(KeyType type) {
    switch (type) {
    case KeyType::i8:
    case KeyType::i16:
    case KeyType::i32:
    case KeyType::i64: return KeyKind::signed_int;
    case KeyType::f32:
    case KeyType::f64: return KeyKind::floating;
    default: return KeyKind::unsigned_int;
    }
}

// The KeyType of a C++ arithmetic type of 1 to 8 bytes (float and double: f32, f64).
template <class T>
constexpr KeyType key_type_of() {
    static_assert(std::is_arithmetic_v<T> && sizeof(T) <= 8 && !std::is_same_v<T, bool>, "a key is an integer or float of 1 to 8 bytes");
    if constexpr (std::is_floating_point_v<T>) {
        static_assert(sizeof(T) == 4 || sizeof(T) == 8, "floats are f32 or f64");
        return sizeof(T) == 4 ? KeyType::f32 : KeyType::f64;
    } else if constexpr (std::is_signed_v<T>) {
        return sizeof(T) == 1 ? KeyType::i8 : sizeof(T) == 2 ? KeyType::i16 : sizeof(T) == 4 ? KeyType::i32 : KeyType::i64;
    } else {
        return sizeof(T) == 1 ? KeyType::u8 : sizeof(T) == 2 ? KeyType::u16 : sizeof(T) == 4 ? KeyType::u32 : KeyType::u64;
    }
}

std::optional<KeyType> parse_key_type(std::string_view name);
std::string_view key_type_name(KeyType type);
// "u8 u16 u32 u64 i8 i16 i32 i64 f32 f64", for messages.
std::string key_type_list();

// The order a file's keys are sorted in: the type of each key and the direction.
struct KeyOrder {
    KeyType type = KeyType::u64;
    bool descending = false;
};

}  // namespace gpusort
