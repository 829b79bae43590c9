// Errors and checks (runtime/core/error.hpp, runtime/core/assert.hpp): a failed COOPGNN_EXPECTS
// is bad input and its message is the user's alone (the location goes to the debug log); a
// failed COOPGNN_ASSERT is a bug and keeps "[file:line, failed: cond]" in its message.
#include "runtime/core/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "runtime/core/assert.hpp"
#include "runtime/core/log.hpp"

namespace coopgnn {
namespace {

std::string read_all(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) s.push_back(static_cast<char>(c));
  return s;
}

void check_pes(int pes) { COOPGNN_EXPECTS(pes >= 1, "--pes must be at least 1, got {}", pes); }

TEST(Errors, AFailedExpectationCarriesTheMessageAloneAndLogsItsPlaceAtDebug) {
  std::FILE* const file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  std::FILE* const before = log::set_output(file);
  log::level const level = log::threshold();
  log::set_level(log::level::debug);
  std::string what;
  try {
    check_pes(0);
  } catch (const logic_error& e) {
    what = e.what();
  }
  log::set_level(log::level::info);
  try {
    check_pes(-1);  // below debug: nothing logged
  } catch (const logic_error&) {
  }
  log::set_output(before);
  log::set_level(level);
  std::string const logged = read_all(file);
  std::fclose(file);
  EXPECT_EQ(what, "--pes must be at least 1, got 0");
  EXPECT_NE(logged.find("coopgnn: debug: check failed at error_test.cpp:"), std::string::npos)
      << logged;
  EXPECT_NE(logged.find(": pes >= 1\n"), std::string::npos) << logged;
  EXPECT_EQ(logged.find("check failed", logged.find("check failed") + 1), std::string::npos)
      << "logged twice:\n"
      << logged;
}

TEST(Errors, AFailedAssertionIsAnInternalErrorWithItsLocation) {
  int const line = __LINE__ + 2;
  try {
    COOPGNN_ASSERT(1 + 1 == 3, "{} modes", 3);
    ADD_FAILURE() << "no throw";
  } catch (const internal_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "3 modes [error_test.cpp:" + std::to_string(line) + ", failed: 1 + 1 == 3]");
  }
  // Not a logic_error: the command line tells a bug from bad input by the type.
  EXPECT_THROW(COOPGNN_ASSERT(false, "x"), error);
  bool logic = false;
  try {
    COOPGNN_ASSERT(false, "x");
  } catch (const logic_error&) {
    logic = true;
  } catch (const error&) {
  }
  EXPECT_FALSE(logic);
}

}  // namespace
}  // namespace coopgnn
