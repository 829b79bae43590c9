// Test-only fault injection (fault_injection.hpp).
#include "runtime/comm/fault_injection.hpp"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "runtime/core/error.hpp"
#include "runtime/core/log.hpp"

namespace coopgnn::fault_injection {
namespace {

constexpr const char* var = "COOPGNN_FAULT_INJECT";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    auto const at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

/// "key:value" with the expected key (or one of two); returns the value.
std::string_view value_of(std::string_view part, std::string_view spec,
                          std::initializer_list<std::string_view> keys, std::string_view* key) {
  auto const colon = part.find(':');
  auto const k = part.substr(0, colon);
  bool known = false;
  for (auto want : keys) known = known || k == want;
  COOPGNN_EXPECTS(colon != std::string_view::npos && known,
                  "{}='{}': expected pe:P|rank:R,step:S,kind:throw|stall|hang|exit[,at:start|end], "
                  "got '{}'",
                  var, spec, part);
  if (key != nullptr) *key = k;
  return part.substr(colon + 1);
}

std::int64_t integer(std::string_view v, std::string_view spec, std::string_view what) {
  std::int64_t x = -1;
  auto const [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  COOPGNN_EXPECTS(ec == std::errc{} && end == v.data() + v.size() && x >= 0 && !v.empty(),
                  "{}='{}': {} must be an integer >= 0, got '{}'", var, spec, what, v);
  return x;
}

}  // namespace

plan parse(std::string_view spec) {
  auto const parts = split(spec, ',');
  COOPGNN_EXPECTS(parts.size() == 3 || parts.size() == 4,
                  "{}='{}': expected three or four parts "
                  "pe:P|rank:R,step:S,kind:throw|stall|hang|exit[,at:start|end]",
                  var, spec);
  plan p;
  std::string_view key;
  auto const who = value_of(parts[0], spec, {"pe", "rank"}, &key);
  p.who = key == "pe" ? plan::target::pe : plan::target::rank;
  auto const index = integer(who, spec, key);
  COOPGNN_EXPECTS(index <= 1 << 20, "{}='{}': {} {} is out of range", var, spec, key, index);
  p.index = static_cast<int>(index);
  p.step = integer(value_of(parts[1], spec, {"step"}, nullptr), spec, "step");
  auto const kind = value_of(parts[2], spec, {"kind"}, nullptr);
  if (kind == "throw") {
    p.what = plan::kind::raise;
  } else if (kind == "stall") {
    p.what = plan::kind::stall;
  } else if (kind == "hang") {
    p.what = plan::kind::hang;
  } else if (kind == "exit") {
    p.what = plan::kind::exit;
  } else {
    COOPGNN_FAIL("{}='{}': kind must be throw, stall, hang or exit, got '{}'", var, spec, kind);
  }
  if (parts.size() == 4) {
    auto const at = value_of(parts[3], spec, {"at"}, nullptr);
    COOPGNN_EXPECTS(at == "start" || at == "end", "{}='{}': at must be start or end, got '{}'", var,
                    spec, at);
    p.at = at == "end" ? plan::point::end : plan::point::start;
    COOPGNN_EXPECTS(p.at == plan::point::start || p.who == plan::target::pe,
                    "{}='{}': at:end is a PE fault point (coopgnn train's step meeting); a tma "
                    "rank fails at the start of a step",
                    var, spec);
  }
  return p;
}

const std::optional<plan>& from_env() {
  // The parse runs once; a malformed value throws on every call (a stored message).
  static const auto parsed = []() -> std::pair<std::optional<plan>, std::string> {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') return {std::nullopt, {}};
    try {
      return {parse(v), {}};
    } catch (const logic_error& e) {
      return {std::nullopt, e.what()};
    }
  }();
  if (!parsed.second.empty()) throw logic_error(parsed.second);
  return parsed.first;
}

void at_step(plan::target who, int index, std::int64_t step, const std::function<bool()>& released,
             plan::point where) {
  auto const& p = from_env();
  if (!p || p->who != who || p->index != index || p->step != step || p->at != where) return;
  char const* const name = who == plan::target::pe ? "PE" : "rank";
  char const* const at = where == plan::point::end ? "at the end of" : "at";
  switch (p->what) {
    case plan::kind::raise:
      throw error(fmt::format("fault injected ({}): {} {} {} step {}", var, name, index, at, step));
    case plan::kind::exit:
      log::error("fault injected ({}): {} {} exits {} step {}", var, name, index, at, step);
      std::_Exit(3);
    case plan::kind::stall:
    case plan::kind::hang: {
      bool const hang = p->what == plan::kind::hang;
      log::warn("fault injected ({}): {} {} {} {} step {}", var, name, index,
                hang ? "hangs" : "stalls", at, step);
      auto const until = std::chrono::steady_clock::now() + std::chrono::seconds(600);
      while (std::chrono::steady_clock::now() < until && !(!hang && released && released())) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return;
    }
  }
}

}  // namespace coopgnn::fault_injection
