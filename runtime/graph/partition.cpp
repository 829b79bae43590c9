#include "runtime/graph/partition.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "runtime/core/error.hpp"
#include "runtime/core/rng.hpp"
#include "runtime/graph/generate.hpp"
#include "runtime/graph/npy.hpp"

#if defined(COOPGNN_WITH_METIS)
#include <metis.h>
#endif

namespace coopgnn {

namespace {

void check_parts(std::int64_t num_parts) {
  COOPGNN_EXPECTS(num_parts >= 1, "--parts {} must be at least 1", num_parts);
}

/// The symmetrised graph without self-loops or duplicates, as sorted adjacency lists (CSR):
/// neighbours of v are adj[offsets[v] .. offsets[v + 1]).
struct sym_graph {
  std::vector<std::int64_t> offsets;  ///< [|V| + 1]
  std::vector<vid_t> adj;             ///< [2 * undirected edges]
};

sym_graph symmetrise(vid_t n, std::span<const vid_t> src, std::span<const vid_t> dst) {
  COOPGNN_EXPECTS(src.size() == dst.size(), "src has {} ids but dst {}", src.size(), dst.size());
  std::vector<std::int64_t> count(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t e = 0; e < src.size(); ++e) {
    vid_t const u = src[e];
    vid_t const v = dst[e];
    COOPGNN_EXPECTS(u >= 0 && u < n && v >= 0 && v < n,
                    "edge {} ({} -> {}) has an id outside [0, {})", e, u, v, n);
    if (u == v) continue;
    ++count[u + 1];
    ++count[v + 1];
  }
  for (vid_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<vid_t> adj(static_cast<std::size_t>(count[n]));
  std::vector<std::int64_t> fill(count.begin(), count.end() - 1);
  for (std::size_t e = 0; e < src.size(); ++e) {
    if (src[e] == dst[e]) continue;
    adj[fill[src[e]]++] = dst[e];
    adj[fill[dst[e]]++] = src[e];
  }
  // Sort and deduplicate each list, compacting in place.
  sym_graph g;
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  std::int64_t out = 0;
  for (vid_t v = 0; v < n; ++v) {
    auto const b = adj.begin() + count[v];
    auto const e = adj.begin() + count[v + 1];
    std::sort(b, e);
    auto const last = std::unique(b, e);
    for (auto it = b; it != last; ++it) adj[out++] = *it;
    g.offsets[v + 1] = out;
  }
  adj.resize(static_cast<std::size_t>(out));
  g.adj = std::move(adj);
  return g;
}

}  // namespace

bool metis_available() {
#if defined(COOPGNN_WITH_METIS)
  return true;
#else
  return false;
#endif
}

void require_metis(const std::string& what) {
  if (metis_available()) return;
  throw error(fmt::format(
      "--scheme {} needs METIS, which this build does not have: install libmetis-dev "
      "(tools/setup.sh) and reconfigure (cmake finds metis.h and libmetis; -DCOOPGNN_METIS=ON "
      "makes it required). --scheme random works without it.",
      what));
}

std::vector<std::int32_t> random_parts(vid_t num_nodes, std::int32_t num_parts,
                                       std::uint64_t seed) {
  check_parts(num_parts);
  COOPGNN_EXPECTS(num_nodes >= 0, "num_nodes {} is negative", num_nodes);
  auto const st = rng::make_stream(seed, rng::purpose::partition, 0);
  std::vector<std::int32_t> part(static_cast<std::size_t>(num_nodes));
  for (vid_t v = 0; v < num_nodes; ++v) {
    auto const r = rng::draw4(st, static_cast<std::uint64_t>(v), 0, 0);
    std::uint64_t const x = (static_cast<std::uint64_t>(r[0]) << 32) | r[1];
    part[v] = static_cast<std::int32_t>(
        (static_cast<unsigned __int128>(x) * static_cast<std::uint64_t>(num_parts)) >> 64);
  }
  return part;
}

std::vector<std::int32_t> metis_clusters(vid_t num_nodes, std::span<const vid_t> src,
                                         std::span<const vid_t> dst, std::int32_t num_clusters,
                                         const metis_options& opt) {
  require_metis(opt.balance_edges ? "metis" : "super");
  COOPGNN_EXPECTS(num_clusters >= 1 && num_clusters <= num_nodes,
                  "--clusters {} is outside [1, |V| = {}]", num_clusters, num_nodes);
  constexpr std::int64_t idx_max = std::numeric_limits<std::int32_t>::max();
  COOPGNN_EXPECTS(num_nodes <= idx_max, "|V| = {} exceeds METIS's 32-bit idx_t", num_nodes);
  std::vector<std::int32_t> cluster(static_cast<std::size_t>(num_nodes), 0);
  if (num_clusters == 1) return cluster;
  sym_graph const g = symmetrise(num_nodes, src, dst);
  COOPGNN_EXPECTS(static_cast<std::int64_t>(g.adj.size()) <= idx_max,
                  "the symmetrised graph's {} adjacency entries exceed METIS's 32-bit idx_t",
                  g.adj.size());
#if defined(COOPGNN_WITH_METIS)
  static_assert(sizeof(idx_t) == sizeof(std::int32_t), "Debian's libmetis-dev uses 32-bit idx_t");
  std::vector<idx_t> xadj(g.offsets.begin(), g.offsets.end());
  std::vector<idx_t> adjncy(g.adj.begin(), g.adj.end());
  std::vector<idx_t> vwgt;
  if (opt.balance_edges && !g.adj.empty()) {
    vwgt.resize(static_cast<std::size_t>(num_nodes));
    for (vid_t v = 0; v < num_nodes; ++v) vwgt[v] = xadj[v + 1] - xadj[v];
  }
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = static_cast<idx_t>(rng::mix64(opt.seed) & 0x7fffffffULL);
  idx_t nvtxs = static_cast<idx_t>(num_nodes);
  idx_t ncon = 1;
  idx_t nparts = num_clusters;
  idx_t objval = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(num_nodes), 0);
  int const rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(),
                                     vwgt.empty() ? nullptr : vwgt.data(), nullptr, nullptr,
                                     &nparts, nullptr, nullptr, options, &objval, part.data());
  if (rc != METIS_OK) {
    char const* why = rc == METIS_ERROR_INPUT    ? "METIS_ERROR_INPUT (bad input)"
                      : rc == METIS_ERROR_MEMORY ? "METIS_ERROR_MEMORY (out of memory)"
                                                 : "METIS_ERROR";
    throw error(fmt::format("METIS_PartGraphKway into {} parts of {} vertices failed: {}",
                            num_clusters, num_nodes, why));
  }
  for (vid_t v = 0; v < num_nodes; ++v) {
    COOPGNN_EXPECTS(part[v] >= 0 && part[v] < num_clusters,
                    "METIS returned part {} for vertex {} outside [0, {})", part[v], v,
                    num_clusters);
    cluster[v] = part[v];
  }
#endif
  return cluster;
}

