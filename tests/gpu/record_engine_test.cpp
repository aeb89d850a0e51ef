// Record mode of the chunk engine (gpu/chunk_engine.hpp, gpu/record_keys.hpp): records sorted
// stably by a composite key, written out as records or as key-prefixed entries, and the device
// extraction of normalised key words on its own. Checked against host references written here
// from the rules: a field-by-field comparison (numbers compared by value, floats in IEEE 754
// totalOrder, byte strings by memcmp, descending fields reversed) driving std::stable_sort, and
// a byte-wise normalisation for the expected key words. Format checks and sizing need no GPU;
// every test that needs one skips without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/chunk_engine.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_error.hpp"
#include "gpu/record_keys.hpp"
#include "gpu/stream.hpp"

namespace gpusort::gpu {
namespace {

#define SKIP_WITHOUT_GPU()                                                      \
    do {                                                                        \
        if (device_count() == 0) GTEST_SKIP() << device_unavailable_reason();   \
    } while (false)

using Bytes = std::vector<std::uint8_t>;

RecordKeyField number(std::uint32_t offset, std::uint32_t length, FieldKind kind, bool big_endian = false,
                      bool descending = false) {
    return RecordKeyField{offset, length, kind, big_endian, descending};
}

RecordKeyField bytes_field(std::uint32_t offset, std::uint32_t length, bool descending = false) {
    return RecordKeyField{offset, length, FieldKind::bytes, false, descending};
}

RecordKeyFormat make_format(std::uint32_t record_size, std::initializer_list<RecordKeyField> fields) {
    RecordKeyFormat format;
    format.record_size = record_size;
    for (const auto& field : fields) format.fields[format.field_count++] = field;
    return format;
}

// ---- Host references ----------------------------------------------------------------------

// The field's number, its bytes read in the field's byte order.
std::uint64_t read_number(const std::uint8_t* p, const RecordKeyField& f) {
    std::uint64_t value = 0;
    for (std::uint32_t i = 0; i < f.length; ++i) {
        const std::uint64_t byte = p[f.offset + i];
        value |= byte << (8 * (f.big_endian ? f.length - 1 - i : i));
    }
    return value;
}

// The number sign-extended from its width.
std::int64_t sign_extend(std::uint64_t value, std::uint32_t length) {
    const unsigned shift = 64 - 8 * length;
    return static_cast<std::int64_t>(value << shift) >> shift;
}

// <0, 0, >0 as field f of record a sorts before, with or after that of b (ascending order).
int compare_field(const std::uint8_t* a, const std::uint8_t* b, const RecordKeyField& f) {
    int result = 0;
    if (f.kind == FieldKind::bytes) {
        result = std::memcmp(a + f.offset, b + f.offset, f.length);
    } else {
        const std::uint64_t x = read_number(a, f), y = read_number(b, f);
        if (f.kind == FieldKind::unsigned_int) {
            result = x < y ? -1 : x > y;
        } else {
            std::int64_t sx = sign_extend(x, f.length), sy = sign_extend(y, f.length);
            if (f.kind == FieldKind::floating) {
                // IEEE 754 totalOrder: negative values order by reversed magnitude bits.
                if (sx < 0) sx ^= std::numeric_limits<std::int64_t>::max();
                if (sy < 0) sy ^= std::numeric_limits<std::int64_t>::max();
            }
            result = sx < sy ? -1 : sx > sy;
        }
    }
    return f.descending ? -result : result;
}

// Input indices of the n records in stably sorted order.
std::vector<std::size_t> reference_order(const RecordKeyFormat& format, const Bytes& records, std::size_t n) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    const std::size_t size = format.record_size;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
        const std::uint8_t* a = records.data() + i * size;
        const std::uint8_t* b = records.data() + j * size;
        for (std::uint32_t f = 0; f < format.field_count; ++f) {
            const int c = compare_field(a, b, format.fields[f]);
            if (c != 0) return c < 0;
        }
        return false;
    });
    return order;
}

