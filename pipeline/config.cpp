#include "pipeline/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <type_traits>
#include <variant>

#include "runtime/core/error.hpp"
#include "pipeline/checkpoint.hpp"

namespace coopgnn {

minibatch_mode parse_mode(const std::string& name) {
  if (name == "independent") return minibatch_mode::independent;
  if (name == "cooperative") return minibatch_mode::cooperative;
  COOPGNN_FAIL("unknown mode '{}': expected 'cooperative' or 'independent'", name);
}

std::string to_string(minibatch_mode m) {
  return m == minibatch_mode::independent ? "independent" : "cooperative";
}

std::string to_string(task_kind t) {
  return t == task_kind::link_prediction ? "link_prediction" : "node_classification";
}

std::string to_string(exclude_kind e) {
  switch (e) {
    case exclude_kind::self:
      return "self";
    case exclude_kind::reverse:
      return "reverse";
    default:
      return "none";
  }
}

exclude_kind parse_exclude_kind(const std::string& name) {
  if (name == "none") return exclude_kind::none;
  if (name == "self") return exclude_kind::self;
  if (name == "reverse") return exclude_kind::reverse;
  COOPGNN_FAIL("--exclude '{}': expected none, self or reverse", name);
}

backend resolve_backend(const std::string& name, int cuda_devices,
                        const std::string& no_device_reason) {
#ifdef COOPGNN_WITH_CUDA
  bool const built = true;
#else
  bool const built = false;
#endif
  if (name == "host") return backend::host;
  if (name == "emulated") return backend::emulated;
  if (name == "auto") return built && cuda_devices > 0 ? backend::cuda : backend::host;
  COOPGNN_EXPECTS(name == "cuda", "--backend '{}': expected auto, host, cuda or emulated", name);
  COOPGNN_EXPECTS(built,
                  "--backend cuda: this build has no CUDA backend (configure with nvcc "
                  "available, COOPGNN_CUDA=ON)");
  COOPGNN_EXPECTS(cuda_devices > 0, "--backend cuda: no CUDA device ({})", no_device_reason);
  return backend::cuda;
}

work_counters& work_counters::operator+=(const work_counters& o) {
  seeds += o.seeds;
  sampled_edges += o.sampled_edges;
  sampled_vertices += o.sampled_vertices;
  feature_rows += o.feature_rows;
  feature_bytes += o.feature_bytes;
  alltoall_bytes += o.alltoall_bytes;
  alltoall_calls += o.alltoall_calls;
  collectives += o.collectives;
  collective_calls += o.collective_calls;
  count_exchanges += o.count_exchanges;
  kernel_calls += o.kernel_calls;
  allreduce_bytes += o.allreduce_bytes;
  cache_hits += o.cache_hits;
  cache_misses += o.cache_misses;
  auto add = [](std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    if (a.size() < b.size()) a.resize(b.size(), 0);
    for (std::size_t i = 0; i < b.size(); ++i) a[i] += b[i];
  };
  add(rows_per_type, o.rows_per_type);
  add(edges_per_relation, o.edges_per_relation);
  return *this;
}

stage_seconds& stage_seconds::max_with(const stage_seconds& o) {
  sample = std::max(sample, o.sample);
  feature_load = std::max(feature_load, o.feature_load);
  forward = std::max(forward, o.forward);
  backward = std::max(backward, o.backward);
  communication = std::max(communication, o.communication);
  communication_wait = std::max(communication_wait, o.communication_wait);
  optimizer = std::max(optimizer, o.optimizer);
  return *this;
}

stage_seconds& stage_seconds::operator/=(double n) {
  sample /= n;
  feature_load /= n;
  forward /= n;
  backward /= n;
  communication /= n;
  communication_wait /= n;
  optimizer /= n;
  return *this;
}

stage_seconds& stage_seconds::operator+=(const stage_seconds& o) {
  sample += o.sample;
  feature_load += o.feature_load;
  forward += o.forward;
  backward += o.backward;
  communication += o.communication;
  communication_wait += o.communication_wait;
  optimizer += o.optimizer;
  return *this;
}

std::string to_string(select_best_kind k) { return k == select_best_kind::last ? "last" : "val"; }

select_best_kind parse_select_best(const std::string& name) {
  if (name == "val") return select_best_kind::val;
  if (name == "last") return select_best_kind::last;
  COOPGNN_FAIL("--select-best '{}': expected val or last", name);
}

std::string to_string(gemm_math m) { return m == gemm_math::tf32 ? "tf32" : "fp32"; }

gemm_math parse_gemm_math(const std::string& name) {
  if (name == "fp32") return gemm_math::fp32;
  if (name == "tf32") return gemm_math::tf32;
  COOPGNN_FAIL("--gemm-math '{}': expected fp32 or tf32", name);
}

namespace {

bool is_gat(const train_config& c) { return c.model == models::conv_kind::gat; }
bool is_rgcn(const train_config& c) { return c.model == models::conv_kind::rgcn; }
bool is_link(const train_config& c) { return c.task == task_kind::link_prediction; }

/// The table (train_option_table). Help texts are the command line's.
std::vector<option_decl> make_table() {
  using M = option_decl::member;
  using N = option_decl::named;
  std::vector<option_decl> t;
  auto add = [&](option_decl d) { t.push_back(std::move(d)); };
  add({.name = "--model",
       .help = "GNN layer: sage (GraphSAGE-mean), gcn, gat (multi-head attention, Velickovic et "
               "al. 2018), rgcn (relational GCN, Schlichtkrull et al. 2018: the model of "
               "heterogeneous datasets), or mlp (no message passing: each vertex's own row; use "
               "it with --fanouts 0,0,... so nothing is sampled)",
       .value = N{[](const train_config& c) { return models::to_string(c.model); },
                  [](train_config& c, const std::string& v) { c.model = models::parse_conv_kind(v); },
                  {"sage", "gcn", "mlp", "gat", "rgcn"}},
       .changes_arithmetic = true});
  add({.name = "--hidden",
       .help = "Hidden width (gat: per attention head)",
       .value = M{&train_config::hidden},
       .changes_arithmetic = true,
       .lo = 1});
  add({.name = "--heads",
       .help = "gat: attention heads of the hidden layers (concatenated: heads x --hidden)",
       .value = M{&train_config::heads},
       .changes_arithmetic = true,
       .lo = 1,
       .recorded = is_gat});
  add({.name = "--out-heads",
       .help = "gat: attention heads of the output layer (averaged)",
       .value = M{&train_config::out_heads},
       .changes_arithmetic = true,
       .lo = 1,
       .recorded = is_gat});
  add({.name = "--attn-dropout",
       .help = "gat: dropout probability on the normalised attention coefficients",
       .value = M{&train_config::attn_dropout},
       .changes_arithmetic = true,
       .lo = 0,
       .hi = 0.999,
       .recorded = is_gat});
  add({.name = "--negative-slope",
       .help = "gat: LeakyReLU slope of the attention scores",
       .value = M{&train_config::negative_slope},
       .changes_arithmetic = true,
       .lo = 0,
       .recorded = is_gat});
  add({.name = "--residual",
       .help = "gat: add a learned residual projection of each destination's input",
       .value = M{&train_config::residual},
       .changes_arithmetic = true,
       .flag = true,
       .recorded = is_gat});
  add({.name = "--layer-norm",
       .help = "LayerNorm after every hidden GNN layer, before its activation (the TMA paper's "
               "Conv -> LayerNorm -> PReLU -> Dropout); true or false",
       .value = M{&train_config::layer_norm},
       .changes_arithmetic = true});
  add({.name = "--activation",
       .help = "Activation of the hidden GNN layers: relu, or prelu (one learnable slope per "
               "layer, 0.25 at start)",
       .value = N{[](const train_config& c) { return models::to_string(c.activation); },
                  [](train_config& c, const std::string& v) {
                    c.activation = models::parse_activation_kind(v);
                  },
                  {"relu", "prelu"}},
       .changes_arithmetic = true});
  add({.name = "--embedding-dim",
       .help = "Learn an input embedding of this width per vertex instead of reading node "
               "features (needed when the dataset has none); 0 = use the features. Rows are "
               "updated only when a step touched them (lazy Adam)",
       .value = M{&train_config::embedding_dim},
       .changes_arithmetic = true,
       .lo = 0,
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "tma averages the model's weights across trainers whose vertices "
                          "differ; learnable input embeddings are not averaged (use features)"});
  add({.name = "--decoder",
       .help = "Link prediction: edge decoder, dot (<z_u, z_v>), mlp (Linear -> PReLU -> Linear "
               "on z_u * z_v, the TMA paper's decoder) or distmult (sum_k z_u[k] w_r[k] z_v[k], "
               "one learnt diagonal per relation: R-GCN's decoder on typed graphs)",
       .value = N{[](const train_config& c) { return models::to_string(c.decoder); },
                  [](train_config& c, const std::string& v) {
                    c.decoder = models::parse_decoder_kind(v);
                  },
                  {"dot", "mlp", "distmult"}},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--decoder-hidden",
       .help = "Link prediction: width of the mlp decoder; 0 = --hidden",
       .value = M{&train_config::decoder_hidden},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--out-dim",
       .help = "Link prediction: width of the encoder's output embedding; 0 = --hidden",
       .value = M{&train_config::out_dim},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--negatives",
       .help = "Link prediction: uniform tail-corrupted negatives per positive edge (never the "
               "source itself; items only on user-item data)",
       .value = M{&train_config::negatives},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--exclude",
       .help = "Link prediction: remove the global batch's positive edges from every layer's "
               "sample: none (keep them; DGL's default), self (u->v), reverse (u->v and v->u; "
               "use it on undirected graphs; on typed graphs u->v in the pair's relation and "
               "v->u in its reverse edge type, the one edge type running the other way, when "
               "there is one). Kept edges of a seed are reweighted to sum 1",
       .value = N{[](const train_config& c) { return to_string(c.exclude); },
                  [](train_config& c, const std::string& v) { c.exclude = parse_exclude_kind(v); },
                  {"none", "self", "reverse"}},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--topk",
       .help = "Link prediction on user-item data: K of Recall@K and NDCG@K",
       .value = M{&train_config::topk},
       .changes_arithmetic = true,
       .recorded = is_link});
  add({.name = "--linear-head",
       .help = "Add a linear head after the last GNN layer (the last layer then outputs --hidden "
               "features)",
       .value = M{&train_config::linear_head},
       .changes_arithmetic = true,
       .flag = true});
  add({.name = "--fanouts",
       .help = "Neighbours sampled per layer, seeds' layer first; the number of layers is the "
               "length; -1 = all neighbours, 0 = none (sources = destinations)",
       .value = M{&train_config::fanouts},
       .changes_arithmetic = true,
       .lo = -1});
  add({.name = "--metric",
       .help = "Node classification's validation/test score: auto (accuracy; ROC-AUC for two "
               "classes) or macro_f1 (Macro-F1; Micro-F1 equals accuracy)",
       .value = N{[](const train_config& c) { return std::string(c.macro_f1 ? "macro_f1" : "auto"); },
                  [](train_config& c, const std::string& v) {
                    COOPGNN_EXPECTS(v == "auto" || v == "macro_f1",
                                    "--metric '{}': expected auto or macro_f1", v);
                    c.macro_f1 = v == "macro_f1";
                  },
                  {"auto", "macro_f1"}}});
  add({.name = "--num-bases",
       .help = "rgcn: basis decomposition of the relation weights, W_r = sum_b a_rb V_b "
               "(Schlichtkrull et al., eq. 3); 0 = one full weight per relation",
       .value = M{&train_config::num_bases},
       .changes_arithmetic = true,
       .lo = 0,
       .recorded = is_rgcn});
  add({.name = "--num-blocks",
       .help = "rgcn: block-diagonal decomposition, W_r = diag(Q_r1..Q_rB) with Q_rb of [in/B, "
               "out/B] (Schlichtkrull et al., eq. 4); B must divide every conv's widths; "
               "excludes --num-bases; 0 = none",
       .value = M{&train_config::num_blocks},
       .changes_arithmetic = true,
       .lo = 0,
       .recorded = [](const train_config& c) { return is_rgcn(c) && c.num_blocks > 0; }});
  add({.name = "--sampler",
       .help = "ns (uniform neighbour sampling) or labor (LABOR-0)",
       .value = N{[](const train_config& c) { return to_string(c.sampler); },
                  [](train_config& c, const std::string& v) { c.sampler = parse_sampler_kind(v); },
                  {"ns", "labor"}},
       .changes_arithmetic = true});
  add({.name = "--batch-dependency",
       .help = "LABOR dependent minibatching kappa: 1 = independent batches, K > 1 = variates "
               "rotate over windows of K batches, 0 = never refresh",
       .value = M{&train_config::batch_dependency},
       .changes_arithmetic = true,
       .lo = 0});
  add({.name = "--layer-dependency",
       .help = "LABOR: every layer uses the same variates",
       .value = M{&train_config::layer_dependency},
       .changes_arithmetic = true,
       .flag = true});
  add({.name = "--batch-size",
       .help = "Global minibatch size B (all PEs together)",
       .value = M{&train_config::batch_size},
       .changes_arithmetic = true,
       .lo = 1});
  add({.name = "--drop-last",
       .help = "Train floor(|train| / B) full batches per epoch, dropping the short last one "
               "(default: ceil(|train| / B) batches, the last one short, as DGL's and PyG's "
               "loaders do)",
       .value = M{&train_config::drop_last},
       .changes_arithmetic = true,
       .flag = true,
       .recorded = [](const train_config& c) { return c.drop_last; }});
  add({.name = "--pes-per-gpu",
       .help = "CUDA backend: PEs sharing each GPU (PE p runs on GPU p / K); K > 1 exercises "
               "cooperative minibatching on a single GPU through the peer-copy communicator",
       .value = M{&train_config::pes_per_gpu},
       .changes_arithmetic = true,
       .lo = 1});
  add({.name = "--peer-timeout",
       .help = "Seconds a PE (tma: an MPI rank) waits for its peers in one collective before the "
               "run fails with an error naming the collective and the PEs it waited for (a hung "
               "or dead peer); 0 = wait forever. A peer that fails with an error stops the "
               "others at once, whatever the timeout",
       .value = M{&train_config::comm_timeout_s},
       .lo = 0,
       .hi = 1e9});
  add({.name = "--prefetch",
       .help = "Batches each PE prepares (seeds, sampling, feature loading) ahead of the one it "
               "computes, on a prefetch thread with its own communicator; 0 = serial. Results are "
               "bit for bit those of 0. Every backend (CUDA: on a stream of its own per PE)",
       .value = M{&train_config::prefetch},
       .lo = 0,
       .hi = 8,
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "a tma trainer runs its steps one at a time between aggregations"});
  add({.name = "--epochs",
       .help = "Training epochs",
       .value = M{&train_config::epochs},
       .lo = 0,
       .hi = static_cast<double>(kMaxCheckpointEpoch),
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "the run ends at --time-limit or --max-epochs"});
  add({.name = "--lr",
       .help = "Adam learning rate (finite, > 0)",
       .value = M{&train_config::lr},
       .changes_arithmetic = true,
       .lo = 0,
       .lo_open = true});
  add({.name = "--weight-decay",
       .help = "L2 weight decay added to gradients (finite, >= 0)",
       .value = M{&train_config::weight_decay},
       .changes_arithmetic = true,
       .lo = 0});
  add({.name = "--embedding-weight-decay",
       .help = "L2 decay of the learnt --embedding-dim rows a step touches (finite, >= 0; "
               "default 0: not decayed, as DGL's and PyG's sparse embeddings)",
       .value = M{&train_config::embedding_weight_decay},
       .changes_arithmetic = true,
       .lo = 0,
       .recorded = [](const train_config& c) { return c.embedding_weight_decay != 0; },
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "it decays learnt --embedding-dim rows, which tma does not train"});
  add({.name = "--weight-decay-scope",
       .help = "Which parameters --weight-decay applies to: all, or first (the first GNN layer "
               "only, as Kipf & Welling's GCN and PyG's examples/gcn.py); learnt --embedding-dim "
               "rows follow --embedding-weight-decay whatever the scope",
       .value = N{[](const train_config& c) {
                    return std::string(c.weight_decay_first_layer ? "first" : "all");
                  },
                  [](train_config& c, const std::string& v) {
                    COOPGNN_EXPECTS(v == "all" || v == "first",
                                    "--weight-decay-scope '{}': expected all or first", v);
                    c.weight_decay_first_layer = v == "first";
                  },
                  {"all", "first"}},
       .changes_arithmetic = true});
  add({.name = "--dropout",
       .help = "Dropout probability on every layer's input, in [0, 1)",
       .value = M{&train_config::dropout},
       .changes_arithmetic = true,
       .lo = 0,
       .hi = 1,
       .hi_open = true});
  add({.name = "--seed",
       .help = "Run seed: keys sampling, dropout, shuffling, ownership and initialisation",
       .value = M{&train_config::seed},
       .changes_arithmetic = true});
  add({.name = "--eval-every",
       .help = "Evaluate (full-neighbour inference) every N epochs; 0 = only after the last "
               "epoch, which is always evaluated",
       .value = M{&train_config::eval_every},
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "the server's evaluator scores every aggregate on the validation "
                          "pairs as it is made"});
  add({.name = "--select-best",
       .help = "The epoch the summary, the selection record of --metrics-out and --save-model "
               "take: val (the evaluated epoch of best validation metric, the earlier on ties; "
               "with --eval-every N only evaluated epochs count) or last (the last epoch)",
       .value =
           N{[](const train_config& c) { return to_string(c.select_best); },
             [](train_config& c, const std::string& v) { c.select_best = parse_select_best(v); },
             {"val", "last"}},
       .commands = option_commands::train | option_commands::compare,
       .refused_because = "tma keeps both the aggregate of best validation MRR (best.npy and "
                          "the saved model) and the last one"});
  add({.name = "--gemm-math",
       .help = "Arithmetic of the model's dense GEMMs: fp32, or tf32 (cuBLAS TF32 Tensor Core "
               "math, FP32 accumulation, on the CUDA backend; the host backend computes in FP32 "
               "and says so). Recorded in --metrics-out, checkpoints and saved models",
       .value = N{[](const train_config& c) { return to_string(c.gemm); },
                  [](train_config& c, const std::string& v) { c.gemm = parse_gemm_math(v); },
                  {"fp32", "tf32"}},
       .changes_arithmetic = true,
       .recorded = [](const train_config& c) { return c.gemm != gemm_math::fp32; }});
  return t;
}

/// A number for the range check: integers and floats as double.
template <class T>
double as_double(const T& v) {
  return static_cast<double>(v);
}

}  // namespace

const std::vector<option_decl>& train_option_table() {
  static const std::vector<option_decl> table = make_table();
  return table;
}

const option_decl& train_option(std::string_view name) {
  for (const option_decl& d : train_option_table()) {
    if (d.name == name) return d;
  }
  COOPGNN_FAIL("no option {} in the option table (pipeline/config.cpp)", name);
}

std::string option_range_error(const option_decl& d, double v) {
  bool const below = d.lo_open ? !(v > d.lo) : !(v >= d.lo);
  bool const above = d.hi_open ? !(v < d.hi) : !(v <= d.hi);
  if (!below && !above) return {};
  auto const bound = [](double b) {
    return std::isinf(b) ? std::string(b < 0 ? "-inf" : "inf") : fmt::format("{}", b);
  };
  return fmt::format("value {} is outside {}{}, {}{}", v, d.lo_open ? '(' : '[', bound(d.lo),
                     bound(d.hi), d.hi_open ? ')' : ']');
}

nlohmann::json option_value(const option_decl& d, const train_config& c) {
  if (const auto* n = std::get_if<option_decl::named>(&d.value)) return n->get(c);
  return std::visit([&](auto m) { return nlohmann::json(c.*m); },
                    std::get<option_decl::member>(d.value));
}

nlohmann::json arithmetic_options(const train_config& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const option_decl& d : train_option_table()) {
    if (d.changes_arithmetic && (d.recorded == nullptr || d.recorded(c))) {
      j[d.name] = option_value(d, c);
    }
  }
  return j;
}

