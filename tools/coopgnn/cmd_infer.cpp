// `coopgnn embed`, `coopgnn predict` and `coopgnn score-pairs`: layer-wise full-neighbour
// inference with a model saved by `coopgnn train --save-model` or `coopgnn tma` (docs/usage.md,
// "Saved models"), on the graph it was trained on or, for inductive models, on another one.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/storage.hpp"
#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/transforms.hpp"
#include "pipeline/checkpoint.hpp"
#include "pipeline/link.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct infer_options {
  std::string model;
  std::string dataset;
  std::string out;         // embed: the embeddings; predict: the class ids
  std::string out_logits;  // predict
  std::string pairs;       // score-pairs: the (u, v) pairs
  bool sigmoid = false;    // score-pairs: probabilities instead of logits
  int layer = 0;           // embed: 1..L, 0 = the last conv layer
  int threads = 0;         // 0 = every core
};

/// The saved model, the dataset it was trained on (checked against the manifest) and the input
/// rows of every vertex (its learned embeddings, or the dataset's features as training read
/// and transformed them).
struct loaded_model {
  saved_model saved;
  std::unique_ptr<loaded_dataset> data;
  matrix<float> input;
  std::unique_ptr<models::gnn_model> model;
};

/// Whether `ds` is the graph the model's identity names (dataset name, vertex and edge counts);
/// a model whose identity records none of them is taken to match.
bool same_graph(const nlohmann::json& id, const dataset& ds) {
  auto const differs = [&](const char* key, const nlohmann::json& value) {
    return id.contains(key) && id[key] != value;
  };
  return !differs("dataset", ds.name) && !differs("dataset.num_nodes", ds.num_nodes) &&
         !differs("dataset.num_edges", ds.num_edges());
}

/// Another graph than the training one: transductive parts (learnt embedding rows) and R-GCN
/// (weights per relation type of the training graph) are refused; GraphSAGE, GCN, GAT and MLP
/// run inductively, with a note on stderr.
void check_other_graph(const loaded_model& lm, const std::string& manifest,
                       const std::string& dir) {
  auto const& id = lm.saved.identity;
  auto const& ds = lm.data->ds;
  std::string const trained =
      fmt::format("'{}' ({} vertices, {} edges)", id.value("dataset", std::string("?")),
                  id.value("dataset.num_nodes", std::int64_t{-1}),
                  id.value("dataset.num_edges", std::int64_t{-1}));
  if (lm.saved.embeddings) {
    COOPGNN_IO_FAIL(
        "{}: the model is transductive: it learnt one input embedding row per vertex of {} "
        "(--embedding-dim) and has none for the vertices of {} ('{}', {} vertices); run it on "
        "the graph it was trained on",
        manifest, trained, dir, ds.name, ds.num_nodes);
  }
  if (lm.saved.config.kind == models::conv_kind::rgcn) {
    COOPGNN_IO_FAIL(
        "{}: an R-GCN's weights belong to the relation types of the graph it was trained on "
        "({}); {} ('{}') is another graph",
        manifest, trained, dir, ds.name);
  }
  fmt::print(stderr,
             "note: the model was trained on {}; running it inductively on {} ('{}', {} "
             "vertices, {} edges): {} is an inductive model of the same input width {}\n",
             trained, dir, ds.name, ds.num_nodes, ds.num_edges(),
             models::to_string(lm.saved.config.kind), lm.saved.config.in_dim);
}

