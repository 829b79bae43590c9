#include "pipeline/link.hpp"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_map>

#include "kernels/dense/gemm.hpp"
#include "models/link_metrics.hpp"
#include "models/metrics.hpp"
#include "runtime/core/error.hpp"
#include "runtime/core/parallel.hpp"
#include "runtime/core/rng.hpp"

namespace coopgnn {

vid_t negative_tail(std::uint64_t run_seed, std::uint32_t batch, std::int64_t positive, int j,
                    vid_t src, vid_t lo, vid_t hi) {
  COOPGNN_EXPECTS(hi - lo >= 2,
                  "negative sampling: the tail range [{}, {}) has fewer than 2 candidate tails", lo,
                  hi);
  auto const range = static_cast<unsigned __int128>(hi - lo);
  for (std::uint32_t a = 0; a < 64; ++a) {
    auto const st = rng::make_stream(run_seed, rng::purpose::negative, a);
    auto const w =
        rng::draw4(st, static_cast<std::uint64_t>(positive), static_cast<std::uint32_t>(j), batch);
    auto const x = (static_cast<std::uint64_t>(w[0]) << 32) | w[1];
    auto const t = lo + static_cast<vid_t>((static_cast<unsigned __int128>(x) * range) >> 64);
    if (t != src) return t;
  }
  COOPGNN_FAIL("negative sampling: 64 draws for positive {} hit its source {}", positive, src);
}

std::pair<vid_t, vid_t> relation_tail_range(const hetero_schema& h, std::int64_t r) {
  COOPGNN_EXPECTS(r >= 0 && r < static_cast<std::int64_t>(h.edge_types.size()),
                  "relation {} is outside the graph's {} edge types", r, h.edge_types.size());
  auto const parts = split_edge_type(h.edge_types[static_cast<std::size_t>(r)], "negatives");
  auto const t = static_cast<std::size_t>(h.node_type_index(parts[2]));
  return {h.node_offsets[t], h.node_offsets[t + 1]};
}

link_batch make_link_batch(const link_task& task, std::span<const vid_t> positives, int negatives,
                           std::uint64_t run_seed, std::uint32_t batch, vid_t num_nodes,
                           const hetero_schema* schema) {
  COOPGNN_EXPECTS(negatives >= 0, "--negatives {} is negative", negatives);
  vid_t const lo = task.user_item() ? task.item_begin : 0;
  vid_t const hi = task.user_item() ? task.item_end : num_nodes;
  bool const typed = !task.train.relation.empty();
  COOPGNN_EXPECTS(!typed || schema != nullptr,
                  "link batch: task '{}' has typed pairs but no schema was given", task.name);
  std::vector<std::pair<vid_t, vid_t>> ranges;  // typed: the tail range of every relation
  if (typed) {
    for (std::size_t r = 0; r < schema->edge_types.size(); ++r) {
      ranges.push_back(relation_tail_range(*schema, static_cast<std::int64_t>(r)));
    }
  }
  link_batch out;
  auto const m = positives.size() * static_cast<std::size_t>(1 + negatives);
  out.src_rows.reserve(m);
  out.dst_rows.reserve(m);
  out.labels.reserve(m);
  out.pairs.reserve(m);
  std::unordered_map<vid_t, std::int64_t> row;
  row.reserve(2 * m);
  auto row_of = [&](vid_t v) {
    auto [it, fresh] = row.try_emplace(v, static_cast<std::int64_t>(out.targets.size()));
    if (fresh) out.targets.push_back(v);
    return it->second;
  };
  auto add = [&](vid_t u, vid_t v, float label) {
    out.src_rows.push_back(row_of(u));
    out.dst_rows.push_back(row_of(v));
    out.labels.push_back(label);
    out.pairs.emplace_back(u, v);
  };
  for (vid_t i : positives) {
    COOPGNN_EXPECTS(i >= 0 && i < task.train.size(),
                    "link batch: positive {} is outside the {} training pairs", i,
                    task.train.size());
    vid_t const u = task.train.src[static_cast<std::size_t>(i)];
    add(u, task.train.dst[static_cast<std::size_t>(i)], 1.0f);
    auto [tlo, thi] = std::pair{lo, hi};
    std::int64_t r = 0;
    if (typed) {
      r = task.train.relation[static_cast<std::size_t>(i)];
      COOPGNN_EXPECTS(r >= 0 && static_cast<std::size_t>(r) < ranges.size(),
                      "link batch: positive {} has relation {} outside [0, {})", i, r,
                      ranges.size());
      std::tie(tlo, thi) = ranges[static_cast<std::size_t>(r)];
      out.relations.push_back(r);
    }
    for (int j = 0; j < negatives; ++j) {
      add(u, negative_tail(run_seed, batch, i, j, u, tlo, thi), 0.0f);
      if (typed) out.relations.push_back(r);
    }
  }
  return out;
}

bool one_negative_per_query(const pair_set& set) {
  if (set.indexes.empty() || set.labels.size() != set.indexes.size()) return false;
  std::size_t i = 0;
  while (i < set.indexes.size()) {
    std::size_t j = i;
    std::int64_t neg = 0;
    for (; j < set.indexes.size() && set.indexes[j] == set.indexes[i]; ++j)
      neg += set.labels[j] == 0;
    if (neg != 1 || j - i != 2) return false;  // one positive and one negative
    i = j;
  }
  return true;
}

std::string link_metric_name(const link_task& task, const pair_set& set, int topk) {
  bool neg = false;
  for (auto l : set.labels) neg = neg || l == 0;
  COOPGNN_EXPECTS(set.indexes.empty() || neg,
                  "link-prediction task '{}': an evaluation set has queries (indexes) but no "
                  "negatives (labels 0) to rank its positives against",
                  task.name);
  if (!set.indexes.empty()) return one_negative_per_query(set) ? "roc_auc" : "mrr";
  if (neg) return "roc_auc";
  COOPGNN_EXPECTS(task.user_item(),
                  "link-prediction task '{}': an evaluation set holds positives only and the "
                  "data is not user-item; give it negatives (coopgnn split-edges --negatives K)",
                  task.name);
  return fmt::format("recall@{}", topk);
}

std::string link_task_metric_name(const link_task& task, int topk) {
  if (task.valid.empty() && task.test.empty()) return "none";  // nothing to evaluate
  return link_metric_name(task, task.valid.empty() ? task.test : task.valid, topk);
}

std::vector<float> score_pairs(const models::link_decoder<float>& decoder, const matrix<float>& z,
                               const pair_set& set) {
  exec_context const host(backend::host);
  std::vector<float> scores(static_cast<std::size_t>(set.size()));
  constexpr std::int64_t chunk = 1 << 16;
  for (std::int64_t lo = 0; lo < set.size(); lo += chunk) {
    auto const hi = std::min(set.size(), lo + chunk);
    std::vector<std::int64_t> const src(set.src.begin() + lo, set.src.begin() + hi);
    std::vector<std::int64_t> const dst(set.dst.begin() + lo, set.dst.begin() + hi);
    std::vector<std::int64_t> rel;
    if (!set.relation.empty()) rel.assign(set.relation.begin() + lo, set.relation.begin() + hi);
    buffer<float> const s = decoder.forward(host, host_view(z), host_view(src), host_view(dst),
                                            host_view(std::as_const(rel)), nullptr);
    std::copy(s.host().begin(), s.host().end(), scores.begin() + lo);
  }
  return scores;
}

link_eval evaluate_pairs(const models::link_decoder<float>& decoder, const matrix<float>& z,
                         const pair_set& set) {
  std::vector<float> const scores = score_pairs(decoder, z, set);
  std::vector<std::int64_t> labels = set.labels;
  if (labels.empty()) labels.assign(static_cast<std::size_t>(set.size()), 1);
  link_eval out;
  if (!set.indexes.empty()) {
    auto const r = models::rank_queries(scores, labels, set.indexes);
    if (!one_negative_per_query(set)) {  // one negative per positive: ROC-AUC selects (below)
      out.metric_name = "mrr";
      out.value = r.mrr;
    }
    out.all = {{"mrr", r.mrr},
               {"mrr_ogb", r.mrr_ogb},
               {"hits@1", r.hits1},
               {"hits@10", r.hits10},
               {"hits@50", r.hits50}};
  }
  bool pos = false, neg = false;
  for (auto l : labels) (l == 1 ? pos : neg) = true;
  COOPGNN_EXPECTS(pos && neg, "link evaluation: the set has {} (it needs positives and negatives)",
                  pos ? "no negatives" : "no positives");
  double const auc = models::roc_auc(scores, labels);
  out.all.emplace_back("roc_auc", auc);
  out.all.emplace_back("average_precision", models::average_precision(scores, labels));
  if (out.metric_name.empty()) {
    out.metric_name = "roc_auc";
    out.value = auc;
  }
  return out;
}

link_eval evaluate_user_item(const models::link_decoder<float>& decoder, const matrix<float>& z,
                             const link_task& task, const pair_set& set, int topk, int threads) {
  COOPGNN_EXPECTS(decoder.kind() == models::decoder_kind::dot,
                  "user-item evaluation ranks every item for every user: only --decoder dot is "
                  "supported (the mlp decoder would score |users| x |items| pairs)");
  COOPGNN_EXPECTS(!set.empty(), "user-item evaluation: the set is empty");
  COOPGNN_EXPECTS(topk >= 1, "--topk {} must be >= 1", topk);
  vid_t const ib = task.item_begin;
  std::int64_t const items = task.item_end - task.item_begin;
  std::int64_t const d = z.cols();
  // Per user: training items (excluded) and test items, as local item ids.
  std::unordered_map<vid_t, std::vector<std::int64_t>> train_items, test_items;
  auto local = [&](vid_t v, const char* what) {
    COOPGNN_EXPECTS(v >= ib && v < task.item_end, "user-item evaluation: {} {} is not an item",
                    what, v);
    return static_cast<std::int64_t>(v - ib);
  };
  for (std::int64_t i = 0; i < set.size(); ++i) {
    if (!set.labels.empty() && set.labels[static_cast<std::size_t>(i)] == 0) continue;
    test_items[set.src[static_cast<std::size_t>(i)]].push_back(
        local(set.dst[static_cast<std::size_t>(i)], "test pair tail"));
  }
  for (std::int64_t i = 0; i < task.train.size(); ++i) {
    vid_t const u = task.train.src[static_cast<std::size_t>(i)];
    if (test_items.count(u) != 0) {
      train_items[u].push_back(local(task.train.dst[static_cast<std::size_t>(i)], "train tail"));
    }
  }
  std::vector<vid_t> users;
  users.reserve(test_items.size());
  for (auto& [u, t] : test_items) {
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    users.push_back(u);
  }
  std::sort(users.begin(), users.end());
  // Item rows once; users in blocks: S = Z_users Z_items^T on the host GEMM.
  matrix<float> zi(items, d);
  for (std::int64_t i = 0; i < items; ++i) {
    std::copy_n(&z(ib + i, 0), d, &zi(i, 0));
  }
  exec_context const host = exec_context(backend::host).with_threads(std::max(1, threads));
  constexpr std::int64_t block = 256;
  std::vector<double> recall(users.size()), ndcg(users.size());
  for (std::size_t lo = 0; lo < users.size(); lo += block) {
    auto const hi = std::min(users.size(), lo + block);
    auto const nb = static_cast<std::int64_t>(hi - lo);
    matrix<float> zu(nb, d);
    for (std::int64_t r = 0; r < nb; ++r) std::copy_n(&z(users[lo + r], 0), d, &zu(r, 0));
    matrix<float> s(nb, items);
    gemm<float>(host, op::none, op::transpose, 1.0f, host_view(std::as_const(zu)),
                host_view(std::as_const(zi)), 0.0f, host_view(s));
    parallel_rows(nb, host.threads(), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        vid_t const u = users[lo + static_cast<std::size_t>(r)];
        auto const it = train_items.find(u);
        std::vector<std::int64_t> exs;
        if (it != train_items.end()) exs = it->second;
        std::sort(exs.begin(), exs.end());
        exs.erase(std::unique(exs.begin(), exs.end()), exs.end());
        auto const m =
            models::user_topk(std::span<const float>(&s(r, 0), items), exs, test_items.at(u), topk);
        recall[lo + static_cast<std::size_t>(r)] = m.recall;
        ndcg[lo + static_cast<std::size_t>(r)] = m.ndcg;
      }
    });
  }
  double rs = 0, ns = 0;
  for (std::size_t i = 0; i < users.size(); ++i) {
    rs += recall[i];
    ns += ndcg[i];
  }
  auto const n = static_cast<double>(users.size());
  link_eval out;
  out.metric_name = fmt::format("recall@{}", topk);
  out.value = rs / n;
  out.all = {{out.metric_name, rs / n}, {fmt::format("ndcg@{}", topk), ns / n}};
  return out;
}

std::pair<link_eval, link_eval> evaluate_link_model(const models::gnn_model& model,
                                                    const csc_graph& g, const matrix<float>& x,
                                                    const link_task& t, int topk, int threads) {
  COOPGNN_EXPECTS(model.decoder() != nullptr,
                  "evaluate_link_model: the model has no link decoder (a node-classification "
                  "configuration)");
  COOPGNN_EXPECTS(model.params().space() == memory_space::host,
                  "evaluate_link_model: the model's parameters are {} memory; copy them into a "
                  "host model (copy_parameters_from)",
                  to_string(model.params().space()));
  matrix<float> const z = model.infer_full(g, x, threads);
  auto one = [&](const pair_set& set) {
    link_eval e;
    if (set.empty()) {
      e.metric_name = link_task_metric_name(t, topk);
      e.value = std::numeric_limits<double>::quiet_NaN();
      return e;
    }
    if (link_metric_name(t, set, topk).starts_with("recall@")) {
      return evaluate_user_item(*model.decoder(), z, t, set, topk, threads);
    }
    return evaluate_pairs(*model.decoder(), z, set);
  };
  return {one(t.valid), one(t.test)};
}

}  // namespace coopgnn
