// gpusort-check --lines: both files read through a StreamReader into LineCheck (src/text/line_check).
#include "tools/check_lines.hpp"

#include "gpusort/compression.hpp"
#include "io/io_error.hpp"
#include "io/stream_reader.hpp"
#include "src/text/line_check.hpp"
#include "src/text/text_budget.hpp"

#include <iostream>
#include <memory>
#include <unistd.h>

namespace gpusort::lines {

namespace {

// Buffers lines are read through: they grow to hold a longer line, up to the longest line any
// sort of lines accepts.
constexpr std::size_t kBufferBytes = std::size_t{4} << 20;

// The lines of `path` into `check`; false where the file's last line has no terminator.
bool read_lines(const std::string& path, LineCheck& check, char terminator) {
    std::unique_ptr<io::StreamReader> reader =
        path == "-" ? std::make_unique<io::StreamReader>(STDIN_FILENO, "standard input", Compression::none)
                    : std::make_unique<io::StreamReader>(path, compression_of(path));
    StreamSource source(std::move(reader));
    return check_lines(source, kBufferBytes, kMaxLineBytes, check, terminator);
}

}  // namespace

int check(const std::string& file, const std::optional<std::string>& original, const TextKeys& keys) {
    const std::string shown = io::input_shown(file);
    LineCheck sorted(keys);
    const bool terminated = read_lines(file, sorted, keys.line_end());
    if (const auto bad = sorted.out_of_order()) {
        std::cout << "gpusort-check: " << shown << " is not in order: line " << *bad << " (counted from 1) "
                  << (keys.unique ? "does not come after" : "belongs before") << " the line before it\n";
        return 1;
    }
    if (!terminated) {
        std::cout << "gpusort-check: " << shown << " does not end with a line's terminator\n";
        return 1;
    }
    if (original) {
        LineCheck input(keys);
        read_lines(*original, input, keys.line_end());
        if (input.lines() != sorted.lines() || input.bytes() != sorted.bytes()) {
            std::cout << "gpusort-check: " << shown << " has " << sorted.lines() << " lines of " << sorted.bytes() << " bytes, "
                      << io::input_shown(*original) << " has " << input.lines() << " lines of " << input.bytes() << " bytes\n";
            return 1;
        }
        if (!(input.checksum() == sorted.checksum())) {
            std::cout << "gpusort-check: " << shown << " does not hold the same lines as " << io::input_shown(*original)
                      << " (checksums differ)\n";
            return 1;
        }
    }
    std::cout << "ok: " << sorted.lines() << " lines in order" << (original ? ", same lines as the input" : "") << "\n";
    return 0;
}

}  // namespace gpusort::lines