const std::vector<option_preset>& option_presets() {
  static const std::vector<option_preset> presets = {
      {.name = "coop-paper",
       .help = "the cooperative minibatching paper's configuration: 3 layers of fanout 10, "
               "hidden 1024, dropout 0.5, Adam lr 1e-3, TF32 GEMMs, 1024 seeds per PE, "
               "GraphSAGE-mean (R-GCN with 2 bases on heterogeneous datasets)",
       .values = {{"--model", "sage"},
                  {"--fanouts", "10,10,10"},
                  {"--hidden", "1024"},
                  {"--dropout", "0.5"},
                  {"--lr", "0.001"},
                  {"--gemm-math", "tf32"}},
       .typed_values = {{"--model", "rgcn"}, {"--num-bases", "2"}},
       .seeds_per_pe = 1024}};
  return presets;
}

const option_preset& option_preset_named(std::string_view name) {
  std::vector<std::string> names;
  for (const option_preset& p : option_presets()) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  COOPGNN_FAIL("--preset '{}': expected one of {}", name, fmt::join(names, ", "));
}

void set_option_text(const option_decl& d, train_config& c, std::string_view text) {
  std::string const s(text);
  if (const auto* n = std::get_if<option_decl::named>(&d.value)) {
    COOPGNN_EXPECTS(std::find(n->choices.begin(), n->choices.end(), s) != n->choices.end(),
                    "{}: '{}' is not one of {}", d.name, s, fmt::join(n->choices, ", "));
    n->set(c, s);
    return;
  }
  auto number = [&](std::string_view t) {
    char* end = nullptr;
    std::string const u(t);
    double const v = std::strtod(u.c_str(), &end);
    COOPGNN_EXPECTS(!u.empty() && end == u.c_str() + u.size() && std::isfinite(v),
                    "{}: '{}' is not a finite number", d.name, u);
    if (std::string const why = option_range_error(d, v); !why.empty()) {
      COOPGNN_FAIL("{}: {}", d.name, why);
    }
    return v;
  };
  auto integer = [&](std::string_view t) {
    double const v = number(t);
    COOPGNN_EXPECTS(v == std::floor(v), "{}: '{}' is not an integer", d.name, t);
    return v;
  };
  std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(c.*m)>;
        if constexpr (std::is_same_v<T, bool>) {
          COOPGNN_EXPECTS(s == "true" || s == "false" || s == "1" || s == "0",
                          "{}: '{}' is not true or false", d.name, s);
          c.*m = s == "true" || s == "1";
        } else if constexpr (std::is_same_v<T, std::vector<int>>) {
          std::vector<int> v;
          std::string_view rest = s;
          while (true) {
            auto const comma = rest.find(',');
            v.push_back(static_cast<int>(integer(rest.substr(0, comma))));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
          }
          c.*m = std::move(v);
        } else if constexpr (std::is_floating_point_v<T>) {
          c.*m = static_cast<T>(number(s));
        } else {
          c.*m = static_cast<T>(integer(s));
        }
      },
      std::get<option_decl::member>(d.value));
}