// The normalised key bytes of a record, zero-padded to key_words() * 8 bytes.
Bytes reference_key_bytes(const RecordKeyFormat& format, const std::uint8_t* record) {
    Bytes key;
    for (std::uint32_t f = 0; f < format.field_count; ++f) {
        const RecordKeyField& field = format.fields[f];
        if (field.kind == FieldKind::bytes) {
            for (std::uint32_t i = 0; i < field.length; ++i)
                key.push_back(static_cast<std::uint8_t>(field.descending ? ~record[field.offset + i] : record[field.offset + i]));
            continue;
        }
        const unsigned bits = 8 * field.length;
        const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
        const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
        std::uint64_t value = read_number(record, field);
        if (field.kind == FieldKind::signed_int) value ^= sign;
        if (field.kind == FieldKind::floating) value = (value & sign) ? (value ^ mask) : (value | sign);
        if (field.descending) value ^= mask;
        for (unsigned i = 0; i < field.length; ++i) key.push_back(static_cast<std::uint8_t>(value >> (bits - 8 - 8 * i)));
    }
    key.resize(std::size_t{8} * format.key_words(), 0);
    return key;
}

// The key words: word j is the big-endian reading of key bytes 8j .. 8j + 7.
std::vector<std::uint64_t> reference_key_words(const RecordKeyFormat& format, const std::uint8_t* record) {
    const Bytes key = reference_key_bytes(format, record);
    std::vector<std::uint64_t> words(format.key_words(), 0);
    for (std::size_t i = 0; i < key.size(); ++i) words[i / 8] = (words[i / 8] << 8) | key[i];
    return words;
}

// What the engine must write: records in reference order, or entries (key words, native-endian,
// word 0 first, then the record).
Bytes expected_output(const RecordKeyFormat& format, const Bytes& records, const std::vector<std::size_t>& order,
                      bool restore) {
    const std::size_t size = format.record_size;
    Bytes out;
    out.reserve(order.size() * (size + (restore ? 0 : 8 * format.key_words())));
    for (const std::size_t r : order) {
        const std::uint8_t* record = records.data() + r * size;
        if (!restore) {
            for (const std::uint64_t word : reference_key_words(format, record)) {
                std::uint8_t native[8];
                std::memcpy(native, &word, 8);
                out.insert(out.end(), native, native + 8);
            }
        }
        out.insert(out.end(), record, record + size);
    }
    return out;
}

Bytes expected_output(const RecordKeyFormat& format, const Bytes& records, std::size_t n, bool restore) {
    return expected_output(format, records, reference_order(format, records, n), restore);
}

// ---- Test records -------------------------------------------------------------------------

void put(std::uint8_t* p, const RecordKeyField& f, std::uint64_t value) {
    for (std::uint32_t i = 0; i < f.length; ++i)
        p[f.offset + i] = static_cast<std::uint8_t>(value >> (8 * (f.big_endian ? f.length - 1 - i : i)));
}

// A special floating value of the field's width (8 or 4 bytes) from a random word.
std::uint64_t special_float(const RecordKeyField& f, std::uint64_t r) {
    if (f.length == 8) {
        const double values[] = {0.0, -0.0, 1.0, -1.0, 1e300, -1e300, std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                                 -std::numeric_limits<double>::denorm_min(), 2.5, -2.5};
        std::uint64_t bits = std::bit_cast<std::uint64_t>(values[r % std::size(values)]);
        if (r % 16 == 15) bits = 0x7ff8000000000000ull | (r >> 40);  // NaNs of either sign
        if (r % 16 == 14) bits = 0xfff8000000000000ull | (r >> 40);
        return bits;
    }
    const float values[] = {0.0f, -0.0f, 1.0f, -1.0f, 3e38f, -3e38f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(), 2.5f, -2.5f};
    std::uint32_t bits = std::bit_cast<std::uint32_t>(values[r % std::size(values)]);
    if (r % 16 == 15) bits = 0x7fc00000u | static_cast<std::uint32_t>(r >> 50);
    if (r % 16 == 14) bits = 0xffc00000u | static_cast<std::uint32_t>(r >> 50);
    return bits;
}

