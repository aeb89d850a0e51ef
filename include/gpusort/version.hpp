// The version of the installed gpusort library, as "MAJOR.MINOR.PATCH".
#pragma once

namespace gpusort {

const char* version();

}  // namespace gpusort
