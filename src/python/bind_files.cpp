// gpusort.sort_file(), plan_file() and gather_file(): the options of gpusort-file as keyword
// arguments (--record-size is record_size=), checked by the command line's rules (the key by
// parse_key_options itself), and the report as a dict with the fields of --stats.
#include "src/python/bindings.hpp"

#include "io/stream_writer.hpp"
#include "src/cli/cli_options.hpp"
#include "src/cli/key_options.hpp"
#include "src/cli/option_values.hpp"
#include "src/cli/size_parse.hpp"
#include "src/plan/plan_report.hpp"
#include "src/python/run_sort.hpp"

#include <boost/program_options.hpp>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusort::python {

namespace py = pybind11;
namespace po = boost::program_options;

namespace {

// The keywords of each function; any other is a TypeError, as for a Python function.
const std::set<std::string> kGatherKeywords = {
    "index_type", "memory", "threads", "tmp_dir", "spill_io", "input_io", "output_io",
    "backend", "device", "device_memory", "sync", "progress", "notice"};
const std::set<std::string> kPlanKeywords = [] {
    std::set<std::string> names = kGatherKeywords;
    names.erase("progress");
    names.insert({"type", "key", "record_size", "format", "descending", "unique", "values", "index_out", "verify",
                  "input_compression", "output_compression", "compression_level"});
    return names;
}();
const std::set<std::string> kSortKeywords = [] {
    std::set<std::string> names = kPlanKeywords;
    names.insert("progress");
    return names;
}();

// The keyword arguments of one call: the value of each, None where it was not given.
class Keywords {
public:
    Keywords(const char* function, const py::kwargs& given, const std::set<std::string>& accepted) : given_(given) {
        for (const auto& item : given) {
            const std::string name = py::str(item.first);
            if (!accepted.count(name))
                throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + name + "'");
        }
    }
    py::object operator[](const char* name) const {
        return given_.contains(name) ? py::reinterpret_borrow<py::object>(given_[name]) : py::none();
    }

private:
    const py::kwargs& given_;
};

// A str argument; TypeError for anything else.
std::string text_arg(const py::handle& value, const std::string& name) {
    if (!py::isinstance<py::str>(value))
        throw py::type_error(name + ": expected a str, not " + std::string(py::str(value.get_type().attr("__name__"))));
    return value.cast<std::string>();
}

// A path: a str or an os.PathLike that gives one.
std::string path_arg(const py::handle& value, const std::string& name) {
    return text_arg(py::module_::import("os").attr("fspath")(value), name);
}

// An int argument (not a bool, which Python counts as one).
long long int_arg(const py::handle& value, const std::string& name) {
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        throw py::type_error(name + ": expected an int, not " + std::string(py::str(value.get_type().attr("__name__"))));
    return value.cast<long long>();
}

// A size in bytes: an int, or a str with a suffix as on the command line ("512M", "8G"); at least 1M.
std::uint64_t size_arg(const py::handle& value, const std::string& name) {
    std::optional<std::uint64_t> bytes;
    if (py::isinstance<py::str>(value)) {
        const std::string text = value.cast<std::string>();
        bytes = parse_size(text);
        if (!bytes) throw std::invalid_argument(name + ": '" + text + "' is not a size (e.g. 512M, 8G)");
    } else {
        const long long number = int_arg(value, name);
        if (number >= 0) bytes = static_cast<std::uint64_t>(number);
    }
    if (!bytes || *bytes < kMinMemoryBudget) throw std::invalid_argument(name + ": at least 1M is needed");
    return *bytes;
}

// One of a few words: `choices` pairs each with its value.
template <class T>
T choice_arg(const py::handle& value, const std::string& name, const std::vector<std::pair<std::string, T>>& choices) {
    const std::string text = text_arg(value, name);
    std::string names;
    for (const auto& [word, result] : choices) {
        if (word == text) return result;
        names += (names.empty() ? "" : ", ") + word;
    }
    throw std::invalid_argument(name + ": '" + text + "' is not one of " + names);
}

IoMode io_mode_arg(const py::handle& value, const std::string& name) {
    return choice_arg<IoMode>(value, name, {{"auto", IoMode::automatic}, {"buffered", IoMode::buffered}, {"direct", IoMode::direct}});
}

