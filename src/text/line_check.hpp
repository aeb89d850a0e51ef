// The check of sorted lines that gpusort-file --lines --verify and gpusort-check --lines share:
// whether lines come in order by compare_lines (with -u, their keys strictly increasing), and
// their count, bytes and order-independent checksum, to compare with those of the input.
#pragma once

#include "src/text/line_input.hpp"
#include "src/text/text_keys.hpp"
#include "src/verify/record_checksum.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusort {

class LineCheck {
public:
    explicit LineCheck(const TextKeys& keys) : keys_(&keys) {}
    // The next line, without its terminator.
    void add(std::string_view line);
    // The first line out of order, counted from 1.
    const std::optional<std::uint64_t>& out_of_order() const { return out_of_order_; }
    std::uint64_t lines() const { return checksum_.count; }
    // Bytes of the lines, each with its terminator.
    std::uint64_t bytes() const { return bytes_; }
    const MultisetChecksum& checksum() const { return checksum_; }

private:
    const TextKeys* keys_;
    std::string previous_;
    std::uint64_t bytes_ = 0;
    MultisetChecksum checksum_;
    std::optional<std::uint64_t> out_of_order_;
};

// Every line of `source` into `check`, read through a buffer of `buffer_bytes` that grows up to
// `line_limit` bytes. Returns whether the source ends with a terminator (or is empty).
bool check_lines(ByteSource& source, std::size_t buffer_bytes, std::size_t line_limit, LineCheck& check, char terminator);

}  // namespace gpusort
