// Compression: the formats a stream may be compressed with, found from a file name's ending or
// from an option's value, and their short names.
#pragma once

#include <string>

namespace gpusort {

enum class Compression { none, gzip, bzip2, xz, zstd };

// By the ending: ".gz", ".bz2", ".xz", ".zst"; none for anything else ("-" included).
Compression compression_of(const std::string& path);

// "none", "gz" or "gzip", "bz2" or "bzip2", "xz", "zst" or "zstd"; anything else throws
// std::invalid_argument("unknown compression 'x' (none, gz, bz2, xz, zst)").
Compression parse_compression(const std::string& name);

// "none", "gz", "bz2", "xz", "zst".
const char* compression_name(Compression compression);

}  // namespace gpusort
