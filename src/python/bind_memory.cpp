// The sort of arrays in memory for Python: _gpusort._sort_memory(), sort_memory() over contiguous
// buffers (numpy arrays seen as bytes) and a key description. The numpy conventions (dtypes, NaN
// last, structured arrays, the shapes of the results) are gpusort/_arrays.py's; this takes the
// bytes and the key as the library knows them, and runs the sort through run_sort.
#include "src/python/bindings.hpp"
#include "src/python/run_sort.hpp"

#include "gpusort/sort_memory.hpp"
#include "src/cli/size_parse.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort::python {

namespace py = pybind11;

namespace {

// The bytes of a Python object that exposes a C-contiguous buffer (a numpy array), held from
// construction to destruction: the sort reads and writes them with the GIL released, so the
// object's memory must stay where it is, which holding its buffer guarantees (numpy refuses to
// resize an array whose buffer is held).
class HeldBytes {
public:
    HeldBytes(const py::handle& object, bool writable) {
        const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) throw py::error_already_set();
    }
    ~HeldBytes() { PyBuffer_Release(&view_); }  // with the GIL: the sort has ended by then
    HeldBytes(const HeldBytes&) = delete;
    HeldBytes& operator=(const HeldBytes&) = delete;

    std::span<const std::byte> read() const { return {static_cast<const std::byte*>(view_.buf), size()}; }
    std::span<std::byte> write() const { return {static_cast<std::byte*>(view_.buf), size()}; }

private:
    std::size_t size() const { return static_cast<std::size_t>(view_.len); }
    Py_buffer view_{};
};

KeyType key_type_named(const std::string& name) {
    const std::optional<KeyType> type = parse_key_type(name);
    if (!type) throw std::invalid_argument("unknown key type '" + name + "' (one of: " + key_type_list() + ")");
    return *type;
}

// A record's key from (offset, kind, length, big_endian, descending) tuples, kind being a key
// type's name or "bytes". KeySpec::validate() checks it when the sort starts.
KeySpec key_spec(std::size_t record_size, const py::iterable& fields) {
    KeySpec spec;
    spec.record_size = record_size;
    for (const py::handle& item : fields) {
        const auto field = item.cast<py::tuple>();
        if (field.size() != 5) throw std::invalid_argument("a key field is (offset, kind, length, big_endian, descending)");
        KeyField key;
        key.offset = field[0].cast<std::size_t>();
        const auto kind = field[1].cast<std::string>();
        key.is_bytes = kind == "bytes";
        if (!key.is_bytes) key.type = key_type_named(kind);
        key.length = field[2].cast<std::size_t>();
        key.big_endian = field[3].cast<bool>();
        key.descending = field[4].cast<bool>();
        spec.fields.push_back(key);
    }
    return spec;
}

// The options as bind_files.cpp takes them for sort_file(): the same words, and the same messages.
std::string type_name(const py::handle& value) { return py::str(value.get_type().attr("__name__")); }

long long int_option(const py::handle& value, const std::string& name) {
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        throw py::type_error(name + ": expected an int, not " + type_name(value));
    return value.cast<long long>();
}

// A budget: bytes (an int) or a size ("512M", "8G"); at least 1M.
std::optional<std::uint64_t> size_option(const py::object& value, const std::string& name) {
    if (value.is_none()) return std::nullopt;
    std::optional<std::uint64_t> bytes;
    if (py::isinstance<py::str>(value)) {
        const auto text = value.cast<std::string>();
        bytes = parse_size(text);
        if (!bytes) throw std::invalid_argument(name + ": '" + text + "' is not a size (e.g. 512M, 8G)");
    } else if (const long long number = int_option(value, name); number >= 0) {
        bytes = static_cast<std::uint64_t>(number);
    }
    if (!bytes || *bytes < kMinMemoryBudget) throw std::invalid_argument(name + ": at least 1M is needed");
    return bytes;
}

Backend backend_option(const py::handle& value) {
    if (!py::isinstance<py::str>(value)) throw py::type_error("backend: expected a str, not " + type_name(value));
    const auto name = value.cast<std::string>();
    if (name == "auto") return Backend::automatic;
    if (name == "cpu") return Backend::cpu;
    if (name == "gpu") return Backend::gpu;
    throw std::invalid_argument("backend: '" + name + "' is not one of auto, gpu, cpu");
}

MemoryOptions memory_options(const py::object& backend, const py::object& device, const py::object& threads,
                             const py::object& memory, const py::object& device_memory, const py::object& tmp_dir) {
    MemoryOptions options;
    options.backend = backend_option(backend);
    options.device = static_cast<int>(int_option(device, "device"));
    if (!threads.is_none()) {
        const long long count = int_option(threads, "threads");
        if (count < 1 || count > static_cast<long long>(kMaxThreads))
            throw std::invalid_argument("threads: from 1 to " + std::to_string(kMaxThreads) + ", not " + std::to_string(count));
        options.threads = static_cast<unsigned>(count);
    }
    options.memory_bytes = size_option(memory, "memory");
    options.device_memory_bytes = size_option(device_memory, "device_memory");
    if (!tmp_dir.is_none()) options.tmp_dir = py::module_::import("os").attr("fspath")(tmp_dir).cast<std::string>();
    return options;
}

