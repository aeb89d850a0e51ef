// Names, widths and kinds of the key types.
#include "gpusort/key_type.hpp"

namespace gpusort {

namespace {
struct KeyTypeInfo {
    KeyType type;
    std::string_view name;
    std::size_t width;
    KeyKind kind;
};
constexpr KeyTypeInfo kInfo[] = {
    {KeyType::u8, "u8", 1, KeyKind::unsigned_int},   {KeyType::u16, "u16", 2, KeyKind::unsigned_int},
    {KeyType::u32, "u32", 4, KeyKind::unsigned_int}, {KeyType::u64, "u64", 8, KeyKind::unsigned_int},
    {KeyType::i8, "i8", 1, KeyKind::signed_int},     {KeyType::i16, "i16", 2, KeyKind::signed_int},
    {KeyType::i32, "i32", 4, KeyKind::signed_int},   {KeyType::i64, "i64", 8, KeyKind::signed_int},
    {KeyType::f32, "f32", 4, KeyKind::floating},     {KeyType::f64, "f64", 8, KeyKind::floating},
};
const KeyTypeInfo& info(KeyType type) { return kInfo[static_cast<int>(type)]; }
}  // namespace

std::optional<KeyType> parse_key_type(std::string_view name) {
    for (const auto& entry : kInfo)
        if (entry.name == name) return entry.type;
    return std::nullopt;
}

std::string_view key_type_name(KeyType type) { return info(type).name; }
std::size_t key_width(KeyType type) { return info(type).width; }
KeyKind key_kind(KeyType type) { return info(type).kind; }

std::string key_type_list() {
    std::string list;
    for (const auto& entry : kInfo) {
        if (!list.empty()) list += ' ';
        list += entry.name;
    }
    return list;
}

}  // namespace gpusort
