// `coopgnn partition`: RandomTMA, SuperTMA and PSGD-PA partitions of a dataset (docs/design.md
// section 7.2; runtime/graph/partition.hpp does the work, this file parses and prints).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bench/drivers/results.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/partition.hpp"
#include "runtime/graph/repeated_edges.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct partition_args {
  std::string input;
  std::string output;
  std::string scheme;
  std::int32_t parts = 0;
  std::int64_t clusters = 0;
  std::uint64_t seed = 1;
  bool json = false;
  bool overwrite = false;
  std::string feature;
};

nlohmann::json summary_json(const partition_args& a, const dataset& ds, const partition_result& res,
                            const partition_report& rep) {
  nlohmann::json j;
  j["dataset"] = ds.name;
  j["input"] = a.input;
  j["output"] = a.output;
  j["scheme"] = a.scheme;
  j["parts"] = a.parts;
  j["clusters"] = res.num_clusters > 0 ? nlohmann::json(res.num_clusters) : nlohmann::json();
  j["clusters_reason"] = res.clusters_reason;
  j["seed"] = a.seed;
  j["parts_file"] = {{"path", "parts.npy"}, {"dtype", "int32"}, {"shape", {ds.num_nodes}}};
  j["num_nodes"] = ds.num_nodes;
  j.update(partition_report_json(rep));
  j["seconds"] = res.seconds;
  return j;
}

}  // namespace

nlohmann::json partition_report_json(const partition_report& rep) {
  nlohmann::json j;
  j["edge_set"] = rep.edge_set;
  j["total_edges"] = rep.total_edges;
  j["kept_edges"] = rep.kept_edges;
  j["kept_ratio"] = rep.kept_ratio;
  j["distance"] = {{"kind", rep.distance_kind},
                   {"max", rep.distance_max},
                   {"mean", rep.distance_mean},
                   {"pairs", rep.distance_pairs}};
  nlohmann::json per = nlohmann::json::array();
  for (std::size_t k = 0; k < rep.parts.size(); ++k) {
    const part_summary& p = rep.parts[k];
    nlohmann::json pj = {{"part", k}, {"vertices", p.vertices}, {"kept_edges", p.kept_edges}};
    if (!p.class_counts.empty()) pj["class_counts"] = p.class_counts;
    per.push_back(pj);
  }
  j["per_part"] = per;
  return j;
}

std::string partition_distance_text(const partition_report& rep) {
  if (rep.distance_kind == "none") return "no labels or features: no distance between parts";
  std::string const what = rep.distance_kind == "class_tv" ? "total variation of class histograms"
                                                           : "L2 distance of feature means";
  return fmt::format("{} between parts: max {:.4f}, mean {:.4f} over {} pairs", what,
                     rep.distance_max, rep.distance_mean, rep.distance_pairs);
}