// The key options' messages name them as the command line does; here they are keywords.
std::string keyword_names(std::string message) {
    const std::pair<std::string, std::string> names[] = {
        {"--record-size", "record_size"}, {"--type", "type"}, {"--key", "key"}, {"--format", "format"}, {"--descending", "descending"}};
    for (const auto& [option, keyword] : names)
        for (std::size_t at = message.find(option); at != std::string::npos; at = message.find(option, at))
            message.replace(at, option.size(), keyword);
    return message;
}

// The words of the key options (type, key, record_size, format, descending) for the command line's parser.
std::vector<std::string> key_words(const Keywords& kw) {
    std::vector<std::string> words;
    if (!kw["type"].is_none()) words.push_back("--type=" + text_arg(kw["type"], "type"));
    if (py::object keys = kw["key"]; !keys.is_none()) {
        if (py::isinstance<py::str>(keys)) keys = py::make_tuple(keys);
        for (const py::handle& spec : keys) words.push_back("--key=" + text_arg(spec, "key"));
    }
    if (py::object size = kw["record_size"]; !size.is_none())
        words.push_back("--record-size=" + (py::isinstance<py::str>(size) ? size.cast<std::string>()
                                                                         : std::to_string(int_arg(size, "record_size"))));
    if (!kw["format"].is_none()) words.push_back("--format=" + text_arg(kw["format"], "format"));
    if (py::bool_(kw["descending"])) words.push_back("--descending");
    return words;
}

// The key of the sort, by the rules of gpusort-file's key options.
void read_key(const Keywords& kw, SortOptions& options) {
    po::options_description description;
    add_key_options(description);
    try {
        const KeyOptions key = parse_key_options(parse_words(key_words(kw), description));
        options.order = key.order;
        options.records = key.records;
    } catch (const po::error& e) {
        throw std::invalid_argument(keyword_names(e.what()));
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(keyword_names(e.what()));
    }
}

// values=[(V, OUT) or (V, OUT, width)] and index_out=, index_type=.
void read_columns(const Keywords& kw, SortOptions& options) {
    if (py::object values = kw["values"]; !values.is_none()) {
        for (const py::handle& item : values) {
            // A str is a sequence too: "V:OUT" would be read as its letters.
            const bool sequence = py::isinstance<py::sequence>(item) && !py::isinstance<py::str>(item);
            const py::tuple value = sequence ? py::tuple(py::reinterpret_borrow<py::object>(item)) : py::tuple();
            if (value.size() < 2 || value.size() > 3)
                throw std::invalid_argument("values: each is (V, OUT) or (V, OUT, width), not " + std::string(py::repr(item)));
            ValueColumn column{path_arg(value[0], "values"), path_arg(value[1], "values"), std::nullopt};
            if (value.size() == 3) {
                const long long width = int_arg(value[2], "values: width");
                if (width < 1 || width > static_cast<long long>(kMaxRecordSize))
                    throw std::invalid_argument("values: " + std::string(py::repr(item)) + " has no width from 1 to 1M");
                column.width = static_cast<std::size_t>(width);
            }
            options.values.push_back(std::move(column));
        }
    }
    if (!kw["index_out"].is_none()) options.index_output = path_arg(kw["index_out"], "index_out");
}

void read_index_type(const Keywords& kw, SortOptions& options) {
    if (!kw["index_type"].is_none())
        options.index_type = choice_arg<IndexType>(kw["index_type"], "index_type",
                                                   {{"auto", IndexType::automatic}, {"u32", IndexType::u32}, {"u64", IndexType::u64}});
}