std::vector<std::int32_t> deal_clusters(std::int32_t num_clusters, std::int32_t num_parts,
                                        std::uint64_t seed) {
  check_parts(num_parts);
  COOPGNN_EXPECTS(num_clusters >= num_parts, "--clusters {} is below --parts {}", num_clusters,
                  num_parts);
  std::vector<vid_t> const order =
      keyed_permutation(num_clusters, seed, rng::purpose::partition, 1);
  std::vector<vid_t> const lucky = keyed_permutation(num_parts, seed, rng::purpose::partition, 2);
  std::int32_t const q = num_clusters / num_parts;
  std::int32_t const r = num_clusters % num_parts;
  std::vector<std::int32_t> size(static_cast<std::size_t>(num_parts), q);
  for (std::int32_t i = 0; i < r; ++i) ++size[lucky[i]];
  std::vector<std::int32_t> part_of(static_cast<std::size_t>(num_clusters), 0);
  std::size_t pos = 0;
  for (std::int32_t k = 0; k < num_parts; ++k) {
    for (std::int32_t j = 0; j < size[k]; ++j) part_of[order[pos++]] = k;
  }
  return part_of;
}

partition_report partition_summary(const dataset& ds, std::span<const std::int32_t> parts,
                                   std::int32_t num_parts) {
  check_parts(num_parts);
  vid_t const n = ds.num_nodes;
  COOPGNN_EXPECTS(static_cast<vid_t>(parts.size()) == n, "parts has {} entries for |V| = {}",
                  parts.size(), n);
  partition_report rep;
  rep.num_parts = num_parts;
  rep.parts.resize(static_cast<std::size_t>(num_parts));
  for (vid_t v = 0; v < n; ++v) {
    COOPGNN_EXPECTS(parts[v] >= 0 && parts[v] < num_parts,
                    "vertex {} has part {} outside [0, --parts {})", v, parts[v], num_parts);
    ++rep.parts[parts[v]].vertices;
  }

  bool const link = ds.link.has_value();
  rep.edge_set = link ? "link_train" : "graph";
  std::span<const vid_t> const src = link ? std::span<const vid_t>(ds.link->train.src) : ds.src;
  std::span<const vid_t> const dst = link ? std::span<const vid_t>(ds.link->train.dst) : ds.dst;
  rep.total_edges = static_cast<std::int64_t>(src.size());
  for (std::size_t e = 0; e < src.size(); ++e) {
    std::int32_t const p = parts[src[e]];
    if (p == parts[dst[e]]) ++rep.parts[p].kept_edges;
  }
  for (const auto& p : rep.parts) rep.kept_edges += p.kept_edges;
  rep.kept_ratio = rep.total_edges == 0
                       ? 1.0
                       : static_cast<double>(rep.kept_edges) / static_cast<double>(rep.total_edges);

  // Per-part distributions: class histograms (normalised) or feature means.
  std::vector<std::vector<double>> dist(static_cast<std::size_t>(num_parts));
  std::vector<bool> has(static_cast<std::size_t>(num_parts), false);
  std::int64_t const f = ds.feature_dim();
  if (ds.num_classes > 0 && !ds.labels.empty()) {
    rep.distance_kind = "class_tv";
    for (auto& p : rep.parts) p.class_counts.assign(static_cast<std::size_t>(ds.num_classes), 0);
    for (vid_t v = 0; v < n; ++v) {
      if (ds.labels[v] >= 0) ++rep.parts[parts[v]].class_counts[ds.labels[v]];
    }
    for (std::int32_t k = 0; k < num_parts; ++k) {
      const auto& c = rep.parts[k].class_counts;
      std::int64_t total = 0;
      for (auto x : c) total += x;
      has[k] = total > 0;
      for (auto x : c) dist[k].push_back(total > 0 ? static_cast<double>(x) / total : 0.0);
    }
  } else if (ds.features_in_memory() && f > 0) {
    rep.distance_kind = "feature_l2";
    for (std::int32_t k = 0; k < num_parts; ++k) dist[k].assign(static_cast<std::size_t>(f), 0.0);
    for (vid_t v = 0; v < n; ++v) {
      auto& d = dist[parts[v]];
      for (std::int64_t j = 0; j < f; ++j) {
        d[j] += ds.features_are_16bit() ? widen_to_float(ds.feature_type, ds.features16(v, j))
                                        : ds.features(v, j);
      }
    }
    for (std::int32_t k = 0; k < num_parts; ++k) {
      auto const cnt = rep.parts[k].vertices;
      has[k] = cnt > 0;
      if (!has[k]) continue;
      for (auto& x : dist[k]) x /= static_cast<double>(cnt);
      rep.parts[k].feature_mean = dist[k];
    }
  } else {
    rep.distance_kind = "none";
    return rep;
  }
  double sum = 0;
  for (std::int32_t a = 0; a < num_parts; ++a) {
    for (std::int32_t b = a + 1; b < num_parts; ++b) {
      if (!has[a] || !has[b]) continue;
      double d = 0;
      for (std::size_t j = 0; j < dist[a].size(); ++j) {
        double const diff = dist[a][j] - dist[b][j];
        d += rep.distance_kind == "class_tv" ? std::abs(diff) : diff * diff;
      }
      d = rep.distance_kind == "class_tv" ? 0.5 * d : std::sqrt(d);
      rep.distance_max = std::max(rep.distance_max, d);
      sum += d;
      ++rep.distance_pairs;
    }
  }
  rep.distance_mean = rep.distance_pairs > 0 ? sum / static_cast<double>(rep.distance_pairs) : 0.0;
  return rep;
}