// n random records. With `distinct_keys` > 0 every record's key fields are those of one of that
// many prototypes (many equal keys, random other bytes: stability shows in the output).
Bytes make_records(const RecordKeyFormat& format, std::size_t n, std::size_t distinct_keys, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    const std::size_t size = format.record_size;
    Bytes records(n * size);
    for (std::size_t i = 0; i < records.size(); i += 8) {
        const std::uint64_t r = random();
        for (std::size_t b = 0; b < 8 && i + b < records.size(); ++b) records[i + b] = static_cast<std::uint8_t>(r >> (8 * b));
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t* record = records.data() + i * size;
        for (std::uint32_t f = 0; f < format.field_count; ++f) {
            const RecordKeyField& field = format.fields[f];
            const std::uint64_t r = random();
            if (field.kind == FieldKind::floating && field.length >= 4 && r % 3 == 0) put(record, field, special_float(field, r >> 2));
            if (field.kind != FieldKind::bytes && r % 7 == 1) put(record, field, (r >> 8) % 3);  // small values
            if (field.kind == FieldKind::bytes && r % 5 == 1) std::memset(record + field.offset, 0, field.length / 2);
        }
    }
    if (distinct_keys > 0 && n > 0) {
        const std::size_t prototypes = std::min(distinct_keys, n);
        for (std::size_t i = prototypes; i < n; ++i) {
            const std::uint8_t* from = records.data() + (random() % prototypes) * size;
            std::uint8_t* to = records.data() + i * size;
            for (std::uint32_t f = 0; f < format.field_count; ++f)
                std::memcpy(to + format.fields[f].offset, from + format.fields[f].offset, format.fields[f].length);
        }
    }
    return records;
}

// ---- Running the engine -------------------------------------------------------------------

// Sorts the n records in `slot` and returns what the engine wrote, checking that the pieces come
// and go in order and hold whole elements.
Bytes run_engine(ChunkEngine& engine, std::size_t slot, const Bytes& records, std::size_t n, bool restore,
                 std::size_t* pieces_out = nullptr) {
    const std::size_t in_width = engine.input_width(), out_width = engine.output_width(restore);
    Bytes out(n * out_width);
    std::uint64_t next_read = 0, next_write = 0;
    std::size_t pieces = 0;
    ChunkCallbacks io;
    io.read = [&](std::uint64_t first, void* data, std::size_t count) {
        EXPECT_EQ(first, next_read);
        ASSERT_LE(first + count, n);
        std::memcpy(data, records.data() + first * in_width, count * in_width);
        next_read = first + count;
    };
    io.write = [&](std::uint64_t first, const void* data, std::size_t count) {
        EXPECT_EQ(first, next_write);
        ASSERT_LE(first + count, n);
        std::memcpy(out.data() + first * out_width, data, count * out_width);
        next_write = first + count;
        ++pieces;
    };
    const ChunkTimes times = engine.sort_chunk(slot, n, false, restore, io);
    EXPECT_EQ(next_read, n);
    EXPECT_EQ(next_write, n);
    EXPECT_GE(times.sort, 0.0);
    if (pieces_out) *pieces_out = pieces;
    return out;
}

// Index of the first element where the outputs differ, or n.
std::size_t first_bad_element(const Bytes& got, const Bytes& want, std::size_t width) {
    if (got.size() != want.size()) return 0;
    for (std::size_t i = 0; i * width < got.size(); ++i)
        if (std::memcmp(got.data() + i * width, want.data() + i * width, width) != 0) return i;
    return got.size() / std::max<std::size_t>(width, 1);
}

void expect_sorted(ChunkEngine& engine, const RecordKeyFormat& format, const Bytes& records, std::size_t n,
                   bool restore, const std::string& what) {
    const Bytes got = run_engine(engine, 0, records, n, restore);
    const Bytes want = expected_output(format, records, n, restore);
    const std::size_t width = engine.output_width(restore);
    ASSERT_EQ(got.size(), want.size()) << what;
    const std::size_t bad = first_bad_element(got, want, width);
    EXPECT_EQ(bad, n) << what << (restore ? " records" : " entries") << ": first wrong element " << bad << " of " << n;
}

struct Case {
    const char* name;
    RecordKeyFormat format;
};

