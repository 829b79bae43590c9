// `coopgnn convert`, `coopgnn generate {rmat,sbm,task,hetero}`, `coopgnn split-edges` and `coopgnn
// info` (docs/design.md sections 3 and 7.1).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "formats/formats.hpp"
#include "runtime/core/memory_limit.hpp"
#include "runtime/graph/dataset.hpp"
#include "runtime/graph/generate.hpp"
#include "runtime/graph/generate_hetero.hpp"
#include "tools/coopgnn/commands.hpp"
#include "tools/coopgnn/info.hpp"
#include "tools/coopgnn/output_paths.hpp"
#include "tools/coopgnn/split_edges.hpp"
#include "tools/coopgnn/train_options.hpp"

namespace coopgnn::cli {

namespace {

/// This process's peak resident memory so far (VmHWM), for the stage lines of `generate`.
std::string peak_rss_text() {
  std::int64_t const peak = read_process_memory().peak_rss_bytes;
  return peak < 0 ? std::string("unknown") : format_bytes(static_cast<std::uint64_t>(peak));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_edge_stats(const edge_stats& s) {
  fmt::print(
      "edges: {} read, {} self-loops dropped, {} reverse edges added, {} duplicates "
      "removed -> {} directed edges\n",
      s.edges_read, s.self_loops_dropped, s.reverse_edges_added, s.duplicates_removed,
      s.edges_final);
}

/// The help of every dataset-writing command's --overwrite.
constexpr const char* kOverwriteHelp =
    "replace the output directory when it exists and is not empty (without it, that is an "
    "error); the new dataset is written to a temporary sibling and takes its place only when "
    "complete";

/// Writes `ds` (its edges from `rows` when given) and prints what was written.
void write_and_summarise(const dataset& ds, const std::string& out_dir,
                         std::chrono::steady_clock::time_point t0,
                         const edge_rows* rows = nullptr) {
  auto const tw = std::chrono::steady_clock::now();
  write_dir_atomically(out_dir, [&](const std::filesystem::path& tmp) {
    if (rows != nullptr) {
      write_dataset(ds, *rows, tmp);
    } else {
      write_dataset(ds, tmp);
    }
  });
  fmt::print(
      "wrote {} ({} nodes, {} edges, {} features{}, {} classes, split {}/{}/{}) in {:.1f} s "
      "(writing {:.1f} s; peak RSS {})\n",
      out_dir, ds.num_nodes, rows != nullptr ? rows->num_edges() : ds.num_edges(), ds.feature_dim(),
      ds.features_are_16bit() ? fmt::format(" {}", to_string(ds.feature_type)) : "", ds.num_classes,
      ds.train.size(), ds.valid.size(), ds.test.size(), seconds_since(t0), seconds_since(tw),
      peak_rss_text());
  if (ds.hetero) {
    const hetero_schema& h = *ds.hetero;
    for (std::int64_t t = 0; t < h.num_node_types(); ++t) {
      fmt::print(
          "  node type {}: {} nodes, {}\n", h.node_types[static_cast<std::size_t>(t)], h.count(t),
          h.feature_dim(t) > 0 ? fmt::format("feature '{}' ({} columns, {}{})",
                                             h.feature_names[static_cast<std::size_t>(t)],
                                             h.feature_dim(t), to_string(h.feature_type(t)),
                                             h.features_in_file(t) ? ", linked, not copied" : "")
                               : std::string("no features"));
    }
    std::vector<std::int64_t> per(h.edge_types.size(), 0);
    for (std::int32_t r : h.edge_type) ++per[static_cast<std::size_t>(r)];
    for (std::size_t r = 0; r < h.edge_types.size(); ++r) {
      fmt::print("  edge type {}: {} edges\n", h.edge_types[r], per[r]);
    }
    if (!h.target_type.empty())
      fmt::print("  task '{}' on node type {}\n", ds.task_name, h.target_type);
  }
  if (ds.link) {
    fmt::print("link task '{}': {} train positives, {} valid pairs, {} test pairs{}\n",
               ds.link->name, ds.link->train.size(), ds.link->valid.size(), ds.link->test.size(),
               ds.link->user_item()
                   ? fmt::format(", users [0, {}), items [{}, {})", ds.link->item_begin,
                                 ds.link->item_begin, ds.link->item_end)
                   : std::string());
  }
}

/// --feature-dtype of the synthetic task's features.
void add_feature_dtype_option(CLI::App& cmd, std::string& dtype) {
  cmd.add_option("--feature-dtype", dtype,
                 "element type of the synthetic features: float32, or float16 (written as '<f2' "
                 "and kept at 2 bytes per element in memory, on disk and when loaded)")
      ->check(CLI::IsMember({"float32", "float16"}))
      ->capture_default_str();
}

/// "float32" or "float16" (checked by the option) as a feature_dtype.
feature_dtype parse_feature_dtype(const std::string& name) {
  return name == "float16" ? feature_dtype::float16 : feature_dtype::float32;
}

struct convert_args {
  std::string from;
  std::string input;
  std::string output;
  bool overwrite = false;
  convert_options opt;
};

struct rmat_args {
  std::string output;
  bool overwrite = false;
  rmat_options opt;
  bool with_task = false;
  std::int64_t classes = 16;
  std::int64_t feature_dim = 64;
  std::string feature_dtype = "float32";
};

struct sbm_args {
  std::string output;
  bool overwrite = false;
  sbm_options opt;
};

struct task_args {
  std::string input;
  std::string output;
  bool overwrite = false;
  std::int64_t classes = 16;
  std::int64_t feature_dim = 64;
  std::uint64_t seed = 1;
  std::string name;
  std::string feature_dtype = "float32";
  synthetic_task_options opt;
};

struct split_args {
  std::string input;
  std::string output;
  bool overwrite = false;
  std::string scheme = "random";
  std::vector<double> fractions = {0.85, 0.05, 0.10};
  split_options opt;
  bool json = false;
  std::string feature;
};

struct info_args {
  std::string dir;
  bool json = false;
  std::string task = "auto";
  std::string feature;
};

/// "--directed" -> "ogb, musae: " (the formats that read it, from the registry).
std::string readers_prefix(std::string_view option) {
  return fmt::format("{}: ", fmt::join(formats_reading(option), ", "));
}

/// The format paragraphs of `convert --help`, one per registry entry ("  ogb:  ...").
std::string format_help() {
  std::string out;
  for (const input_format* f : input_formats()) {
    std::string const head = fmt::format("  {}:", f->name);
    std::string_view rest = f->help;
    bool first = true;
    while (!rest.empty()) {
      std::size_t const nl = rest.find('\n');
      std::string_view const line = rest.substr(0, nl);
      out += first ? fmt::format("{:<8}", head + " ") : std::string(8, ' ');
      out += fmt::format("{}\n", line);
      first = false;
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
  }
  return out;
}

void add_convert(CLI::App& app) {
  auto a = std::make_shared<convert_args>();
  std::vector<std::string> names;
  std::vector<std::string_view> dirs;
  std::vector<std::string_view> files;
  for (const input_format* f : input_formats()) {
    names.emplace_back(f->name);
    (f->directory ? dirs : files).push_back(f->name);
  }
  CLI::App* c = app.add_subcommand(
      "convert",
      "Convert an OGB directory, a SNAP edge list, a NumPy .npz, a LightGCN, MUSAE or HeCo "
      "directory into a dataset directory");
  c->footer(
      "Writes a dataset directory in DGL GraphBolt's OnDiskDataset layout (metadata.yaml + .npy).\n"
      "The output must not be (or hold) the input; a non-empty output needs --overwrite, and the\n"
      "new dataset takes its place only when complete (so does every dataset-writing command).\n"
      "Duplicate edges are always removed; the counts are printed, and so is every decision\n"
      "(symmetrized or not, a skipped header, label mapping, dense feature size).\n"
      "Input formats (--from; without it, the format is detected from the input's file names):\n" +
      format_help() +
      "Sparse features are densified to float32 after printing the size; the size must fit in\n"
      "available memory (or --max-dense-bytes) and in the output's free disk space.\n"
      "Example: coopgnn convert --from ogb downloads/cora data/cora\n"
      "         coopgnn convert --from lightgcn downloads/gowalla data/gowalla\n"
      "         coopgnn convert --from musae facebook_large data/facebook\n"
      "         coopgnn convert --from heco downloads/acm /tmp/acm --labels-per-class 20");
  c->add_option("--from", a->from,
                fmt::format("input format: {} (default: detected from the input's file names)",
                            fmt::join(names, ", ")))
      ->check(CLI::IsMember(names));
  c->add_option("input", a->input,
                fmt::format("input directory ({}) or file ({})", fmt::join(dirs, ", "),
                            fmt::join(files, ", ")))
      ->required();
  c->add_option("output", a->output, "output dataset directory (created if needed)")->required();
  c->add_flag("--overwrite", a->overwrite, kOverwriteHelp);
  auto* sym = c->add_flag("--symmetrize", a->opt.symmetrize,
                          "add the reverse of every edge (pairs stored both ways are not doubled)");
  c->add_flag("--directed", a->opt.directed,
              readers_prefix("--directed") +
                  "keep the edges as stored instead of symmetrizing an edge list stored once")
      ->excludes(sym);
  c->add_flag("--drop-self-loops", a->opt.drop_self_loops, "remove edges v -> v");
  c->add_option("--split", a->opt.split,
                readers_prefix("--split") + "split folder under split/ (default: the only one present)");
  c->add_option("--split-index", a->opt.split_index,
                readers_prefix("--split-index") +
                    "which of several stored splits to use (row K of 2-D masks; default 0)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--features", a->opt.features_file,
                readers_prefix("--features") +
                    "node features from a separate file: a SciPy sparse .npz "
                    "(scipy.sparse.save_npz, csr or csc) or a 2-D .npy");
  c->add_option("--label-column", a->opt.label_column,
                readers_prefix("--label-column") +
                    "target column for labels (default: the first of target, ml_target, "
                    "page_type, mature)");
  c->add_option("--id-column", a->opt.id_column,
                readers_prefix("--id-column") +
                    "node id column of the target file (default: new_id if present, else id)");
  c->add_option("--train-fraction", a->opt.train_fraction,
                readers_prefix("--train-fraction") +
                    "fraction of vertices for training (keyed random split; of each class "
                    "with --stratified)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--valid-fraction", a->opt.valid_fraction,
                readers_prefix("--valid-fraction") +
                    "fraction of vertices for validation (test: the rest)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--seed", a->opt.seed, readers_prefix("--seed") + "seed of the random split")
      ->capture_default_str();
  c->add_flag("--stratified", a->opt.stratified,
              readers_prefix("--stratified") +
                  "stratified split: --train-fraction and --valid-fraction of each class "
                  "(as scikit-learn's train_test_split(stratify=labels))");
  c->add_option("--labels-per-class", a->opt.labels_per_class,
                readers_prefix("--labels-per-class") +
                    "which of HeCo's splits (20, 40 or 60 labelled papers per class)")
      ->capture_default_str()
      ->check(CLI::IsMember({20, 40, 60}));
  c->add_option("--max-dense-bytes", a->opt.max_dense_bytes,
                "largest dense float32 feature matrix made from sparse features, in bytes "
                "(default: available memory)");
  c->add_option("--name", a->opt.name, "dataset name (default: from the input path)");
  c->callback([a] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(a->output, {a->input, a->opt.features_file}, a->overwrite);
    if (a->from.empty()) {
      a->from = detect_input_format(a->input).name;
      fmt::print("format: {} (detected; --from names it)\n", a->from);
    }
    convert_report rep;
    rep.progress = [](const std::string& line) { fmt::print("{}\n", line); };
    a->opt.output_dir = a->output;
    dataset const ds = convert_dataset(a->from, a->input, a->opt, &rep);
    if (!rep.split.empty()) fmt::print("split: {}\n", rep.split);
    print_edge_stats(rep.edges);
    write_and_summarise(ds, a->output, t0);
  });
}

/// `generate hetero`: generate_hetero (runtime/graph/generate_hetero.hpp).
void add_generate_hetero(CLI::App* g) {
  struct hetero_args {
    std::string output;
    bool overwrite = false;
    hetero_options opt;
  };
  auto a = std::make_shared<hetero_args>();
  CLI::App* c = g->add_subcommand(
      "hetero",
      "MAG240M-shaped heterogeneous graph: float16 paper features, featureless authors "
      "and institutions, five relations");
  c->footer(
      "Node types paper (2^scale, labelled, float16 class-conditional features), author and\n"
      "institution (featureless: R-GCN learns their embeddings). Relations paper:cites:paper\n"
      "(R-MAT, symmetrised), author:writes:paper, author:affiliated_with:institution (skewed\n"
      "popularity) and their reverses; a keyed split of the papers.");
  c->add_option("output", a->output, "output dataset directory")->required();
  c->add_flag("--overwrite", a->overwrite, kOverwriteHelp);
  c->add_option("--scale", a->opt.scale, "log2 of the paper count")
      ->required()
      ->check(CLI::Range(1, 34));
  c->add_option("--authors", a->opt.authors, "authors (default 2^(scale-4))");
  c->add_option("--institutions", a->opt.institutions, "institutions (default 2^(scale-10))");
  c->add_option("--cites-factor", a->opt.cites_factor, "R-MAT citations drawn per paper")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--authors-per-paper", a->opt.authors_per_paper, "authorships drawn per paper")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--feature-dim", a->opt.feature_dim, "paper feature width (float16)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--classes", a->opt.classes, "paper classes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_option("--train-fraction", a->opt.train_fraction, "fraction of papers for training")
      ->capture_default_str();
  c->add_option("--valid-fraction", a->opt.valid_fraction,
                "fraction of papers for validation (test: the rest)")
      ->capture_default_str();
  c->add_option("--seed", a->opt.seed, "random seed")->capture_default_str();
  c->callback([a] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(a->output, {}, a->overwrite);
    edge_stats st;
    dataset const ds = generate_hetero(a->opt, &st);
    fmt::print("paper:cites:paper ");
    print_edge_stats(st);
    write_and_summarise(ds, a->output, t0);
  });
}

void add_generate(CLI::App& app) {
  CLI::App* g = app.add_subcommand(
      "generate", "Generate a synthetic dataset (keyed random draws: same seed, same output)");
  g->require_subcommand(1);

  auto r = std::make_shared<rmat_args>();
  CLI::App* rm = g->add_subcommand("rmat", "Graph500 R-MAT graph (structure only, or --with-task)");
  rm->footer(
      "Graph500 R-MAT graph: 2^scale vertices, edge-factor * 2^scale edges drawn with\n"
      "a=0.57 b=0.19 c=0.19 d=0.05, ids permuted by a keyed permutation, then symmetrized with\n"
      "self-loops and duplicates removed. Structure only unless --with-task.");
  rm->add_option("output", r->output, "output dataset directory")->required();
  rm->add_flag("--overwrite", r->overwrite, kOverwriteHelp);
  rm->add_option("--scale", r->opt.scale, "log2 of the vertex count")
      ->required()
      ->check(CLI::Range(1, 32));
  rm->add_option("--edge-factor", r->opt.edge_factor, "edges per vertex before cleaning")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  rm->add_option("--seed", r->opt.seed, "random seed")->capture_default_str();
  rm->add_flag("--with-task", r->with_task,
               "add synthetic features, labels and a 60/20/20 split (see 'generate task')");
  rm->add_option("--classes", r->classes, "classes of the synthetic task")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  rm->add_option("--feature-dim", r->feature_dim, "feature dimension of the synthetic task")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_feature_dtype_option(*rm, r->feature_dtype);
  rm->callback([r] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(r->output, {}, r->overwrite);
    edge_stats st;
    // The edges stay in compressed rows (4 bytes each) until they are written.
    edge_rows const rows = generate_rmat_rows(r->opt, &st);
    print_edge_stats(st);
    fmt::print("edges drawn and cleaned into rows in {:.1f} s ({} of rows; peak RSS so far {})\n",
               seconds_since(t0),
               format_bytes(rows.targets.capacity() * sizeof(std::uint32_t) +
                            rows.offsets.size() * sizeof(eid_t)),
               peak_rss_text());
    dataset ds;
    ds.name = rmat_dataset_name(r->opt);
    ds.num_nodes = rows.num_nodes;
    if (r->with_task) {
      auto const tt = std::chrono::steady_clock::now();
      synthetic_task_options topt;
      topt.feature_type = parse_feature_dtype(r->feature_dtype);
      attach_synthetic_task(ds, rows, r->classes, r->feature_dim, r->opt.seed, topt);
      fmt::print("synthetic task (labels, {} features, split) in {:.1f} s (peak RSS so far {})\n",
                 r->feature_dtype, seconds_since(tt), peak_rss_text());
    }
    write_and_summarise(ds, r->output, t0, &rows);
  });

