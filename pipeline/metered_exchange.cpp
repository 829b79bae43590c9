#include "pipeline/metered_exchange.hpp"

namespace coopgnn {

void metered_exchange::stage(const exchange_route& route, std::int64_t cols) {
  // What is sent plus what is received, in bytes.
  staging_ =
      std::max(staging_, route.staging_rows() * cols * static_cast<std::int64_t>(sizeof(float)));
  meter_.mark_sent();
}

tensor<float> metered_exchange::pull(const exchange_route& route, tensor<float>&& owner_rows,
                                     int layer, const char* direction) {
  stage(route, owner_rows.cols());
  tensor<float> out = exchange_pull(ctx_, rows_, route, std::move(owner_rows), &ws_);
  meter_.record(layer, direction);
  return out;
}

tensor<float> metered_exchange::push(const exchange_route& route, tensor<float>&& grads, int layer,
                                     const char* direction) {
  stage(route, grads.cols());
  tensor<float> out = exchange_push(ctx_, rows_, route, std::move(grads), &ws_);
  meter_.record(layer, direction);
  return out;
}

std::pair<buffer<vid_t>, tensor<float>> metered_exchange::allgather(buffer_view<const vid_t> ids,
                                                                    tensor_view<const float> rows,
                                                                    int layer,
                                                                    const char* direction) {
  meter_.mark_sent();
  // The ids carry the row counts; the rows' all-gather then knows them (one row per id).
  std::vector<std::int64_t> counts;
  buffer<vid_t> all_ids = allgatherv_rows<vid_t>(ctx_, rows_, ids, 1, {}, &counts);
  buffer<float> all_rows = allgatherv_rows<float>(ctx_, rows_, rows.flat(), rows.cols, counts);
  meter_.record(layer, direction);
  auto const sent =
      static_cast<std::int64_t>(rows.flat().size * sizeof(float) + ids.size * sizeof(vid_t));
  staging_ = std::max(staging_, rows_.size() * sent +
                                    static_cast<std::int64_t>(all_ids.bytes() + all_rows.bytes()));
  auto const n = static_cast<std::int64_t>(all_ids.size());
  return {std::move(all_ids), tensor<float>(std::move(all_rows), n, rows.cols)};
}

owner_exchange metered_exchange::request_ids(const exec_context& host, communicator& comm,
                                             buffer_view<const std::uint16_t> owner_of,
                                             buffer_view<const vid_t> ids, int layer) {
  owner_exchange x = exchange_with_owners(host, comm, owner_of, ids);
  meter_.traffic.push_back({layer, "ids", x.id_bytes});
  meter_.mark_sent();
  return x;
}

void metered_exchange::sampled_ids(std::span<const std::int64_t> id_bytes) {
  for (std::size_t l = 0; l < id_bytes.size(); ++l) {
    meter_.traffic.push_back({static_cast<int>(l), "ids", id_bytes[l]});
  }
  meter_.mark_sent();
}

}  // namespace coopgnn
