// Record mode of the chunk engine (gpu/chunk_engine.hpp, gpu/record_keys.hpp): records sorted
// stably by a composite key (a KeySpec, made a FixedKeySpec by fixed_key_spec as the core does),
// written out as records or as key-prefixed entries, and the device extraction of normalised key
// words on its own. Checked against the host references of tests/: reference_compare
// (reference_records.hpp) driving std::stable_sort, and the normalised key words written from the
// definition (reference_keys.hpp), which the host's key rules are checked against too
// (tests/key_rules_test.cpp). Sizing needs no GPU; every test that needs one skips without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
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
#include "src/keys/record_layout.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/reference_keys.hpp"
#include "tests/reference_records.hpp"

namespace gpusort::gpu {
namespace {

using Bytes = std::vector<std::byte>;

KeySpec spec_of(std::size_t record_size, std::initializer_list<const char*> fields) {
    KeySpec spec{record_size, {}};
    for (const char* field : fields) spec.fields.push_back(parse_key_field(field));
    return spec;
}

// ---- Host references ----------------------------------------------------------------------

// Input indices of the n records in stably sorted order.
std::vector<std::size_t> reference_order(const KeySpec& spec, const Bytes& records, std::size_t n) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    const std::size_t size = spec.record_size;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
        return testing::reference_compare(records.data() + i * size, records.data() + j * size, spec) < 0;
    });
    return order;
}

// What the engine must write: records in reference order, or entries (key words, native-endian,
// word 0 first, then the record).
Bytes expected_output(const KeySpec& spec, const Bytes& records, const std::vector<std::size_t>& order, bool restore) {
    const std::size_t size = spec.record_size, words = key_words(spec);
    Bytes out;
    out.reserve(order.size() * (size + (restore ? 0 : 8 * words)));
    for (const std::size_t r : order) {
        const std::byte* record = records.data() + r * size;
        if (!restore) {
            for (const std::uint64_t word : testing::reference_key_words(record, spec, words)) {
                std::byte native[8];
                std::memcpy(native, &word, 8);
                out.insert(out.end(), native, native + 8);
            }
        }
        out.insert(out.end(), record, record + size);
    }
    return out;
}

Bytes expected_output(const KeySpec& spec, const Bytes& records, std::size_t n, bool restore) {
    return expected_output(spec, records, reference_order(spec, records, n), restore);
}

// ---- Test records -------------------------------------------------------------------------

