// A rank's steps (src/distributed/step.hpp): the first failure is kept and stops the work of later
// steps; running out of memory is said in words, with what to change.
#include "src/distributed/step.hpp"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

namespace gpusort::distributed {
namespace {

TEST(DistributedStep, KeepsTheFirstFailureAndSkipsTheStepsAfterIt) {
    Step step;
    int ran = 0;
    step([&] { ++ran; });
    EXPECT_EQ(step.failure(), "");
    step([&] { throw std::runtime_error("cannot read 'in': Input/output error"); });
    step([&] { ++ran; });
    step([&] { throw std::runtime_error("a later failure"); });
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(step.failure(), "cannot read 'in': Input/output error");
}

TEST(DistributedStep, OutOfMemoryIsSaidInWordsWithWhatToChange) {
    Step step;
    step([] { throw std::bad_alloc(); });
    EXPECT_EQ(step.failure(), "out of memory (try a smaller --memory)");
}

TEST(DistributedStep, AFailureWithoutWordsIsStillAFailure) {
    struct Silent : std::exception {
        const char* what() const noexcept override { return ""; }
    };
    Step step;
    step([] { throw Silent(); });
    EXPECT_EQ(step.failure(), "unknown error");
}

}  // namespace
}  // namespace gpusort::distributed