  auto s = std::make_shared<sbm_args>();
  CLI::App* sb = g->add_subcommand(
      "sbm",
      "Degree-corrected stochastic block model with homophily and class-conditional features");
  sb->footer(
      "Degree-corrected stochastic block model with a node-classification task: C balanced\n"
      "classes, power-law degree propensities, a fraction h of edges inside a class,\n"
      "class-conditional Gaussian features, a keyed 60/20/20 split.");
  sb->add_option("output", s->output, "output dataset directory")->required();
  sb->add_flag("--overwrite", s->overwrite, kOverwriteHelp);
  sb->add_option("--nodes", s->opt.nodes, "number of vertices")
      ->required()
      ->check(CLI::PositiveNumber);
  sb->add_option("--classes", s->opt.classes, "number of classes")
      ->required()
      ->check(CLI::PositiveNumber);
  sb->add_option("--avg-degree", s->opt.avg_degree, "average (directed) degree")
      ->required()
      ->check(CLI::NonNegativeNumber);
  sb->add_option("--homophily", s->opt.homophily, "fraction of edges within a class, in [0, 1]")
      ->required()
      ->check(CLI::Range(0.0, 1.0));
  sb->add_option("--feature-dim", s->opt.feature_dim, "feature dimension F")
      ->required()
      ->check(CLI::NonNegativeNumber);
  sb->add_option("--seed", s->opt.seed, "random seed")->capture_default_str();
  sb->add_option("--degree-exponent", s->opt.degree_exponent,
                 "power-law exponent of degree propensities (<= 1: plain SBM)")
      ->capture_default_str();
  sb->add_option("--noise", s->opt.feature_noise,
                 "feature noise std (default: sqrt(F/2), learnable but not trivial)");
  sb->add_option("--train-fraction", s->opt.train_fraction, "fraction of vertices for training")
      ->capture_default_str();
  sb->add_option("--valid-fraction", s->opt.valid_fraction,
                 "fraction of vertices for validation (test: the rest)")
      ->capture_default_str();
  sb->callback([s] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(s->output, {}, s->overwrite);
    edge_stats st;
    dataset const ds = generate_sbm(s->opt, &st);
    print_edge_stats(st);
    write_and_summarise(ds, s->output, t0);
  });