// The arrays of one sort with their buffers held: the keys, their output, the (input, output)
// pairs of the values and the index, as MemorySort's spans.
struct HeldArrays {
    std::vector<std::unique_ptr<HeldBytes>> held;

    std::span<const std::byte> read(const py::handle& object) {
        held.push_back(std::make_unique<HeldBytes>(object, false));
        return held.back()->read();
    }
    std::span<std::byte> write(const py::handle& object) {
        if (object.is_none()) return {};
        held.push_back(std::make_unique<HeldBytes>(object, true));
        return held.back()->write();
    }
};

// What the caller may want of the report: the records output (fewer with unique) and how the
// sort went.
py::dict report_dict(const SortReport& report) {
    py::dict fields;
    fields["records"] = report.records;
    fields["output_records"] = report.output_records;
    fields["backend"] = report.backend;
    fields["backend_reason"] = report.backend_reason;
    fields["runs"] = report.runs;
    fields["merge_passes"] = report.merge_passes;
    fields["bytes_spilled"] = report.bytes_spilled;
    fields["seconds"] = report.seconds;
    return fields;
}

// The sort's arrays, their buffers held by `arrays`, and its key.
MemorySort memory_sort(HeldArrays& arrays, const py::object& keys, const py::object& key_type,
                       std::size_t record_size, const py::iterable& fields, bool descending, bool unique,
                       const py::object& keys_output, const py::iterable& values, const py::object& index_output) {
    MemorySort sort;
    if (!key_type.is_none()) {
        sort.order = {key_type_named(key_type.cast<std::string>()), descending};
    } else {
        sort.records = key_spec(record_size, fields);
    }
    sort.unique = unique;
    sort.keys = arrays.read(keys);
    sort.keys_output = arrays.write(keys_output);
    for (const py::handle& pair : values) {
        const auto both = pair.cast<py::tuple>();
        if (both.size() != 2) throw std::invalid_argument("a value array is given as (input, output)");
        sort.values.push_back({arrays.read(both[0]), arrays.write(both[1])});
    }
    sort.index_output = arrays.write(index_output);
    return sort;
}

py::dict sort_arrays(const py::object& keys, const py::object& key_type, std::size_t record_size,
                     const py::iterable& fields, bool descending, bool unique, const py::object& keys_output,
                     const py::iterable& values, const py::object& index_output, const py::object& backend,
                     const py::object& device, const py::object& threads, const py::object& memory,
                     const py::object& device_memory, const py::object& tmp_dir, const py::object& progress,
                     const py::object& notice) {
    HeldArrays arrays;
    const MemorySort sort =
        memory_sort(arrays, keys, key_type, record_size, fields, descending, unique, keys_output, values, index_output);
    const MemoryOptions options = memory_options(backend, device, threads, memory, device_memory, tmp_dir);
    const SortReport report = run_sort(
        [&](const SortHooks& hooks) {
            MemoryOptions hooked = options;
            hooked.progress = hooks.progress;
            hooked.notice = hooks.notice;
            return sort_memory(sort, hooked);
        },
        progress, notice);
    return report_dict(report);
}

}  // namespace

void bind_memory(py::module_& m) {
    m.attr("MAX_KEY_BYTES") = kMaxNormalizedKeyBytes;
    m.def("_sort_memory", &sort_arrays,
          "Sorts keys held in a C-contiguous buffer (whole keys of key_type, else records of record_size "
          "bytes by fields: (offset, kind, length, big_endian, descending) tuples, kind a key type or "
          "'bytes') into keys_output, carrying each (input, output) pair of values along and writing the "
          "index (4 or 8 bytes an entry). Returns a few fields of the report as a dict (output_records, "
          "runs, merge_passes, bytes_spilled, backend, ...). Used by gpusort.sort() and the other array "
          "functions, which take numpy arrays.",
          py::arg("keys"), py::kw_only(), py::arg("key_type") = py::none(), py::arg("record_size") = 0,
          py::arg("fields") = py::tuple(), py::arg("descending") = false, py::arg("unique") = false,
          py::arg("keys_output") = py::none(), py::arg("values") = py::tuple(), py::arg("index_output") = py::none(),
          py::arg("backend") = "auto", py::arg("device") = 0, py::arg("threads") = py::none(),
          py::arg("memory") = py::none(), py::arg("device_memory") = py::none(), py::arg("tmp_dir") = py::none(),
          py::arg("progress") = py::none(), py::arg("notice") = py::none());
}

}  // namespace gpusort::python
