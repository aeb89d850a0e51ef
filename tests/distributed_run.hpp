// Running gpusort-mpi in the distributed suite (distributed_test.cpp, distributed_exchange_test.cpp):
// under mpirun on ranks of this host, on the CPU backend by default, and what its output is checked
// against: gpusort-file's output on the same input, itself checked against an in-test stable sort
// of the input's records (read before the sort) by the reference order (reference_records.hpp).
#pragma once

#include "cli_run.hpp"
#include "reference_records.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace gpusort::testing {


// Open MPI refuses to run as root unless told to (containers, CI machines).
inline void allow_mpirun() {
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    // Containers may forbid reading another process's memory (CMA): copy through shared memory.
    ::setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
}

// gpusort-mpi on `ranks` ranks: on the CPU backend with one thread per rank (the CI machine has 2
// cores for up to 4 ranks), or on the GPU backend with 4, each rank on GPU rank mod the GPUs of the
// host. --threads also keeps the note on CPUs left idle by the launcher's binding away. `launcher`:
// options of mpirun's own (--mca ...).
inline Result mpi_sort(int ranks, const std::vector<std::string>& args, const std::string& backend = "cpu",
                       const std::vector<std::string>& launcher = {}) {
    std::vector<std::string> all = {"--oversubscribe"};
    all.insert(all.end(), launcher.begin(), launcher.end());
    all.insert(all.end(), {"-n", std::to_string(ranks), GPUSORT_MPI_BIN, "--backend", backend});
    all.insert(all.end(), {"--threads", backend == "cpu" ? "1" : "4"});
    all.insert(all.end(), args.begin(), args.end());
    return run(GPUSORT_MPIEXEC, all, allow_mpirun);
}

// gpusort-file on the CPU; what it said goes to the test's log where it failed (the callers check
// its status alone).
inline Result file_sort(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--backend", "cpu", "--threads", "1"};
    all.insert(all.end(), args.begin(), args.end());
    Result r = run(GPUSORT_FILE_BIN, all);
    if (r.status() != 0) std::cerr << "gpusort-file exited with " << r.status() << ":\n" << r.err;
    return r;
}

inline void gen(const std::vector<std::string>& args) {
    const Result r = run(GPUSORT_GEN_BIN, args);
    ASSERT_EQ(r.status(), 0) << r.err;
}

// What a sort of the records `input` (a file's bytes, read before the sort) must write under the
// key options and --unique of `key`: their stable sort by the reference order, and with --unique
// the first record of each group of equal keys (reference_records.hpp).
inline std::string reference_of(const std::string& input, const std::vector<std::string>& key) {
    const ReferenceKey reference = reference_key_of_options(key);
    return reference_record_sort_text(input, reference.spec, reference.unique);
}

// gpusort-file on the CPU from `input` to `output` under the key options (and --unique) `key`: its
// output compared with the reference of the input read before the sort, and the input with what
// was read. What the tests compare the ranks' outputs with is so checked itself.
inline Result file_sort_checked(const std::vector<std::string>& key, const std::string& input, const std::string& output) {
    const std::string before = read_text(input);
    const std::string expected = reference_of(before, key);
    std::vector<std::string> args = key;
    args.insert(args.end(), {input, output});
    Result r = file_sort(args);
    std::string options;
    for (const std::string& option : key) options += " " + option;
    if (r.status() == 0) {
        EXPECT_TRUE(read_text(output) == expected) << "gpusort-file" << options << ": not the reference's bytes";
    }
    EXPECT_TRUE(read_text(input) == before) << "gpusort-file" << options << ": the input changed";
    return r;
}

// Sorts `input` with gpusort-file on the CPU and with gpusort-mpi on 1 to `most_ranks` ranks (on
// `backend`) under `options`, and expects of each the bytes of the reference: the input's records,
// read before the sorts, stably sorted under the key options and --unique of `key` by the
// reference order (with --unique the first of each group of equal keys); the input must stay as
// it was. gpusort-check (given `key`) confirms gpusort-file's order too.
inline void expect_same_as_one_process(const ScratchDir& dir, const std::string& input, const std::vector<std::string>& options,
                                const std::vector<std::string>& key, const std::string& what,
                                const std::string& backend = "cpu", int most_ranks = 4) {
    const std::string before = read_text(input);
    const std::string expected = reference_of(before, key);
    std::vector<std::string> args = options;
    args.insert(args.end(), {input, dir / "one"});
    Result r = file_sort(args);
    ASSERT_EQ(r.status(), 0) << what << ": " << r.err;
    EXPECT_TRUE(read_text(dir / "one") == expected) << what << ": gpusort-file: not the reference's bytes";
    // gpusort-check: in order, and (but for --unique) the input's records.
    std::vector<std::string> check_args;
    bool unique = false;
    for (const std::string& arg : key) {
        if (arg == "--unique")
            unique = true;
        else
            check_args.push_back(arg);
    }
    if (!unique) check_args.insert(check_args.end(), {"--input", input});
    check_args.push_back(dir / "one");
    r = run(GPUSORT_CHECK_BIN, check_args);
    EXPECT_EQ(r.status(), 0) << what << ": " << r.out << r.err;
    for (int ranks = 1; ranks <= most_ranks; ++ranks) {
        std::vector<std::string> mpi_args = options;
        mpi_args.insert(mpi_args.end(), {input, dir / "many"});
        r = mpi_sort(ranks, mpi_args, backend);
        ASSERT_EQ(r.status(), 0) << what << " on " << ranks << " ranks: " << r.err;
        EXPECT_EQ(r.err, "") << what << " on " << ranks << " ranks";
        EXPECT_TRUE(read_text(dir / "many") == expected) << what << " on " << ranks << " ranks: not the reference's bytes";
        ::unlink((dir / "many").c_str());
    }
    EXPECT_TRUE(read_text(input) == before) << what << ": the input changed";
    ::unlink((dir / "one").c_str());
}

// Lines of stderr that gpusort-mpi wrote (not mpirun).
inline int count_lines_from_us(const std::string& err) {
    int lines = 0;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines += line.rfind("gpusort-mpi: ", 0) == 0 ? 1 : 0;
    return lines;
}

inline boost::property_tree::ptree stats_of(const std::string& json) {
    std::istringstream in(json);
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(in, tree);
    return tree;
}

}  // namespace gpusort::testing
