// LineCheck: the order by compare_lines, and the count, bytes and checksum of lines.
#include "src/text/line_check.hpp"

#include "src/text/line_order.hpp"

#include <span>

namespace gpusort {

void LineCheck::add(std::string_view line) {
    if (checksum_.count > 0 && !out_of_order_) {
        const int order = compare_lines(previous_, line, *keys_);
        if (order > 0 || (order == 0 && keys_->unique)) out_of_order_ = checksum_.count + 1;
    }
    previous_.assign(line);
    bytes_ += line.size() + 1;
    checksum_.add(std::as_bytes(std::span<const char>(line.data(), line.size())));
}

bool check_lines(ByteSource& source, std::size_t buffer_bytes, std::size_t line_limit, LineCheck& check, char terminator) {
    LineReader lines(source, buffer_bytes, line_limit, terminator);
    bool terminated = true;
    while (lines.next()) {
        check.add(lines.line());
        terminated = !lines.unterminated();
    }
    return terminated;
}

}  // namespace gpusort
