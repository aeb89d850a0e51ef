// gpusort-gen: writes test data, N keys of one type drawn from a distribution, or N Sort
// Benchmark style records (--format gensort), or the same records as text lines for line-based
// sorters such as GNU sort (--format gensort-text). Every record is a function of (seed, index) alone,
// so the same seed gives the same bytes, on any machine and with any number of threads.
#include "src/keys/key_normalization.hpp"
#include "gpusort/key_type.hpp"
#include "src/merge/mul_div.hpp"
#include "src/cli/size_parse.hpp"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include <tbb/parallel_for.h>

namespace po = boost::program_options;
using namespace gpusort;

namespace {

enum class Dist { uniform, sorted, reversed, equal, few_unique, nearly_sorted, zipf, normal };
constexpr std::pair<const char*, Dist> kDists[] = {
    {"uniform", Dist::uniform}, {"sorted", Dist::sorted},       {"reversed", Dist::reversed},
    {"equal", Dist::equal},     {"few-unique", Dist::few_unique}, {"nearly-sorted", Dist::nearly_sorted},
    {"zipf", Dist::zipf},       {"normal", Dist::normal}};

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Uniform in [0, 1).
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

struct Generator {
    KeyType type;
    Dist dist;
    std::uint64_t seed;
    std::uint64_t count;
    bool special;

    unsigned bits() const { return static_cast<unsigned>(key_width(type) * 8); }
    std::uint64_t mask() const { return bits() == 64 ? ~0ULL : (1ULL << bits()) - 1; }
    std::uint64_t random(std::uint64_t index, std::uint64_t stream) const {
        return mix(mix(seed * 0x2545f4914f6cdd1dULL + stream) ^ index);
    }

    // The normalised key range that holds no NaN (floats) and everything else (integers).
    std::uint64_t lowest_normalized() const {
        return key_kind(type) == KeyKind::floating ? normalized_of_raw(raw_float(-INFINITY)) : 0;
    }
    std::uint64_t highest_normalized() const {
        return key_kind(type) == KeyKind::floating ? normalized_of_raw(raw_float(INFINITY)) : mask();
    }
    std::uint64_t raw_float(double value) const {
        if (type == KeyType::f32) {
            float f = static_cast<float>(value);
            std::uint32_t raw;
            std::memcpy(&raw, &f, 4);
            return raw;
        }
        std::uint64_t raw;
        std::memcpy(&raw, &value, 8);
        return raw;
    }
    std::uint64_t normalized_of_raw(std::uint64_t raw) const {
        return with_width([&]<class U>() -> std::uint64_t { return to_normalized<U>(U(raw), key_kind(type), false); });
    }
    std::uint64_t raw_of_normalized(std::uint64_t key) const {
        return with_width([&]<class U>() -> std::uint64_t { return from_normalized<U>(U(key), key_kind(type), false); });
    }
    template <class F>
    std::uint64_t with_width(F f) const {
        switch (key_width(type)) {
        case 1: return f.template operator()<std::uint8_t>();
        case 2: return f.template operator()<std::uint16_t>();
        case 4: return f.template operator()<std::uint32_t>();
        default: return f.template operator()<std::uint64_t>();
        }
    }

    // Evenly spread over the whole order, rising with position.
    std::uint64_t spread(std::uint64_t position) const {
        const std::uint64_t lo = lowest_normalized(), hi = highest_normalized();
        if (count <= 1) return raw_of_normalized(lo);
        return raw_of_normalized(lo + mul_div(hi - lo, position, count - 1));
    }

    std::uint64_t uniform(std::uint64_t index) const {
        std::uint64_t raw = random(index, 1) & mask();
        if (type == KeyType::f32 && ((raw >> 23) & 0xff) == 0xff) raw &= ~(1ULL << 30);
        if (type == KeyType::f64 && ((raw >> 52) & 0x7ff) == 0x7ff) raw &= ~(1ULL << 62);
        return raw;
    }

    std::uint64_t special_value(std::uint64_t pick) const {
        const double values[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0,
                                 std::numeric_limits<double>::denorm_min(), -1.0};
        std::uint64_t raw = raw_float(values[pick % 8]);
        // NaNs with other payloads too.
        if (pick % 8 < 2 && (pick / 8) % 2) raw ^= 1;
        return raw;
    }

