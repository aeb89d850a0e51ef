// SKIP_WITHOUT_DEVICE(): skips a test of the GPU layer, saying why, where no CUDA device can be used
// (no device, or no driver). Tests of the sort through the backend use tests/gpu_skip.hpp instead.
#pragma once

#include "gpu/device.hpp"

#include <gtest/gtest.h>

#define SKIP_WITHOUT_DEVICE()                                                                                  \
    do {                                                                                                       \
        if (::gpusort::gpu::device_count() == 0) GTEST_SKIP() << ::gpusort::gpu::device_unavailable_reason(); \
    } while (false)