  auto t = std::make_shared<task_args>();
  CLI::App* tk = g->add_subcommand(
      "task", "Attach a synthetic learnable node-classification task to a dataset directory");
  tk->footer(
      "Attach a synthetic node-classification task to a dataset (typically structure-only):\n"
      "labels = argmax of neighbour-smoothed random class scores (homophilous), features =\n"
      "class-conditional Gaussians with noise, keyed 60/20/20 split. Replaces existing\n"
      "features, labels and splits.");
  tk->add_option("input", t->input, "input dataset directory")->required();
  tk->add_option("output", t->output, "output dataset directory (not the input)")->required();
  tk->add_flag("--overwrite", t->overwrite, kOverwriteHelp);
  tk->add_option("--classes", t->classes, "number of classes")
      ->required()
      ->check(CLI::PositiveNumber);
  tk->add_option("--feature-dim", t->feature_dim, "feature dimension")
      ->required()
      ->check(CLI::PositiveNumber);
  tk->add_option("--seed", t->seed, "random seed")->capture_default_str();
  tk->add_option("--name", t->name, "dataset name (default: the input's name)");
  tk->add_option("--smoothing-steps", t->opt.smoothing_steps, "neighbour-averaging steps")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  tk->add_option("--noise", t->opt.feature_noise, "feature noise std (default: sqrt(F/2))");
  tk->add_option("--train-fraction", t->opt.train_fraction, "fraction of vertices for training")
      ->capture_default_str();
  tk->add_option("--valid-fraction", t->opt.valid_fraction,
                 "fraction of vertices for validation (test: the rest)")
      ->capture_default_str();
  add_feature_dtype_option(*tk, t->feature_dtype);
  tk->callback([t] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(t->output, {t->input}, t->overwrite);
    dataset ds = read_dataset(t->input);
    fmt::print("read {} ({} nodes, {} edges)\n", t->input, ds.num_nodes, ds.num_edges());
    t->opt.feature_type = parse_feature_dtype(t->feature_dtype);
    attach_synthetic_task(ds, t->classes, t->feature_dim, t->seed, t->opt);
    if (!t->name.empty()) ds.name = t->name;
    write_and_summarise(ds, t->output, t0);
  });
  add_generate_hetero(g);
}