std::vector<Case> cases() {
    using K = FieldKind;
    return {
        {"u8 record of 1 byte", make_format(1, {number(0, 1, K::unsigned_int)})},
        {"i8 descending record of 1 byte", make_format(1, {number(0, 1, K::signed_int, false, true)})},
        {"u64 record of 8 bytes", make_format(8, {number(0, 8, K::unsigned_int)})},
        {"big-endian u32 at 3 of 13", make_format(13, {number(3, 4, K::unsigned_int, true)})},
        {"i16 at 2 of 14", make_format(14, {number(2, 2, K::signed_int), number(0, 1, K::unsigned_int)})},
        {"gensort: bytes 10 at 0 of 100", make_format(100, {bytes_field(0, 10)})},
        {"f64 at odd offset 5 of 21", make_format(21, {number(5, 8, K::floating)})},
        {"big-endian f32 descending, i32", make_format(16, {number(1, 4, K::floating, true, true), number(8, 4, K::signed_int)})},
        {"u16 be descending + i64 (2 words)", make_format(19, {number(1, 2, K::unsigned_int, true, true), number(6, 8, K::signed_int)})},
        {"bytes 20 descending + i16 (3 words)", make_format(30, {bytes_field(2, 20, true), number(24, 2, K::signed_int)})},
        {"three u64 (3 words, exact)", make_format(40, {number(0, 8, K::unsigned_int, true), number(8, 8, K::unsigned_int, false, true), number(16, 8, K::floating)})},
        {"bytes 32 descending (4 words)", make_format(36, {bytes_field(2, 32, true)})},
        {"five fields of a 4096-byte record (4 words)",
         make_format(4096, {bytes_field(4000, 12), number(17, 4, K::floating, true), number(100, 8, K::signed_int, false, true),
                            number(4095, 1, K::unsigned_int), bytes_field(0, 7)})},
    };
}

// ---- Tests that need no GPU -----------------------------------------------------------------

TEST(RecordKeyFormat, KeyBytesAndWords) {
    EXPECT_EQ(make_format(100, {bytes_field(0, 10)}).key_bytes(), 10u);
    EXPECT_EQ(make_format(100, {bytes_field(0, 10)}).key_words(), 2u);
    EXPECT_EQ(make_format(8, {number(0, 8, FieldKind::unsigned_int)}).key_words(), 1u);
    EXPECT_EQ(make_format(64, {bytes_field(0, 17), number(20, 8, FieldKind::floating)}).key_words(), 4u);
    EXPECT_EQ(RecordKeyFormat{}.key_words(), 0u);
}

TEST(RecordKeyFormat, UnusableFormatsAreRefused) {
    using K = FieldKind;
    RecordKeyFormat too_many = make_format(100, {});
    too_many.field_count = 33;
    for (auto& field : too_many.fields) field = number(0, 1, K::unsigned_int);
    const RecordKeyFormat bad[] = {
        make_format(0, {number(0, 1, K::unsigned_int)}),                        // no record
        make_format((1u << 20) + 1, {number(0, 1, K::unsigned_int)}),            // record too large
        make_format(100, {}),                                                    // no field
        make_format(100, {bytes_field(0, 0)}),                                   // empty key
        make_format(100, {bytes_field(0, 33)}),                                  // 5 words
        make_format(100, {bytes_field(0, 30), number(40, 4, K::signed_int)}),    // 34 bytes
        make_format(100, {number(0, 3, K::unsigned_int)}),                       // odd number width
        make_format(100, {number(96, 8, K::floating)}),                          // outside
        make_format(100, {bytes_field(95, 6)}),                                  // outside
        make_format(100, {number(0xfffffffcu, 8, K::unsigned_int)}),             // offset overflows
        too_many,
    };
    for (const auto& format : bad) {
        EXPECT_THROW(ChunkEngine(0, format), GpuError) << "record size " << format.record_size;
        try {
            validate_record_key_format(format);
        } catch (const GpuError& error) {
            EXPECT_EQ(error.code(), cudaErrorInvalidValue);
            EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
        }
    }
    EXPECT_NO_THROW(ChunkEngine(0, make_format(1u << 20, {bytes_field((1u << 20) - 32, 32)})));
    EXPECT_NO_THROW(ChunkEngine(0, make_format(1, {number(0, 1, K::floating)})));
}

TEST(RecordEngineSizing, WidthsAndDeviceBytes) {
    ChunkEngine plain(0, 4, KeyMapping{});
    EXPECT_FALSE(plain.record_mode());
    EXPECT_EQ(plain.input_width(), 4u);
    EXPECT_EQ(plain.output_width(true), 4u);
    EXPECT_EQ(plain.output_width(false), 4u);

    ChunkEngine gensort(0, make_format(100, {bytes_field(0, 10)}));
    EXPECT_TRUE(gensort.record_mode());
    EXPECT_EQ(gensort.input_width(), 100u);
    EXPECT_EQ(gensort.output_width(true), 100u);
    EXPECT_EQ(gensort.output_width(false), 116u);
    // Records, a Key128 and an index per record, and the sorter's copies of both.
    const std::size_t n = 1000000;
    EXPECT_GE(gensort.slot_device_bytes(n), n * (100 + 2 * (16 + 8)));
    EXPECT_LE(gensort.slot_device_bytes(n), n * (100 + 2 * (16 + 8)) + (std::size_t{80} << 20));

    ChunkEngine narrow(0, make_format(13, {number(3, 4, FieldKind::unsigned_int, true)}));
    EXPECT_EQ(narrow.output_width(false), 21u);
    EXPECT_GE(narrow.slot_device_bytes(n), n * (13 + 2 * (8 + 8)));

    for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{1} << 30, (std::size_t{40} << 30) + 77}) {
        for (const std::size_t slots : {std::size_t{1}, std::size_t{2}}) {
            const std::uint64_t capacity = gensort.capacity(slots, budget);
            EXPECT_LE(gensort.slot_device_bytes(capacity) * slots, budget);
            EXPECT_GT(gensort.slot_device_bytes(capacity + 1) * slots, budget - budget % slots);
        }
    }
}

