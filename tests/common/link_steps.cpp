#include "tests/common/link_steps.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "runtime/core/rng.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn::test {

/// A link-prediction dataset on test::synthetic_dataset (homophilous, class-revealing
/// features): every 8th undirected edge {u, v} (u < v, in id order) is held out for test with
/// one uniform non-edge negative (u, w) each, both directions removed from the graph; the other
/// undirected edges are the training positives (u < v) and stay in the graph in both directions.

link_fixture make_link_fixture(vid_t n, std::uint64_t seed) {
  link_fixture f;
  f.ds = test::synthetic_dataset(n, 4, 12, 10, seed);
  std::set<std::pair<vid_t, vid_t>> edges;
  for (std::int64_t e = 0; e < f.ds.num_edges(); ++e) {
    edges.emplace(f.ds.src[static_cast<std::size_t>(e)], f.ds.dst[static_cast<std::size_t>(e)]);
  }
  link_task t;
  t.name = "link";
  std::vector<vid_t> src, dst;
  std::int64_t k = 0;
  auto const st = rng::make_stream(seed, rng::purpose::split, 99);
  for (auto const& [u, v] : edges) {
    if (u >= v) continue;
    if (k++ % 8 == 0) {
      t.test.src.push_back(u);
      t.test.dst.push_back(v);
      t.test.labels.push_back(1);
      for (std::uint32_t a = 0;; ++a) {
        auto const w4 = rng::draw4(st, static_cast<std::uint64_t>(k), a, 0);
        auto const w = static_cast<vid_t>(w4[0] % static_cast<std::uint32_t>(n));
        if (w != u && edges.count({u, w}) == 0) {
          t.test.src.push_back(u);
          t.test.dst.push_back(w);
          t.test.labels.push_back(0);
          break;
        }
      }
      continue;
    }
    t.train.src.push_back(u);
    t.train.dst.push_back(v);
    src.insert(src.end(), {u, v});
    dst.insert(dst.end(), {v, u});
  }
  f.ds.src = std::move(src);
  f.ds.dst = std::move(dst);
  f.ds.link = std::move(t);
  f.g = build_csc(f.ds.num_nodes, f.ds.src, f.ds.dst);
  return f;
}

const link_fixture& link_data() {
  static const link_fixture f = make_link_fixture(600, 5);
  return f;
}

link_fixture make_typed_link_fixture(const std::vector<std::int32_t>& relations, int negatives) {
  auto const& base = hetero_protocol_data();
  link_fixture f;
  f.ds = base.ds;
  const hetero_schema& h = *f.ds.hetero;
  std::int32_t const reverse_of[5] = {1, 0, 3, 2, 4};
  std::set<std::tuple<vid_t, vid_t, std::int32_t>> arcs;  // (u, v, r)
  for (std::size_t e = 0; e < f.ds.src.size(); ++e) {
    arcs.emplace(f.ds.src[e], f.ds.dst[e], h.edge_type[e]);
  }
  std::mt19937_64 gen(17);
  link_task t;
  t.name = "typed_link";
  std::set<std::tuple<vid_t, vid_t, std::int32_t>> removed;
  std::int64_t query = 0;
  for (std::int32_t r : relations) {
    vid_t const lo = r == 1 ? vid_t{300} : r == 3 ? vid_t{550} : vid_t{0};
    vid_t const hi = r == 1 ? vid_t{550} : r == 3 ? vid_t{558} : vid_t{300};
    std::int64_t k = 0;
    for (auto const& [u, v, rr] : arcs) {
      if (rr != r) continue;
      if (k++ % 8 != 0) {
        t.train.src.push_back(u);
        t.train.dst.push_back(v);
        t.train.relation.push_back(r);
        continue;
      }
      removed.emplace(u, v, r);
      removed.emplace(v, u, reverse_of[r]);
      auto add = [&](vid_t w, std::int64_t label) {
        t.test.src.push_back(u);
        t.test.dst.push_back(w);
        t.test.relation.push_back(r);
        t.test.labels.push_back(label);
        t.test.indexes.push_back(query);
      };
      add(v, 1);
      std::set<vid_t> drawn;
      while (static_cast<int>(drawn.size()) < negatives) {
        vid_t const w = lo + static_cast<vid_t>(gen() % static_cast<std::uint64_t>(hi - lo));
        if (w == u || arcs.count({u, w, r}) != 0 || !drawn.insert(w).second) continue;
        add(w, 0);
      }
      ++query;
    }
  }
  // Training positives whose edge was removed as another held-out edge's reverse (relation 4)
  // stay positives but leave the graph: only held-out edges and their reverses are removed.
  std::vector<vid_t> src, dst;
  std::vector<std::int32_t> rel;
  for (std::size_t e = 0; e < f.ds.src.size(); ++e) {
    if (removed.count({f.ds.src[e], f.ds.dst[e], h.edge_type[e]}) != 0) continue;
    src.push_back(f.ds.src[e]);
    dst.push_back(f.ds.dst[e]);
    rel.push_back(h.edge_type[e]);
  }
  f.ds.src = std::move(src);
  f.ds.dst = std::move(dst);
  f.ds.hetero->edge_type = std::move(rel);
  f.ds.link = std::move(t);
  f.g = build_csc(f.ds.num_nodes, f.ds.src, f.ds.dst, f.ds.hetero->edge_type,
                  static_cast<std::int32_t>(f.ds.hetero->edge_types.size()));
  return f;
}

