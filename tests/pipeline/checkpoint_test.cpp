// Checkpoints resume exactly (README "Checkpoints and interrupts"): a run
// stopped after k epochs (or inside an epoch), written to disk, read back into a fresh trainer
// and continued gives, epoch for epoch, the reports of an uninterrupted run (losses, metrics,
// work counters; timings apart) and bitwise the same final weights, for node classification and
// for link prediction with learnable embeddings, both protocols, P in {1, 3}. Damaged
// checkpoints are clear io_errors naming the file.
#include "pipeline/checkpoint.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/npy.hpp"
#include "pipeline/report.hpp"
#include "pipeline/trainer.hpp"
#include "tests/common/files.hpp"
#include "tests/common/graphs.hpp"
#include "tests/common/link_steps.hpp"
#include "tests/common/steps.hpp"

namespace coopgnn {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

struct resume_usecase {
  const char* name;
  task_kind task;
  minibatch_mode mode;
  int pes;
  int epochs;              // E
  int stop_epoch;          // k: the interrupted run stops in this epoch ...
  int stop_batches;        // ... after this many of its batches (0: at the end of epoch k - 1)
  bool drop_last = false;  // node classification: 144 training vertices, B = 40: the tail of 24
                           // is trained (4 batches) or dropped (3)
  bool hetero = false;     // R-GCN on the typed synthetic graph: per-type counters resume too
};

void PrintTo(const resume_usecase& u, std::ostream* os) { *os << u.name; }

struct fixture {
  dataset ds;
  csc_graph g;
};

const fixture& node_data() {
  static const fixture f = [] {
    fixture x;
    x.ds = test::synthetic_dataset(240, 3, 6, 5, 21);
    x.g = build_csc(x.ds.num_nodes, x.ds.src, x.ds.dst);
    return x;
  }();
  return f;
}

train_config config_of(const resume_usecase& u) {
  train_config c;
  if (u.hetero) {
    c.mode = u.mode;
    c.num_pes = u.pes;
    c.model = models::conv_kind::rgcn;
    c.num_bases = 2;
    c.hidden = 8;
    c.fanouts = {3, 2};
    c.batch_size = 40;
    c.dropout = 0.3f;
    c.seed = 5;
  } else if (u.task == task_kind::link_prediction) {
    c = test::link_cfg(u.mode, u.pes);
    c.embedding_dim = 5;  // learnable input rows and their lazy Adam state
    c.batch_size = 300;
  } else {
    c.mode = u.mode;
    c.num_pes = u.pes;
    c.hidden = 8;
    c.fanouts = {4, 3};
    c.batch_size = 40;
    c.dropout = 0.3f;
    c.seed = 5;
  }
  c.drop_last = u.drop_last;
  c.epochs = u.epochs;
  c.eval_every = 1;
  return c;
}

const dataset& ds_of(const resume_usecase& u) {
  if (u.hetero) return test::hetero_protocol_data().ds;
  return u.task == task_kind::link_prediction ? test::link_data().ds : node_data().ds;
}
const csc_graph& g_of(const resume_usecase& u) {
  if (u.hetero) return test::hetero_protocol_data().g;
  return u.task == task_kind::link_prediction ? test::link_data().g : node_data().g;
}

void expect_same_metric(double a, double b, const std::string& what) {
  if (std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a)) << what;
  } else {
    EXPECT_EQ(a, b) << what;
  }
}