loaded_model load_model(const infer_options& o) {
  loaded_model lm;
  lm.saved = read_saved_model(o.model);
  auto const manifest = (std::filesystem::path(o.model) / "manifest.json").string();
  auto const& id = lm.saved.identity;
  dataset_read_options ropt;
  ropt.feature = id.value("--feature", std::string());
  ropt.task = id.value("dataset.task", std::string());
  std::string const dir = o.dataset.empty() ? default_dataset_dir() : o.dataset;
  lm.data = load_dataset(dir, ropt);
  auto& ds = lm.data->ds;
  if (!same_graph(id, ds)) {
    check_other_graph(lm, manifest, dir);
  } else if (std::string const note = older_content_note(id, "the model " + o.model);
             !note.empty()) {
    fmt::print(stderr, "note: {}\n", note);
  } else {
    // The same name and sizes but other edges, features or split: refused (the model's numbers
    // would mean nothing on it, and a user who meant another graph would have named it
    // otherwise).
    std::string const saved = id["dataset.content"].get<std::string>();
    std::string const here = dataset_fingerprint(ds);
    if (!fingerprint_difference(saved, here).empty()) {
      COOPGNN_IO_FAIL(
          "{}: the model was trained on other content than {} holds: its {} differ (dataset "
          "'{}', fingerprint {} in the model, {} here)",
          manifest, dir, fingerprint_difference(saved, here), id.value("dataset", std::string()),
          saved, here);
    }
  }
  if (lm.saved.embeddings) {
    lm.input = std::move(*lm.saved.embeddings);
  } else {
    COOPGNN_EXPECTS(ds.features_in_memory() && ds.feature_dim() == lm.saved.config.in_dim,
                    "--dataset {}: features of width {}, the model ({}) reads {}", dir,
                    ds.feature_dim(), o.model, lm.saved.config.in_dim);
    bool const row_norm =
        parse_feature_normalization(id.value("--normalize-features", std::string("none"))) ==
        feature_normalization::row;
    if (ds.features_are_16bit()) {
      // Layer-wise inference reads every row as float32: widened here, for this command only
      // (the table in the dataset stays 16-bit; training never normalises a 16-bit table).
      COOPGNN_EXPECTS(!row_norm,
                      "--dataset {}: the model was trained with row-normalised "
                      "features, the dataset's are {}",
                      dir, to_string(ds.feature_type));
      fmt::print(stderr,
                 "note: the {} features are widened to float32 for layer-wise inference "
                 "({} bytes while it runs)\n",
                 to_string(ds.feature_type), ds.num_nodes * ds.feature_dim() * 4);
      lm.input = feature_rows_float32(ds);
    } else {
      if (row_norm) normalize_feature_rows(ds.features);
      lm.input = std::move(ds.features);
    }
  }
  if (lm.input.rows() != ds.num_nodes) {
    COOPGNN_IO_FAIL("{}: {} embedding rows for a graph of {} vertices", manifest, lm.input.rows(),
                    ds.num_nodes);
  }
  lm.model = build_saved_model(lm.saved, exec_context(backend::host), manifest);
  return lm;
}

/// The pairs of `file` for score-pairs: a .npy of integers [N, 2] (u, v) or [N, 3] (u, v,
/// relation), or text with one "u v" or "u v relation" per line (blank lines and lines starting
/// with '#' skipped). Ids are checked against [0, num_nodes).
/// @throws io_error naming the file (and line) for a malformed row or an id out of range.
pair_set read_pairs(const std::string& file, std::int64_t num_nodes) {
  pair_set p;
  auto const add = [&](std::int64_t u, std::int64_t v, std::int64_t r, const std::string& where) {
    if (u < 0 || u >= num_nodes || v < 0 || v >= num_nodes) {
      COOPGNN_IO_FAIL("{}: pair ({}, {}) names a vertex outside [0, {}) (the graph's vertices)",
                      where, u, v, num_nodes);
    }
    if (r < -1 || r > 65535) COOPGNN_IO_FAIL("{}: relation {} out of range", where, r);
    p.src.push_back(static_cast<vid_t>(u));
    p.dst.push_back(static_cast<vid_t>(v));
    if (r >= 0) p.relation.push_back(static_cast<std::int32_t>(r));
  };
  if (file.ends_with(".npy")) {
    auto const a = read_npy<std::int64_t>(file);
    if (a.rank() != 2 || (a.dim(1) != 2 && a.dim(1) != 3)) {
      COOPGNN_IO_FAIL("{}: shape {}; expected [N, 2] (u, v) or [N, 3] (u, v, relation)", file,
                      format_npy_shape(a.shape));
    }
    auto const c = a.dim(1);
    for (std::int64_t i = 0; i < a.dim(0); ++i) {
      auto const* row = &a.data[static_cast<std::size_t>(i * c)];
      add(row[0], row[1], c == 3 ? row[2] : -1, fmt::format("{} row {}", file, i));
    }
  } else {
    std::ifstream in(file);
    if (!in) COOPGNN_IO_FAIL("{}: cannot open the pairs file", file);
    std::string line;
    int columns = 0;
    for (std::int64_t n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
      std::istringstream ls(line);
      std::vector<std::int64_t> x;
      std::int64_t v = 0;
      while (ls >> v) x.push_back(v);
      if (!ls.eof() || (x.size() != 2 && x.size() != 3) ||
          (columns != 0 && static_cast<int>(x.size()) != columns)) {
        COOPGNN_IO_FAIL("{} line {}: '{}': expected \"u v\" or \"u v relation\" (integers; "
                        "the same columns on every line)",
                        file, n, line);
      }
      columns = static_cast<int>(x.size());
      add(x[0], x[1], x.size() == 3 ? x[2] : -1, fmt::format("{} line {}", file, n));
    }
  }
  if (p.empty()) COOPGNN_IO_FAIL("{}: no pairs", file);
  return p;
}

