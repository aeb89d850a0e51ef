// Compression: names and file endings of the stream formats.
#include "gpusort/compression.hpp"

#include <stdexcept>

namespace gpusort {

namespace {
bool ends_with(const std::string& text, const std::string& ending) {
    return text.size() > ending.size() &&
           text.compare(text.size() - ending.size(), ending.size(), ending) == 0;
}
}  // namespace

Compression compression_of(const std::string& path) {
    if (ends_with(path, ".gz")) return Compression::gzip;
    if (ends_with(path, ".bz2")) return Compression::bzip2;
    if (ends_with(path, ".xz")) return Compression::xz;
    if (ends_with(path, ".zst")) return Compression::zstd;
    return Compression::none;
}

Compression parse_compression(const std::string& name) {
    if (name == "none") return Compression::none;
    if (name == "gz" || name == "gzip") return Compression::gzip;
    if (name == "bz2" || name == "bzip2") return Compression::bzip2;
    if (name == "xz") return Compression::xz;
    if (name == "zst" || name == "zstd") return Compression::zstd;
    throw std::invalid_argument("unknown compression '" + name + "' (none, gz, bz2, xz, zst)");
}

const char* compression_name(Compression compression) {
    switch (compression) {
    case Compression::none: return "none";
    case Compression::gzip: return "gz";
    case Compression::bzip2: return "bz2";
    case Compression::xz: return "xz";
    case Compression::zstd: return "zst";
    }
    return "none";
}

}  // namespace gpusort