/// Field by field, timings apart.
void expect_same_report(const epoch_report& a, const epoch_report& b) {
  std::string const at = "epoch " + std::to_string(b.epoch);
  EXPECT_EQ(a.epoch, b.epoch);
  EXPECT_EQ(a.batches, b.batches) << at;
  EXPECT_EQ(a.train_loss, b.train_loss) << at;
  expect_same_metric(a.val_metric, b.val_metric, at + " val");
  expect_same_metric(a.test_metric, b.test_metric, at + " test");
  EXPECT_EQ(a.val_metrics, b.val_metrics) << at;
  EXPECT_EQ(a.test_metrics, b.test_metrics) << at;
  EXPECT_EQ(a.work.seeds, b.work.seeds) << at;
  EXPECT_EQ(a.work.sampled_edges, b.work.sampled_edges) << at;
  EXPECT_EQ(a.work.sampled_vertices, b.work.sampled_vertices) << at;
  EXPECT_EQ(a.work.feature_rows, b.work.feature_rows) << at;
  EXPECT_EQ(a.work.feature_bytes, b.work.feature_bytes) << at;
  EXPECT_EQ(a.work.alltoall_bytes, b.work.alltoall_bytes) << at;
  EXPECT_EQ(a.work.alltoall_calls, b.work.alltoall_calls) << at;
  EXPECT_EQ(a.work.allreduce_bytes, b.work.allreduce_bytes) << at;
  EXPECT_EQ(a.work.cache_hits, b.work.cache_hits) << at;
  EXPECT_EQ(a.work.cache_misses, b.work.cache_misses) << at;
  EXPECT_EQ(a.work.rows_per_type, b.work.rows_per_type) << at;
  EXPECT_EQ(a.work.edges_per_relation, b.work.edges_per_relation) << at;
}

class ExactResume : public ::testing::TestWithParam<resume_usecase> {};