    std::uint64_t value(std::uint64_t index) const {
        if (special && (random(index, 7) & 7) == 0) return special_value(random(index, 8));
        switch (dist) {
        case Dist::uniform: return uniform(index);
        case Dist::sorted: return spread(index);
        case Dist::reversed: return spread(count - 1 - index);
        case Dist::equal: return uniform(~0ULL);
        case Dist::few_unique: return uniform(~0ULL - 1 - random(index, 2) % 5);
        case Dist::nearly_sorted: {
            if (random(index, 3) % 100 != 0) return spread(index);
            const std::uint64_t shift = random(index, 4) % 33;
            const std::uint64_t other = index + shift >= 16 ? index + shift - 16 : 0;
            return spread(std::min(other, count - 1));
        }
        case Dist::zipf: {
            // Pareto-distributed ranks (exponent 1.5): rank r is drawn with weight about r^-1.5.
            const double u = 1.0 - unit(random(index, 5));
            const double rank = std::floor(std::pow(u, -2.0));
            return uniform(~0ULL - 16 - static_cast<std::uint64_t>(std::min(rank, 1e15)));
        }
        case Dist::normal: {
            const double u1 = 1.0 - unit(random(index, 5)), u2 = unit(random(index, 6));
            const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
            if (key_kind(type) == KeyKind::floating) return raw_float(z * 1000.0);
            // Centred in the middle of the order (zero for signed types), spread 1/16 of the range.
            const double middle = std::ldexp(1.0, static_cast<int>(bits()) - 1);
            const double x = std::clamp(middle + z * middle / 8, 0.0, std::ldexp(1.0, static_cast<int>(bits())) - 1);
            return raw_of_normalized(std::min(static_cast<std::uint64_t>(x), mask()));
        }
        }
        return 0;
    }
};

// --format gensort: 100-byte records. Bytes 0-9 are the key: the first 8 are a u64 of the
// distribution written big-endian (so memcmp order follows it), the last 2 random (zero for
// `equal` and `few-unique`, so that equal keys are equal). Bytes 10-17 hold the record's index
// (little-endian) and 18-99 a printable pattern derived from it, so every record is unique and
// says where it came from.
constexpr std::size_t kGensortRecord = 100;

void gensort_record(const Generator& gen, std::uint64_t index, unsigned char* record) {
    const std::uint64_t key = gen.value(index);
    for (int b = 0; b < 8; ++b) record[b] = static_cast<unsigned char>(key >> (56 - 8 * b));
    const bool repeats = gen.dist == Dist::equal || gen.dist == Dist::few_unique;
    const std::uint64_t tail = repeats ? 0 : gen.random(index, 9);
    record[8] = static_cast<unsigned char>(tail);
    record[9] = static_cast<unsigned char>(tail >> 8);
    std::memcpy(record + 10, &index, 8);
    for (std::size_t i = 18; i < kGensortRecord; ++i)
        record[i] = static_cast<unsigned char>('A' + (index + i) % 26);
}

// --format gensort-text: the record of the same index as a 100-byte text line, for sorters that
// take lines (GNU sort). Characters 0-19 are the 10 key bytes as lowercase hex, so that the line
// order under LC_ALL=C is the memcmp order of the binary keys; then a space, the index as 20
// decimal digits, a space, 57 letters derived from the index, and '\n' (99 printable characters
// and a newline).
void gensort_text_line(const Generator& gen, std::uint64_t index, unsigned char* line) {
    unsigned char record[kGensortRecord];
    gensort_record(gen, index, record);
    constexpr char kHex[] = "0123456789abcdef";
    for (int b = 0; b < 10; ++b) {
        line[2 * b] = static_cast<unsigned char>(kHex[record[b] >> 4]);
        line[2 * b + 1] = static_cast<unsigned char>(kHex[record[b] & 15]);
    }
    line[20] = ' ';
    std::uint64_t rest = index;
    for (int d = 40; d >= 21; --d, rest /= 10) line[d] = static_cast<unsigned char>('0' + rest % 10);
    line[41] = ' ';
    for (std::size_t i = 42; i < kGensortRecord - 1; ++i) line[i] = record[i];  // letters 'A'..'Z'
    line[kGensortRecord - 1] = '\n';
}

void write_all(int fd, const std::string& name, const unsigned char* data, std::size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("cannot write '" + name + "': " + std::strerror(errno));
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

}  // namespace

int main(int argc, char** argv) {
    po::options_description visible(
        "Usage: gpusort-gen [--type T | --format gensort|gensort-text] --count N [--dist D] [--seed S] [--special] OUTPUT\nOptions");
    visible.add_options()
        ("type", po::value<std::string>()->default_value("u64"), "key type: u8 u16 u32 u64 i8 i16 i32 i64 f32 f64")
        ("format", po::value<std::string>(),
         "gensort: 100-byte records with a 10-byte binary key (see the source for the layout); "
         "gensort-text: the same records as 100-byte text lines (the key as 20 hex digits, a space, the index "
         "as 20 decimal digits, a space, 57 letters, '\\n'), for line sorters such as LC_ALL=C sort")
        ("count", po::value<std::string>(), "number of keys (suffixes K, M, G allowed: powers of 1024)")
        ("dist", po::value<std::string>()->default_value("uniform"),
         "uniform, sorted, reversed, equal, few-unique, nearly-sorted, zipf, normal")
        ("seed", po::value<std::uint64_t>()->default_value(1), "random seed; the same seed gives the same bytes")
        ("special", "floats: about one key in eight is NaN, -NaN, +-inf, +-0, a denormal or -1")
        ("help,h", "show this help");
    po::options_description all;
    all.add(visible).add_options()("output", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("output", 1);
    try {
        po::variables_map vm;
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout << visible;
            return 0;
        }
        if (!vm.count("count") || !vm.count("output")) throw std::invalid_argument("expected --count N and OUTPUT");
        Generator gen{};
        auto type = parse_key_type(vm["type"].as<std::string>());
        if (!type) throw std::invalid_argument("unknown --type '" + vm["type"].as<std::string>() + "'");
        gen.type = *type;
        auto count = parse_size(vm["count"].as<std::string>());
        if (!count) throw std::invalid_argument("--count: not a number");
        gen.count = *count;
        bool found = false;
        for (auto [name, dist] : kDists)
            if (vm["dist"].as<std::string>() == name) gen.dist = dist, found = true;
        if (!found) throw std::invalid_argument("unknown --dist '" + vm["dist"].as<std::string>() + "'");
        gen.seed = vm["seed"].as<std::uint64_t>();
        gen.special = vm.count("special") > 0;
        const bool gensort = vm.count("format") > 0;
        bool text = false;
        if (gensort) {
            const std::string format = vm["format"].as<std::string>();
            if (format != "gensort" && format != "gensort-text")
                throw std::invalid_argument("unknown --format '" + format + "' (gensort or gensort-text)");
            text = format == "gensort-text";
            if (!vm["type"].defaulted()) throw std::invalid_argument("--format " + format + " and --type exclude each other");
            gen.type = KeyType::u64;
        }
        if (gen.special && key_kind(gen.type) != KeyKind::floating)
            throw std::invalid_argument("--special needs a float --type (f32 or f64)");

        const std::string output = vm["output"].as<std::string>();
        int fd = output == "-" ? STDOUT_FILENO : ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) throw std::runtime_error("cannot create '" + output + "': " + std::strerror(errno));
        const std::size_t width = gensort ? kGensortRecord : key_width(gen.type);
        constexpr std::uint64_t kBlock = 1 << 20;
        std::vector<unsigned char> block(kBlock * width);
        for (std::uint64_t first = 0; first < gen.count; first += kBlock) {
            const std::uint64_t n = std::min(kBlock, gen.count - first);
            tbb::parallel_for(std::uint64_t{0}, n, [&](std::uint64_t i) {
                if (text) {
                    gensort_text_line(gen, first + i, block.data() + i * width);
                } else if (gensort) {
                    gensort_record(gen, first + i, block.data() + i * width);
                } else {
                    const std::uint64_t raw = gen.value(first + i);
                    std::memcpy(block.data() + i * width, &raw, width);  // little-endian: low bytes first
                }
            });
            write_all(fd, output, block.data(), n * width);
        }
        if (fd != STDOUT_FILENO && ::close(fd) != 0)
            throw std::runtime_error("cannot write '" + output + "': " + std::strerror(errno));
    } catch (const std::exception& e) {
        std::cerr << "gpusort-gen: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