// n random records (key bytes of few values, special floats: testing::make_records). With
// `distinct_keys` > 0 every record's key fields are those of one of that many prototypes (many
// equal keys, random other bytes: stability shows in the output).
Bytes make_records(const KeySpec& spec, std::size_t n, std::size_t distinct_keys, std::uint64_t seed) {
    Bytes records = testing::make_records(n, spec, seed);
    if (distinct_keys > 0 && n > 0) {
        std::mt19937_64 random(seed);
        const std::size_t size = spec.record_size, prototypes = std::min(distinct_keys, n);
        for (std::size_t i = prototypes; i < n; ++i) {
            const std::byte* from = records.data() + (random() % prototypes) * size;
            std::byte* to = records.data() + i * size;
            for (const KeyField& field : spec.fields) std::memcpy(to + field.offset, from + field.offset, field.length);
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
    const auto start = std::chrono::steady_clock::now();
    const ChunkTimes times = engine.sort_chunk(slot, n, false, restore, io);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(next_read, n);
    EXPECT_EQ(next_write, n);
    // The device's spans (copy in, sort, copy out: one after the other, in seconds) lie within the call.
    EXPECT_LE(times.copy_in + times.sort + times.copy_out, took.count());
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

void expect_sorted(ChunkEngine& engine, const KeySpec& spec, const Bytes& records, std::size_t n, bool restore,
                   const std::string& what) {
    const Bytes got = run_engine(engine, 0, records, n, restore);
    const Bytes want = expected_output(spec, records, n, restore);
    const std::size_t width = engine.output_width(restore);
    ASSERT_EQ(got.size(), want.size()) << what;
    const std::size_t bad = first_bad_element(got, want, width);
    EXPECT_EQ(bad, n) << what << (restore ? " records" : " entries") << ": first wrong element " << bad << " of " << n;
}

struct Case {
    const char* name;
    KeySpec spec;
};

std::vector<Case> cases() {
    return {
        {"u8 record of 1 byte", spec_of(1, {"0:u8"})},
        {"i8 descending record of 1 byte", spec_of(1, {"0:i8:desc"})},
        {"u64 record of 8 bytes", spec_of(8, {"0:u64"})},
        {"big-endian u32 at 3 of 13", spec_of(13, {"3:u32:be"})},
        {"i16 at 2 of 14", spec_of(14, {"2:i16", "0:u8"})},
        {"gensort: bytes 10 at 0 of 100", gensort_key()},
        {"f64 at odd offset 5 of 21", spec_of(21, {"5:f64"})},
        {"big-endian f32 descending, i32", spec_of(16, {"1:f32:be:desc", "8:i32"})},
        {"u16 be descending + i64 (2 words)", spec_of(19, {"1:u16:be:desc", "6:i64"})},
        {"bytes 20 descending + i16 (3 words)", spec_of(30, {"2:bytes:20:desc", "24:i16"})},
        {"three u64 (3 words, exact)", spec_of(40, {"0:u64:be", "8:u64:desc", "16:f64"})},
        {"bytes 32 descending (4 words)", spec_of(36, {"2:bytes:32:desc"})},
        {"five fields of a 4096-byte record (4 words)",
         spec_of(4096, {"4000:bytes:12", "17:f32:be", "100:i64:desc", "4095:u8", "0:bytes:7"})},
    };
}

// ---- Tests that need no GPU -----------------------------------------------------------------

TEST(RecordEngineSizing, WidthsAndDeviceBytes) {
    ChunkEngine plain(0, KeyOrder{KeyType::u32, false});
    EXPECT_FALSE(plain.record_mode());
    EXPECT_EQ(plain.input_width(), 4u);
    EXPECT_EQ(plain.output_width(true), 4u);
    EXPECT_EQ(plain.output_width(false), 4u);

    ChunkEngine gensort(0, fixed_key_spec(gensort_key()));
    EXPECT_TRUE(gensort.record_mode());
    EXPECT_EQ(gensort.input_width(), 100u);
    EXPECT_EQ(gensort.output_width(true), 100u);
    EXPECT_EQ(gensort.output_width(false), 116u);
    // Records, a Key128 and an index per record, and the sorter's copies of both.
    const std::size_t n = 1000000;
    EXPECT_GE(gensort.slot_device_bytes(n), n * (100 + 2 * (16 + 8)));
    EXPECT_LE(gensort.slot_device_bytes(n), n * (100 + 2 * (16 + 8)) + (std::size_t{80} << 20));

    ChunkEngine narrow(0, fixed_key_spec(spec_of(13, {"3:u32:be"})));
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
    ChunkEngine engine(0, fixed_key_spec(gensort_key()));
    EXPECT_THROW(engine.sort_chunk(0, 0, true, true, ChunkCallbacks{}), GpuError);
}

// ---- Kernel-level test of the key extraction ----------------------------------------------

TEST(RecordKeyExtraction, KeyWordsMatchTheReference) {
    SKIP_WITHOUT_DEVICE();
    Stream stream;
    for (const Case& c : cases()) {
        const FixedKeySpec fixed = fixed_key_spec(c.spec);
        for (const std::size_t n : {std::size_t{1}, std::size_t{3001}}) {
            const Bytes records = make_records(c.spec, n, 0, 17 + n);
            const std::size_t words = fixed.key_words();
            DeviceBuffer<std::byte> device_records(records.size());
            DeviceBuffer<std::uint64_t> device_words(n * words);
            check_cuda(cudaMemcpyAsync(device_records.data(), records.data(), records.size(), cudaMemcpyHostToDevice,
                                       stream.get()),
                       "copy records in");
            extract_record_key_words(device_records.data(), n, fixed, device_words.data(), stream.get());
            std::vector<std::uint64_t> got(n * words);
            check_cuda(cudaMemcpyAsync(got.data(), device_words.data(), got.size() * 8, cudaMemcpyDeviceToHost,
                                       stream.get()),
                       "copy words out");
            stream.synchronize();
            std::size_t errors = 0;
            for (std::size_t i = 0; i < n && errors < 5; ++i) {
                const auto want = testing::reference_key_words(records.data() + i * c.spec.record_size, c.spec, words);
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
    SKIP_WITHOUT_DEVICE();
    const std::size_t sizes[] = {0, 1, 2, 7, 2500};
    for (const Case& c : cases()) {
        ChunkEngine engine(current_device(), fixed_key_spec(c.spec));
        engine.prepare(1, 2500);
        for (const std::size_t n : sizes) {
            for (const std::size_t distinct : {std::size_t{0}, std::size_t{4}}) {
                const Bytes records = make_records(c.spec, n, distinct, n * 31 + distinct);
                const std::string what = std::string(c.name) + ", n " + std::to_string(n) +
                                         (distinct ? ", few distinct keys" : ", random keys");
                expect_sorted(engine, c.spec, records, n, true, what);
                expect_sorted(engine, c.spec, records, n, false, what);
            }
        }
    }
}

// Keys that are all equal: the output is the input in order (stability), for each key width.
TEST(RecordEngine, EqualKeysKeepTheirInputOrder) {
    SKIP_WITHOUT_DEVICE();
    for (const Case& c : cases()) {
        if (c.spec.record_size <= c.spec.normalized_bytes()) continue;  // no bytes to tell records apart
        const std::size_t n = 5000;
        const Bytes records = make_records(c.spec, n, 1, 99);
        ChunkEngine engine(current_device(), fixed_key_spec(c.spec));
        engine.prepare(1, n);
        const Bytes got = run_engine(engine, 0, records, n, true);
        EXPECT_EQ(first_bad_element(got, records, c.spec.record_size), n) << c.name;
    }
}

// Chunks whose records and entries span several staging pieces (64 MiB each).
TEST(RecordEngine, ChunksOfSeveralStagingPieces) {
    SKIP_WITHOUT_DEVICE();
    struct Large {
        KeySpec spec;
        std::size_t n;
        std::size_t distinct;
    };
    const Large larges[] = {
        {gensort_key(), 800000, 0},                                    // 2 words
        {spec_of(8, {"0:i64"}), 4500000, 1000},                        // 1 word, entries only
        {spec_of(36, {"2:bytes:32:desc"}), 1100000, 50000},            // 4 words, entries only
    };
    for (const Large& large : larges) {
        const Bytes records = make_records(large.spec, large.n, large.distinct, 5);
        const std::vector<std::size_t> order = reference_order(large.spec, records, large.n);
        ChunkEngine engine(current_device(), fixed_key_spec(large.spec));
        engine.prepare(1, large.n);
        for (const bool restore : {true, false}) {
            std::size_t pieces = 0;
            const Bytes got = run_engine(engine, 0, records, large.n, restore, &pieces);
            const Bytes want = expected_output(large.spec, records, order, restore);
            const std::size_t width = engine.output_width(restore);
            if (!restore) {
                EXPECT_GT(large.n * width, ChunkEnginePolicy::kStagingBytes);  // entries: several pieces
            }
            if (large.n * width > ChunkEnginePolicy::kStagingBytes) {
                EXPECT_GE(pieces, 2u);
            }
            EXPECT_EQ(first_bad_element(got, want, width), large.n)
                << "record size " << large.spec.record_size << (restore ? " records" : " entries");
        }
    }
}

// Two slots sorting different chunks from two threads at once.
TEST(RecordEngine, TwoSlotsFromTwoThreads) {
    SKIP_WITHOUT_DEVICE();
    const KeySpec spec = spec_of(52, {"4:f32", "10:bytes:16:desc", "40:i64"});
    const std::size_t n = 200000;
    ChunkEngine engine(current_device(), fixed_key_spec(spec));
    engine.prepare(2, n);
    std::vector<Bytes> inputs[2], outputs[2];
    for (int t = 0; t < 2; ++t)
        for (int k = 0; k < 3; ++k) inputs[t].push_back(make_records(spec, n - 1000 * k, k == 1 ? 20 : 0, 100 * t + k));
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
            const Bytes want = expected_output(spec, inputs[t][k], count, restore);
            EXPECT_EQ(first_bad_element(outputs[t][k], want, engine.output_width(restore)), count)
                << "slot " << t << " chunk " << k;
        }
    }
}

// The plain mode is untouched by the record mode: a quick check of i32 keys through the shared pipeline.
TEST(RecordEngine, PlainModeStillSorts) {
    SKIP_WITHOUT_DEVICE();
    const std::size_t n = 17000000;  // 68 MB: two staging pieces
    std::vector<std::int32_t> keys(n);
    std::mt19937 random(3);
    for (auto& key : keys) key = static_cast<std::int32_t>(random());
    ChunkEngine engine(current_device(), KeyOrder{KeyType::i32, true});
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