TEST_P(ExactResume, MatchesTheUninterruptedRun) {
  auto const& u = GetParam();
  auto const cfg = config_of(u);
  const dataset& ds = ds_of(u);
  const csc_graph& g = g_of(u);

  // The uninterrupted run: the expected values.
  std::vector<epoch_report> straight;
  trainer_state straight_end;
  {
    trainer tr(ds, g, cfg);
    ASSERT_GE(tr.batches_per_epoch(), 3) << "the case needs an epoch to stop inside";
    if (u.hetero) {
      ASSERT_EQ(tr.batches_per_epoch() * cfg.batch_size >= std::int64_t(ds.train.size()), true);
    } else if (u.task == task_kind::node_classification) {
      ASSERT_NE(ds.train.size() % static_cast<std::size_t>(cfg.batch_size), 0u)
          << "the case needs an epoch with a short tail";
      EXPECT_EQ(tr.batches_per_epoch(), u.drop_last ? 3 : 4);
    }
    for (int e = 1; e <= u.epochs; ++e) straight.push_back(tr.run_epoch(e, e == u.epochs));
    straight_end = tr.state();
  }
  ASSERT_GT(straight.back().train_loss, 0.0);

  // The interrupted run: epochs before k in full, then k until the stop; saved to disk.
  test::temp_dir dir;
  std::vector<epoch_report> got;
  {
    trainer tr(ds, g, cfg);
    epoch_position at;
    for (int e = 1; e < u.stop_epoch; ++e) {
      got.push_back(tr.run_epoch(epoch_position{.epoch = e}, false, {}, {}, &at));
    }
    if (u.stop_batches > 0) {
      int calls = 0;
      auto const partial = tr.run_epoch(
          epoch_position{.epoch = u.stop_epoch}, false, {},
          [&] { return ++calls == u.stop_batches; }, &at);
      ASSERT_EQ(at.next_batch, u.stop_batches);
      EXPECT_EQ(partial.batches, u.stop_batches);
    }
    checkpoint c;
    c.identity = run_identity(ds, cfg);
    c.position = at;
    c.batches_per_epoch = tr.batches_per_epoch();
    c.state = tr.state();
    write_checkpoint(dir.path(), c);
  }
  // A fresh process, as it were: a new trainer restored from the files.
  {
    checkpoint const c = read_checkpoint(dir.path());
    check_resumable(c.identity, run_identity(ds, cfg), c.path / "manifest.json");
    trainer tr(ds, g, cfg);
    tr.restore(c.state);
    epoch_position pos = c.position;
    if (pos.next_batch == c.batches_per_epoch) pos = epoch_position{.epoch = pos.epoch + 1};
    for (int e = pos.epoch; e <= u.epochs; ++e) {
      pos.epoch = e;
      got.push_back(tr.run_epoch(pos, e == u.epochs, {}, {}, nullptr));
      pos = epoch_position{.epoch = e + 1};
    }
    auto const end = tr.state();
    EXPECT_EQ(end.params, straight_end.params);
    EXPECT_EQ(end.adam_m, straight_end.adam_m);
    EXPECT_EQ(end.adam_v, straight_end.adam_v);
    EXPECT_EQ(end.adam_steps, straight_end.adam_steps);
    EXPECT_EQ(end.emb.values(), straight_end.emb.values());
    EXPECT_EQ(end.emb_m.values(), straight_end.emb_m.values());
    EXPECT_EQ(end.emb_steps, straight_end.emb_steps);
    if (u.task == task_kind::link_prediction) {
      EXPECT_GT(end.emb.rows(), 0);
    }
  }
  ASSERT_EQ(got.size(), straight.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    // Epochs before the stop were evaluated only in the straight run (eval off above).
    if (static_cast<int>(i) + 1 < u.stop_epoch) {
      EXPECT_EQ(got[i].train_loss, straight[i].train_loss) << "epoch " << i + 1;
      continue;
    }
    expect_same_report(got[i], straight[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Runs, ExactResume,
    ::testing::Values(resume_usecase{"nc_coop_p1", task_kind::node_classification,
                                     minibatch_mode::cooperative, 1, 3, 2, 2},
                      resume_usecase{"nc_coop_p3", task_kind::node_classification,
                                     minibatch_mode::cooperative, 3, 3, 2, 1},
                      resume_usecase{"nc_indep_p1", task_kind::node_classification,
                                     minibatch_mode::independent, 1, 3, 3, 0},
                      resume_usecase{"nc_indep_p3", task_kind::node_classification,
                                     minibatch_mode::independent, 3, 3, 2, 2},
                      // Stopped just before the short tail batch, which the resumed run trains.
                      resume_usecase{"nc_coop_p3_before_tail", task_kind::node_classification,
                                     minibatch_mode::cooperative, 3, 3, 2, 3},
                      resume_usecase{"nc_indep_p2_drop_last", task_kind::node_classification,
                                     minibatch_mode::independent, 2, 3, 2, 2, true},
                      resume_usecase{"nc_coop_p2_drop_last", task_kind::node_classification,
                                     minibatch_mode::cooperative, 2, 3, 3, 0, true},
                      // Typed: stopped inside epoch 2, so the checkpoint carries a partial
                      // epoch's per-type and per-relation counts.
                      resume_usecase{"rgcn_coop_p3", task_kind::node_classification,
                                     minibatch_mode::cooperative, 3, 3, 2, 2, false, true},
                      resume_usecase{"rgcn_indep_p2", task_kind::node_classification,
                                     minibatch_mode::independent, 2, 2, 2, 1, false, true},
                      resume_usecase{"lp_coop_p1", task_kind::link_prediction,
                                     minibatch_mode::cooperative, 1, 2, 2, 1},
                      resume_usecase{"lp_coop_p3", task_kind::link_prediction,
                                     minibatch_mode::cooperative, 3, 2, 2, 2},
                      resume_usecase{"lp_indep_p1", task_kind::link_prediction,
                                     minibatch_mode::independent, 1, 2, 2, 0},
                      resume_usecase{"lp_indep_p3", task_kind::link_prediction,
                                     minibatch_mode::independent, 3, 2, 2, 1}),
    [](const auto& info) { return std::string(info.param.name); });

/// A small checkpoint written to `dir`: its state is made up, not trained.
checkpoint sample_checkpoint(int epoch) {
  checkpoint c;
  c.identity = {{"--hidden", 8}, {"dataset", "toy"}};
  c.position = epoch_position{epoch, 4, 1.5, {}};
  c.batches_per_epoch = 4;
  c.state.params = {1, 2, 3};
  c.state.adam_m = {0.5f, 0.25f, 0.125f};
  c.state.adam_v = {4, 5, 6};
  c.state.adam_steps = 12;
  return c;
}

TEST(CheckpointFiles, RoundTripAndKeepThePreviousOne) {
  test::temp_dir dir;
  auto const p1 = write_checkpoint(dir.path(), sample_checkpoint(1));
  auto const p2 = write_checkpoint(dir.path(), sample_checkpoint(2));
  EXPECT_TRUE(fs::exists(p1)) << "the previous checkpoint is kept";
  // A crash in the middle of writing a third leaves a temporary that nothing reads.
  fs::create_directories(dir / "ckpt-000003-000004.tmp.999");
  test::write_text(dir / "ckpt-000003-000004.tmp.999/params.npy", "half");
  checkpoint const c = read_checkpoint(dir.path());
  EXPECT_EQ(c.path, p2);
  EXPECT_EQ(c.position.epoch, 2);
  EXPECT_EQ(c.position.next_batch, 4);
  EXPECT_EQ(c.position.loss_sum, 1.5);
  EXPECT_EQ(c.state.adam_m, (std::vector<float>{0.5f, 0.25f, 0.125f}));
  EXPECT_EQ(c.state.adam_steps, 12);
  EXPECT_EQ(test::read_text(dir / "latest"), "ckpt-000002-000004\n");
  write_checkpoint(dir.path(), sample_checkpoint(3));
  EXPECT_FALSE(fs::exists(p1)) << "older than the previous one: removed";
  EXPECT_TRUE(fs::exists(p2));
  EXPECT_FALSE(fs::exists(dir / "ckpt-000003-000004.tmp.999"));
}

TEST(CheckpointFiles, SavedGatModelKeepsItsAttentionConfiguration) {
  // A GAT model is rebuilt from the manifest alone (embed / predict): heads and attention
  // options must survive, or the parameter count (and the model) would differ.
  test::temp_dir dir;
  saved_model m;
  m.config.kind = models::conv_kind::gat;
  m.config.in_dim = 5;
  m.config.hidden = 3;
  m.config.num_classes = 2;
  m.config.num_layers = 2;
  m.config.gat.heads = 4;
  m.config.out_heads = 2;
  m.config.gat.attn_dropout = 0.25f;
  m.config.gat.negative_slope = 0.1f;
  m.config.gat.residual = true;
  exec_context const ctx(backend::host);
  models::gnn_model const model(ctx, m.config);
  m.params.assign(static_cast<std::size_t>(model.num_parameters()), 0.5f);
  write_saved_model(dir.path(), m);
  saved_model const back = read_saved_model(dir.path());
  EXPECT_EQ(back.config.kind, models::conv_kind::gat);
  EXPECT_EQ(back.config.gat.heads, 4);
  EXPECT_EQ(back.config.out_heads, 2);
  EXPECT_EQ(back.config.gat.attn_dropout, 0.25f);
  EXPECT_EQ(back.config.gat.negative_slope, 0.1f);
  EXPECT_TRUE(back.config.gat.residual);
  EXPECT_TRUE(back.config.gat.self_loops);
  EXPECT_EQ(back.params.size(), m.params.size());
  EXPECT_EQ(build_saved_model(back, ctx, "manifest")->num_parameters(), model.num_parameters());
  saved_model short_params = back;
  short_params.params.pop_back();
  EXPECT_NE(test::error_of([&] { (void)build_saved_model(short_params, ctx, "manifest"); })
                .find("manifest: " + std::to_string(m.params.size() - 1) +
                      " parameters, the model configuration has"),
            std::string::npos);
}

TEST(CheckpointFiles, TruncatedArrayIsNamed) {
  test::temp_dir dir;
  auto const p = write_checkpoint(dir.path(), sample_checkpoint(1));
  fs::resize_file(p / "adam_v.npy", fs::file_size(p / "adam_v.npy") - 4);
  auto const why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("adam_v.npy"), std::string::npos) << why;
  EXPECT_NE(why.find("corrupt"), std::string::npos) << why;
}

TEST(CheckpointFiles, FlippedByteFailsTheChecksum) {
  test::temp_dir dir;
  auto const p = write_checkpoint(dir.path(), sample_checkpoint(1));
  std::string bytes = test::read_text(p / "params.npy");
  bytes.back() = static_cast<char>(bytes.back() ^ 0x40);
  test::write_text(p / "params.npy", bytes);
  auto const why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("params.npy"), std::string::npos) << why;
  EXPECT_NE(why.find("CRC-32"), std::string::npos) << why;
}

TEST(CheckpointFiles, EditedManifestIsNamed) {
  test::temp_dir dir;
  auto const p = write_checkpoint(dir.path(), sample_checkpoint(1));
  auto const manifest = p / "manifest.json";
  std::string text = test::read_text(manifest);
  // Not JSON any more.
  test::write_text(manifest, text.substr(0, text.size() / 2));
  auto why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("manifest.json"), std::string::npos) << why;
  // JSON, but an impossible position.
  auto const at = text.find("\"next_batch\": 4");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 15, "\"next_batch\": 9");
  test::write_text(manifest, text);
  why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("manifest.json"), std::string::npos) << why;
  EXPECT_NE(why.find("impossible"), std::string::npos) << why;
  // A key removed.
  test::write_text(manifest,
                   R"({"format": "coopgnn-checkpoint", "version": 1, "kind": "checkpoint"})");
  why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("'identity'"), std::string::npos) << why;
  // A bad pointer.
  test::write_text(dir / "latest", "../../etc\n");
  why = test::error_of([&] { (void)read_checkpoint(dir.path()); });
  EXPECT_NE(why.find("latest"), std::string::npos) << why;
  why = test::error_of([&] { (void)read_checkpoint(dir / "nowhere"); });
  EXPECT_NE(why.find("nowhere"), std::string::npos) << why;
}