// memory=, threads=, backend=, device=, device_memory=.
void read_budgets(const Keywords& kw, SortOptions& options) {
    if (!kw["memory"].is_none()) options.memory_bytes = size_arg(kw["memory"], "memory");
    if (!kw["threads"].is_none()) {
        const long long threads = int_arg(kw["threads"], "threads");
        if (threads < 1 || threads > static_cast<long long>(kMaxThreads))
            throw std::invalid_argument("threads: from 1 to " + std::to_string(kMaxThreads) + ", not " + std::to_string(threads));
        options.threads = static_cast<unsigned>(threads);
    }
    if (!kw["backend"].is_none())
        options.backend = choice_arg<Backend>(kw["backend"], "backend",
                                              {{"auto", Backend::automatic}, {"gpu", Backend::gpu}, {"cpu", Backend::cpu}});
    if (!kw["device"].is_none()) {
        const long long device = int_arg(kw["device"], "device");
        if (device < 0 || device > 1024) throw std::invalid_argument("device: must be from 0 to 1024");
        options.device = static_cast<int>(device);
    }
    if (!kw["device_memory"].is_none()) options.device_memory_bytes = size_arg(kw["device_memory"], "device_memory");
}

// tmp_dir=, the I/O modes and sync=.
void read_files(const Keywords& kw, SortOptions& options) {
    if (!kw["tmp_dir"].is_none()) options.tmp_dir = path_arg(kw["tmp_dir"], "tmp_dir");
    if (!kw["spill_io"].is_none()) options.spill_io = io_mode_arg(kw["spill_io"], "spill_io");
    if (!kw["input_io"].is_none()) options.input_io = io_mode_arg(kw["input_io"], "input_io");
    if (!kw["output_io"].is_none()) options.output_io = io_mode_arg(kw["output_io"], "output_io");
    options.sync = py::bool_(kw["sync"]);
}

// input_compression=, output_compression= and compression_level=, whose range is the format's.
void read_compression(const Keywords& kw, SortOptions& options) {
    auto compression = [&](const char* name) -> std::optional<Compression> {
        if (kw[name].is_none()) return std::nullopt;
        try {
            return parse_compression(text_arg(kw[name], name));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string(name) + ": " + e.what());
        }
    };
    options.input_compression = compression("input_compression");
    options.output_compression = compression("output_compression");
    if (kw["compression_level"].is_none()) return;
    const long long level = int_arg(kw["compression_level"], "compression_level");
    // An uncompressed output takes any level a format has.
    const Compression format = options.output_compression.value_or(compression_of(options.output));
    if (format == Compression::none && (level < 0 || level > 19))
        throw std::invalid_argument("compression_level: must be between 0 and 19 (output is not compressed, "
                                    "so the level has no effect)");
    options.compression_level = static_cast<int>(std::clamp<long long>(level, INT_MIN, INT_MAX));
    try {
        io::StreamWriter::check_level(format, options.compression_level);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("compression_level: ") + e.what());
    }
}

// The options of a sort (or of its plan): INPUT, OUTPUT (None: not written, where columns are)
// and the keywords.
SortOptions sort_options(const py::object& input, const py::object& output, const Keywords& kw) {
    SortOptions options;
    options.input = path_arg(input, "input");
    if (!output.is_none()) options.output = path_arg(output, "output");
    read_key(kw, options);
    read_columns(kw, options);
    read_index_type(kw, options);
    if (options.output.empty() && options.values.empty() && !options.index_output)
        throw std::invalid_argument("output: needed unless values or index_out are given");
    if (!options.index_output && !kw["index_type"].is_none())
        throw std::invalid_argument("index_type is for index_out");
    options.unique = py::bool_(kw["unique"]);
    options.verify = py::bool_(kw["verify"]);
    if (options.verify && options.output.empty())
        throw std::invalid_argument("verify checks the sorted keys: give output");
    read_budgets(kw, options);
    read_files(kw, options);
    read_compression(kw, options);
    return options;
}

// A JSON text of ours as Python objects.
py::object from_json(const std::string& json) { return py::module_::import("json").attr("loads")(json); }

py::object sort_file(const py::object& input, const py::object& output, const py::kwargs& given) {
    const Keywords kw("sort_file", given, kSortKeywords);
    SortOptions options = sort_options(input, output, kw);
    const SortReport report = run_sort(
        [&](const SortHooks& hooks) {
            SortOptions hooked = options;
            hooked.progress = hooks.progress;
            hooked.notice = hooks.notice;
            return gpusort::sort_file(hooked);
        },
        kw["progress"], kw["notice"]);
    return from_json(stats_json(options, report));
}

