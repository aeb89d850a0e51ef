// LoserTree: a tournament tree over k sources that yields the source holding the smallest
// head key in O(log k) comparisons per step. Ties go to the lower source index, so merging
// runs given in input order is stable. Works for any k >= 1 (heap layout: internal nodes
// 1..k-1, leaves k..2k-1).
#pragma once

#include <cstddef>
#include <vector>

namespace gpusort {

template <class T>
class LoserTree {
public:
    // heads[i] is the current key of source i; exhausted sources are marked with set_done().
    explicit LoserTree(std::size_t k) : k_(k), heads_(k), done_(k, 0), nodes_(k) {}

    void set_head(std::size_t source, const T& key) { heads_[source] = key; }
    void set_done(std::size_t source) { done_[source] = 1; }
    const T& head(std::size_t source) const { return heads_[source]; }

    // Builds the tree once every source has a head or is done.
    void build() {
        if (k_ == 1) {
            nodes_[0] = 0;
            return;
        }
        std::vector<std::size_t> winners(2 * k_);
        for (std::size_t i = 0; i < k_; ++i) winners[k_ + i] = i;
        for (std::size_t node = k_ - 1; node >= 1; --node) {
            const std::size_t a = winners[2 * node], b = winners[2 * node + 1];
            if (beats(a, b)) {
                winners[node] = a;
                nodes_[node] = b;
            } else {
                winners[node] = b;
                nodes_[node] = a;
            }
        }
        nodes_[0] = winners[1];
    }

    // The source with the smallest head; all_done() tells whether any is left.
    std::size_t winner() const { return nodes_[0]; }
    bool all_done() const { return done_[nodes_[0]]; }

    // After the winner's head changed (or it ran dry), restores the tree along its path.
    void replay() {
        std::size_t winner = nodes_[0];
        for (std::size_t node = (winner + k_) / 2; node >= 1; node /= 2) {
            if (beats(nodes_[node], winner)) std::swap(nodes_[node], winner);
        }
        nodes_[0] = winner;
    }

private:
    bool beats(std::size_t a, std::size_t b) const {
        if (done_[a]) return false;
        if (done_[b]) return true;
        if (heads_[a] < heads_[b]) return true;
        if (heads_[b] < heads_[a]) return false;
        return a < b;
    }

    std::size_t k_;
    std::vector<T> heads_;
    std::vector<unsigned char> done_;  // not vector<bool>: read on every step
    std::vector<std::size_t> nodes_;  // nodes_[0]: overall winner; nodes_[1..k-1]: losers
};

}  // namespace gpusort
