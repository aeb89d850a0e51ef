// The parts of the extension _gpusort (module.cpp), each adding its functions to the module: the
// exceptions, the sort of files (bind_files.cpp) and the sort of arrays (bind_memory.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace gpusort::python {

// gpusort.Error (a RuntimeError) and its kinds SortError, IoError and GpuError, the C++ exceptions
// of gpusort/errors.hpp turned into them; std::invalid_argument becomes ValueError (pybind11's own).
void bind_errors(pybind11::module_& m);
// sort_file(), plan_file() and gather_file().
void bind_files(pybind11::module_& m);
// The sorts of numpy arrays.
void bind_memory(pybind11::module_& m);

}  // namespace gpusort::python
