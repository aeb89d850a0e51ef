// The loser tree of the merges of sorted lines: over the current lines of k readers, the winner
// is the least line by compare_lines, ties to the reader that comes first (so a merge is stable);
// readers at their end lose to every line.
#pragma once

#include "src/text/line_input.hpp"
#include "src/text/line_order.hpp"
#include "src/text/text_keys.hpp"

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusort {

class LineTournament {
public:
    LineTournament(std::vector<LineReader>& readers, const TextKeys& keys)
        : readers_(&readers), keys_(&keys), losers_(readers.size()), ended_(readers.size()) {
        const std::size_t k = readers.size();
        for (std::size_t i = 0; i < k; ++i) ended_[i] = !readers[i].next();
        std::vector<std::size_t> winners(2 * k);
        for (std::size_t i = 0; i < k; ++i) winners[k + i] = i;
        for (std::size_t node = k - 1; node >= 1; --node) {
            const std::size_t a = winners[2 * node], b = winners[2 * node + 1];
            const bool a_wins = beats(a, b);
            winners[node] = a_wins ? a : b;
            losers_[node] = a_wins ? b : a;
        }
        winner_ = k == 1 ? 0 : winners[1];
    }

    bool done() const { return ended_[winner_] != 0; }
    std::string_view line() const { return (*readers_)[winner_].line(); }

    // The winner moves on to its next line, which plays its way up.
    void advance() {
        std::size_t source = winner_;
        ended_[source] = !(*readers_)[source].next();
        for (std::size_t node = (source + readers_->size()) / 2; node >= 1; node /= 2)
            if (beats(losers_[node], source)) std::swap(losers_[node], source);
        winner_ = source;
    }

private:
    bool beats(std::size_t a, std::size_t b) const {
        if (ended_[a] || ended_[b]) return ended_[b] && (!ended_[a] || a < b);
        const int order = compare_lines((*readers_)[a].line(), (*readers_)[b].line(), *keys_);
        return order != 0 ? order < 0 : a < b;
    }

    std::vector<LineReader>* readers_;
    const TextKeys* keys_;
    std::vector<std::size_t> losers_;  // losers_[1..k-1]: the loser at each inner node
    std::vector<char> ended_;
    std::size_t winner_ = 0;
};

// Every line of the readers, in order, given to emit(line).
template <class Emit>
void merge_lines(std::vector<LineReader>& readers, const TextKeys& keys, Emit&& emit) {
    if (readers.empty()) return;
    LineTournament tournament(readers, keys);
    for (; !tournament.done(); tournament.advance()) emit(tournament.line());
}

}  // namespace gpusort