namespace {

/// Rows `rows` (ascending) of the [n, f] C-ordered .npy `file` of dtype `want` (float32 read as
/// T = float, float16 as its bit patterns, T = std::uint16_t), read one row at a time.
template <typename T>
matrix<T> read_npy_rows(const std::filesystem::path& file, npy_dtype want, vid_t n, std::int64_t f,
                        std::span<const vid_t> rows) {
  auto const h = read_npy_header(file);  // checks the file size against the shape
  if (h.dtype != want || h.fortran_order || h.shape.size() != 2 || h.shape[0] != n ||
      h.shape[1] != f) {
    COOPGNN_IO_FAIL("{}: need C-ordered {} features [{}, {}], found {} {}{}", file.string(),
                    npy_dtype_name(want), n, f, npy_dtype_name(h.dtype), format_npy_shape(h.shape),
                    h.fortran_order ? " in Fortran order" : "");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) COOPGNN_IO_FAIL("{}: cannot open", file.string());
  matrix<T> out(static_cast<std::int64_t>(rows.size()), f);
  auto const row_bytes = static_cast<std::streamsize>(f * sizeof(T));
  for (std::size_t i = 0; i < rows.size() && f > 0; ++i) {
    in.seekg(static_cast<std::streamoff>(h.data_offset) + rows[i] * row_bytes);
    in.read(reinterpret_cast<char*>(&out(static_cast<std::int64_t>(i), 0)), row_bytes);
    if (!in) COOPGNN_IO_FAIL("{}: cannot read feature row {}", file.string(), rows[i]);
  }
  return out;
}

}  // namespace