const link_fixture& typed_link_data() {
  static const link_fixture f = make_typed_link_fixture({1, 4}, 5);
  return f;
}

train_config typed_link_cfg(minibatch_mode mode, int P) {
  train_config c;
  c.task = task_kind::link_prediction;
  c.mode = mode;
  c.num_pes = P;
  c.model = models::conv_kind::rgcn;
  c.num_bases = 2;
  c.decoder = models::decoder_kind::distmult;
  c.hidden = 8;
  c.out_dim = 6;
  c.fanouts = {3, 2};
  c.batch_size = 41;
  c.negatives = 2;
  c.dropout = 0.2f;
  c.seed = 19;
  return c;
}

train_config link_cfg(minibatch_mode mode, int P) {
  train_config c;
  c.task = task_kind::link_prediction;
  c.mode = mode;
  c.num_pes = P;
  c.hidden = 8;
  c.out_dim = 6;
  c.fanouts = {4, 3};
  c.batch_size = 37;
  c.negatives = 2;
  c.dropout = 0.2f;  // keyed by vertex: the same on every PE
  c.seed = 13;
  return c;
}

link_step run_link_step(const train_config& cfg, const link_fixture& f) {
  trainer tr(f.ds, f.g, cfg);
  auto const order = tr.epoch_order(1);
  std::vector<vid_t> const batch(order.begin(), order.begin() + cfg.batch_size);
  return run_link_step(cfg, batch, 5, f);
}

link_step run_link_step(const train_config& cfg, std::span<const vid_t> batch, std::uint32_t index,
                        const link_fixture& f) {
  trainer tr(f.ds, f.g, cfg);
  std::vector<pe_trace> trace;
  step_options opt;
  opt.update = false;
  opt.trace = &trace;
  opt.capture_edges = false;
  tr.step(batch, index, opt);
  link_step out;
  out.grads = trace.at(0).grads;
  for (auto const& t : trace) {
    EXPECT_EQ(t.grads, out.grads) << "replicas' all-reduced gradients differ";
    EXPECT_EQ(static_cast<std::int64_t>(t.pairs.size()), t.logits.rows());
    for (std::size_t i = 0; i < t.pairs.size(); ++i) {
      out.scores[{t.pairs[i].first, t.pairs[i].second, t.pair_labels[i]}].push_back(
          t.logits(static_cast<std::int64_t>(i), 0));
    }
    out.pairs += static_cast<std::int64_t>(t.pairs.size());
    out.work += t.work;
    out.loss += t.loss;
  }
  for (auto& [k, v] : out.scores) std::sort(v.begin(), v.end());
  return out;
}

void expect_same(const link_step& a, const link_step& ref, float tol) {
  EXPECT_EQ(a.pairs, ref.pairs);
  ASSERT_EQ(a.scores.size(), ref.scores.size());
  for (auto const& [k, v] : ref.scores) {
    auto const it = a.scores.find(k);
    ASSERT_NE(it, a.scores.end()) << "pair " << std::get<0>(k) << "->" << std::get<1>(k)
                                  << " not scored";
    ASSERT_EQ(it->second.size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(it->second[i], v[i], tol);
  }
  ASSERT_EQ(a.grads.size(), ref.grads.size());
  float scale = 0;
  for (float g : ref.grads) scale = std::max(scale, std::abs(g));
  ASSERT_GT(scale, 0.0f) << "reference gradient is all zeros";
  for (std::size_t i = 0; i < ref.grads.size(); ++i) {
    EXPECT_NEAR(a.grads[i], ref.grads[i], 10 * tol * scale) << "gradient element " << i;
  }
  EXPECT_NEAR(a.loss, ref.loss, tol * std::max(1.0, std::abs(ref.loss)));
}

}  // namespace coopgnn::test
