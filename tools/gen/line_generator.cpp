// The text lines of line_generator.hpp: each kind line by line (LineMaker), blocks of lines made
// from their own seeds, and the batches of blocks cut to the limit that make the output.
#include "tools/gen/line_generator.hpp"

#include "tools/gen/key_generator.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

namespace gpusort::gen {

namespace {

constexpr std::pair<const char*, LineKind> kKindNames[] = {
    {"fixed", LineKind::fixed}, {"words", LineKind::words},     {"log", LineKind::log},
    {"csv", LineKind::csv},     {"long", LineKind::long_lines}, {"mixed", LineKind::mixed}};

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;  // a block ends with the line that reaches this size
constexpr std::size_t kMaxBatchBlocks = 64;                // blocks made together, in parallel
constexpr std::size_t kVocabularyWords = 4096;
constexpr std::size_t kMaxWordLetters = 20;
constexpr std::size_t kWordSlot = 32;  // the bytes that hold a word, copied whole (Text::put_word)
constexpr std::size_t kRankTableBits = 16;  // the zipf-like draw: a table of 2^16 ranks
constexpr std::size_t kRepeatedKeys = 256;  // fixed: the keys that a quarter of the lines share
constexpr std::size_t kLogSources = 6;
constexpr std::size_t kTextBytes = std::size_t{2} << 20;  // long: the text that lines are cut from

// The seeds' streams (KeyGenerator::random), apart from those of the keys.
enum Stream : std::uint64_t { vocabulary_stream = 1000, key_stream, skew_stream, text_stream, block_stream };

__extension__ typedef unsigned __int128 u128;

// A sequence of random words from one seed (wyrand: a counter mixed by one wide multiplication).
class Random {
public:
    explicit Random(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        state_ += 0xa0761d6478bd642fULL;
        const u128 product = static_cast<u128>(state_) * (state_ ^ 0xe7037ed1a0b428dbULL);
        return static_cast<std::uint64_t>(product >> 64) ^ static_cast<std::uint64_t>(product);
    }
    // Uniform in [0, n).
    std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64); }
    // Uniform in [lo, hi].
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
    // True with probability p / 100.
    bool percent(unsigned p) { return below(100) < p; }

private:
    std::uint64_t state_;
};

Random random_of(std::uint64_t seed, std::uint64_t index, Stream stream) {
    return Random(KeyGenerator{.seed = seed}.random(index, stream));
}

// What the lines of one seed are made of: the vocabulary and its zipf-like table of ranks, the
// repeated keys of `fixed`, the clock skews of the log's sources, and the text of `long`.
class Corpus {
public:
    Corpus(std::uint64_t seed, bool with_text) {
        make_vocabulary(seed);
        make_ranks();
        Random keys = random_of(seed, 0, key_stream);
        for (auto& key : keys_) key = {keys.next(), keys.next()};
        Random skews = random_of(seed, 0, skew_stream);
        for (auto& skew : skews_) skew = static_cast<std::int64_t>(skews.below(600'000'001)) - 300'000'000;
        if (with_text) make_text(seed);
    }

