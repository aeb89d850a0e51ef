// KeyType: the ten element types a file of keys may hold, their names and widths; KeyOrder: the
// order a file of such keys is sorted in.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusort {

enum class KeyType { u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 };

enum class KeyKind { unsigned_int, signed_int, floating };

inline constexpr KeyType kAllKeyTypes[] = {KeyType::u8,  KeyType::u16, KeyType::u32, KeyType::u64,
                                           KeyType::i8,  KeyType::i16, KeyType::i32, KeyType::i64,
                                           KeyType::f32, KeyType::f64};

std::optional<KeyType> parse_key_type(std::string_view name);
std::string_view key_type_name(KeyType type);
std::size_t key_width(KeyType type);
KeyKind key_kind(KeyType type);
// "u8 u16 u32 u64 i8 i16 i32 i64 f32 f64", for messages.
std::string key_type_list();

// The order a file's keys are sorted in: the type of each key and the direction.
struct KeyOrder {
    KeyType type = KeyType::u64;
    bool descending = false;
};

}  // namespace gpusort
