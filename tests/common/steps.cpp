#include "tests/common/steps.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

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

const step_fixture& hetero_protocol_data() {
  static const step_fixture d = [] {
    step_fixture f;
    dataset& ds = f.ds;
    ds.name = "hetero-synthetic";
    vid_t const P = 300, A = 250, S = 8;
    ds.num_nodes = P + A + S;
    hetero_schema h;
    h.node_types = {"paper", "author", "subject"};
    h.node_offsets = {0, P, P + A, P + A + S};
    h.edge_types = {"author:writes:paper", "paper:written_by:author", "subject:has:paper",
                    "paper:in:subject", "paper:cites:paper"};
    h.target_type = "paper";
    h.feature_names = {"feat", "", ""};
    std::mt19937_64 gen(11);
    std::uniform_real_distribution<float> u(0, 1);
    int const C = 4;
    ds.num_classes = C;
    ds.labels.assign(static_cast<std::size_t>(ds.num_nodes), -1);
    matrix<float> x(P, 12);
    for (vid_t p = 0; p < P; ++p) {
      auto const c = static_cast<std::int64_t>(gen() % C);
      ds.labels[static_cast<std::size_t>(p)] = c;
      for (std::int64_t j = 0; j < 12; ++j) x(p, j) = u(gen) + (j == c ? 1.0f : 0.0f);
    }
    auto add = [&](vid_t s, vid_t t, std::int32_t r) {
      ds.src.push_back(s);
      ds.dst.push_back(t);
      h.edge_type.push_back(r);
    };
    for (vid_t p = 0; p < P; ++p) {
      auto const na = 1 + static_cast<int>(gen() % 4);
      for (int i = 0; i < na; ++i) {
        vid_t const a = P + static_cast<vid_t>(gen() % A);
        add(a, p, 0);
        add(p, a, 1);
      }
      auto const c = ds.labels[static_cast<std::size_t>(p)];
      vid_t const s =
          P + A +
          (u(gen) < 0.7f ? c * 2 + static_cast<vid_t>(gen() % 2) : static_cast<vid_t>(gen() % S));
      add(s, p, 2);
      add(p, s, 3);
      for (int i = 0; i < 3; ++i) {
        vid_t q = static_cast<vid_t>(gen() % P);
        if (u(gen) < 0.8f) {  // homophilous: a paper of the same class
          for (int tries = 0; tries < 20 && ds.labels[static_cast<std::size_t>(q)] != c; ++tries)
            q = static_cast<vid_t>(gen() % P);
        }
        if (q != p) add(q, p, 4);
      }
    }
    h.features = {std::move(x), matrix<float>(), matrix<float>()};
    for (vid_t p = 0; p < P; ++p) {
      auto const r = p % 10;
      (r < 6 ? ds.train : r < 8 ? ds.valid : ds.test).push_back(p);
    }
    f.g = build_csc(ds.num_nodes, ds.src, ds.dst, h.edge_type,
                    static_cast<std::int32_t>(h.edge_types.size()));
    ds.hetero = std::move(h);
    return f;
  }();
  return d;
}

step_result run_protocol_step(const train_config& cfg) {
  return run_protocol_step(protocol_data(), cfg);
}

step_result run_protocol_step(const step_fixture& d, const train_config& cfg) {
  auto const order = epoch_order(d.ds.train, cfg.seed, 1);
  std::vector<vid_t> batch(order.begin(),
                           order.begin() + std::min<std::int64_t>(cfg.batch_size, order.size()));
  return run_protocol_step(d, cfg, batch, 5);
}

step_result run_protocol_step(const train_config& cfg, std::span<const vid_t> batch,
                              std::uint32_t index) {
  return run_protocol_step(protocol_data(), cfg, batch, index);
}

step_result run_protocol_step(const step_fixture& d, const train_config& cfg,
                              std::span<const vid_t> batch, std::uint32_t index) {
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
