// Model selection (pipeline/selection.hpp, docs/usage.md "Model selection"): the epoch
// of best validation metric (the earlier on ties, evaluated epochs only) or the last, the kept
// parameters of that epoch, and the checkpoint form of the state.
#include "pipeline/selection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/core/error.hpp"

namespace coopgnn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// An epoch report with the given validation and test metric (NaN: not evaluated).
epoch_report epoch(int e, double val, double test) {
  epoch_report r;
  r.epoch = e;
  r.metric_name = "accuracy";
  r.val_metric = val;
  r.test_metric = test;
  if (std::isfinite(val)) {
    r.val_metrics = {{"accuracy", val}};
    r.test_metrics = {{"accuracy", test}};
  }
  return r;
}

TEST(ModelSelector, ValTakesTheBestValidationEpochAndTheEarlierOnTies) {
  model_selector s(select_best_kind::val);
  EXPECT_TRUE(s.offer(epoch(1, 0.50, 0.40)));
  EXPECT_TRUE(s.offer(epoch(2, 0.70, 0.60)));
  EXPECT_FALSE(s.offer(epoch(3, 0.70, 0.90))) << "a tie keeps the earlier epoch";
  EXPECT_FALSE(s.offer(epoch(4, 0.65, 0.95)));
  model_selection const m = s.selected();
  EXPECT_EQ(m.epoch, 2);
  EXPECT_EQ(m.epochs, 4);
  EXPECT_EQ(m.val_metric, 0.70);
  EXPECT_EQ(m.test_metric, 0.60);
  EXPECT_EQ(m.metric_name, "accuracy");
  EXPECT_EQ(m.note, "");
}

TEST(ModelSelector, EpochsWithoutEvaluationDoNotCount) {
  model_selector s(select_best_kind::val);
  EXPECT_FALSE(s.offer(epoch(1, kNaN, kNaN)));
  EXPECT_FALSE(s.offer(epoch(2, kNaN, kNaN)));
  EXPECT_TRUE(s.offer(epoch(3, 0.30, 0.20)));
  EXPECT_FALSE(s.offer(epoch(4, kNaN, kNaN)));
  EXPECT_EQ(s.selected().epoch, 3);
  EXPECT_EQ(s.selected().epochs, 4);
}

TEST(ModelSelector, WithoutAnyValidationMetricTheLastEpochAndANote) {
  model_selector s(select_best_kind::val);
  s.offer(epoch(1, kNaN, 0.1));
  s.offer(epoch(2, kNaN, 0.2));
  EXPECT_EQ(s.selected().epoch, 2);
  EXPECT_EQ(s.selected().test_metric, 0.2);
  EXPECT_NE(s.selected().note.find("no evaluated epoch has a validation metric"),
            std::string::npos);
  EXPECT_EQ(s.params(), nullptr);
}

TEST(ModelSelector, LastTakesTheLastEpochAndKeepsNoParameters) {
  model_selector s(select_best_kind::last);
  EXPECT_FALSE(s.offer(epoch(1, 0.9, 0.8)));
  EXPECT_FALSE(s.offer(epoch(2, 0.1, 0.2)));
  EXPECT_EQ(s.selected().epoch, 2);
  EXPECT_EQ(s.selected().val_metric, 0.1);
  EXPECT_EQ(s.selected().rule, select_best_kind::last);
  EXPECT_EQ(s.params(), nullptr);
}

TEST(ModelSelector, KeepsTheSelectedEpochsParameters) {
  model_selector s(select_best_kind::val);
  ASSERT_TRUE(s.offer(epoch(1, 0.5, 0.5)));
  s.keep({1.0f, 2.0f}, matrix<float>(1, 2, {3.0f, 4.0f}));
  EXPECT_FALSE(s.offer(epoch(2, 0.4, 0.4)));
  ASSERT_NE(s.params(), nullptr);
  EXPECT_EQ(*s.params(), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(s.embeddings().values(), (std::vector<float>{3.0f, 4.0f}));
  // A better epoch drops them until the caller keeps that epoch's.
  ASSERT_TRUE(s.offer(epoch(3, 0.6, 0.6)));
  EXPECT_EQ(s.params(), nullptr);
  s.keep({5.0f, 6.0f}, matrix<float>());
  EXPECT_EQ(*s.params(), (std::vector<float>{5.0f, 6.0f}));
}

TEST(ModelSelector, TheCheckpointFormRestoresTheSameSelection) {
  model_selector a(select_best_kind::val);
  a.offer(epoch(1, 0.5, 0.45));
  ASSERT_TRUE(a.offer(epoch(2, 0.75, kNaN)));  // a test metric may be missing (null)
  a.keep({7.0f, 8.0f, 9.0f}, matrix<float>());
  a.offer(epoch(3, 0.6, 0.9));
  // Through text, as a manifest holds it.
  auto const j = nlohmann::json::parse(a.to_json().dump());
  model_selector b(select_best_kind::val);
  b.restore(j, {7.0f, 8.0f, 9.0f}, matrix<float>(), "m.json");
  // The run goes on after the resume: epoch 4 is worse, epoch 5 better.
  for (model_selector* s : {&a, &b}) {
    EXPECT_FALSE(s->offer(epoch(4, 0.7, 0.1)));
  }
  EXPECT_EQ(b.selected().epoch, 2);
  EXPECT_EQ(b.selected().val_metric, 0.75);
  EXPECT_TRUE(std::isnan(b.selected().test_metric));
  EXPECT_EQ(b.selected().val_metrics, a.selected().val_metrics);
  EXPECT_EQ(b.selected().epochs, 4);
  ASSERT_NE(b.params(), nullptr);
  EXPECT_EQ(*b.params(), (std::vector<float>{7.0f, 8.0f, 9.0f}));
  EXPECT_TRUE(b.offer(epoch(5, 0.8, 0.85)));
  EXPECT_EQ(b.selected().epoch, 5);
}

TEST(ModelSelector, ADamagedStateIsNamed) {
  model_selector a(select_best_kind::val);
  a.offer(epoch(1, 0.5, 0.5));
  a.keep({1.0f}, matrix<float>());
  auto j = a.to_json();
  model_selector b(select_best_kind::val);
  try {
    b.restore(j, {}, matrix<float>(), "ck/manifest.json");
    FAIL() << "parameters said held but none given";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("ck/manifest.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("selected_params"), std::string::npos) << e.what();
  }
  j.erase("val_metric");
  try {
    b.restore(j, {1.0f}, matrix<float>(), "ck/manifest.json");
    FAIL() << "no val_metric";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("val_metric"), std::string::npos) << e.what();
  }
}

TEST(SelectBestOption, ParsesItsTwoNamesAndRefusesOthers) {
  EXPECT_EQ(parse_select_best("val"), select_best_kind::val);
  EXPECT_EQ(parse_select_best("last"), select_best_kind::last);
  EXPECT_EQ(to_string(select_best_kind::last), "last");
  EXPECT_EQ(train_config{}.select_best, select_best_kind::val) << "the default";
  try {
    parse_select_best("best");
    FAIL();
  } catch (const logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("--select-best"), std::string::npos) << e.what();
  }
  // Declared once, in the option table, and not part of a run's identity.
  const option_decl& d = train_option("--select-best");
  EXPECT_FALSE(d.changes_arithmetic);
  EXPECT_FALSE(arithmetic_options(train_config{}).contains("--select-best"));
}

}  // namespace
}  // namespace coopgnn
