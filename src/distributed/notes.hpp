// Notes: the notices of a rank's sort (a GPU that cannot be used, --device-memory unused on the
// CPU, fewer threads than asked for), said once for the job rather than once per rank. Rank 0 says
// its own as they come; every rank keeps its own, and at the end of the job the notes of the other
// ranks that rank 0 did not say are said once each, naming the ranks that had them
// (unsaid_notes). Needs no MPI (tested in tests/distributed_step_test.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace gpusort::distributed {

class Notes {
public:
    // From any thread: the engine says notes from its own. A note is one line.
    void add(std::string text) {
        std::replace(text.begin(), text.end(), '\n', ' ');
        const std::lock_guard<std::mutex> lock(mutex_);
        if (std::find(kept_.begin(), kept_.end(), text) == kept_.end()) kept_.push_back(std::move(text));
    }
    std::vector<std::string> kept() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return kept_;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> kept_;
};

// Ranks in increasing order as runs: "2", "1-3", "0, 2, 5-7".
inline std::string rank_list(const std::vector<int>& ranks) {
    std::ostringstream text;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        text << (i > 0 ? ", " : "") << ranks[i];
        if (j > i) text << '-' << ranks[j];
        i = j + 1;
    }
    return text.str();
}

// The lines that say the notes of ranks 1 and on (notes_of_rank[r]: rank r's) that rank 0 did not
// say, once each, in the order in which the lowest rank that had each kept them:
// "gpusort-mpi: rank 2: note: TEXT", "gpusort-mpi: ranks 1-3: note: TEXT".
inline std::vector<std::string> unsaid_notes(const std::vector<std::vector<std::string>>& notes_of_rank) {
    std::vector<std::pair<std::string, std::vector<int>>> notes;  // each note, and the ranks that had it
    for (std::size_t rank = 1; rank < notes_of_rank.size(); ++rank)
        for (const std::string& text : notes_of_rank[rank]) {
            if (std::find(notes_of_rank[0].begin(), notes_of_rank[0].end(), text) != notes_of_rank[0].end()) continue;
            auto note = std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == text; });
            if (note == notes.end()) note = notes.insert(notes.end(), {text, {}});
            if (note->second.empty() || note->second.back() != static_cast<int>(rank)) note->second.push_back(static_cast<int>(rank));
        }
    std::vector<std::string> lines;
    for (const auto& [text, ranks] : notes) {
        std::ostringstream line;
        line << "gpusort-mpi: rank" << (ranks.size() > 1 ? "s " : " ") << rank_list(ranks) << ": note: " << text;
        lines.push_back(line.str());
    }
    return lines;
}

}  // namespace gpusort::distributed