py::object plan_file(const py::object& input, const py::object& output, const py::kwargs& given) {
    const Keywords kw("plan_file", given, kPlanKeywords);
    SortOptions options = sort_options(input, output, kw);
    // The plan is quick (it opens INPUT and looks at the folders), but not run under the GIL:
    // its notices are handed over once it is made.
    std::vector<std::string> notices;
    options.notice = [&](const std::string& text) { notices.push_back(text); };
    SortPlan plan;
    {
        py::gil_scoped_release release;
        plan = gpusort::plan_file(options);
    }
    if (py::object notice = kw["notice"]; !notice.is_none())
        for (const std::string& text : notices) notice(text);
    return from_json(plan_json(plan));
}

py::object gather_file(const py::object& index, const py::object& input, const py::object& output,
                       const py::kwargs& given) {
    const Keywords kw("gather_file", given, kGatherKeywords);
    SortOptions options;
    const std::string index_path = path_arg(index, "index");
    options.input = path_arg(input, "input");
    options.output = path_arg(output, "output");
    read_index_type(kw, options);
    read_budgets(kw, options);
    read_files(kw, options);
    const SortReport report = run_sort(
        [&](const SortHooks& hooks) {
            SortOptions hooked = options;
            hooked.progress = hooks.progress;
            hooked.notice = hooks.notice;
            return gpusort::gather_file(index_path, hooked);
        },
        kw["progress"], kw["notice"]);
    return from_json(stats_json(options, report));
}

}  // namespace

void bind_files(py::module_& m) {
    m.def("sort_file", &sort_file, py::arg("input"), py::arg("output") = py::none(), R"doc(
Sorts the file `input` of fixed-size keys or records into `output`, as gpusort-file does.

The keyword arguments are gpusort-file's options, with Python names (--record-size is
record_size=): type="u64", key=["8:u32", "0:u64:desc"], record_size=, format="gensort",
descending=, unique=, values=[(V, OUT) or (V, OUT, width)], index_out=, index_type="auto"
("u32", "u64"), memory= (bytes, or a size such as "8G"), threads=, tmp_dir=, spill_io=,
input_io=, output_io= ("auto", "buffered", "direct"), backend="auto" ("gpu", "cpu"), device=,
device_memory=, sync=, input_compression=, output_compression=, compression_level=, verify=.
`output` may be None where values or index_out are given (the sorted keys are then not written).

progress=callable(phase: str, done: int, total: int) is called about 5 times a second while
the sort runs (total 0 where unknown) and once at its end; notice=callable(str) receives
notices that are not errors. Both are called from the calling thread; the sort itself runs with
the GIL released. Ctrl-C (KeyboardInterrupt), or an exception raised by a callback, stops the
sort and is raised once it has stopped, leaving no output and no temp file.

Returns the report as a dict: the fields of gpusort-file --stats.
Raises IoError, SortError or GpuError (all gpusort.Error, a RuntimeError) with a one-line
message naming the file and the cause, ValueError for a bad option, TypeError for an unknown
keyword; on failure no output is left and an existing output is unchanged.)doc");

    m.def("plan_file", &plan_file, py::arg("input"), py::arg("output") = py::none(), R"doc(
The plan of sort_file(input, output, **options) without sorting: the runs, merge passes,
memory, disk and device it would take, as a dict (the "plan" of gpusort-file --stats).

Takes sort_file()'s keyword arguments but progress=. `input` is opened for reading; `output`
is neither opened nor created. Raises as sort_file() does.)doc");

    m.def("gather_file", &gather_file, py::arg("index"), py::arg("input"), py::arg("output"), R"doc(
Applies a permutation that sort_file(..., index_out=index) wrote to another column: record i of
`output` is record index[i] of `input`, whose records are its size divided by the entries of
`index` (gpusort-file --gather INDEX INPUT OUTPUT).

Keyword arguments: index_type="auto" ("u32", "u64": how the entries are stored; auto reads
u32), and sort_file()'s memory=, threads=, tmp_dir=, spill_io=, input_io=, output_io=, backend=,
device=, device_memory=, sync=, progress= and notice=. Returns the report as a dict, as
sort_file() does, and raises as it does (SortError where `index` is not a permutation).)doc");
}

}  // namespace gpusort::python