    // The word of a rank; kWordSlot bytes are readable at its start.
    std::string_view word(std::size_t rank) const { return {letters_.data() + rank * kWordSlot, lengths_[rank]}; }
    // A word of rank r drawn with weight 1 / (r + 1).
    std::string_view zipf_word(Random& random) const {
        return word(ranks_[random.next() >> (64 - kRankTableBits)]);
    }
    // The random bits of the repeated key `i` of `fixed`.
    std::array<std::uint64_t, 2> repeated_key(std::size_t i) const { return keys_[i]; }
    // How far the clock of the log's source `i` is off, in microseconds (within 5 minutes).
    std::int64_t skew(std::size_t i) const { return skews_[i]; }
    // Words and blanks, kTextBytes of them (with_text only).
    std::string_view text() const { return text_; }

private:
    // Words of 1-20 letters, most short: seven in ten lower case, two capitalised, one upper case.
    void make_vocabulary(std::uint64_t seed) {
        Random random = random_of(seed, 0, vocabulary_stream);
        letters_.resize(kVocabularyWords * kWordSlot);
        lengths_.resize(kVocabularyWords);
        for (std::size_t w = 0; w < kVocabularyWords; ++w) {
            lengths_[w] = static_cast<std::uint8_t>(1 + std::min(random.below(kMaxWordLetters), random.below(kMaxWordLetters)));
            for (std::size_t i = 0; i < lengths_[w]; ++i) {
                const bool upper = w % 10 == 9 || (w % 10 >= 7 && i == 0);
                letters_[w * kWordSlot + i] = static_cast<char>((upper ? 'A' : 'a') + random.below(26));
            }
        }
    }
    // ranks_[u]: the rank whose share of the cumulative weights holds (u + 1/2) / 2^16.
    void make_ranks() {
        double total = 0;
        for (std::size_t r = 0; r < kVocabularyWords; ++r) total += 1.0 / static_cast<double>(r + 1);
        ranks_.resize(std::size_t{1} << kRankTableBits);
        double cumulative = 1.0;
        std::size_t rank = 0;
        for (std::size_t u = 0; u < ranks_.size(); ++u) {
            const double target = (static_cast<double>(u) + 0.5) / static_cast<double>(ranks_.size()) * total;
            while (cumulative < target && rank + 1 < kVocabularyWords) cumulative += 1.0 / static_cast<double>(++rank + 1);
            ranks_[u] = static_cast<std::uint16_t>(rank);
        }
    }
    void make_text(std::uint64_t seed) {
        Random random = random_of(seed, 0, text_stream);
        text_.reserve(kTextBytes + kMaxWordLetters + 1);
        while (text_.size() < kTextBytes) {
            text_ += zipf_word(random);
            text_ += ' ';
        }
        text_.resize(kTextBytes);
    }

    std::vector<char> letters_;  // word w at w * kWordSlot
    std::vector<std::uint8_t> lengths_;
    std::vector<std::uint16_t> ranks_;
    std::array<std::array<std::uint64_t, 2>, kRepeatedKeys> keys_{};
    std::array<std::int64_t, kLogSources> skews_{};
    std::string text_;
};

constexpr auto kPowersOf10 = [] {
    std::array<std::uint64_t, 19> powers{};
    powers[0] = 1;
    for (std::size_t i = 1; i < powers.size(); ++i) powers[i] = powers[i - 1] * 10;
    return powers;
}();

// Writes into a block's buffer, which has room for the longest line past kBlockBytes.
class Text {
public:
    explicit Text(char* begin) : begin_(begin), end_(begin) {}

    std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }
    void put(char c) { *end_++ = c; }
    void put(std::string_view s) {
        std::memcpy(end_, s.data(), s.size());
        end_ += s.size();
    }
    // A word of the Corpus: its whole slot is copied (one fixed-size move, no call), the end moved
    // past its letters only. The block's buffer has room for the slot past the longest line.
    void put_word(std::string_view word) {
        std::memcpy(end_, word.data(), kWordSlot);
        end_ += word.size();
    }
    void put_number(std::int64_t value) { end_ = std::to_chars(end_, end_ + 24, value).ptr; }
    // `width` decimal digits of value, zeros in front.
    void put_digits(std::uint64_t value, int width) {
        for (int i = width - 1; i >= 0; --i, value /= 10) end_[i] = static_cast<char>('0' + value % 10);
        end_ += width;
    }
    // `width` upper-case hex digits of value.
    void put_hex(std::uint64_t value, int width) {
        for (int i = width - 1; i >= 0; --i, value >>= 4) end_[i] = "0123456789ABCDEF"[value & 15];
        end_ += width;
    }
    // units / 10^decimals with `decimals` digits after the point: -12.50, 0.5, 1234.005.
    void put_decimal(std::int64_t units, int decimals) {
        if (units < 0) put('-');
        std::uint64_t magnitude = units < 0 ? 0 - static_cast<std::uint64_t>(units) : static_cast<std::uint64_t>(units);
        const std::uint64_t scale = kPowersOf10[static_cast<std::size_t>(decimals)];
        put_number(static_cast<std::int64_t>(magnitude / scale));
        put('.');
        put_digits(magnitude % scale, decimals);
    }

private:
    char* begin_;
    char* end_;
};

// A number of exactly `digits` decimal digits (1 to 18; one digit: 0 to 9).
std::uint64_t number_of_digits(Random& random, std::uint64_t digits) {
    return digits == 1 ? random.below(10) : random.between(kPowersOf10[digits - 1], kPowersOf10[digits] - 1);
}