TEST(CheckpointFiles, ResumeRefusesAChangedConfigNamingTheField) {
  const dataset& ds = node_data().ds;
  train_config a;
  a.hidden = 8;
  train_config b = a;
  b.epochs = 7;  // may differ
  b.eval_every = 3;
  b.sample_threads = 2;
  EXPECT_NO_THROW(check_resumable(run_identity(ds, a), run_identity(ds, b), "m.json"));
  for (auto change : std::vector<std::pair<std::string, void (*)(train_config&)>>{
           {"--hidden", [](train_config& c) { c.hidden = 9; }},
           {"--pes", [](train_config& c) { c.num_pes = 2; }},
           {"--mode", [](train_config& c) { c.mode = minibatch_mode::independent; }},
           {"--seed", [](train_config& c) { c.seed = 1; }},
           {"--fanouts", [](train_config& c) { c.fanouts = {3}; }},
           {"--model", [](train_config& c) { c.model = models::conv_kind::gcn; }}}) {
    train_config c = a;
    change.second(c);
    auto const why = test::error_of(
        [&] { check_resumable(run_identity(ds, a), run_identity(ds, c), "m.json"); });
    EXPECT_NE(why.find("cannot resume: " + change.first + " is"), std::string::npos) << why;
  }
  // --drop-last changes the epoch's batches; it is recorded only when set, so a checkpoint of
  // a run without it (or written before it existed) resumes a run without it.
  train_config dropping = a;
  dropping.drop_last = true;
  EXPECT_FALSE(run_identity(ds, a).contains("--drop-last"));
  auto why_drop = test::error_of(
      [&] { check_resumable(run_identity(ds, a), run_identity(ds, dropping), "m.json"); });
  EXPECT_NE(why_drop.find("does not record --drop-last"), std::string::npos) << why_drop;
  why_drop = test::error_of(
      [&] { check_resumable(run_identity(ds, dropping), run_identity(ds, a), "m.json"); });
  EXPECT_NE(why_drop.find("--drop-last is true in the checkpoint, unset"), std::string::npos)
      << why_drop;
  dataset other = ds;
  other.name = "other";
  auto const why = test::error_of(
      [&] { check_resumable(run_identity(ds, a), run_identity(other, a), "m.json"); });
  EXPECT_NE(why.find("dataset is"), std::string::npos) << why;
}

