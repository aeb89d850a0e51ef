// generate(): one record per index, in parallel; each record depends on its index alone.
#include "tools/gen/data_generator.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include <tbb/parallel_for.h>

namespace gpusort::gen {

std::optional<RecordFormat> parse_record_format(std::string_view name) {
    if (name == "gensort") return RecordFormat::gensort;
    if (name == "gensort-text") return RecordFormat::gensort_text;
    return std::nullopt;
}

std::size_t DataSpec::record_size() const {
    return format == RecordFormat::keys ? key_width(keys.type) : kGensortRecordSize;
}

void DataSpec::validate() const {
    if (keys.special && key_kind(keys.type) != KeyKind::floating)
        throw std::invalid_argument("special values need a float key type (f32 or f64)");
    if (format != RecordFormat::keys && keys.type != KeyType::u64)
        throw std::invalid_argument("gensort records have u64 keys");
}

void generate(const DataSpec& spec, std::uint64_t first, std::span<std::byte> out) {
    spec.validate();
    const std::size_t width = spec.record_size();
    const std::uint64_t n = out.size() / width;
    if (out.size() % width != 0 || first > spec.keys.count || n > spec.keys.count - first)
        throw std::invalid_argument("generate: " + std::to_string(out.size()) + " bytes from record " +
                                    std::to_string(first) + " are not whole records of the " +
                                    std::to_string(spec.keys.count) + " of the data");
    tbb::parallel_for(std::uint64_t{0}, n, [&](std::uint64_t i) {
        std::byte* record = out.data() + i * width;
        switch (spec.format) {
        case RecordFormat::keys: {
            const std::uint64_t raw = spec.keys.key(first + i);
            std::memcpy(record, &raw, width);  // little-endian: the low bytes first
            break;
        }
        case RecordFormat::gensort: make_gensort_record(spec.keys, first + i, record); break;
        case RecordFormat::gensort_text: make_gensort_text_line(spec.keys, first + i, record); break;
        }
    });
}

std::vector<std::byte> generate(const DataSpec& spec) {
    spec.validate();
    std::vector<std::byte> data(spec.keys.count * spec.record_size());
    generate(spec, 0, data);
    return data;
}

}  // namespace gpusort::gen
