#include "tests/common/graphs.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <tuple>

namespace coopgnn::test {

csc_graph random_graph(vid_t n, int avg_degree, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::set<std::pair<vid_t, vid_t>> edges;  // (src, dst)
  std::uniform_int_distribution<vid_t> pick(0, n - 1);
  for (vid_t v = 3; v < n; ++v) {
    std::uniform_int_distribution<int> deg(0, 2 * avg_degree);
    int const d = deg(gen);
    for (int j = 0; j < d; ++j) {
      vid_t const u = pick(gen);
      if (u != v) edges.insert({u, v});
    }
  }
  for (vid_t u = 0; u < n; ++u) {
    if (u != 1) edges.insert({u, 1});
  }
  if (n > 3) edges.insert({3, 2});
  std::vector<vid_t> src, dst;
  for (auto [s, d] : edges) {
    src.push_back(s);
    dst.push_back(d);
  }
  return build_csc(n, src, dst);
}

typed_graph random_typed_graph(vid_t n, std::int32_t R, int avg_degree, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::set<std::tuple<vid_t, vid_t, std::int32_t>> edges;  // (src, dst, relation)
  std::uniform_int_distribution<vid_t> pick(0, n - 1);
  std::uniform_int_distribution<int> deg(0, 2 * avg_degree);
  for (vid_t v = 3; v < n; ++v) {
    for (std::int32_t r = 0; r < R; ++r) {
      int const d = deg(gen);
      for (int j = 0; j < d; ++j) {
        vid_t const u = pick(gen);
        if (u != v) edges.insert({u, v, r});
      }
    }
  }
  for (vid_t u = 0; u < n; ++u) {
    for (std::int32_t r = 0; r < R && u != 1; ++r) edges.insert({u, 1, r});
  }
  if (n > 3) edges.insert({3, 2, R - 1});
  typed_graph t;
  // Shuffled, so build_csc has to sort.
  std::vector<std::tuple<vid_t, vid_t, std::int32_t>> list(edges.begin(), edges.end());
  std::shuffle(list.begin(), list.end(), gen);
  for (auto [s, d, r] : list) {
    t.src.push_back(s);
    t.dst.push_back(d);
    t.rel.push_back(r);
  }
  t.g = build_csc(n, t.src, t.dst, t.rel, R);
  return t;
}

dataset synthetic_dataset(vid_t n, int classes, std::int64_t feature_dim, int avg_degree,
                          std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  dataset ds;
  ds.name = "synthetic";
  ds.num_nodes = n;
  ds.num_classes = classes;
  ds.labels.resize(static_cast<std::size_t>(n));
  for (vid_t v = 0; v < n; ++v) ds.labels[v] = static_cast<std::int64_t>(gen() % classes);
  ds.features = matrix<float>(n, feature_dim);
  std::uniform_real_distribution<float> noise(0.0f, 1.0f);
  for (vid_t v = 0; v < n; ++v) {
    for (std::int64_t j = 0; j < feature_dim; ++j) ds.features(v, j) = noise(gen);
    ds.features(v, ds.labels[v] % feature_dim) += 2.0f;
  }
  std::vector<std::vector<vid_t>> by_class(static_cast<std::size_t>(classes));
  for (vid_t v = 0; v < n; ++v) by_class[ds.labels[v]].push_back(v);
  std::set<std::pair<vid_t, vid_t>> und;
  std::uniform_int_distribution<vid_t> pick(0, n - 1);
  for (vid_t v = 0; v < n; ++v) {
    for (int j = 0; j < (avg_degree + 1) / 2; ++j) {
      vid_t u;
      if (noise(gen) < 0.8f) {
        auto const& same = by_class[ds.labels[v]];
        u = same[gen() % same.size()];
      } else {
        u = pick(gen);
      }
      if (u != v) und.insert({std::min(u, v), std::max(u, v)});
    }
  }
  for (auto [a, b] : und) {
    ds.src.push_back(a);
    ds.dst.push_back(b);
    ds.src.push_back(b);
    ds.dst.push_back(a);
  }
  std::vector<vid_t> perm(static_cast<std::size_t>(n));
  for (vid_t v = 0; v < n; ++v) perm[v] = v;
  std::shuffle(perm.begin(), perm.end(), gen);
  for (vid_t i = 0; i < n; ++i) {
    (i < n * 6 / 10 ? ds.train : i < n * 8 / 10 ? ds.valid : ds.test).push_back(perm[i]);
  }
  return ds;
}

}  // namespace coopgnn::test
