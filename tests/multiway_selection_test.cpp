// multiway_select against a brute-force reference (merge all elements by (key, sequence) and
// count per sequence), on arrays in memory and on runs in files searched through samples.
#include "io/spill_file.hpp"
#include "src/merge/multiway_selection.hpp"
#include "src/runs/sorted_run.hpp"

#include <gtest/gtest.h>

#include <random>
#include <tuple>

using namespace gpusort;

namespace {

using Seqs = std::vector<std::vector<std::uint32_t>>;

std::vector<std::uint64_t> brute_force_split(const Seqs& seqs, std::uint64_t rank) {
    std::vector<std::tuple<std::uint32_t, std::size_t, std::size_t>> all;
    for (std::size_t i = 0; i < seqs.size(); ++i)
        for (std::size_t p = 0; p < seqs[i].size(); ++p) all.emplace_back(seqs[i][p], i, p);
    std::sort(all.begin(), all.end());
    std::vector<std::uint64_t> split(seqs.size(), 0);
    for (std::uint64_t r = 0; r < rank; ++r) ++split[std::get<1>(all[r])];
    return split;
}

Seqs random_seqs(std::mt19937& rng, std::size_t k, std::size_t max_len, std::uint32_t value_range) {
    Seqs seqs(k);
    for (auto& seq : seqs) {
        seq.resize(rng() % (max_len + 1));
        for (auto& v : seq) v = rng() % value_range;
        std::sort(seq.begin(), seq.end());
    }
    return seqs;
}

std::uint64_t total_size(const Seqs& seqs) {
    std::uint64_t total = 0;
    for (const auto& s : seqs) total += s.size();
    return total;
}

void expect_all_ranks_match(const Seqs& seqs) {
    std::vector<SpanSequence<std::uint32_t>> views;
    for (const auto& s : seqs) views.emplace_back(std::span<const std::uint32_t>(s));
    const std::uint64_t total = total_size(seqs);
    for (std::uint64_t rank = 0; rank <= total; ++rank)
        ASSERT_EQ(multiway_select<SpanSequence<std::uint32_t>>(views, rank), brute_force_split(seqs, rank))
            << "rank " << rank;
}

}  // namespace

TEST(MultiwaySelection, RandomSequencesEveryRank) {
    std::mt19937 rng(1);
    for (int round = 0; round < 60; ++round) {
        const std::uint32_t range = round % 3 == 0 ? 4 : 1000;  // many ties, or few
        expect_all_ranks_match(random_seqs(rng, 1 + round % 7, 40, range));
    }
}

TEST(MultiwaySelection, SkewedRunsAllOfOneBelowAllOfAnother) {
    Seqs seqs = {{100, 101, 102, 103, 104, 105}, {1, 2, 3}, {}, {50, 50, 50, 50}, {200}};
    expect_all_ranks_match(seqs);
    Seqs reversed_blocks;
    for (int b = 5; b >= 0; --b) {
        std::vector<std::uint32_t> seq;
        for (int i = 0; i < 20; ++i) seq.push_back(static_cast<std::uint32_t>(b * 100 + i));
        reversed_blocks.push_back(seq);
    }
    expect_all_ranks_match(reversed_blocks);
}

TEST(MultiwaySelection, AllEqualKeysSplitByRunOrder) {
    Seqs seqs(4, std::vector<std::uint32_t>(10, 7));
    std::vector<SpanSequence<std::uint32_t>> views;
    for (const auto& s : seqs) views.emplace_back(std::span<const std::uint32_t>(s));
    EXPECT_EQ(multiway_select<SpanSequence<std::uint32_t>>(views, 25), (std::vector<std::uint64_t>{10, 10, 5, 0}));
    EXPECT_THROW(multiway_select<SpanSequence<std::uint32_t>>(views, 41), std::out_of_range);
}

TEST(MultiwaySelection, RunsInFilesThroughSamples) {
    std::mt19937 rng(5);
    for (std::uint64_t stride : {1u, 3u, 16u, 64u}) {
        Seqs seqs = random_seqs(rng, 5, 300, stride == 3 ? 5 : 100000);
        auto file = std::make_shared<io::SpillFile>(".", 2, 0);
        std::vector<SortedRun<std::uint32_t>> runs;
        std::uint64_t first = 0;
        for (const auto& seq : seqs) {
            file->write_at(first * 4, std::as_bytes(std::span<const std::uint32_t>(seq)));
            auto run = SortedRun<std::uint32_t>::in_file(file, first, seq.size(), stride);
            take_samples<std::uint32_t>(seq, 0, stride, run.samples);
            runs.push_back(run);
            first += seq.size();
        }
        std::vector<RunSequence<std::uint32_t>> views;
        for (const auto& run : runs) views.emplace_back(run);
        const std::uint64_t total = total_size(seqs);
        for (std::uint64_t rank = 0; rank <= total; rank += 1 + rank % 13)
            ASSERT_EQ(multiway_select<RunSequence<std::uint32_t>>(views, rank), brute_force_split(seqs, rank))
                << "stride " << stride << " rank " << rank;
    }
}