void add_split_edges(CLI::App& app) {
  auto a = std::make_shared<split_args>();
  CLI::App* c = app.add_subcommand(
      "split-edges",
      "Hold out edges for link prediction: a training graph plus validation/test positives with "
      "fixed negatives");
  c->footer(
      "Writes OUT: IN's graph minus the held-out edges, IN's node features, labels and vertex\n"
      "split, and a link_prediction task in GraphBolt's layout (seeds [M, 2], labels [M],\n"
      "indexes [M]: each query = one held-out positive followed by its K negatives).\n"
      "Symmetric graph (every u->v has v->u): undirected pairs {u,v} are held out whole and\n"
      "stored once, as u->v or v->u by a keyed fair coin (so the corrupted head is not always\n"
      "the lower id). Directed graph: each distinct arc u->v is a candidate on its own, and its\n"
      "reverse v->u (if present) leaves the training graph too, unless --keep-reverse.\n"
      "  --scheme random: a keyed permutation of the candidates, cut by --fractions\n"
      "      (train,valid,test); --negatives default 100 per validation/test positive, as OGB's\n"
      "      link benchmarks rank each positive against 100 or more (against 1, a random scorer\n"
      "      already has MRR 0.75; --negatives 1 gives GAE-style sets, judged by AUC/AP).\n"
      "  --scheme tma: one outgoing edge per node (Zhu et al. 2023, sec. 4.1): nodes of IN's\n"
      "      validation (test) vertex split give one validation (test) edge each; without a\n"
      "      vertex split every node goes to validation or test by a keyed fair coin. Only nodes\n"
      "      with >= 2 distinct out-neighbours (self-loops aside) give one up, so each keeps a\n"
      "      training edge; a removal that would strip the other endpoint's last edge is avoided.\n"
      "      --negatives default 1000 (fixed across runs, as the paper). --fractions is ignored.\n"
      "Negatives: tail-corrupted u->w, w uniform over vertices other than u with no edge u->w\n"
      "in the FULL graph, distinct within a query. Held-out edges and (without --keep-reverse)\n"
      "their reverses leave the training graph; self-loops are never held out. Training\n"
      "positives = the training graph's edges (symmetric: each undirected edge once, oriented\n"
      "by the same coin).\n"
      "Same IN and --seed: byte-identical output.\n"
      "OUT must not be IN; a non-empty OUT needs --overwrite (replaced only when complete).\n"
      "Example: coopgnn split-edges data/cora data/cora-lp --scheme random --seed 7");
  c->add_option("input", a->input, "input dataset directory")->required();
  c->add_option("output", a->output, "output dataset directory (created if needed; not the input)")
      ->required();
  c->add_flag("--overwrite", a->overwrite, kOverwriteHelp);
  c->add_option("--scheme", a->scheme, "random or tma")
      ->check(CLI::IsMember({"random", "tma"}))
      ->capture_default_str();
  c->add_option("--fractions", a->fractions, "random: train,valid,test fractions (sum 1)")
      ->delimiter(',')
      ->expected(3)
      ->capture_default_str();
  c->add_option("--negatives", a->opt.negatives,
                "negatives per held-out positive (default: 100 for random, 1000 for tma; 0 = none)")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--keep-reverse", a->opt.keep_reverse,
              "keep v->u in the training graph when u->v is held out");
  c->add_option("--seed", a->opt.seed, "random seed")->capture_default_str();
  c->add_option("--name", a->opt.name, "dataset name (default: the input's name)");
  c->add_flag("--json", a->json, "print one JSON object instead of the summary");
  c->add_option("--feature", a->feature,
                "the input's node feature to keep as the output's feat (default: feat; needed "
                "when the input names its features otherwise)");
  c->add_option("--relation", a->opt.relation,
                "typed (heterogeneous) datasets: split the edges of this edge type "
                "'src_type:relation:dst_type' into a typed link task (scheme random; negatives "
                "from the destination type; the held-out edges' reverses, in the one edge type "
                "running the other way, leave the graph unless --keep-reverse)");
  c->callback([a] {
    auto const t0 = std::chrono::steady_clock::now();
    check_output_dir(a->output, {a->input}, a->overwrite);
    a->opt.scheme = a->scheme == "tma" ? split_scheme::tma : split_scheme::random;
    std::copy(a->fractions.begin(), a->fractions.end(), a->opt.fractions.begin());
    dataset_read_options ropt;
    ropt.feature = a->feature;
    ropt.heterogeneous = !a->opt.relation.empty();
    dataset const in = read_dataset(a->input, ropt);
    if (in.hetero && a->opt.relation.empty()) {
      COOPGNN_IO_FAIL("{}: a heterogeneous dataset: name the relation to split with --relation",
                      a->input);
    }
    if (!in.hetero && !a->opt.relation.empty()) {
      COOPGNN_IO_FAIL("{}: --relation needs a heterogeneous dataset (this one is untyped)",
                      a->input);
    }
    split_report rep;
    dataset const ds =
        in.hetero ? split_typed_edges(in, a->opt, &rep) : split_edges(in, a->opt, &rep);
    if (std::string const note =
            repeated_edges_note(in, rep.repeats_removed, in.num_edges(), "split");
        !note.empty()) {
      fmt::print(stderr, "note: {}\n", note);
    }
    write_dir_atomically(a->output,
                         [&](const std::filesystem::path& tmp) { write_dataset(ds, tmp); });
    if (a->json) {
      nlohmann::json j;
      j["output"] = a->output;
      j["scheme"] = a->scheme;
      j["seed"] = a->opt.seed;
      j["symmetric"] = rep.symmetric;
      j["keep_reverse"] = a->opt.keep_reverse;
      j["candidates"] = rep.candidates;
      j["skipped_nodes"] = rep.skipped_nodes;
      j["negatives"] = rep.negatives;
      j["positives"] = {{"train", rep.train}, {"valid", rep.valid}, {"test", rep.test}};
      j["edges"] = {{"input", rep.edges_in},
                    {"training_graph", rep.edges_out},
                    {"repeats_removed", rep.repeats_removed}};
      j["seconds"] = seconds_since(t0);
      fmt::print("{}\n", j.dump());
      return;
    }
    fmt::print("read {} ({} nodes, {} edges, {})\n", a->input, in.num_nodes, in.num_edges(),
               rep.symmetric ? "symmetric: undirected pairs held out whole" : "directed");
    if (a->scheme == "tma") {
      fmt::print(
          "tma: {} nodes with >= 2 out-neighbours in the validation/test roles, {} skipped\n",
          rep.candidates, rep.skipped_nodes);
    } else {
      fmt::print("random: {} candidate {}\n", rep.candidates,
                 rep.symmetric ? "undirected pairs" : "arcs");
    }
    fmt::print(
        "held out: {} valid, {} test positives, {} negatives each; {} train positives; training "
        "graph {} of {} edges{}\n",
        rep.valid, rep.test, rep.negatives, rep.train, rep.edges_out, rep.edges_in,
        a->opt.keep_reverse ? " (reverses kept)" : "");
    fmt::print("wrote {} in {:.1f} s\n", a->output, seconds_since(t0));
  });
}

