// The key options: their descriptions, and the one set of rules that turns their values into a
// KeyOptions (see key_options.hpp).
#include "src/cli/key_options.hpp"

#include "src/cli/count_option.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort {

namespace po = boost::program_options;

namespace {

// The records and key of --record-size, --key and --format; nullopt when the whole record is one
// key of --type. --descending reverses every field.
std::optional<KeySpec> record_spec(const po::variables_map& vm, const KeyOrder& order) {
    const bool type_given = !vm["type"].defaulted();
    const bool keys_given = vm.count("key") > 0;
    std::optional<std::size_t> record_size;
    if (vm.count("record-size")) {
        record_size = count_option<std::size_t>(vm, "record-size");
        if (*record_size == 0) throw std::invalid_argument("--record-size: must be at least 1");
        if (*record_size > kMaxRecordSize)
            throw std::invalid_argument("--record-size: at most " + std::to_string(kMaxRecordSize) + " bytes are supported");
    }
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
        // --type T with larger records: the key is a little-endian T at offset 0.
        spec = whole_record_key(order.type, false);
        spec.record_size = *record_size;
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
        ("type", po::value<std::string>()->default_value("u64"),
         "key type of every record: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 (floats in IEEE 754 totalOrder)")
        ("record-size", po::value<std::string>(), "bytes per record (default: the width of the key type, or the smallest record holding the --key fields)")
        ("key", po::value<std::vector<std::string>>()->composing(),
         "a key field, repeatable, the first most significant: OFFSET:TYPE[:be|le][:desc] or OFFSET:bytes:LEN[:desc] (byte strings compare as memcmp); replaces --type")
        ("format", po::value<std::string>(), "gensort: Sort Benchmark records, 100 bytes ordered by the 10-byte key at offset 0")
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
