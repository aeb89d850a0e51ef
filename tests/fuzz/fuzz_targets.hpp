// The fuzz targets' bodies: each takes one input of any bytes, runs the code under test on it and
// throws Failure when the outcome breaks a documented rule (other exceptions than the documented
// ones, a wrong result). The libFuzzer programs (built with GPUSORT_FUZZ) call them from
// LLVMFuzzerTestOneInput; the replay test runs every saved input through them in the normal build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace gpusort::fuzz {

using Input = std::span<const std::uint8_t>;

// A broken rule. It derives from none of the exception types the code under test documents, so
// that no target's own catch clause can take it for an expected failure.
class Failure : public std::runtime_error {
public:
    explicit Failure(const std::string& message) : std::runtime_error(message) {}
};

inline void check(bool ok, const std::string& what) {
    if (!ok) throw Failure(what);
}

// parse_key_field and KeySpec::validate (lines of text: a record size, then key specs).
void key_spec_target(Input data);
// parse_size (the whole input as text).
void size_target(Input data);
// parse_command_line (the input split into words at newlines) and the --stats JSON.
void cli_target(Input data);
// io::StreamReader over gz, bz2, xz, zst or plain data, corrupt or truncated (first byte: how).
void stream_reader_target(Input data);
// gpusort::sort_file on a few records of a layout the input chooses, against a reference sort.
void sort_target(Input data);
// gpusort-sort against GNU sort (both programs run) on a small text under options the input chooses.
void text_target(Input data);

}  // namespace gpusort::fuzz

// Each target's source defines its libFuzzer entry point only in the fuzzing build.
#ifdef GPUSORT_FUZZ_ENTRY
#define GPUSORT_FUZZ_ENTRY_POINT(body)                                               \
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
        body(gpusort::fuzz::Input(data, size));                                        \
        return 0;                                                                      \
    }
#else
#define GPUSORT_FUZZ_ENTRY_POINT(body)
#endif