TEST(RecordEngineSizing, NormalisedInputIsRefusedInRecordMode) {
    ChunkEngine engine(0, make_format(100, {bytes_field(0, 10)}));
    EXPECT_THROW(engine.sort_chunk(0, 0, true, true, ChunkCallbacks{}), GpuError);
}

// ---- Kernel-level test of the key extraction ----------------------------------------------

TEST(RecordKeyExtraction, KeyWordsMatchTheReference) {
    SKIP_WITHOUT_GPU();
    Stream stream;
    for (const Case& c : cases()) {
        for (const std::size_t n : {std::size_t{1}, std::size_t{3001}}) {
            const Bytes records = make_records(c.format, n, 0, 17 + n);
            const std::size_t words = c.format.key_words();
            DeviceBuffer<std::byte> device_records(records.size());
            DeviceBuffer<std::uint64_t> device_words(n * words);
            check_cuda(cudaMemcpyAsync(device_records.data(), records.data(), records.size(), cudaMemcpyHostToDevice,
                                       stream.get()),
                       "copy records in");
            extract_record_key_words(device_records.data(), n, c.format, device_words.data(), stream.get());
            std::vector<std::uint64_t> got(n * words);
            check_cuda(cudaMemcpyAsync(got.data(), device_words.data(), got.size() * 8, cudaMemcpyDeviceToHost,
                                       stream.get()),
                       "copy words out");
            stream.synchronize();
            std::size_t errors = 0;
            for (std::size_t i = 0; i < n && errors < 5; ++i) {
                const auto want = reference_key_words(c.format, records.data() + i * c.format.record_size);
                for (std::size_t j = 0; j < words; ++j) {
                    if (got[i * words + j] != want[j]) {
                        ++errors;
                        ADD_FAILURE() << c.name << ": record " << i << " word " << j << " is " << std::hex
                                      << got[i * words + j] << ", expected " << want[j];
                    }
                }
            }
        }
    }
}

// ---- Engine tests -------------------------------------------------------------------------

TEST(RecordEngine, SortsEveryFormatInBothOutputForms) {
    SKIP_WITHOUT_GPU();
    const std::size_t sizes[] = {0, 1, 2, 7, 2500};
    for (const Case& c : cases()) {
        ChunkEngine engine(current_device(), c.format);
        engine.prepare(1, 2500);
        for (const std::size_t n : sizes) {
            for (const std::size_t distinct : {std::size_t{0}, std::size_t{4}}) {
                const Bytes records = make_records(c.format, n, distinct, n * 31 + distinct);
                const std::string what = std::string(c.name) + ", n " + std::to_string(n) +
                                         (distinct ? ", few distinct keys" : ", random keys");
                expect_sorted(engine, c.format, records, n, true, what);
                expect_sorted(engine, c.format, records, n, false, what);
            }
        }
    }
}

// Keys that are all equal: the output is the input in order (stability), for each key width.
TEST(RecordEngine, EqualKeysKeepTheirInputOrder) {
    SKIP_WITHOUT_GPU();
    for (const Case& c : cases()) {
        if (c.format.record_size <= c.format.key_bytes()) continue;  // no bytes to tell records apart
        const std::size_t n = 5000;
        const Bytes records = make_records(c.format, n, 1, 99);
        ChunkEngine engine(current_device(), c.format);
        engine.prepare(1, n);
        const Bytes got = run_engine(engine, 0, records, n, true);
        EXPECT_EQ(first_bad_element(got, records, c.format.record_size), n) << c.name;
    }
}

