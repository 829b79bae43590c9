// The prefetch thread of one PE (docs/design.md section 6.7): runs the prepare stage of the
// batches the PE asked for, one at a time and in the order asked, while the PE thread computes
// earlier ones. Internal to the trainer (trainer.cpp); not part of the public interface.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include "pipeline/step.hpp"

namespace coopgnn {

/// One worker thread that runs submitted prepare tasks in submission order (never two at once,
/// so every collective they issue on the prefetch communicator is in the same order on every PE,
/// and a feature cache sees its batches in batch order) and hands their results back in that
/// order. Owned and driven by one PE thread; not thread-safe otherwise.
class batch_prefetcher {
 public:
  /// @param name      the worker's NVTX thread name and log prefix ("PE 2 prefetch")
  /// @param on_error  run on the worker with the message of a task that threw, before the
  ///                  exception is handed to next(): the trainer aborts the prefetch
  ///                  communicators' group with it, so that the peers' prefetch threads stop
  ///                  instead of waiting in a collective
  batch_prefetcher(std::string name, std::function<void(const std::string&)> on_error);
  /// Runs the tasks already submitted (the peers' prefetch threads run the same ones, so none of
  /// them is left in a collective), then joins the worker. Unwinding from an exception, it first
  /// calls on_error("PE thread stopped"), so the tasks left fail fast instead of waiting.
  ~batch_prefetcher();
  batch_prefetcher(const batch_prefetcher&) = delete;
  batch_prefetcher& operator=(const batch_prefetcher&) = delete;
  batch_prefetcher(batch_prefetcher&&) = delete;
  batch_prefetcher& operator=(batch_prefetcher&&) = delete;

  /// Queues `task` behind those submitted before it. Does not wait.
  void submit(std::function<prepared_batch()> task);
  /// The result of the oldest submitted task whose result was not taken yet, waiting for it.
  /// @throws logic_error when none is pending; whatever that task threw.
  prepared_batch next();
  /// Tasks submitted whose results were not taken yet.
  [[nodiscard]] std::size_t pending() const { return results_.size(); }

 private:
  void run(const std::string& name);
  std::function<void(const std::string&)> on_error_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<prepared_batch()>> queue_;  // not started (under mu_)
  bool closing_ = false;                                    // under mu_
  std::deque<std::future<prepared_batch>> results_;         // the PE thread's only
  std::thread worker_;  // last: started once the members above exist
};

}  // namespace coopgnn