void check_labor_dependency(sampler_kind sampler, std::int64_t kappa, bool layer_dependency) {
  if (sampler != sampler_kind::ns) return;
  COOPGNN_EXPECTS(kappa == train_config{}.batch_dependency && !layer_dependency,
                  "--batch-dependency and --layer-dependency are LABOR's (dependent "
                  "minibatching); add --sampler labor");
}

void validate_train_config(const train_config& c) {
  for (const option_decl& d : train_option_table()) {
    const auto* m = std::get_if<option_decl::member>(&d.value);
    if (m == nullptr) continue;
    std::visit(
        [&](auto p) {
          auto check = [&](double v) {
            if (std::string const why = option_range_error(d, v); !why.empty()) {
              COOPGNN_FAIL("{}: {}", d.name, why);
            }
          };
          using T = std::decay_t<decltype(c.*p)>;
          if constexpr (std::is_same_v<T, std::vector<int>>) {
            for (int v : c.*p) check(v);
          } else {
            if constexpr (std::is_floating_point_v<T>) {
              COOPGNN_EXPECTS(std::isfinite(c.*p), "{}: value {} is not a finite number",
                              d.name, c.*p);
            }
            check(as_double(c.*p));
          }
        },
        *m);
  }
  check_labor_dependency(c.sampler, c.batch_dependency, c.layer_dependency);
  bool const rgcn = c.model == models::conv_kind::rgcn;
  COOPGNN_EXPECTS(c.num_bases == 0 || rgcn, "--num-bases is R-GCN's (add --model rgcn)");
  COOPGNN_EXPECTS(c.num_blocks == 0 || rgcn, "--num-blocks is R-GCN's (add --model rgcn)");
  COOPGNN_EXPECTS(c.num_blocks == 0 || c.num_bases == 0,
                  "--num-blocks and --num-bases are two decompositions of the same weights; "
                  "choose one");
  COOPGNN_EXPECTS(!c.macro_f1 || c.task == task_kind::node_classification,
                  "--metric macro_f1 scores node classification; link prediction reports its "
                  "own metrics");
}

int pe_thread_budget(const train_config& c) {
  COOPGNN_EXPECTS(c.threads_per_pe >= 0, "--threads-per-pe {}: expected a count >= 1 or auto",
                  c.threads_per_pe);
  COOPGNN_EXPECTS(c.num_pes >= 1, "--pes {}: expected at least 1", c.num_pes);
  if (c.threads_per_pe > 0) return c.threads_per_pe;
  int const hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::max(1, hw / c.num_pes);
}

int sampler_threads(const train_config& c) {
  COOPGNN_EXPECTS(c.sample_threads >= 0, "--sample-threads {}: expected a count >= 1",
                  c.sample_threads);
  return c.sample_threads > 0 ? c.sample_threads : pe_thread_budget(c);
}

}  // namespace coopgnn
