// Cooperative minibatching (docs/design.md section 6.2; Algorithm 1 of Balin, LaSalle &
// Catalyurek, "Cooperative Minibatching in Graph Neural Networks", TMLR 2025): a PE takes the
// batch's items whose vertex it owns, samples with the other PEs, and every layer's rows go owner
// -> requester (pull) and their gradients back, summed (push), along the routes sampling built.
#include "runtime/core/error.hpp"
#include "pipeline/step.hpp"

namespace coopgnn {

namespace {

class cooperative_protocol final : public minibatch_protocol {
 public:
  explicit cooperative_protocol(const ownership& owners) : owners_(owners) {}

  std::vector<vid_t> share(std::span<const vid_t> items, int rank, int /*pes*/,
                           const std::function<vid_t(vid_t)>& vertex_of) const override {
    std::vector<vid_t> mine;
    for (vid_t i : items) {
      if (owners_.owner(vertex_of(i)) == rank) mine.push_back(i);
    }
    return mine;
  }
  std::vector<vid_t> request(step_context& sc, std::span<const vid_t> ids,
                             exchange_route& route) const override {
    // Host ids: they go to their owners over the host communicator, and the route is placed in
    // the PE's space for the row exchanges.
    owner_exchange x = sc.exchange.request_ids(sc.host_ctx, sc.host_comm, host_view(owners_.map()),
                                               host_view(ids), -1);
    std::vector<vid_t> owned = std::move(x.owned).release_host();
    route = make_route(sc.ctx, copy_plan(sc.ctx, x.plan), static_cast<std::int64_t>(owned.size()));
    return owned;
  }
  minibatch sample(const exec_context& sctx, communicator& comm, const csc_view& g,
                   buffer_view<const std::uint16_t> owner_of, buffer_view<const vid_t> seeds,
                   const batch_key& key) const override {
    return sample_cooperative(sctx, comm, g, owner_of, seeds, key);
  }
  std::vector<exchange_route> routes(const exec_context& ctx, minibatch& mb) const override {
    auto const L = mb.blocks.size();
    std::vector<exchange_route> out;
    for (std::size_t l = 0; l < L; ++l) {
      // The owner side of layer l: the next block's destinations, or the input nodes.
      std::int64_t const owner_rows =
          l + 1 < L ? mb.blocks[l + 1].num_dst : static_cast<std::int64_t>(mb.input_nodes.size());
      out.push_back(make_route(ctx, std::move(mb.plans[l]), owner_rows));
    }
    return out;
  }
  tensor<float> pull(step_context& sc, const prepared_batch& b, int layer, const char* direction,
                     tensor<float>&& rows) const override {
    return sc.exchange.pull(route(b, layer), std::move(rows), layer, direction);
  }
  tensor<float> push(step_context& sc, const prepared_batch& b, int layer, const char* direction,
                     tensor<float>&& grads) const override {
    return sc.exchange.push(route(b, layer), std::move(grads), layer, direction);
  }
  embedding_gradients route_embedding_gradients(step_context& sc, const prepared_batch& b,
                                                tensor<float>&& input_grads) const override {
    embedding_gradients out;
    if (!sc.learns_inputs()) return out;
    // The input rows' gradients go back to the PE that loaded them, which owns them: S^L_p is
    // owned by p, so the replicas update disjoint rows and the owners' rows are the table.
    auto const layer = static_cast<int>(b.blocks.size()) - 1;
    out.ids = b.mb.input_nodes.view();
    out.grads = push(sc, b, layer, "features_backward", std::move(input_grads));
    return out;
  }
  matrix<float> assemble(std::size_t pes,
                         const std::function<matrix<float>(std::size_t)>& get) const override {
    // Row r of the table from its owner's replica.
    matrix<float> table = get(0);
    for (std::size_t q = 1; q < pes; ++q) {
      matrix<float> const mine = get(q);
      for (vid_t r = 0; r < table.rows(); ++r) {
        if (owners_.owner(r) == static_cast<int>(q)) {
          std::copy_n(&mine(r, 0), table.cols(), &table(r, 0));
        }
      }
    }
    return table;
  }

 private:
  /// Route `layer` of the batch: block layer's, or the pairs' for -1.
  static const exchange_route& route(const prepared_batch& b, int layer) {
    COOPGNN_EXPECTS(layer >= -1 && layer < static_cast<int>(b.routes.size()),
                    "cooperative exchange: layer {} has no route (the batch has {} layers)", layer,
                    b.routes.size());
    return layer < 0 ? b.pair_route : b.routes[static_cast<std::size_t>(layer)];
  }

  const ownership& owners_;
};

}  // namespace

std::unique_ptr<minibatch_protocol> make_cooperative_protocol(const ownership& owners) {
  return std::make_unique<cooperative_protocol>(owners);
}

}  // namespace coopgnn
