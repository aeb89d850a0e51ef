// zstd_unpacked: the data of zstd bytes, read back by Boost.Iostreams (an independent decoder of
// what a sort wrote compressed).
#pragma once

#include <boost/iostreams/copy.hpp>
#include <boost/iostreams/device/array.hpp>
#include <boost/iostreams/device/back_inserter.hpp>
#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>

#include <exception>
#include <optional>
#include <string>

namespace gpusort::testing {

// The data of a zstd file, or nullopt when it is not valid zstd.
inline std::optional<std::string> zstd_unpacked(const std::string& packed) {
    namespace bio = boost::iostreams;
    try {
        std::string plain;
        bio::filtering_istream in;
        in.push(bio::zstd_decompressor());
        in.push(bio::array_source(packed.data(), packed.size()));
        bio::copy(in, bio::back_inserter(plain));
        return plain;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace gpusort::testing
