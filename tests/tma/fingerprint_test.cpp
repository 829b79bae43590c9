// The ranks' start-up agreement (tma/fingerprint.hpp): equal fingerprints pass; the
// first differing key is named with every value and its ranks; the dataset's content and the
// options that change the arithmetic are part of it, the run-only options are not.
#include "tma/fingerprint.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace coopgnn::tma {
namespace {

dataset tiny_dataset() {
  dataset ds;
  ds.name = "tiny";
  ds.num_nodes = 3;
  ds.src = {0, 1};
  ds.dst = {1, 2};
  return ds;
}

std::string fp(const train_config& c, const std::string& content = "edges:1 features:2",
               std::int64_t params = 100) {
  return rank_fingerprint(tiny_dataset(), c, "randomtma", params, content).dump();
}

TEST(TmaFingerprint, AgreeingRanksPass) {
  train_config c;
  EXPECT_EQ(fingerprint_mismatch({fp(c), fp(c), fp(c)}), "");
  // Options that do not change the arithmetic may differ between ranks.
  train_config other = c;
  other.epochs = 3;
  other.comm_timeout_s = 5;
  other.eval_every = 7;
  EXPECT_EQ(fingerprint_mismatch({fp(c), fp(other)}), "");
}

TEST(TmaFingerprint, TheFirstDifferenceIsNamedWithItsRanks) {
  train_config a;
  a.hidden = 32;
  train_config b = a;
  b.hidden = 64;
  EXPECT_EQ(fingerprint_mismatch({fp(a), fp(a), fp(b, "edges:1 features:2", 200)}),
            "the ranks disagree on --hidden: 32 on ranks 0, 1; 64 on rank 2 (start every rank "
            "with the same options and dataset)");
  train_config lr = a;
  lr.lr = 0.5f;
  EXPECT_NE(fingerprint_mismatch({fp(a), fp(lr)}).find("--lr"), std::string::npos);
  // Other content of the same name and sizes.
  std::string const why = fingerprint_mismatch({fp(a), fp(a, "edges:1 features:3")});
  EXPECT_NE(why.find("dataset.content"), std::string::npos) << why;
  EXPECT_NE(why.find("on rank 1"), std::string::npos) << why;
  // Garbage from a rank is its difference.
  EXPECT_NE(fingerprint_mismatch({fp(a), "not json"}).find("rank 1"), std::string::npos);
}

}  // namespace
}  // namespace coopgnn::tma
