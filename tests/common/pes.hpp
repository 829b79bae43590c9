// Running a test body on P PE threads.
#pragma once

#include <exception>
#include <thread>
#include <vector>

namespace coopgnn::test {

/// Runs body(p) for p in [0, P) on P threads, joins them all, then rethrows the first exception
/// (by PE order) that a body threw. Bodies that talk through a communicator should abort it on
/// failure so that their peers do not wait for the collective's timeout.
template <class Body>
void on_pes(int P, Body body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(P));
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < P; ++p) {
      threads.emplace_back([&, p] {
        try {
          body(p);
        } catch (...) {
          errors[static_cast<std::size_t>(p)] = std::current_exception();
        }
      });
    }
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace coopgnn::test