dataset induced_subgraph(const dataset& ds, std::span<const std::int32_t> parts, std::int32_t part,
                         std::vector<vid_t>* global_ids) {
  vid_t const n = ds.num_nodes;
  COOPGNN_EXPECTS(static_cast<vid_t>(parts.size()) == n,
                  "induced_subgraph: parts has {} entries for |V| = {} of '{}'", parts.size(), n,
                  ds.name);
  COOPGNN_EXPECTS(part >= 0, "induced_subgraph: part {} is negative", part);
  COOPGNN_EXPECTS(ds.edges_in_file == 0,
                  "induced_subgraph: the edges of '{}' were left in {} (read with load_edges "
                  "false); it needs them in src / dst",
                  ds.name, ds.edge_file.string());
  constexpr vid_t absent = -1;
  std::vector<vid_t> local(static_cast<std::size_t>(n), absent);
  std::vector<vid_t> ids;
  for (vid_t v = 0; v < n; ++v) {
    COOPGNN_EXPECTS(parts[v] >= 0, "induced_subgraph: vertex {} has the negative part id {}", v,
                    parts[v]);
    if (parts[v] != part) continue;
    local[v] = static_cast<vid_t>(ids.size());
    ids.push_back(v);
  }
  auto const kept = [&](vid_t v) { return local[v] != absent; };
  auto const filter = [&](const std::vector<vid_t>& vs) {
    std::vector<vid_t> out;
    for (vid_t v : vs) {
      if (kept(v)) out.push_back(local[v]);
    }
    return out;
  };

  dataset out;
  out.name = fmt::format("{}/part{}", ds.name, part);
  out.num_nodes = static_cast<vid_t>(ids.size());
  for (std::size_t e = 0; e < ds.src.size(); ++e) {
    if (kept(ds.src[e]) && kept(ds.dst[e])) {
      out.src.push_back(local[ds.src[e]]);
      out.dst.push_back(local[ds.dst[e]]);
    }
  }
  std::int64_t const f = ds.feature_dim();
  out.feature_cols = f;
  out.feature_type = ds.feature_type;
  // The rows V_k at the stored width (16-bit features stay 16-bit).
  auto copy_rows = [&](const auto& from, auto& to, npy_dtype want) {
    using T = std::remove_cvref_t<decltype(from(0, 0))>;
    if (ds.features_in_memory() && f > 0) {
      to = matrix<T>(out.num_nodes, f);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        std::copy_n(&from(ids[i], 0), f, &to(static_cast<std::int64_t>(i), 0));
      }
    } else if (f > 0 && !ds.feature_file.empty()) {
      to = read_npy_rows<T>(ds.feature_file, want, n, f, ids);
    } else {
      to = matrix<T>(out.num_nodes, f);
    }
  };
  if (ds.features_are_16bit()) {
    copy_rows(ds.features16, out.features16, npy_dtype::float16);
  } else {
    copy_rows(ds.features, out.features, npy_dtype::float32);
  }
  if (!ds.labels.empty()) {
    for (vid_t v : ids) out.labels.push_back(ds.labels[v]);
  }
  out.num_classes = ds.num_classes;
  out.train = filter(ds.train);
  out.valid = filter(ds.valid);
  out.test = filter(ds.test);
  if (ds.link) {
    const link_task& t = *ds.link;
    link_task lt;
    lt.name = t.name;
    for (std::size_t i = 0; i < t.train.src.size(); ++i) {
      if (kept(t.train.src[i]) && kept(t.train.dst[i])) {
        lt.train.src.push_back(local[t.train.src[i]]);
        lt.train.dst.push_back(local[t.train.dst[i]]);
      }
    }
    if (t.user_item()) {
      // ids is sorted: the part's vertices below a bound are a prefix of it.
      auto const below = [&](vid_t bound) {
        return static_cast<vid_t>(std::lower_bound(ids.begin(), ids.end(), bound) - ids.begin());
      };
      lt.item_begin = below(t.item_begin);
      lt.item_end = below(t.item_end);
      if (lt.item_begin == lt.item_end) lt.item_begin = lt.item_end = 0;  // no item: not user-item
    }
    out.link = std::move(lt);
  }
  if (global_ids != nullptr) *global_ids = std::move(ids);
  return out;
}

