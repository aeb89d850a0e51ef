// SKIP_WITHOUT_GPU(): skips a test of the GPU backend, saying why, where no GPU can be used (no
// device, no driver, or a build without CUDA), as the sorter factory finds it.
#pragma once

#include "src/sorters/make_chunk_sorter.hpp"

#include <exception>
#include <string>

namespace gpusort::testing {

// Empty when the GPU backend can be used, else why not.
inline std::string gpu_unavailable() {
    try {
        make_chunk_sorter({Backend::gpu, 0, 1, {}}, KeyOrder{KeyType::u64, false});
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace gpusort::testing

#define SKIP_WITHOUT_GPU()                                                               \
    if (const std::string why = ::gpusort::testing::gpu_unavailable(); !why.empty()) { \
        GTEST_SKIP() << why;                                                             \
    }
