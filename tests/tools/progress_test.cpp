// Progress of an epoch on stderr (tools/coopgnn/progress.hpp): the line's text, and when lines
// are written with and without a terminal. The clock is a fake one the test moves.
#include "tools/coopgnn/progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace coopgnn::cli {
namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) s.push_back(static_cast<char>(c));
  return s;
}

TEST(Progress, LineGivesCountsPercentRateAndEta) {
  // 120 of 500 in 10 s: 12 per second, 380 left -> 31.67 s, rounded to 32 s.
  EXPECT_EQ(format_progress("epoch 1/2", 120, 500, 10.0), "epoch 1/2 120/500 (24%) 12/s ETA 32 s");
  // 999 s left at 1 per second; 9999 s left.
  EXPECT_EQ(format_progress("e", 1, 1000, 1.0), "e 1/1000 (0%) 1/s ETA 16 min 39 s");
  EXPECT_EQ(format_progress("e", 1, 10000, 1.0), "e 1/10000 (0%) 1/s ETA 2 h 46 min");
  EXPECT_EQ(format_progress("e", 999, 1000, 1.0), "e 999/1000 (99%) 999/s ETA <1 s");
  // Nothing done yet, or no time passed: no rate to tell.
  EXPECT_EQ(format_progress("e", 0, 8, 3.0), "e 0/8 (0%)");
  EXPECT_EQ(format_progress("e", 4, 8, 0.0), "e 4/8 (50%)");
  EXPECT_EQ(format_progress("e", 4, 0, 1.0), "e 4");
}

TEST(Progress, WithoutATerminalALineEveryIntervalAndNoneAtTheEnd) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  double t = 0;
  progress_reporter r("e", true, false, 10.0, out, [&] { return t; });
  t = 5;
  r.update(1, 100);  // 5 s after the start: too early
  t = 11;
  r.update(2, 100);  // 11 s: a line; 2 in 11 s, 98 left -> 539 s
  t = 15;
  r.update(3, 100);  // 4 s after that line: too early
  t = 21.5;
  r.update(4, 100);  // 10.5 s after it: a line; 4 in 21.5 s, 96 left -> 516 s
  t = 40;
  r.update(100, 100);  // complete: the epoch's own line follows, no progress line
  EXPECT_EQ(read_all(out),
            "e 2/100 (2%) 0.182/s ETA 8 min 59 s\n"
            "e 4/100 (4%) 0.186/s ETA 8 min 36 s\n");
  std::fclose(out);
}

TEST(Progress, OnATerminalABarRedrawnInPlaceAndErased) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  double t = 0;
  progress_reporter r("e", true, true, 10.0, out, [&] { return t; });
  t = 1;
  r.update(1, 2);
  t = 2;
  r.update(2, 2);
  std::string const s = read_all(out);
  EXPECT_EQ(s.find('\n'), std::string::npos) << s;
  EXPECT_NE(s.find("\re 1/2 (50%) 1/s ETA 1 s [###############...............]"), std::string::npos)
      << s;
  EXPECT_EQ(s.back(), '\r') << "the bar is erased when the loop completes";
  std::fclose(out);
}

TEST(Progress, DisabledWritesNothing) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  double t = 0;
  for (bool terminal : {false, true}) {
    progress_reporter r("e", false, terminal, 1.0, out, [&] { return t; });
    t += 100;
    r.update(1, 4);
    r.update(4, 4);
  }
  EXPECT_EQ(read_all(out), "");
  std::fclose(out);
}

}  // namespace
}  // namespace coopgnn::cli
