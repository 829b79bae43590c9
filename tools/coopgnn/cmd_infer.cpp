// `coopgnn embed` and `coopgnn predict`: layer-wise full-neighbour inference with a model saved
// by `coopgnn train --save-model` (README "Checkpoints and interrupts").
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "cache/storage.hpp"
#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "runtime/graph/transforms.hpp"
#include "runtime/pipeline/checkpoint.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/output_paths.hpp"

namespace coopgnn::cli {

namespace {

struct infer_options {
  std::string model;
  std::string dataset;
  std::string out;         // embed: the embeddings; predict: the class ids
  std::string out_logits;  // predict
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
  if (id.contains("dataset.num_nodes") && id["dataset.num_nodes"] != ds.num_nodes) {
    COOPGNN_IO_FAIL("{}: the model was trained on a graph of {} vertices ('{}'); {} has {}",
                    manifest, id["dataset.num_nodes"].dump(), id.value("dataset", std::string()),
                    dir, ds.num_nodes);
  }
  // The same content: a dataset of the same name and sizes with other edges or features is
  // refused (the model's numbers would mean nothing on it).
  if (id.contains("dataset.content")) {
    std::string const saved = id["dataset.content"].get<std::string>();
    std::string const here = dataset_fingerprint(ds);
    if (saved != here) {
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

int threads_of(int t) {
  return t > 0 ? t : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void add_model_options(CLI::App* cmd, infer_options& o) {
  cmd->add_option("--model", o.model, "Model directory written by `coopgnn train --save-model`")
      ->required();
  cmd->add_option("--dataset", o.dataset,
                  "The dataset directory the model was trained on (its graph and features); "
                  "default: the bundled Cora");
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
                    "predict: {} is a link-prediction model (it scores pairs); use `coopgnn "
                    "embed` for its node embeddings",
                    po->model);
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
}

}  // namespace coopgnn::cli