TEST(CheckpointFiles, IdentityKeysAreTheOnesRecordedBeforeTheOptionTable) {
  // The keys a node-classification GraphSAGE run recorded when run_identity listed them by hand:
  // checkpoints written then still resume (dataset.content aside, which is new).
  const dataset& ds = node_data().ds;
  train_config c;
  auto const j = run_identity(ds, c);
  std::vector<std::string> keys;
  for (auto const& [k, v] : j.items()) keys.push_back(k);
  std::vector<std::string> const expected = {
      "--activation", "--backend", "--batch-dependency", "--batch-size", "--dropout",
      "--embedding-dim", "--fanouts", "--hidden", "--layer-dependency", "--layer-norm",
      "--linear-head", "--lr", "--mode", "--model", "--pes", "--pes-per-gpu", "--sampler",
      "--seed", "--task", "--weight-decay", "--weight-decay-scope", "dataset", "dataset.content",
      "dataset.feature_dim", "dataset.num_classes", "dataset.num_edges", "dataset.num_nodes"};
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(j["--weight-decay-scope"], "all");
  EXPECT_EQ(j["--fanouts"], nlohmann::json::array({10, 10}));
  EXPECT_FLOAT_EQ(j["--lr"].get<float>(), 0.01f);
  // GAT and link prediction add theirs; --gemm-math appears only when tf32.
  c.model = models::conv_kind::gat;
  c.gemm = gemm_math::tf32;
  auto const g = run_identity(ds, c);
  for (const char* k : {"--heads", "--out-heads", "--attn-dropout", "--negative-slope",
                        "--residual"}) {
    EXPECT_TRUE(g.contains(k)) << k;
  }
  EXPECT_EQ(g["--gemm-math"], "tf32");
  EXPECT_FALSE(g.contains("--decoder"));
}

