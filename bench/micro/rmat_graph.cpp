#include "bench/micro/rmat_graph.hpp"

#include <map>
#include <memory>
#include <mutex>

#include "runtime/core/rng.hpp"
#include "runtime/graph/generate.hpp"

namespace coopgnn::bench {

const csc_graph& rmat_graph(int scale) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<csc_graph>> cache;
  std::lock_guard lock(mu);
  auto& slot = cache[scale];
  if (!slot) {
    rmat_options opt;
    opt.scale = scale;
    dataset const ds = generate_rmat(opt);
    slot = std::make_unique<csc_graph>(build_csc(ds.num_nodes, ds.src, ds.dst));
  }
  return *slot;
}

std::vector<vid_t> bench_seeds(vid_t num_nodes, std::int64_t count, std::uint64_t seed) {
  auto const st = rng::make_stream(seed, rng::purpose::shuffle, 0);
  std::vector<vid_t> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    auto const r = rng::draw4(st, static_cast<std::uint64_t>(i), 0, 0);
    std::uint64_t const x = (static_cast<std::uint64_t>(r[0]) << 32) | r[1];
    out[static_cast<std::size_t>(i)] =
        static_cast<vid_t>(x % static_cast<std::uint64_t>(num_nodes));
  }
  return out;
}

}  // namespace coopgnn::bench