int threads_of(int t) {
  return t > 0 ? t : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void add_model_options(CLI::App* cmd, infer_options& o) {
  cmd->add_option("--model", o.model,
                  "Model directory written by `coopgnn train --save-model` (or a `coopgnn tma` "
                  "output directory: its best aggregate)")
      ->required();
  cmd->add_option("--dataset", o.dataset,
                  "The dataset directory: the one the model was trained on, or, for inductive "
                  "models (sage, gcn, gat, mlp without --embedding-dim), another graph with the "
                  "same feature width; default: the bundled Cora");
  cmd->add_option("--threads", o.threads,
                  "Host threads (0 = every core; results do not "
                  "depend on it)")
      ->capture_default_str();
}

}  // namespace

void add_infer_commands(CLI::App& app) {
  auto eo = std::make_shared<infer_options>();
  auto* embed = app.add_subcommand(
      "embed",
      "Node embeddings from a saved model: layer-wise full-neighbour inference over every "
      "vertex (no dropout), written as a float32 .npy [|V|, width].");
  add_model_options(embed, *eo);
  embed->add_option("--out", eo->out, "Output .npy file")->required();
  embed
      ->add_option("--layer", eo->layer,
                   "Output of GNN layer K (1 .. number of layers); default: the last GNN "
                   "layer (before the --linear-head, if any)")
      ->capture_default_str();
  embed->callback([eo] {
    check_writable_file(eo->out, "--out");
    auto lm = load_model(*eo);
    int const L = lm.model->num_layers();
    int const k = eo->layer == 0 ? L : eo->layer;
    COOPGNN_EXPECTS(k >= 1 && k <= L, "--layer {} is outside 1 .. {} (the model's layers)",
                    eo->layer, L);
    exec_context const ctx = exec_context(backend::host).with_threads(threads_of(eo->threads));
    block const full = models::full_neighbor_block(lm.data->g);
    tensor<float> h;
    tensor_view<const float> in = host_view(lm.input);
    for (int i = 0; i < k; ++i) {
      h = lm.model->forward_layer(i, ctx, view(full), in, models::step_key{}, nullptr);
      in = h.view();
    }
    matrix<float> out = to_host(ctx, std::move(h));
    write_npy(eo->out, out.values(), std::vector<std::int64_t>{out.rows(), out.cols()});
    fmt::print("embeddings of layer {} [{}, {}] written to {}\n", k, out.rows(), out.cols(),
               eo->out);
  });

  auto po = std::make_shared<infer_options>();
  auto* predict = app.add_subcommand(
      "predict",
      "Node classification with a saved model: full-neighbour inference over every vertex; "
      "writes the predicted class ids (int64 [|V|]) and/or the logits (float32 [|V|, C]).");
  add_model_options(predict, *po);
  predict->add_option("--out", po->out, "Output .npy of the predicted class ids (argmax)");
  predict->add_option("--out-logits", po->out_logits, "Output .npy of the logits");
  predict->callback([po] {
    COOPGNN_EXPECTS(!po->out.empty() || !po->out_logits.empty(),
                    "predict: give --out (class ids) and/or --out-logits");
    if (!po->out.empty()) check_writable_file(po->out, "--out");
    if (!po->out_logits.empty()) check_writable_file(po->out_logits, "--out-logits");
    auto lm = load_model(*po);
    COOPGNN_EXPECTS(!lm.saved.config.decoder,
                    "predict: {} is a link-prediction model; use `coopgnn score-pairs` for "
                    "pair scores or `coopgnn embed` for its node embeddings",
                    po->model);
    auto const& ds = lm.data->ds;
    COOPGNN_EXPECTS(ds.num_classes == 0 || ds.num_classes == lm.saved.config.num_classes,
                    "predict: --dataset {} has {} classes, the model ({}) predicts {}",
                    po->dataset.empty() ? default_dataset_dir() : po->dataset, ds.num_classes,
                    po->model, lm.saved.config.num_classes);
    matrix<float> const logits =
        lm.model->infer_full(lm.data->g, lm.input, threads_of(po->threads));
    if (!po->out_logits.empty()) {
      write_npy(po->out_logits, logits.values(),
                std::vector<std::int64_t>{logits.rows(), logits.cols()});
    }
    if (!po->out.empty()) {
      std::vector<std::int64_t> cls(static_cast<std::size_t>(logits.rows()));
      for (std::int64_t v = 0; v < logits.rows(); ++v) {
        const float* r = logits.row(v);
        cls[static_cast<std::size_t>(v)] = std::max_element(r, r + logits.cols()) - r;
      }
      write_npy(po->out, cls, std::vector<std::int64_t>{logits.rows()});
    }
    fmt::print(
        "predictions for {} vertices ({} classes) written to {}\n", logits.rows(), logits.cols(),
        po->out.empty() ? po->out_logits
                        : (po->out_logits.empty() ? po->out : po->out + " and " + po->out_logits));
  });

  auto so = std::make_shared<infer_options>();
  auto* score = app.add_subcommand(
      "score-pairs",
      "Link prediction with a saved model: full-neighbour inference over every vertex, then the "
      "decoder's score of each (u, v) pair; writes float32 [N] (logits, or probabilities with "
      "--sigmoid) in the pairs' order.");
  add_model_options(score, *so);
  score
      ->add_option("--pairs", so->pairs,
                   "The pairs: a .npy of integers [N, 2] (u, v) or [N, 3] (u, v, relation for "
                   "the distmult decoder), or a text file of \"u v\" / \"u v relation\" lines")
      ->required();
  score->add_option("--out", so->out, "Output .npy of the scores (float32 [N])")->required();
  score->add_flag("--sigmoid", so->sigmoid,
                  "Write sigmoid(score), the predicted probability of an edge, instead of the "
                  "logit");
  score->callback([so] {
    check_writable_file(so->out, "--out");
    auto lm = load_model(*so);
    COOPGNN_EXPECTS(lm.saved.config.decoder.has_value(),
                    "score-pairs: {} is a node-classification model (it has no link decoder); use "
                    "`coopgnn predict`",
                    so->model);
    pair_set const pairs = read_pairs(so->pairs, lm.data->ds.num_nodes);
    bool const distmult = lm.saved.config.decoder == models::decoder_kind::distmult;
    COOPGNN_EXPECTS(!distmult || lm.saved.config.decoder_relations == 1 || !pairs.relation.empty(),
                    "score-pairs: {} has a distmult decoder over {} relations: give each pair its "
                    "relation (a third column in {})",
                    so->model, lm.saved.config.decoder_relations, so->pairs);
    for (std::size_t i = 0; i < pairs.relation.size(); ++i) {
      COOPGNN_EXPECTS(pairs.relation[i] < (distmult ? lm.saved.config.decoder_relations : 1),
                      "score-pairs: {} pair {}: relation {} outside [0, {})", so->pairs, i,
                      pairs.relation[i], distmult ? lm.saved.config.decoder_relations : 1);
    }
    matrix<float> const z = lm.model->infer_full(lm.data->g, lm.input, threads_of(so->threads));
    std::vector<float> s = score_pairs(*lm.model->decoder(), z, pairs);
    if (so->sigmoid) {
      for (auto& x : s) x = 1.0f / (1.0f + std::exp(-x));
    }
    write_npy(so->out, std::span<const float>(s),
              std::vector<std::int64_t>{static_cast<std::int64_t>(s.size())});
    fmt::print("{} of {} pairs written to {}\n", so->sigmoid ? "probabilities" : "scores",
               s.size(), so->out);
  });
}

}  // namespace coopgnn::cli
