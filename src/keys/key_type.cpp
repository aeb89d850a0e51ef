// Names of the key types.
#include "gpusort/key_type.hpp"

namespace gpusort {

namespace {
struct KeyTypeName {
    KeyType type;
    std::string_view name;
};
constexpr KeyTypeName kNames[] = {
    {KeyType::u8, "u8"},   {KeyType::u16, "u16"}, {KeyType::u32, "u32"}, {KeyType::u64, "u64"},
    {KeyType::i8, "i8"},   {KeyType::i16, "i16"}, {KeyType::i32, "i32"}, {KeyType::i64, "i64"},
    {KeyType::f32, "f32"}, {KeyType::f64, "f64"},
};
}  // namespace

std::optional<KeyType> parse_key_type(std::string_view name) {
    for (const auto& entry : kNames)
        if (entry.name == name) return entry.type;
    return std::nullopt;
}

std::string_view key_type_name(KeyType type) { return kNames[static_cast<int>(type)].name; }

std::string key_type_list() {
    std::string list;
    for (const auto& entry : kNames) {
        if (!list.empty()) list += ' ';
        list += entry.name;
    }
    return list;
}

}  // namespace gpusort
