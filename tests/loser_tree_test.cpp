// LoserTree: k-way merge of sorted sources equals a stable sort by key; ties go to the lower source.
#include "src/merge/loser_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using gpusort::LoserTree;

namespace {
struct Tagged {
    std::uint32_t key = 0;  // up to 19 here, so the largest key never occurs
    std::uint32_t source = 0;
    std::uint32_t index = 0;
    bool operator<(const Tagged& other) const { return key < other.key; }  // key only
};
}  // namespace

template <>
struct std::numeric_limits<Tagged> {
    static Tagged max() { return {std::numeric_limits<std::uint32_t>::max(), 0, 0}; }
};

TEST(LoserTree, MergesStablyForManyFanIns) {
    std::mt19937 rng(3);
    for (std::size_t k : {1u, 2u, 3u, 5u, 8u, 13u, 64u}) {
        std::vector<std::vector<Tagged>> sources(k);
        std::vector<Tagged> all;
        for (std::size_t s = 0; s < k; ++s) {
            const std::size_t n = rng() % 50;  // some sources empty
            for (std::size_t i = 0; i < n; ++i) sources[s].push_back({static_cast<std::uint32_t>(rng() % 20), static_cast<std::uint32_t>(s), 0});
            std::sort(sources[s].begin(), sources[s].end());
            for (std::size_t i = 0; i < n; ++i) sources[s][i].index = static_cast<std::uint32_t>(i);
            all.insert(all.end(), sources[s].begin(), sources[s].end());
        }
        // Reference: by key, then source, then position.
        std::sort(all.begin(), all.end(), [](const Tagged& a, const Tagged& b) {
            return std::tie(a.key, a.source, a.index) < std::tie(b.key, b.source, b.index);
        });

        LoserTree<Tagged> tree(k);
        std::vector<std::size_t> pos(k, 0);
        for (std::size_t s = 0; s < k; ++s) {
            if (sources[s].empty()) tree.set_done(s);
            else tree.set_head(s, sources[s][0]);
        }
        tree.build();
        std::vector<Tagged> merged;
        while (!tree.all_done()) {
            const std::size_t w = tree.winner();
            merged.push_back(tree.winner_key());
            if (++pos[w] < sources[w].size()) tree.replace_winner(sources[w][pos[w]]);
            else tree.winner_done();
        }
        ASSERT_EQ(merged.size(), all.size()) << "k=" << k;
        for (std::size_t i = 0; i < all.size(); ++i) {
            ASSERT_EQ(merged[i].key, all[i].key) << "k=" << k << " i=" << i;
            ASSERT_EQ(merged[i].source, all[i].source) << "k=" << k << " i=" << i;
            ASSERT_EQ(merged[i].index, all[i].index) << "k=" << k << " i=" << i;
        }
    }
}

TEST(LoserTree, RealKeysEqualToTheSentinelAreNotLost) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    std::vector<std::vector<std::uint64_t>> sources = {{5, kMax}, {}, {kMax, kMax}, {0}};
    LoserTree<std::uint64_t> tree(sources.size());
    std::vector<std::size_t> pos(sources.size(), 0);
    for (std::size_t s = 0; s < sources.size(); ++s) {
        if (sources[s].empty()) tree.set_done(s);
        else tree.set_head(s, sources[s][0]);
    }
    tree.build();
    std::vector<std::uint64_t> merged;
    std::vector<std::size_t> from;
    while (!tree.all_done()) {
        const std::size_t w = tree.winner();
        merged.push_back(tree.winner_key());
        from.push_back(w);
        if (++pos[w] < sources[w].size()) tree.replace_winner(sources[w][pos[w]]);
        else tree.winner_done();
    }
    EXPECT_EQ(merged, (std::vector<std::uint64_t>{0, 5, kMax, kMax, kMax}));
    EXPECT_EQ(from, (std::vector<std::size_t>{3, 0, 0, 2, 2}));
}
