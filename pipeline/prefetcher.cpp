#include "pipeline/prefetcher.hpp"

#include <exception>
#include <utility>

#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"
#include "runtime/core/nvtx.hpp"

namespace coopgnn {

batch_prefetcher::batch_prefetcher(std::string name,
                                   std::function<void(const std::string&)> on_error)
    : on_error_(std::move(on_error)) {
  worker_ = std::thread([this, n = std::move(name)] { run(n); });
}

batch_prefetcher::~batch_prefetcher() {
  if (std::uncaught_exceptions() > 0 && on_error_) on_error_("PE thread stopped");
  {
    std::lock_guard lk(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void batch_prefetcher::submit(std::function<prepared_batch()> task) {
  std::packaged_task<prepared_batch()> t([this, f = std::move(task)] {
    try {
      return f();
    } catch (const std::exception& e) {
      if (on_error_) on_error_(e.what());
      throw;
    }
  });
  results_.push_back(t.get_future());
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(t));
  }
  cv_.notify_all();
}

prepared_batch batch_prefetcher::next() {
  COOPGNN_EXPECTS(!results_.empty(), "batch_prefetcher::next: no batch was submitted");
  std::future<prepared_batch> f = std::move(results_.front());
  results_.pop_front();
  return f.get();
}

void batch_prefetcher::run(const std::string& name) {
  nvtx::name_thread(name);
  log::set_prefix(name);
  for (;;) {
    std::packaged_task<prepared_batch()> t;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing, and every submitted task has run
      t = std::move(queue_.front());
      queue_.pop_front();
    }
    t();  // its result or exception goes to its future
  }
}

}  // namespace coopgnn
