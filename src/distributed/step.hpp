// Step: runs the work of one step of a rank unless an earlier step failed, and keeps the failure
// (its message) for Communicator::agree(), which ends the step on every rank with it. Running out
// of memory says so and what to change, as gpusort-file does. Needs no MPI.
#pragma once

#include <exception>
#include <functional>
#include <new>
#include <string>

namespace gpusort::distributed {

class Step {
public:
    void operator()(const std::function<void()>& work) {
        if (!failure_.empty()) return;
        try {
            work();
        } catch (const std::bad_alloc&) {
            failure_ = "out of memory (try a smaller --memory)";
        } catch (const std::exception& e) {
            failure_ = e.what();
            if (failure_.empty()) failure_ = "unknown error";
        }
    }
    const std::string& failure() const { return failure_; }

private:
    std::string failure_;
};

}  // namespace gpusort::distributed
