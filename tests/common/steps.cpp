#include "tests/common/steps.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/common/graphs.hpp"

namespace coopgnn::test {

const step_fixture& protocol_data() {
  static const step_fixture d = [] {
    step_fixture f;
    f.ds = synthetic_dataset(700, 4, 12, 10, 3);
    f.g = build_csc(f.ds.num_nodes, f.ds.src, f.ds.dst);
    return f;
  }();
  return d;
}

step_result run_protocol_step(const train_config& cfg) {
  auto const& d = protocol_data();
  auto const order = epoch_order(d.ds.train, cfg.seed, 1);
  std::vector<vid_t> batch(order.begin(),
                           order.begin() + std::min<std::int64_t>(cfg.batch_size, order.size()));
  return run_protocol_step(cfg, batch, 5);
}

step_result run_protocol_step(const train_config& cfg, std::span<const vid_t> batch,
                              std::uint32_t index) {
  auto const& d = protocol_data();
  trainer tr(d.ds, d.g, cfg);
  std::vector<pe_trace> traces;
  tr.step(batch, index, step_options{false, &traces});
  step_result r;
  r.edges.resize(cfg.fanouts.size());
  for (auto const& t : traces) {
    for (std::size_t l = 0; l < t.edges.size(); ++l)
      r.edges[l].insert(t.edges[l].begin(), t.edges[l].end());
    EXPECT_EQ(t.logits.rows(), static_cast<std::int64_t>(t.seeds.size()));
    for (std::size_t i = 0; i < t.seeds.size(); ++i) {
      EXPECT_EQ(r.logits.count(t.seeds[i]), 0u) << "seed " << t.seeds[i] << " computed twice";
      r.logits[t.seeds[i]] = std::vector<float>(t.logits.row(i), t.logits.row(i) + t.logits.cols());
    }
    r.work += t.work;
    r.loss += t.loss;
  }
  r.grads = traces.at(0).grads;
  for (auto const& t : traces) EXPECT_EQ(t.grads, r.grads) << "replicas disagree after all-reduce";
  EXPECT_EQ(r.logits.size(), batch.size());
  return r;
}

void expect_same_outputs(const step_result& a, const step_result& ref) {
  ASSERT_EQ(a.logits.size(), ref.logits.size());
  for (auto const& [v, row] : ref.logits) {
    auto const& other = a.logits.at(v);
    for (std::size_t j = 0; j < row.size(); ++j) {
      EXPECT_NEAR(other[j], row[j], 1e-5f) << "logit of vertex " << v << " column " << j;
    }
  }
  ASSERT_EQ(a.grads.size(), ref.grads.size());
  float scale = 0;
  for (float g : ref.grads) scale = std::max(scale, std::abs(g));
  ASSERT_GT(scale, 0.0f) << "reference gradient is all zeros";
  for (std::size_t i = 0; i < ref.grads.size(); ++i) {
    EXPECT_NEAR(a.grads[i], ref.grads[i], 1e-4f * scale) << "gradient element " << i;
  }
  EXPECT_NEAR(a.loss, ref.loss, 1e-5 * std::max(1.0, std::abs(ref.loss)));
}

std::pair<std::vector<double>, epoch_report> run_protocol_epochs(const train_config& cfg,
                                                                 int epochs) {
  auto const& d = protocol_data();
  trainer tr(d.ds, d.g, cfg);
  std::vector<double> losses;
  epoch_report last;
  for (int e = 1; e <= epochs; ++e) {
    last = tr.run_epoch(e, e == epochs);
    losses.push_back(last.train_loss);
  }
  return {losses, last};
}

std::set<std::pair<vid_t, vid_t>> as_set(const std::multiset<std::pair<vid_t, vid_t>>& m) {
  return {m.begin(), m.end()};
}

}  // namespace coopgnn::test