TEST(DatasetFingerprint, CoversEdgesEveryFeatureRowTheSplitAndTheLabels) {
  dataset a = node_data().ds;
  ASSERT_EQ(a.features.rows(), 240);
  std::string const fa = dataset_fingerprint(a);
  EXPECT_EQ(fa, dataset_fingerprint(a));  // deterministic
  EXPECT_EQ(fa.rfind("xxh64 edges:", 0), 0U) << fa;
  EXPECT_NE(fa.find(" split:"), std::string::npos) << fa;
  EXPECT_NE(fa.find(" labels:"), std::string::npos) << fa;
  EXPECT_EQ(fa.find("link_split:"), std::string::npos) << fa;
  EXPECT_TRUE(full_content_fingerprint(fa));
  // Another name: the same content.
  dataset named = a;
  named.name = "renamed";
  EXPECT_EQ(dataset_fingerprint(named), fa);
  // Row 1 of 240: no row of an evenly spaced sample of 64 (0, 3, 7, ...).
  dataset f = a;
  f.features.row(1)[0] += 1.0f;
  std::string const ff = dataset_fingerprint(f);
  EXPECT_EQ(fingerprint_difference(fa, ff), "features");
  // One edge moved.
  dataset e = a;
  ASSERT_FALSE(e.dst.empty());
  e.dst[0] = e.dst[0] == 0 ? 1 : 0;
  std::string const fe = dataset_fingerprint(e);
  EXPECT_EQ(fingerprint_difference(fa, fe), "edges");
  EXPECT_EQ(fingerprint_difference(fe, ff), "edges and features");
  EXPECT_EQ(fingerprint_difference(fa, fa), "");
  // A training vertex and a test vertex trade places: the same sizes, another split.
  dataset sp = a;
  ASSERT_FALSE(sp.train.empty());
  ASSERT_FALSE(sp.test.empty());
  std::swap(sp.train[0], sp.test[0]);
  std::string const fs_ = dataset_fingerprint(sp);
  EXPECT_EQ(fingerprint_difference(fa, fs_), "split");
  // One label changed.
  dataset lb = a;
  lb.labels[lb.train[0]] = (lb.labels[lb.train[0]] + 1) % lb.num_classes;
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(lb)), "labels");
  dataset all = e;
  all.features = f.features;
  all.train = sp.train;
  all.test = sp.test;
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(all)), "edges, features and split");
  // A dataset read without its node-classification task: no split or labels to compare.
  dataset none = a;
  none.train.clear();
  none.valid.clear();
  none.test.clear();
  none.labels.clear();
  std::string const fn = dataset_fingerprint(none);
  EXPECT_EQ(fn.find("split:"), std::string::npos) << fn;
  EXPECT_EQ(fingerprint_difference(fa, fn), "");
  // The previous version's fingerprint (edges and sampled rows) cannot be compared.
  EXPECT_FALSE(full_content_fingerprint("edges:0011 features:00aa"));
  EXPECT_EQ(fingerprint_difference("edges:0011 features:00aa", fa),
            "content (fingerprints of different coopgnn versions)");
}

