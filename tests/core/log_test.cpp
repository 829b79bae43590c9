// The logger (runtime/core/log.hpp): the threshold filters by level, the thread's prefix
// appears in its lines, the COOPGNN_LOG_LEVEL names parse, and lines written by many threads at
// once come out whole (never interleaved). Lines go to a temporary file the test reads back.
#include "runtime/core/log.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace coopgnn {
namespace {

/// Redirects the logger to a temporary file for the test's lifetime and restores the output,
/// the level and the calling thread's prefix afterwards.
class Log : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    before_ = log::set_output(file_);
    level_ = log::threshold();
  }
  void TearDown() override {
    log::set_output(before_);
    log::set_level(level_);
    log::set_prefix("");
    std::fclose(file_);
  }
  /// Every line written so far, without their newlines.
  std::vector<std::string> lines() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) text.append(buf, n);
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  std::FILE* file_ = nullptr;
  std::FILE* before_ = nullptr;
  log::level level_ = log::level::info;
};

TEST_F(Log, WritesOneFormattedLinePerMessage) {
  log::set_level(log::level::debug);
  log::info("{} of {} rows", 3, 7);
  log::error("failed: {}", "disk full");
  log::debug("x = {:.2f}", 0.125);
  EXPECT_EQ(lines(), (std::vector<std::string>{"coopgnn: info: 3 of 7 rows",
                                               "coopgnn: error: failed: disk full",
                                               "coopgnn: debug: x = 0.12"}));
}

TEST_F(Log, TheThresholdDropsLessSevereLevels) {
  struct usecase {
    log::level threshold;
    std::vector<std::string> expected;
  };
  std::vector<usecase> const cases{
      {log::level::error, {"coopgnn: error: e"}},
      {log::level::warn, {"coopgnn: error: e", "coopgnn: warn: w"}},
      {log::level::info, {"coopgnn: error: e", "coopgnn: warn: w", "coopgnn: info: i"}},
      {log::level::debug,
       {"coopgnn: error: e", "coopgnn: warn: w", "coopgnn: info: i", "coopgnn: debug: d"}},
  };
  for (auto const& c : cases) {
    SCOPED_TRACE(std::string(log::to_string(c.threshold)));
    ASSERT_EQ(std::fflush(file_), 0);
    std::FILE* const fresh = std::tmpfile();
    ASSERT_NE(fresh, nullptr);
    log::set_output(fresh);
    std::fclose(file_);
    file_ = fresh;
    log::set_level(c.threshold);
    log::error("e");
    log::warn("w");
    log::info("i");
    log::debug("d");
    EXPECT_EQ(lines(), c.expected);
    EXPECT_EQ(log::enabled(log::level::debug), c.threshold == log::level::debug);
  }
}

TEST_F(Log, ThePrefixIsPerThread) {
  log::set_level(log::level::info);
  log::set_prefix("rank 2");
  log::warn("main");
  std::thread([] {
    log::warn("no prefix yet");
    log::set_prefix("PE 5");
    log::warn("worker");
  }).join();
  log::warn("main again");
  EXPECT_EQ(log::prefix(), "rank 2");
  EXPECT_EQ(lines(), (std::vector<std::string>{
                         "coopgnn [rank 2]: warn: main", "coopgnn: warn: no prefix yet",
                         "coopgnn [PE 5]: warn: worker", "coopgnn [rank 2]: warn: main again"}));
}

TEST_F(Log, AMessageEndingInANewlineGetsNoSecondOne) {
  log::set_level(log::level::info);
  log::write(log::level::info, "done\n");
  log::write(log::level::debug, "hidden\n");
  EXPECT_EQ(lines(), (std::vector<std::string>{"coopgnn: info: done"}));
}

TEST_F(Log, LinesOfManyThreadsNeverInterleave) {
  log::set_level(log::level::info);
  int const threads = 8, per_thread = 400;
  std::string const payload(300, 'x');  // long lines: a torn write would show
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        log::set_prefix("PE " + std::to_string(t));
        for (int i = 0; i < per_thread; ++i) log::info("{} {} {}", i, payload, i);
      });
    }
  }
  auto const all = lines();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(threads * per_thread));
  std::map<int, int> next;  // per thread: the next i expected (each thread's lines in order)
  for (auto const& line : all) {
    int t = -1, i = -1, j = -1;
    char tail[400] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "coopgnn [PE %d]: info: %d %399s %d", &t, &i, tail, &j), 4)
        << line;
    EXPECT_EQ(std::string(tail), payload) << line;
    EXPECT_EQ(i, j) << line;
    EXPECT_EQ(i, next[t]++) << line;
  }
  for (int t = 0; t < threads; ++t) EXPECT_EQ(next[t], per_thread) << "PE " << t;
}

TEST(LogLevel, ParsesTheEnvironmentNames) {
  EXPECT_EQ(log::parse_level("error"), log::level::error);
  EXPECT_EQ(log::parse_level("warn"), log::level::warn);
  EXPECT_EQ(log::parse_level("info"), log::level::info);
  EXPECT_EQ(log::parse_level("debug"), log::level::debug);
  EXPECT_EQ(log::parse_level("DEBUG"), std::nullopt);
  EXPECT_EQ(log::parse_level("warning"), std::nullopt);
  EXPECT_EQ(log::parse_level(""), std::nullopt);
}

}  // namespace
}  // namespace coopgnn
