// Independent minibatching (docs/design.md section 6.1): every PE takes a slice of the batch,
// samples and computes alone; nothing crosses PEs but the weight gradients and, with learnable
// input rows, every PE's (row id, gradient) pairs.
#include "runtime/core/error.hpp"
#include "pipeline/step.hpp"

namespace coopgnn {

namespace {

class independent_protocol final : public minibatch_protocol {
 public:
  std::vector<vid_t> share(std::span<const vid_t> items, int rank, int pes,
                           const std::function<vid_t(vid_t)>& /*vertex_of*/) const override {
    auto const B = static_cast<std::int64_t>(items.size());
    auto const lo = B * rank / pes, hi = B * (rank + 1) / pes;
    return {items.begin() + lo, items.begin() + hi};
  }
  std::vector<vid_t> request(step_context& /*sc*/, std::span<const vid_t> ids,
                             exchange_route& /*route*/) const override {
    return {ids.begin(), ids.end()};
  }
  minibatch sample(const exec_context& sctx, communicator& /*comm*/, const csc_view& g,
                   buffer_view<const std::uint16_t> /*owner_of*/, buffer_view<const vid_t> seeds,
                   const batch_key& key) const override {
    return sample_independent(sctx, g, seeds, key);
  }
  std::vector<exchange_route> routes(const exec_context& /*ctx*/,
                                     minibatch& /*mb*/) const override {
    return {};
  }
  tensor<float> pull(step_context& /*sc*/, const prepared_batch& /*b*/, int /*layer*/,
                     const char* /*direction*/, tensor<float>&& rows) const override {
    return std::move(rows);
  }
  tensor<float> push(step_context& /*sc*/, const prepared_batch& /*b*/, int /*layer*/,
                     const char* /*direction*/, tensor<float>&& grads) const override {
    return std::move(grads);
  }
  embedding_gradients route_embedding_gradients(step_context& sc, const prepared_batch& b,
                                                tensor<float>&& input_grads) const override {
    embedding_gradients out;
    if (!sc.learns_inputs()) return out;
    // Every PE's (input id, gradient row) pairs on every PE, so the replicas apply the same list.
    auto const layer = static_cast<int>(b.blocks.size()) - 1;
    auto [ids, grads] = sc.exchange.allgather(b.mb.input_nodes.view(), input_grads.view(), layer,
                                              "embedding_allgather");
    out.gathered_ids = std::move(ids);
    out.gathered = true;
    out.grads = std::move(grads);
    return out;
  }
  matrix<float> assemble(std::size_t /*pes*/,
                         const std::function<matrix<float>(std::size_t)>& get) const override {
    return get(0);  // the replicas are equal
  }
};

}  // namespace

std::unique_ptr<minibatch_protocol> make_independent_protocol() {
  return std::make_unique<independent_protocol>();
}

}  // namespace coopgnn
