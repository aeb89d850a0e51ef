// LoserTree: k-way merge of sorted sources equals a stable sort by key; ties go to the lower source.
#include "src/loser_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using gpusort::LoserTree;

namespace {
struct Tagged {
    std::uint32_t key = 0;
    std::uint32_t source = 0;
    std::uint32_t index = 0;
    bool operator<(const Tagged& other) const { return key < other.key; }  // key only
};
}  // namespace

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
            merged.push_back(tree.head(w));
            if (++pos[w] < sources[w].size()) tree.set_head(w, sources[w][pos[w]]);
            else tree.set_done(w);
            tree.replay();
        }
        ASSERT_EQ(merged.size(), all.size()) << "k=" << k;
        for (std::size_t i = 0; i < all.size(); ++i) {
            ASSERT_EQ(merged[i].key, all[i].key) << "k=" << k << " i=" << i;
            ASSERT_EQ(merged[i].source, all[i].source) << "k=" << k << " i=" << i;
            ASSERT_EQ(merged[i].index, all[i].index) << "k=" << k << " i=" << i;
        }
    }
}