TEST(DatasetFingerprint, TheLinkSplitCoversPositivesAndNegatives) {
  const dataset& a = test::link_data().ds;
  ASSERT_TRUE(a.link.has_value());
  std::string const fa = dataset_fingerprint(a);
  EXPECT_NE(fa.find(" link_split:"), std::string::npos) << fa;
  dataset pos = a;
  ASSERT_FALSE(pos.link->train.dst.empty());
  std::swap(pos.link->train.dst.front(), pos.link->train.dst.back());
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(pos)), "link split");
  // One negative of the test pairs (label 0) moved.
  dataset neg = a;
  auto& t = neg.link->test;
  auto const at = std::find(t.labels.begin(), t.labels.end(), 0);
  ASSERT_NE(at, t.labels.end());
  auto& d = t.dst[static_cast<std::size_t>(at - t.labels.begin())];
  d = (d + 1) % neg.num_nodes;
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(neg)), "link split");
}

TEST(DatasetFingerprint, TypedGraphsCoverEveryTypesFeaturesAndTheTypedPairs) {
  const dataset& a = test::typed_link_data().ds;
  ASSERT_TRUE(a.hetero.has_value());
  ASSERT_TRUE(a.link.has_value());
  std::string const fa = dataset_fingerprint(a);
  // The second row of the last node type with features in memory.
  dataset f = a;
  auto& tables = f.hetero->features;
  auto const t = std::find_if(tables.rbegin(), tables.rend(),
                              [](const matrix<float>& m) { return m.rows() > 1 && m.cols() > 0; });
  ASSERT_NE(t, tables.rend());
  t->row(1)[0] += 1.0f;
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(f)), "features");
  // One training pair said to be of another relation.
  dataset r = a;
  ASSERT_FALSE(r.link->train.relation.empty());
  r.link->train.relation[0] = r.link->train.relation[0] == 0 ? 1 : 0;
  EXPECT_EQ(fingerprint_difference(fa, dataset_fingerprint(r)), "link split");
}

/// `ds` with its features written to dir/feat.npy and left there (--feature-storage mmap).
dataset features_in_file(dataset ds, const std::filesystem::path& dir) {
  auto const file = dir / "feat.npy";
  std::vector<std::int64_t> const shape = {ds.feature_dim() == 0 ? 0 : ds.num_nodes,
                                           ds.feature_dim()};
  if (ds.features16.rows() > 0) {
    write_npy_bits16(file, std::span<const std::uint16_t>(ds.features16.data(),
                                                          static_cast<std::size_t>(
                                                              ds.features16.size())),
                     shape);
  } else {
    write_npy(file, std::span<const float>(ds.features.data(),
                                           static_cast<std::size_t>(ds.features.size())),
              shape);
  }
  ds.feature_cols = ds.feature_dim();
  ds.features = matrix<float>();
  ds.features16 = matrix<std::uint16_t>();
  ds.feature_file = file;
  return ds;
}

TEST(DatasetFingerprint, TheSameWhetherTheFeaturesAreInMemoryOrInTheirFile) {
  const dataset& a = node_data().ds;
  test::temp_dir d32;
  dataset const mapped = features_in_file(a, d32.path());
  ASSERT_FALSE(mapped.features_in_memory());
  EXPECT_EQ(dataset_fingerprint(mapped), dataset_fingerprint(a));
  // 16-bit features: in memory and in the file alike; not the float32 table's value.
  dataset h = a;
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(a.features.size()));
  for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<std::uint16_t>(i * 7 + 1);
  h.features = matrix<float>();
  h.features16 = matrix<std::uint16_t>(a.features.rows(), a.features.cols(), bits);
  h.feature_type = feature_dtype::float16;
  test::temp_dir d16;
  dataset const mapped16 = features_in_file(h, d16.path());
  EXPECT_EQ(dataset_fingerprint(mapped16), dataset_fingerprint(h));
  EXPECT_EQ(fingerprint_difference(dataset_fingerprint(h), dataset_fingerprint(a)), "features");
}

