// LoserTree: a tournament tree over k sources that yields the smallest head key in O(log k)
// comparisons per step. Ties go to the lower source index, so merging runs given in input order
// is stable. Nodes hold (key, source) entries, so a replay touches no other memory; an exhausted
// source holds a sentinel (the largest key, source k + i) that loses to every real entry.
// Works for any k >= 1 (heap layout: internal nodes 1..k-1, leaves k..2k-1).
#pragma once

#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace gpusort {

template <class T>
class LoserTree {
public:
    explicit LoserTree(std::size_t k) : k_(k), leaves_(k), nodes_(k) {}

    // Before build(): the first key of each source, or that it has none.
    void set_head(std::size_t source, const T& key) { leaves_[source] = {key, source}; }
    void set_done(std::size_t source) { leaves_[source] = sentinel(source); }

    void build() {
        std::vector<Entry> winners(2 * k_);
        for (std::size_t i = 0; i < k_; ++i) winners[k_ + i] = leaves_[i];
        for (std::size_t node = k_ - 1; node >= 1; --node) {
            const Entry& a = winners[2 * node];
            const Entry& b = winners[2 * node + 1];
            const bool a_wins = beats(a, b);
            winners[node] = a_wins ? a : b;
            nodes_[node] = a_wins ? b : a;
        }
        nodes_[0] = k_ == 1 ? leaves_[0] : winners[1];
    }

    bool all_done() const { return nodes_[0].source >= k_; }
    std::size_t winner() const { return nodes_[0].source; }
    const T& winner_key() const { return nodes_[0].key; }

    // The winner's source moves on to `key`, or has no more keys.
    void replace_winner(const T& key) { replay({key, nodes_[0].source}); }
    void winner_done() { replay(sentinel(nodes_[0].source)); }

private:
    struct Entry {
        T key{};
        std::size_t source = 0;
    };
    Entry sentinel(std::size_t source) const { return {std::numeric_limits<T>::max(), k_ + source}; }
    static bool beats(const Entry& a, const Entry& b) {
        if (a.key < b.key) return true;
        if (b.key < a.key) return false;
        return a.source < b.source;
    }
    void replay(Entry entry) {
        const std::size_t leaf = entry.source < k_ ? entry.source : entry.source - k_;
        for (std::size_t node = (leaf + k_) / 2; node >= 1; node /= 2)
            if (beats(nodes_[node], entry)) std::swap(nodes_[node], entry);
        nodes_[0] = entry;
    }

    std::size_t k_;
    std::vector<Entry> leaves_;
    std::vector<Entry> nodes_;  // nodes_[0]: overall winner; nodes_[1..k-1]: losers
};

}  // namespace gpusort