void add_info(CLI::App& app) {
  auto a = std::make_shared<info_args>();
  CLI::App* c = app.add_subcommand(
      "info", "Summarise a dataset directory (sizes, degrees, features, classes, split)");
  c->footer(
      "Prints |V|, |E|, in/out-degree statistics (min, max, mean, median, p99, zero), isolated\n"
      "vertices and self-loops of the graph `train` trains (a repeated edge counted once; how\n"
      "many repeats were removed is said), feature shape, classes and class counts, edge\n"
      "homophily and split sizes, then every node and edge feature (name, dtype, shape, format, file) and every\n"
      "task (kind, classes, set sizes) of metadata.yaml, marking the input feature and the task\n"
      "`train` would use with the same --task/--feature. Reading validates the chosen parts\n"
      "(ids, sizes, label range) on the way.");
  c->add_option("dir", a->dir, "dataset directory (with metadata.yaml)")->required();
  c->add_flag("--json", a->json, "print one JSON object instead of a table");
  c->add_option("--task", a->task,
                "Which task to read and mark as trained, as `train --task` (a task name, "
                "node_classification, link_prediction or auto)")
      ->capture_default_str();
  c->add_option("--feature", a->feature,
                "Which node feature to read as input, as `train --feature` (default feat)");
  c->callback([a] {
    // The listing needs only metadata.yaml and the arrays' headers, so it is printed even when
    // the dataset itself cannot be read (then the error follows and the exit status is 1).
    dataset_contents const contents = inspect_dataset(a->dir);
    dataset_read_options opt;
    opt.task = a->task;
    opt.feature = a->feature;
    opt.heterogeneous = true;  // info describes typed graphs too
    dataset ds;
    try {
      ds = read_dataset(a->dir, opt);
    } catch (const io_error&) {
      if (!a->json) {
        fmt::print("dataset '{}' (cannot be read as asked; what it holds:)\n", contents.name);
        fmt::print("{}", format_contents(contents.features, contents.tasks, "", ""));
      }
      throw;
    }
    dataset_info info = compute_info(ds);
    info.features = contents.features;
    info.tasks = contents.tasks;
    bool const has_task = ds.link || (!ds.labels.empty() && ds.num_classes >= 2);
    if (has_task) {
      task_kind const k = chosen_task(ds, a->task);
      info.trained_task = k == task_kind::link_prediction ? ds.link->name : ds.task_name;
    }
    if (a->json) {
      fmt::print("{}\n", info_to_json(info));
    } else {
      fmt::print("{}", format_info_table(info));
    }
  });
}

}  // namespace

void add_data_commands(CLI::App& app) {
  add_convert(app);
  add_generate(app);
  add_split_edges(app);
  add_info(app);
}

}  // namespace coopgnn::cli