TEST(DatasetFingerprint, LargeTablesAreCachedBesideTheirFileByItsSizeAndTime) {
  const dataset& a = node_data().ds;
  std::string const fa = dataset_fingerprint(a);
  test::temp_dir dir;
  dataset const mapped = features_in_file(a, dir.path());
  auto const cache = dir / kContentHashCache;
  // Below the size at which tables are cached: nothing is written beside the file.
  EXPECT_EQ(dataset_fingerprint(mapped), fa);
  EXPECT_FALSE(fs::exists(cache));
  // Every table cached (0 bytes and more): one entry for feat.npy, its size and hash.
  EXPECT_EQ(dataset_fingerprint(mapped, 0), fa);
  ASSERT_TRUE(fs::exists(cache));
  auto j = nlohmann::json::parse(test::read_text(cache));
  auto const entry = j["files"]["feat.npy"];  // a copy: j is edited below
  EXPECT_EQ(entry["size"].get<std::int64_t>(),
            static_cast<std::int64_t>(fs::file_size(mapped.feature_file)));
  EXPECT_EQ(entry["xxh64"].get<std::string>().size(), 16U);
  // A copy of the file with the same time, beside a cache whose hash was edited: the edited
  // hash is taken (the table is not read again).
  test::temp_dir other;
  fs::copy_file(mapped.feature_file, other / "feat.npy");
  fs::last_write_time(other / "feat.npy", fs::last_write_time(mapped.feature_file));
  j["files"]["feat.npy"]["xxh64"] = "0123456789abcdef";
  test::write_text(other / kContentHashCache, j.dump());
  dataset copy = mapped;
  copy.feature_file = other / "feat.npy";
  EXPECT_EQ(fingerprint_difference(dataset_fingerprint(copy, 0), fa), "features");
  // Another modification time: the entry no longer matches; read again and stored.
  fs::last_write_time(copy.feature_file,
                      fs::last_write_time(copy.feature_file) + std::chrono::seconds(5));
  EXPECT_EQ(dataset_fingerprint(copy, 0), fa);
  auto const k = nlohmann::json::parse(test::read_text(other / kContentHashCache));
  EXPECT_EQ(k["files"]["feat.npy"]["xxh64"], entry["xxh64"]);
}

TEST(CheckpointFiles, AnIdentityWithoutContentComparesTheOtherFields) {
  // Hand-written identities: an older checkpoint records no dataset.content, or the older
  // fingerprint (edges and sampled feature rows).
  nlohmann::json const current = {
      {"dataset", "cora"}, {"--hidden", 64},
      {"dataset.content", "xxh64 edges:0011 features:00aa split:0022 labels:0033"}};
  nlohmann::json older = current;
  older.erase("dataset.content");
  EXPECT_EQ(identity_difference(older, current), "");
  EXPECT_NE(older_content_note(older, "the checkpoint C"), "");
  older["dataset.content"] = "edges:0011 features:00bb";
  EXPECT_EQ(identity_difference(older, current), "");
  EXPECT_NE(older_content_note(older, "the checkpoint C").find("the checkpoint C was written"),
            std::string::npos);
  EXPECT_EQ(older_content_note(current, "the checkpoint C"), "");
  older["--hidden"] = 32;
  EXPECT_NE(identity_difference(older, current).find("--hidden"), std::string::npos);
  // A recorded fingerprint that differs is still a difference, naming the part.
  nlohmann::json other = current;
  other["dataset.content"] = "xxh64 edges:0011 features:00aa split:0044 labels:0033";
  EXPECT_THAT(identity_difference(other, current),
              AllOf(HasSubstr("dataset.content"), HasSubstr("other split")));
  // A task the run did not read (no split part) is no difference.
  other["dataset.content"] = "xxh64 edges:0011 features:00aa";
  EXPECT_EQ(identity_difference(other, current), "");
}

TEST(MetricsLines, AppendedWholeWithNewlines) {
  test::temp_dir dir;
  auto const file = dir / "m.jsonl";
  test::write_text(file, "{\"epoch\":0}\n");
  {
    line_appender out(file);
    out.append(R"({"epoch":1})");
    out.append(R"({"epoch":2})");
    EXPECT_THROW(out.append("two\nlines"), logic_error);
  }
  EXPECT_EQ(test::read_text(file), "{\"epoch\":0}\n{\"epoch\":1}\n{\"epoch\":2}\n");
  auto const why = test::error_of([&] { line_appender bad(dir / "no/such/dir/m.jsonl"); });
  EXPECT_NE(why.find("no/such/dir/m.jsonl"), std::string::npos) << why;
}

}  // namespace
}  // namespace coopgnn
