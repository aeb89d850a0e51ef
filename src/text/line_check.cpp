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

namespace {

// A source whose bytes are counted.
class CountingSource final : public ByteSource {
public:
    explicit CountingSource(ByteSource& source) : source_(&source) {}
    std::size_t read(std::span<char> buffer) override {
        const std::size_t n = source_->read(buffer);
        bytes_ += n;
        return n;
    }
    const std::string& name() const override { return source_->name(); }
    std::uint64_t bytes() const { return bytes_; }

private:
    ByteSource* source_;
    std::uint64_t bytes_ = 0;
};

}  // namespace

bool check_lines(ByteSource& source, std::size_t buffer_bytes, std::size_t line_limit, LineCheck& check, char terminator) {
    CountingSource counted(source);
    const std::uint64_t before = check.bytes();
    LineReader lines(counted, buffer_bytes, line_limit, terminator);
    while (lines.next()) check.add(lines.line());
    return counted.bytes() == check.bytes() - before;
}

}  // namespace gpusort