// Chunks whose records and entries span several staging pieces (64 MiB each).
TEST(RecordEngine, ChunksOfSeveralStagingPieces) {
    SKIP_WITHOUT_GPU();
    using K = FieldKind;
    struct Large {
        RecordKeyFormat format;
        std::size_t n;
        std::size_t distinct;
    };
    const Large larges[] = {
        {make_format(100, {bytes_field(0, 10)}), 800000, 0},                                    // 2 words
        {make_format(8, {number(0, 8, K::signed_int)}), 4500000, 1000},                         // 1 word, entries only
        {make_format(36, {bytes_field(2, 32, true)}), 1100000, 50000},                           // 4 words, entries only
    };
    for (const Large& large : larges) {
        const Bytes records = make_records(large.format, large.n, large.distinct, 5);
        const std::vector<std::size_t> order = reference_order(large.format, records, large.n);
        ChunkEngine engine(current_device(), large.format);
        engine.prepare(1, large.n);
        for (const bool restore : {true, false}) {
            std::size_t pieces = 0;
            const Bytes got = run_engine(engine, 0, records, large.n, restore, &pieces);
            const Bytes want = expected_output(large.format, records, order, restore);
            const std::size_t width = engine.output_width(restore);
            if (!restore) {
                EXPECT_GT(large.n * width, ChunkEnginePolicy::kStagingBytes);  // entries: several pieces
            }
            if (large.n * width > ChunkEnginePolicy::kStagingBytes) {
                EXPECT_GE(pieces, 2u);
            }
            EXPECT_EQ(first_bad_element(got, want, width), large.n)
                << "record size " << large.format.record_size << (restore ? " records" : " entries");
        }
    }
}

// Two slots sorting different chunks from two threads at once.
TEST(RecordEngine, TwoSlotsFromTwoThreads) {
    SKIP_WITHOUT_GPU();
    const RecordKeyFormat format =
        make_format(52, {number(4, 4, FieldKind::floating), bytes_field(10, 16, true), number(40, 8, FieldKind::signed_int)});
    const std::size_t n = 200000;
    ChunkEngine engine(current_device(), format);
    engine.prepare(2, n);
    std::vector<Bytes> inputs[2], outputs[2];
    for (int t = 0; t < 2; ++t)
        for (int k = 0; k < 3; ++k) inputs[t].push_back(make_records(format, n - 1000 * k, k == 1 ? 20 : 0, 100 * t + k));
    const int device = current_device();
    auto work = [&](int t) {
        check_cuda(cudaSetDevice(device), "cudaSetDevice");
        for (int k = 0; k < 3; ++k) outputs[t].push_back(run_engine(engine, t, inputs[t][k], inputs[t][k].size() / 52, (k + t) % 2 == 0));
    };
    std::thread first(work, 0), second(work, 1);
    first.join();
    second.join();
    for (int t = 0; t < 2; ++t) {
        for (int k = 0; k < 3; ++k) {
            const bool restore = (k + t) % 2 == 0;
            const std::size_t count = inputs[t][k].size() / 52;
            const Bytes want = expected_output(format, inputs[t][k], count, restore);
            EXPECT_EQ(first_bad_element(outputs[t][k], want, engine.output_width(restore)), count)
                << "slot " << t << " chunk " << k;
        }
    }
}

// The plain mode is untouched by the record mode: a quick check of i32 keys through the shared pipeline.
TEST(RecordEngine, PlainModeStillSorts) {
    SKIP_WITHOUT_GPU();
    const std::size_t n = 17000000;  // 68 MB: two staging pieces
    std::vector<std::int32_t> keys(n);
    std::mt19937 random(3);
    for (auto& key : keys) key = static_cast<std::int32_t>(random());
    ChunkEngine engine(current_device(), 4, KeyMapping{KeyClass::signed_int, true});
    engine.prepare(1, n);
    std::vector<std::int32_t> out(n);
    ChunkCallbacks io;
    io.read = [&](std::uint64_t first, void* data, std::size_t count) { std::memcpy(data, keys.data() + first, count * 4); };
    io.write = [&](std::uint64_t first, const void* data, std::size_t count) { std::memcpy(out.data() + first, data, count * 4); };
    engine.sort_chunk(0, n, false, true, io);
    std::sort(keys.begin(), keys.end(), std::greater<>());
    EXPECT_TRUE(out == keys);
}

}  // namespace
}  // namespace gpusort::gpu