partition_scheme parse_partition_scheme(const std::string& s) {
  if (s == "random") return partition_scheme::random;
  if (s == "super") return partition_scheme::super;
  if (s == "metis") return partition_scheme::metis;
  COOPGNN_FAIL("--scheme '{}' is not one of random, super, metis", s);
}

std::string to_string(partition_scheme s) {
  switch (s) {
    case partition_scheme::random:
      return "random";
    case partition_scheme::super:
      return "super";
    case partition_scheme::metis:
      return "metis";
  }
  return "?";
}

partition_result run_partition(const dataset& ds, const partition_request& req) {
  check_parts(req.num_parts);
  vid_t const n = ds.num_nodes;
  char const* const name = req.scheme == partition_scheme::random  ? "random"
                           : req.scheme == partition_scheme::super ? "super"
                                                                   : "metis";
  COOPGNN_EXPECTS(!req.num_clusters || req.scheme == partition_scheme::super,
                  "--clusters applies to --scheme super only (metis uses N = --parts, random no "
                  "clusters)");
  if (req.scheme != partition_scheme::random) {
    require_metis(name);
    COOPGNN_EXPECTS(req.num_parts <= n, "--parts {} exceeds |V| = {} (--scheme {})", req.num_parts,
                    n, name);
  }
  partition_result res;
  if (req.scheme == partition_scheme::super) {
    if (req.num_clusters) {
      res.num_clusters = *req.num_clusters;
      res.clusters_reason = "given by --clusters";
      COOPGNN_EXPECTS(res.num_clusters >= req.num_parts, "--clusters {} is below --parts {}",
                      res.num_clusters, req.num_parts);
      COOPGNN_EXPECTS(res.num_clusters <= n, "--clusters {} exceeds |V| = {}", res.num_clusters, n);
    } else {
      std::int64_t const cap = n / 8;
      res.num_clusters = std::min(reference_super_clusters, cap);
      res.clusters_reason =
          cap < reference_super_clusters
              ? fmt::format("default: |V| / 8 = {}, below the reference's {}", cap,
                            reference_super_clusters)
              : fmt::format("default: the reference's {} (|V| / 8 = {} is larger)",
                            reference_super_clusters, cap);
      COOPGNN_EXPECTS(res.num_clusters >= req.num_parts,
                      "--clusters: the default min({}, |V| / 8) = {} is below --parts {}; give "
                      "--clusters between {} and |V| = {}",
                      reference_super_clusters, res.num_clusters, req.num_parts, req.num_parts, n);
    }
  } else if (req.scheme == partition_scheme::metis) {
    res.num_clusters = req.num_parts;
    res.clusters_reason = "N = --parts (PSGD-PA)";
  }

  auto const t0 = std::chrono::steady_clock::now();
  switch (req.scheme) {
    case partition_scheme::random:
      res.parts = random_parts(n, req.num_parts, req.seed);
      break;
    case partition_scheme::super: {
      auto const n_clusters = static_cast<std::int32_t>(res.num_clusters);
      std::vector<std::int32_t> const cluster =
          metis_clusters(n, ds.src, ds.dst, n_clusters, {.balance_edges = false, .seed = req.seed});
      std::vector<std::int32_t> const part_of = deal_clusters(n_clusters, req.num_parts, req.seed);
      res.parts.resize(cluster.size());
      for (std::size_t v = 0; v < cluster.size(); ++v) res.parts[v] = part_of[cluster[v]];
      break;
    }
    case partition_scheme::metis:
      res.parts = metis_clusters(n, ds.src, ds.dst, req.num_parts,
                                 {.balance_edges = true, .seed = req.seed});
      break;
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

partition_files read_partition_files(const std::filesystem::path& dir, vid_t num_nodes,
                                     std::int32_t num_parts) {
  partition_files out;
  std::filesystem::path const summary = dir / "summary.json";
  std::error_code ec;
  if (std::filesystem::is_regular_file(summary, ec)) {
    std::ifstream in(summary, std::ios::binary);
    auto const j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("scheme") && j["scheme"].is_string()) {
      out.scheme = j["scheme"].get<std::string>();
    }
  }
  std::filesystem::path const file = dir / "parts.npy";
  std::string const what = file.string();
  auto arr = read_npy<std::int32_t>(file);
  if (arr.rank() != 1) {
    COOPGNN_IO_FAIL("{}: part ids must be a 1-D array [|V|], found shape {}", what,
                    format_npy_shape(arr.shape));
  }
  if (static_cast<vid_t>(arr.data.size()) != num_nodes) {
    COOPGNN_IO_FAIL("{}: {} part ids for a dataset of {} vertices", what, arr.data.size(),
                    num_nodes);
  }
  for (std::size_t v = 0; v < arr.data.size(); ++v) {
    std::int32_t const p = arr.data[v];
    if (p < 0 || p >= num_parts) {
      COOPGNN_IO_FAIL("{}: part id {} of vertex {} outside [0, {}) (the run has {} parts)", what, p,
                      v, num_parts, num_parts);
    }
  }
  out.parts = std::move(arr.data);
  return out;
}

}  // namespace coopgnn
