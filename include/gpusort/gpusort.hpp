// gpusort's public C++ API in one include: sort_file() with its options and report, the key
// types and specs, the plan, the errors it throws (errors.hpp), and the library's version. Link
// the CMake target gpusort::gpusort.
#pragma once

#include "gpusort/sort_file.hpp"
#include "gpusort/sort_memory.hpp"
#include "gpusort/version.hpp"