namespace {

void print_summary(const partition_args& a, const dataset& ds, const partition_result& res,
                   const partition_report& rep) {
  fmt::print("read {} ({} nodes, {} edges)\n", a.input, ds.num_nodes, ds.num_edges());
  if (a.scheme == "random") {
    fmt::print("scheme random: every vertex uniform over {} parts (seed {})\n", a.parts, a.seed);
  } else if (a.scheme == "super") {
    fmt::print("scheme super: METIS into N = {} mini-clusters ({}), dealt to {} parts (seed {})\n",
               res.num_clusters, res.clusters_reason, a.parts, a.seed);
  } else {
    fmt::print("scheme metis: METIS into N = M = {} edge-balanced parts (seed {})\n", a.parts,
               a.seed);
  }
  fmt::print("training edges: {} ({})\n", rep.total_edges,
             rep.edge_set == "link_train" ? "the link task's train positives"
                                          : "the graph's edges, each once");
  fmt::print("{:>6} {:>12} {:>14}\n", "part", "vertices", "kept edges");
  for (std::size_t k = 0; k < rep.parts.size(); ++k) {
    fmt::print("{:>6} {:>12} {:>14}\n", k, rep.parts[k].vertices, rep.parts[k].kept_edges);
  }
  fmt::print("kept r = {} / {} = {:.4f}\n", rep.kept_edges, rep.total_edges, rep.kept_ratio);
  fmt::print("{}\n", partition_distance_text(rep));
  fmt::print("partitioning: {:.3f} s\n", res.seconds);
  fmt::print("wrote {}/parts.npy (int32 [{}]) and {}/summary.json\n", a.output, ds.num_nodes,
             a.output);
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto a = std::make_shared<partition_args>();
  CLI::App* c = app.add_subcommand(
      "partition",
      "Partition a dataset's vertices into M parts for TMA trainers (RandomTMA, SuperTMA, "
      "PSGD-PA)");
  c->footer(
      "Each of M trainers keeps the node-induced subgraph of its part (Zhu et al. 2023; edges\n"
      "between parts are dropped). Schemes:\n"
      "  random: every vertex independently uniform over the M parts, keyed by --seed\n"
      "          (RandomTMA).\n"
      "  super:  METIS k-way (edge cut, vertex-balanced) of the symmetrised graph without\n"
      "          self-loops into N mini-clusters, then the clusters shuffled by --seed and\n"
      "          dealt to the M parts, each part getting floor(N/M) or floor(N/M)+1 of them\n"
      "          (SuperTMA). N = --clusters, default min(15000, |V| / 8): the paper's 15000,\n"
      "          capped so that a cluster averages at least 8 vertices.\n"
      "  metis:  METIS k-way with N = M parts, edge-balanced: vertex weight = degree, so parts\n"
      "          hold similar numbers of edges (PSGD-PA, as DGL's balance_edges).\n"
      "super and metis need a build with METIS (libmetis-dev). Requires M >= 1 and, for super,\n"
      "M <= N <= |V|.\n"
      "Writes OUT/parts.npy (int32 [|V|], the part of each vertex) and OUT/summary.json (a\n"
      "non-empty OUT needs --overwrite; OUT must not be the dataset), and\n"
      "prints per part the vertices and training edges kept (both endpoints in the part;\n"
      "training edges = the link task's train positives, else the graph's edges), the ratio\n"
      "r = kept / all, the total variation distance of the parts' class histograms (labels),\n"
      "else the L2 distance of their feature means (features), and the partitioning time.\n"
      "Same input and --seed: the same parts.\n"
      "Example: coopgnn partition --scheme super --parts 3 data/tw-tma parts/tw-super");
  c->add_option("--scheme", a->scheme, "random, super or metis (see below)")
      ->required()
      ->check(CLI::IsMember({"random", "super", "metis"}));
  c->add_option("--parts", a->parts, "M: number of parts (trainers), >= 1")->required();
  c->add_option("--feature", a->feature,
                "node feature for the balance summary when there are no labels (default: feat)");
  c->add_option("--clusters", a->clusters,
                "super: N mini-clusters, M <= N <= |V| (default min(15000, |V| / 8))");
  c->add_option("--seed", a->seed, "random seed (random draws, cluster dealing, METIS)")
      ->capture_default_str();
  c->add_flag("--json", a->json, "print one JSON object (as summary.json) instead of the summary");
  c->add_option("dataset", a->input, "input dataset directory")->required();
  c->add_option("out", a->output, "output directory (created if needed; not the dataset)")
      ->required();
  c->add_flag("--overwrite", a->overwrite,
              "replace OUT when it exists and is not empty (without it, that is an error); the "
              "new files are written to a temporary sibling that takes OUT's place when complete");
  c->callback([a, c] {
    partition_request req;
    req.scheme = parse_partition_scheme(a->scheme);
    req.num_parts = a->parts;
    if (c->count("--clusters") > 0) req.num_clusters = a->clusters;
    req.seed = a->seed;
    // Fail before reading a large dataset when the scheme cannot run in this build.
    if (req.scheme != partition_scheme::random) require_metis(a->scheme);
    check_output_dir(a->output, {a->input}, a->overwrite, "OUT");
    dataset_read_options ropt;
    ropt.feature = a->feature;
    dataset ds = read_dataset(a->input, ropt);
    // The graph partitioned is the graph trained: each edge once (as train and info count it).
    std::int64_t const stored = ds.num_edges();
    if (std::string const note =
            repeated_edges_note(ds, remove_repeated_edges(ds), stored, "partitioned");
        !note.empty()) {
      fmt::print(stderr, "note: {}\n", note);
    }
    partition_result const res = run_partition(ds, req);
    partition_report const rep = partition_summary(ds, res.parts, req.num_parts);
    nlohmann::json const j = summary_json(*a, ds, res, rep);
    write_dir_atomically(a->output, [&](const std::filesystem::path& out) {
      std::int64_t const shape[] = {ds.num_nodes};
      write_npy(out / "parts.npy", std::span<const std::int32_t>(res.parts), shape);
      bench::write_file_atomic(out / "summary.json", j.dump(2) + "\n");
    });
    if (a->json) {
      fmt::print("{}\n", j.dump());
    } else {
      print_summary(*a, ds, res, rep);
    }
  });
}

}  // namespace coopgnn::cli
