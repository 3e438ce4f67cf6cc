// Running a rapidcheck property with a case count of its own inside a
// GoogleTest TEST, for the properties whose cases are whole cluster runs.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace kafkasim::testing {

// The share (percent) of its cases a suite that runs whole clusters many
// times should run: KAFKASIM_TEST_SCALE_PERCENT when set (1..100), else 100,
// for a quicker run by hand. (The sanitizer build ran 30 % while it was
// compiled at -O0; at -Og it runs them all: tests/model/CMakeLists.txt.)
inline int test_scale_percent() {
  constexpr int kDefault = 100;
  const char* env = std::getenv("KAFKASIM_TEST_SCALE_PERCENT");
  if (env == nullptr) return kDefault;
  const int p = std::atoi(env);
  return p >= 1 && p <= 100 ? p : kDefault;
}
// Whether the fuzz searches run (hundreds to a thousand whole-cluster cases
// each, two minutes for one of them under the sanitizers): in the release gate, at the
// full share. Under the sanitizers (KAFKASIM_SANITIZED,
// tests/model/CMakeLists.txt) the kept regressions stand for them.
inline bool run_fuzz_searches() {
#if KAFKASIM_SANITIZED
  return false;
#else
  return test_scale_percent() >= 100;
#endif
}
// `n` scaled by test_scale_percent(), at least 1.
inline int scaled(int n) { return std::max(1, n * test_scale_percent() / 100); }

// rc::check with scaled(`cases`) cases, unless RC_PARAMS sets max_success (to explore
// further by hand); the seed and the rest still come from RC_PARAMS. A
// failure is reported to GoogleTest with rapidcheck's message (counterexample
// and reproduce string). True when the property held.
template <typename Testable>
bool check_property(Testable&& testable, int cases) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (env == nullptr || std::string_view(env).find("max_success") == std::string_view::npos) {
    params.maxSuccess = scaled(cases);
  }
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) return true;
  std::ostringstream ss;
  rc::detail::printResultMessage(result, ss);
  ADD_FAILURE() << ss.str() << std::endl;
  return false;
}

}  // namespace kafkasim::testing
