// The key options: their descriptions, and the one set of rules that turns their values into a
// KeyOptions (see key_options.hpp).
#include "src/cli/key_options.hpp"

#include "src/cli/size_parse.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {

namespace po = boost::program_options;

namespace {

// The value of --record-size: a size in whole bytes with the suffixes of the other sizes (4K, 1M),
// from 1 byte to kMaxRecordSize.
std::size_t record_size_option(const po::variables_map& vm) {
    const auto& text = vm["record-size"].as<std::string>();
    const std::string limits = ": records are 1 to " + std::to_string(kMaxRecordSize) + " bytes (1M)";
    const std::optional<std::uint64_t> size = parse_whole_size(text);
    if (!size)
        throw std::invalid_argument("--record-size: '" + text + "' is not a whole number of bytes (such as 100, 4K or 1M)" +
                                    limits);
    if (*size == 0) throw std::invalid_argument("--record-size: must be at least 1" + limits);
    if (*size > kMaxRecordSize)
        throw std::invalid_argument("--record-size: at most " + std::to_string(kMaxRecordSize) + " bytes (1M) are supported");
    return static_cast<std::size_t>(*size);
}

// The key of --type T in records of `record_size` bytes: a little-endian T at offset 0. Records
// too small for it are refused naming the type, and whether it is --type's default.
KeySpec typed_record_key(KeyType type, std::size_t record_size, bool type_given) {
    if (record_size < key_width(type)) {
        const std::string records = "--record-size: records of " + std::to_string(record_size) + " bytes cannot hold ";
        const std::string name(key_type_name(type));
        if (type_given) throw std::invalid_argument(records + "the key, a " + name + " (--type " + name + ")");
        throw std::invalid_argument(records + "the default key, a " + name + " (--type): give --type or --key");
    }
    KeySpec spec = whole_record_key(type, false);
    spec.record_size = record_size;
    return spec;
}

// The records and key of --record-size, --key and --format; nullopt when the whole record is one
// key of --type. --descending reverses every field.
std::optional<KeySpec> record_spec(const po::variables_map& vm, const KeyOrder& order) {
    const bool type_given = !vm["type"].defaulted();
    const bool keys_given = vm.count("key") > 0;
    std::optional<std::size_t> record_size;
    if (vm.count("record-size")) record_size = record_size_option(vm);
    KeySpec spec;
    if (vm.count("format")) {
        const auto& format = vm["format"].as<std::string>();
        if (format != "gensort") throw std::invalid_argument("--format: unknown format '" + format + "' (only gensort)");
        if (type_given || keys_given) throw std::invalid_argument("--format gensort excludes --type and --key");
        if (record_size && *record_size != 100)
            throw std::invalid_argument("--format gensort: records are 100 bytes, not " + std::to_string(*record_size));
        spec = gensort_key();
    } else if (keys_given) {
        if (type_given) throw std::invalid_argument("--key replaces --type: give one or the other");
        for (const auto& text : vm["key"].as<std::vector<std::string>>()) {
            const KeyField field = parse_key_field(text);
            // Checked here, before offset + length could wrap around.
            if (field.offset >= kMaxRecordSize || field.length > kMaxRecordSize - field.offset)
                throw std::invalid_argument("--key '" + text + "': the field ends beyond " +
                                            std::to_string(kMaxRecordSize) + " bytes, the largest record supported");
            spec.fields.push_back(field);
        }
        if (record_size) {
            spec.record_size = *record_size;
        } else {
            for (const auto& f : spec.fields) spec.record_size = std::max(spec.record_size, f.offset + f.length);
        }
    } else if (record_size && *record_size != key_width(order.type)) {
        spec = typed_record_key(order.type, *record_size, type_given);
    } else {
        return std::nullopt;
    }
    if (order.descending)
        for (auto& f : spec.fields) f.descending = !f.descending;
    try {
        spec.validate();
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string(keys_given ? "--key: " : "--record-size: ") + e.what());
    }
    return spec;
}

}  // namespace

KeySpec KeyOptions::spec() const { return records ? *records : whole_record_key(order.type, order.descending); }

void add_key_options(po::options_description& options) {
    options.add_options()
        ("type", po::value<std::string>()->value_name("T")->default_value("u64"),
         "key type of every record: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 (floats in IEEE 754 totalOrder)")
        ("record-size", po::value<std::string>()->value_name("N"), "bytes per record, 1 to 1M (default: the width of the key type, or the smallest record holding the --key fields)")
        ("key", po::value<std::vector<std::string>>()->value_name("SPEC")->composing(),
         "a key field, repeatable, the first most significant: OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc] (byte strings compare as memcmp); replaces --type")
        ("format", po::value<std::string>()->value_name("NAME"), "gensort: Sort Benchmark records, 100 bytes ordered by the 10-byte key at offset 0")
        ("descending", "reverse the whole order");
}

KeyOptions parse_key_options(const po::variables_map& vm) {
    KeyOptions key;
    const auto& type_name = vm["type"].as<std::string>();
    const auto type = parse_key_type(type_name);
    if (!type) throw std::invalid_argument("--type: unknown type '" + type_name + "' (one of: " + key_type_list() + ")");
    key.order.type = *type;
    key.order.descending = vm.count("descending") > 0;
    key.records = record_spec(vm, key.order);
    return key;
}

}  // namespace gpusort
