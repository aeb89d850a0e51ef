// The extension _gpusort, which the package gpusort (gpusort/__init__.py) imports, and its
// exceptions.
#include "src/python/bindings.hpp"

#include "gpusort/errors.hpp"

namespace gpusort::python {

void bind_errors(pybind11::module_& m) {
    // pybind11 tries the last registered first: the kinds come after Error, which catches the rest
    // (an Interrupted that no Ctrl-C caused: run_sort raises Ctrl-C's KeyboardInterrupt itself).
    const auto error = pybind11::register_exception<Error>(m, "Error", PyExc_RuntimeError);
    error.doc() = "A sort failed; the message is one line naming the file and the cause.";
    pybind11::register_exception<SortError>(m, "SortError", error).doc() =
        "The sort cannot be done as asked: not enough disk space or memory, an input that does not hold whole "
        "records or changed while it was read, an output that failed verify, no GPU for backend=\"gpu\".";
    pybind11::register_exception<IoError>(m, "IoError", error).doc() =
        "A system call on a file failed (a missing file, no space left, an I/O error); the message names the file "
        "and the system's reason.";
    pybind11::register_exception<GpuError>(m, "GpuError", error).doc() =
        "The GPU failed while it sorted (a CUDA error, device memory that ran out).";
}

}  // namespace gpusort::python

PYBIND11_MODULE(_gpusort, m) {
    m.doc() = "gpusort's C++ sorts: files of fixed-size keys or records, and numpy arrays";
    gpusort::python::bind_errors(m);
    gpusort::python::bind_files(m);
    gpusort::python::bind_memory(m);
}
