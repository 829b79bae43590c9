#include "bench/drivers/export.hpp"

#include <algorithm>
#include <fstream>

#include "kernels/dense/elementwise.hpp"
#include "kernels/gather/gather.hpp"
#include "models/layers.hpp"
#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/timer.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/minibatch.hpp"
#include "pipeline/trainer.hpp"

namespace coopgnn::bench {

namespace {

template <typename T>
void write_vec(const std::filesystem::path& p, const std::vector<T>& v) {
  std::int64_t const shape[] = {static_cast<std::int64_t>(v.size())};
  write_npy(p, std::span<const T>(v), shape);
}

void write_mat(const std::filesystem::path& p, const matrix<float>& m) {
  std::int64_t const shape[] = {m.rows(), m.cols()};
  write_npy(p, std::span<const float>(m.values()), shape);
}

}  // namespace

nlohmann::json export_blocks(const dataset& ds, const csc_graph& g, const export_options& o,
                             const std::filesystem::path& out) {
  COOPGNN_EXPECTS(o.batches >= 1, "--batches must be at least 1, got {}", o.batches);
  COOPGNN_EXPECTS(o.repeats >= 1, "--repeats must be at least 1, got {}", o.repeats);
  COOPGNN_EXPECTS(o.warmup >= 0, "--warmup must be >= 0, got {}", o.warmup);
  train_config cfg;
  cfg.num_pes = 1;
  cfg.mode = minibatch_mode::independent;
  cfg.model = models::parse_conv_kind(o.model);
  cfg.hidden = o.hidden;
  cfg.fanouts = o.fanouts;
  cfg.sampler = o.sampler;
  cfg.batch_size = o.batch_size;
  cfg.seed = o.seed;
  cfg.dropout = 0.0f;
  cfg.wrap_around = true;  // every exported batch is full, also past the epoch's end
  COOPGNN_EXPECTS(o.threads >= 1, "export-blocks: --threads {} must be >= 1", o.threads);
  cfg.threads_per_pe = o.threads;  // the model's kernels: this many threads, recorded in meta
  cfg.sample_threads = o.threads;
  trainer tr(ds, g, cfg);  // validates the configuration; provides the keyed order and the model
  auto const order = tr.epoch_order(1);
  auto const B = std::min<std::int64_t>(o.batch_size, static_cast<std::int64_t>(order.size()));
  models::gnn_model& model = tr.model(0);  // the host backend: a host replica

  std::filesystem::create_directories(out / "params");
  nlohmann::json meta;
  meta["model"] = o.model;
  meta["sampler"] = to_string(o.sampler);
  meta["fanouts"] = o.fanouts;
  meta["batch_size"] = B;
  meta["hidden"] = o.hidden;
  meta["in_dim"] = ds.feature_dim();
  meta["num_classes"] = ds.num_classes;
  meta["num_layers"] = model.num_layers();
  meta["linear_head"] = model.head() != nullptr;
  meta["seed"] = o.seed;
  meta["repeats"] = o.repeats;
  meta["warmup"] = o.warmup;
  meta["input_grad"] = o.input_grad;
  meta["threads"] = o.threads;  // one host PE with this thread budget
  meta["timing"] =
      "median of `repeats` timed repetitions after `warmup` untimed ones; each: zero_grad, "
      "forward, softmax cross-entropy / B, backward (dL/dx only with input_grad)";
  meta["dataset"] = ds.name;
  meta["params"] = nlohmann::json::array();
  exec_context const ctx;
  for (std::size_t i = 0; i < model.params().count(); ++i) {
    auto const& info = model.params().info(i);
    write_mat(out / "params" / (info.name + ".npy"), download<float>(ctx, model.params().value(i)));
    meta["params"].push_back({{"name", info.name}, {"shape", {info.rows, info.cols}}});
  }
  std::vector<int> const fanouts = o.fanouts;
  meta["batches"] = nlohmann::json::array();
  for (int b = 0; b < o.batches; ++b) {
    auto const seeds = tr.epoch_batch(order, b);
    auto sb = sample_independent(ctx, g, seeds,
                                 {o.sampler, fanouts, o.seed, static_cast<std::uint32_t>(b)});
    std::vector<block> blocks(sb.blocks.rbegin(), sb.blocks.rend());  // input side first
    std::vector<block_view> views;
    for (auto const& blk : blocks) views.push_back(view(blk));
    matrix<float> const x = tr.features().gather(sb.input_nodes);  // widened when 16-bit
    std::vector<std::int64_t> labels(seeds.size());
    for (std::size_t i = 0; i < seeds.size(); ++i) labels[i] = ds.labels[seeds[i]];

    models::step_key const key{o.seed, static_cast<std::uint32_t>(b), false};
    std::vector<double> times;
    matrix<float> logits;
    tensor<float> x_grad;
    auto const scale = 1.0f / static_cast<float>(seeds.size());
    for (int r = 0; r < o.warmup + o.repeats; ++r) {
      scoped_timer t(nullptr);
      models::model_cache cache;
      model.zero_grad();
      tensor<float> out = model.forward(views, host_view(x), key, &cache);
      tensor<float> grad(ctx, out.rows(), out.cols());
      softmax_cross_entropy<float>(ctx, out.view(), host_view(labels), scale, grad.view());
      // dL/dx only when asked for (the peer then asks torch for it too).
      x_grad = model.backward(views, grad.view(), cache, o.input_grad);
      if (r >= o.warmup) times.push_back(t.seconds());
      logits = std::move(out).release_host();
    }
    std::sort(times.begin(), times.end());

    auto const dir = out / fmt::format("batch{}", b);
    std::filesystem::create_directories(dir);
    nlohmann::json jb;
    jb["coopgnn_seconds"] = times[times.size() / 2];
    jb["coopgnn_seconds_all"] = times;
    jb["num_dst"] = nlohmann::json::array();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      auto const& blk = blocks[i];
      auto const stem = fmt::format("block{}_", i);
      write_vec(dir / (stem + "src_ids.npy"), blk.src_ids);
      write_vec(dir / (stem + "indptr.npy"), blk.indptr);
      write_vec(dir / (stem + "indices.npy"), blk.indices);
      write_vec(dir / (stem + "weights.npy"), blk.weights);
      write_vec(dir / (stem + "src_degree.npy"), blk.src_degree);
      jb["num_dst"].push_back(blk.num_dst);
    }
    write_mat(dir / "x.npy", x);
    write_vec(dir / "labels.npy", labels);
    write_mat(dir / "logits.npy", logits);
    std::filesystem::create_directories(dir / "grads");
    for (std::size_t i = 0; i < model.params().count(); ++i) {
      write_mat(dir / "grads" / (model.params().info(i).name + ".npy"),
                download<float>(ctx, model.params().grad(i)));
    }
    if (o.input_grad) write_mat(dir / "x_grad.npy", download<float>(ctx, x_grad.view()));
    meta["batches"].push_back(std::move(jb));
  }
  std::ofstream f(out / "meta.json");
  f << meta.dump(2) << "\n";
  if (!f) throw io_error(fmt::format("{}: cannot write", (out / "meta.json").string()));
  return meta;
}

}  // namespace coopgnn::bench
