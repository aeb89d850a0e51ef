// gpusort::version(): the version the library was built as (the project's version in CMake).
#include "gpusort/version.hpp"

namespace gpusort {

const char* version() { return GPUSORT_VERSION; }

}  // namespace gpusort