// Days since 1970-01-01 as a date of the proleptic Gregorian calendar, in eras of 400 years
// counted from 0000-03-01 (so that the leap day ends a year).
struct Date {
    std::int64_t year;
    unsigned month, day;
};
Date date_of_days(std::int64_t days) {
    days += 719468;  // days from 0000-03-01 to 1970-01-01
    const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    const std::int64_t day_of_era = days - era * 146097;
    const std::int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    const std::int64_t month_from_march = (5 * day_of_year + 2) / 153;
    const auto day = static_cast<unsigned>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
    const auto month = static_cast<unsigned>(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
    return {year_of_era + era * 400 + (month <= 2), month, day};
}

constexpr std::int64_t kLogStart = 1'795'824'000LL * 1'000'000;  // 2026-11-28T00:00:00Z in microseconds
constexpr std::int64_t kLogBlockMicros = 60'000'000;              // each block starts a minute later

constexpr std::string_view kComponents[] = {"api",     "auth",   "db.pool", "cache",   "scheduler", "http",
                                            "worker-3", "billing", "search",  "queue", "storage",   "metrics"};
constexpr std::string_view kCities[] = {
    "New York",    "Los Angeles", "Rio de Janeiro", "St. Louis", "Salt Lake City", "Ho Chi Minh City",
    "Buenos Aires", "Kuala Lumpur", "Tel Aviv",     "Cape Town", "Mexico City",    "Hong Kong",
    "Berlin",      "Paris",       "Tokyo",          "Lagos",     "Oslo",           "Lima",
    "Zurich",      "Addis Ababa", "Abu Dhabi",      "Kansas City", "San Jose",     "New Delhi"};
constexpr std::string_view kUtf8Words[] = {"café", "naïve", "Ärger", "über", "ökonomie", "Ωmega",
                                           "日本語", "zürich", "élan", "façade", "Ñandú", "smörgåsbord"};
constexpr std::string_view kSymbols = "#~_[@!%*-+=/.:;<>?{|}";
constexpr std::string_view kPattern =  // fixed: 53 characters from one of the first 16 multiples of four
    "0000111122223333444455556666777788889999AAAABBBBCCCCDDDDEEEEFFFF"
    "0000111122223333444455556666777788889999AAAABBBBCCCCDDDDEEEEFFFF";

// Makes the lines of one block, one at a time, without their terminators.
class LineMaker {
public:
    LineMaker(const Corpus& corpus, std::uint64_t seed, std::uint64_t block, char* buffer)
        : corpus_(corpus), random_(random_of(seed, block, block_stream)), text_(buffer), block_(block) {
        for (std::size_t s = 0; s < kLogSources; ++s)
            clocks_[s] = kLogStart + static_cast<std::int64_t>(block) * kLogBlockMicros + corpus.skew(s);
    }

    Text& text() { return text_; }

    void line(LineKind kind) {
        switch (kind) {
        case LineKind::fixed: fixed(); break;
        case LineKind::words: words(random_.percent(40) ? 1 : random_.between(2, 6)); break;
        case LineKind::log: log(); break;
        case LineKind::csv: csv(); break;
        case LineKind::long_lines: long_line(); break;
        case LineKind::mixed: mixed(); break;
        }
        ++lines_;
    }

private:
    // 10 characters '!'..'~', two blanks, the block and line numbers and 64 random bits as 32 hex
    // digits, two blanks, 53 pattern characters: 99 in all.
    void fixed() {
        const std::array<std::uint64_t, 2> bits = random_.percent(25)
                                                      ? corpus_.repeated_key(random_.below(kRepeatedKeys))
                                                      : std::array<std::uint64_t, 2>{random_.next(), random_.next()};
        for (int i = 0; i < 10; ++i)
            text_.put(static_cast<char>('!' + ((bits[i / 8] >> (8 * (i % 8)) & 0xff) * 94 >> 8)));
        text_.put("  ");
        text_.put_hex(block_ << 24 | lines_, 16);
        text_.put_hex(random_.next(), 16);
        text_.put("  ");
        text_.put(kPattern.substr(4 * random_.below(16), 53));
    }

    void words(std::uint64_t count) {
        for (std::uint64_t i = 0; i < count; ++i) {
            if (i > 0) text_.put(' ');
            text_.put_word(corpus_.zipf_word(random_));
        }
    }

    void timestamp(std::int64_t micros) {
        const std::int64_t seconds = micros / 1'000'000, of_day = seconds % 86400;
        const Date date = date_of_days(seconds / 86400);
        text_.put_digits(static_cast<std::uint64_t>(date.year), 4);
        text_.put('-');
        text_.put_digits(date.month, 2);
        text_.put('-');
        text_.put_digits(date.day, 2);
        text_.put('T');
        text_.put_digits(static_cast<std::uint64_t>(of_day / 3600), 2);
        text_.put(':');
        text_.put_digits(static_cast<std::uint64_t>(of_day / 60 % 60), 2);
        text_.put(':');
        text_.put_digits(static_cast<std::uint64_t>(of_day % 60), 2);
        text_.put('.');
        text_.put_digits(static_cast<std::uint64_t>(micros % 1'000'000), 6);
        text_.put('Z');
    }

    // A source's clock moves on by up to 90 ms, or not at all (a quarter of its lines).
    void log() {
        const std::size_t source = random_.below(kLogSources);
        if (!random_.percent(25)) clocks_[source] += static_cast<std::int64_t>(random_.below(90'000));
        timestamp(clocks_[source]);
        const std::uint64_t level = random_.below(100);
        text_.put(level < 20 ? " DEBUG [" : level < 80 ? " INFO  [" : level < 92 ? " WARN  [" : " ERROR [");
        text_.put(kComponents[random_.below(std::size(kComponents))]);
        text_.put("] ");
        words(random_.between(1, 6));
        text_.put(" id=");
        text_.put_number(static_cast<std::int64_t>(number_of_digits(random_, random_.between(1, 12))));
        if (random_.percent(40)) {
            text_.put(" delta=");
            text_.put_number(signed_number(random_.between(1, 6)));
        }
        text_.put(" took=");
        text_.put_decimal(static_cast<std::int64_t>(number_of_digits(random_, random_.between(1, 7))), 2);
        text_.put("ms");
        if (level >= 92) {
            text_.put(" code=-");
            text_.put_number(static_cast<std::int64_t>(random_.between(1, 255)));
        }
    }

    // A number of `digits` digits, negative half the time.
    std::int64_t signed_number(std::uint64_t digits) {
        const auto value = static_cast<std::int64_t>(number_of_digits(random_, digits));
        return random_.percent(50) ? -value : value;
    }

    // id,name,city,amount,score; each field but the id empty one time in twenty.
    void csv() {
        const std::uint64_t id = random_.below(100);
        text_.put_number(id < 35 ? static_cast<std::int64_t>(random_.below(1000))
                                 : id < 85 ? static_cast<std::int64_t>(number_of_digits(random_, random_.between(1, 12)))
                                           : -static_cast<std::int64_t>(number_of_digits(random_, random_.between(1, 9))));
        text_.put(',');
        if (!random_.percent(5)) words(random_.percent(20) ? 3 : 2);
        text_.put(',');
        if (!random_.percent(5)) text_.put(kCities[random_.below(std::size(kCities))]);
        text_.put(',');
        if (!random_.percent(5))
            text_.put_decimal(signed_number(random_.between(1, 8)), static_cast<int>(random_.between(1, 3)));
        text_.put(',');
        if (random_.percent(5)) return;
        if (random_.percent(50)) text_.put_number(signed_number(random_.between(1, 3)));
        else text_.put_decimal(static_cast<std::int64_t>(random_.below(1000)), static_cast<int>(random_.between(1, 2)));
    }

    // Three in four a few words; else cut from the text: a fifth up to 64 KiB (lengths spread
    // evenly over their logarithm), one in 40 from 64 KiB to 1 MiB, and one in 40 of 256 KiB to 1 MiB
    // from the text's start, with a tail of its own.
    void long_line() {
        const std::uint64_t shape = random_.below(1000);
        if (shape < 750) return words(random_.between(1, 10));
        const std::string_view text = corpus_.text();
        if (shape >= 975) {
            text_.put(text.substr(0, random_.between(256 << 10, (1 << 20) - 32)));
            text_.put('#');
            return text_.put_hex(random_.next(), static_cast<int>(random_.between(1, 16)));
        }
        const double unit = static_cast<double>(random_.next() >> 11) * 0x1.0p-53;
        const std::size_t length = shape < 950 ? static_cast<std::size_t>(80.0 * std::pow(819.2, unit))
                                               : random_.between(64 << 10, 1 << 20);
        text_.put(text.substr(random_.below(text.size() - length + 1), length));
    }

    void mixed() {
        const std::uint64_t shape = random_.below(100);
        if (shape < 10) return;  // an empty line
        if (shape < 25) return blanks_and_words();
        if (shape < 55) return number_and_word();
        if (shape < 80) return case_variants();
        if (shape < 88) {
            text_.put_word(corpus_.word(random_.below(16)));
            text_.put('\t');
            mixed_number();
            text_.put('\t');
            return words(1);
        }
        text_.put(shape < 94 ? kUtf8Words[random_.below(std::size(kUtf8Words))]
                             : kSymbols.substr(random_.below(kSymbols.size()), 1));
        if (random_.percent(70)) {
            text_.put(' ');
            words(random_.between(1, 3));
        }
        if (random_.percent(20)) text_.put("  ");  // trailing blanks
    }

    void blanks_and_words() {
        for (std::uint64_t i = random_.between(1, 4); i > 0; --i) text_.put(random_.percent(50) ? ' ' : '\t');
        case_variants();
    }

    // Most numbers below 100, so that many are equal, some followed by a word.
    void number_and_word() {
        if (random_.percent(10)) text_.put(' ');
        mixed_number();
        if (random_.percent(30)) {
            text_.put(' ');
            words(1);
        }
    }

    // A sign or none, leading zeros now and then, digits (or none before a point), decimals.
    void mixed_number() {
        const std::uint64_t sign = random_.below(10);
        if (sign < 3) text_.put(sign < 2 ? '-' : '+');
        if (random_.percent(25)) text_.put(std::string_view("000").substr(0, random_.between(1, 3)));
        const bool point_first = random_.percent(5);
        if (!point_first)
            text_.put_number(static_cast<std::int64_t>(random_.percent(50) ? random_.below(100)
                                                                           : number_of_digits(random_, random_.between(1, 9))));
        if (point_first || random_.percent(40)) {
            const auto decimals = static_cast<int>(random_.between(1, 4));
            text_.put('.');
            text_.put_digits(number_of_digits(random_, static_cast<std::uint64_t>(decimals)), decimals);
        }
    }

    // One of the 64 most frequent words in lower, upper, capitalised or alternating case, then
    // other words half the time.
    void case_variants() {
        const std::string_view word = corpus_.word(random_.below(64));
        const std::uint64_t style = random_.below(4);
        for (std::size_t i = 0; i < word.size(); ++i) {
            const bool upper = style == 1 || (style == 2 && i == 0) || (style == 3 && i % 2 == 1);
            text_.put(static_cast<char>(upper ? word[i] & ~0x20 : word[i] | 0x20));
        }
        if (random_.percent(50)) {
            text_.put(' ');
            words(random_.between(1, 3));
        }
    }

    const Corpus& corpus_;
    Random random_;
    Text text_;
    std::uint64_t block_;
    std::uint64_t lines_ = 0;
    std::array<std::int64_t, kLogSources> clocks_{};
};

// A block's lines with their terminators: from kBlockBytes to kBlockBytes + kMaxLineBytes bytes.
struct Block {
    std::unique_ptr<char[]> bytes = std::make_unique_for_overwrite<char[]>(kBlockBytes + kMaxLineBytes + kWordSlot);
    std::size_t size = 0;
    std::uint64_t lines = 0;
};

void make_block(const Corpus& corpus, const LineSpec& spec, std::uint64_t number, Block& block) {
    LineMaker maker(corpus, spec.seed, number, block.bytes.get());
    block.lines = 0;
    while (maker.text().size() < kBlockBytes) {
        maker.line(spec.kind);
        maker.text().put(spec.terminator);
        ++block.lines;
    }
    block.size = maker.text().size();
}

// What is left of the limit, in lines or in bytes.
class Limit {
public:
    explicit Limit(const LineSpec& spec) : by_lines_(spec.count.has_value()), left_(spec.count ? *spec.count : *spec.size) {}

    bool reached() const { return left_ == 0; }

    // The bytes at the front of `block` that the limit takes: all its lines when they fit, else
    // as many whole lines as do, and then the limit is reached.
    std::size_t take(const Block& block, char terminator) {
        const std::string_view bytes(block.bytes.get(), block.size);
        if (by_lines_ ? block.lines <= left_ : block.size <= left_) {
            left_ -= by_lines_ ? block.lines : block.size;
            return block.size;
        }
        std::size_t end = 0;
        if (by_lines_)
            for (; left_ > 0; --left_) end = bytes.find(terminator, end) + 1;
        else
            end = bytes.rfind(terminator, left_ - 1) + 1;  // 0 where no line fits (npos + 1)
        left_ = 0;
        return end;
    }

private:
    bool by_lines_;
    std::uint64_t left_;
};

// The output cut out of the batches in turn. The last terminator handed on is held back until
// more lines follow it or the output ends, where final_terminator says whether it is written.
class Output {
public:
    explicit Output(const LineSpec& spec)
        : spec_(spec), limit_(spec), terminator_(reinterpret_cast<const std::byte*>(&spec_.terminator), 1) {}

    bool done() const { return limit_.reached(); }
    // Where the pieces of the last cut() begin.
    std::uint64_t offset() const { return offset_; }

    // The pieces of `blocks` that the limit takes, after the terminator held back before them;
    // none where no line fits. They stay valid until the next cut().
    std::span<const std::span<const std::byte>> cut(const std::vector<Block>& blocks) {
        offset_ = end_;
        pieces_.assign(held_ ? 1 : 0, terminator_);
        const std::size_t before = pieces_.size();
        for (std::size_t i = 0; i < blocks.size() && !limit_.reached(); ++i)
            if (const std::size_t bytes = limit_.take(blocks[i], spec_.terminator); bytes > 0)
                pieces_.push_back(std::as_bytes(std::span(blocks[i].bytes.get(), bytes)));
        if (pieces_.size() == before) {
            pieces_.clear();
            return {};
        }
        pieces_.back() = pieces_.back().first(pieces_.back().size() - 1);  // held back
        if (pieces_.back().empty()) pieces_.pop_back();
        held_ = true;
        for (const auto& piece : pieces_) end_ += piece.size();
        return pieces_;
    }

    // Hands on the terminator held back, where the last line has one.
    void finish(const LinePut& put) const {
        if (held_ && spec_.final_terminator) put(end_, std::span(&terminator_, 1));
    }

private:
    const LineSpec& spec_;
    Limit limit_;
    const std::span<const std::byte> terminator_;
    std::vector<std::span<const std::byte>> pieces_;
    std::uint64_t offset_ = 0, end_ = 0;
    bool held_ = false;
};

// Makes the next batch of blocks into `blocks`, in parallel. The batches grow from one block to
// kMaxBatchBlocks, so that a small limit makes little more than it needs.
void make_batch(const Corpus& corpus, const LineSpec& spec, std::uint64_t& first, std::vector<Block>& blocks) {
    blocks.resize(static_cast<std::size_t>(std::clamp<std::uint64_t>(first, 1, kMaxBatchBlocks)));
    tbb::parallel_for(std::size_t{0}, blocks.size(), [&](std::size_t i) { make_block(corpus, spec, first + i, blocks[i]); });
    first += blocks.size();
}

}  // namespace

const char* line_kind_name(LineKind kind) {
    for (auto [name, k] : kKindNames)
        if (k == kind) return name;
    return "?";
}

std::optional<LineKind> parse_line_kind(std::string_view name) {
    for (auto [n, k] : kKindNames)
        if (name == n) return k;
    return std::nullopt;
}

void LineSpec::validate() const {
    if (count.has_value() == size.has_value())
        throw std::invalid_argument("lines: give either a count of lines or a size in bytes");
    if (terminator != '\n' && terminator != '\0')
        throw std::invalid_argument("lines: the terminator must be a newline or a NUL");
}

// Each batch is handed on while the next one is made.
void generate_lines(const LineSpec& spec, const LinePut& put) {
    spec.validate();
    const Corpus corpus(spec.seed, spec.kind == LineKind::long_lines);
    Output output(spec);
    std::vector<Block> made, next;
    std::uint64_t first = 0;
    if (!output.done()) make_batch(corpus, spec, first, made);
    while (!output.done()) {
        const std::span<const std::span<const std::byte>> pieces = output.cut(made);
        auto put_pieces = [&, offset = output.offset()] {
            if (!pieces.empty()) put(offset, pieces);
        };
        if (output.done()) {
            put_pieces();
            break;
        }
        tbb::parallel_invoke(put_pieces, [&] { make_batch(corpus, spec, first, next); });
        std::swap(made, next);
    }
    output.finish(put);
}

std::string generate_lines(const LineSpec& spec) {
    std::string lines;
    generate_lines(spec, [&](std::uint64_t, std::span<const std::span<const std::byte>> pieces) {
        for (const auto& piece : pieces) lines.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    });
    return lines;
}

}  // namespace gpusort::gen
