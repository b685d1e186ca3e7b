#include "on_miss_settings.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "cutune/model/errors.hpp"

namespace cutune::loader {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// The running executable's folder (an application installed beside cutune finds it there).
std::filesystem::path executable_dir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : self.parent_path();
}

std::filesystem::path on_path(const std::string& name) {
  std::stringstream dirs(env("PATH"));
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable_file(std::filesystem::path(dir) / name)) return std::filesystem::path(dir) / name;
  return {};
}

/// The order of python/cutune/engine.py's find_binary, with the executable's folder first: an
/// application shipped beside its cutune wants that one, not whichever PATH has.
std::filesystem::path find_tuner(const std::filesystem::path& given, std::string* why) {
  if (!given.empty()) {
    if (!executable_file(given))
      throw InputError(fmt::format("LoaderOptions::on_miss.tuner: {}: not an executable file", given.string()));
    return given;
  }
  if (const std::string bin = env("CUTUNE_BIN"); !bin.empty()) {
    if (executable_file(bin)) return bin;
    // The GPU scripts' sense of it: the folder of the staged binaries.
    if (executable_file(std::filesystem::path(bin) / "cutune")) return std::filesystem::path(bin) / "cutune";
    throw InputError(fmt::format("CUTUNE_BIN: '{}' is not an executable file", bin));
  }
  if (const auto dir = executable_dir(); !dir.empty() && executable_file(dir / "cutune")) return dir / "cutune";
  if (auto p = on_path("cutune"); !p.empty()) return p;
  *why = "not tuned: the cutune command was not found (set CUTUNE_BIN or LoaderOptions::on_miss.tuner)";
  return {};
}

std::filesystem::path default_db(const std::filesystem::path& winners, bool winners_is_db) {
  if (const std::string d = env("CUTUNE_ON_MISS_DB"); !d.empty()) return d;
  if (winners_is_db) return winners;
  if (const std::string d = env("CUTUNE_DB"); !d.empty()) return d;
  const std::string home = env("HOME");
  return std::filesystem::path(home.empty() ? "." : home) / ".local/share/cutune/cutune.db";
}

}  // namespace

OnMiss on_miss_from_environment() {
  OnMiss o;
  const std::string mode = env("CUTUNE_ON_MISS");
  if (mode == "tune") o.mode = OnMiss::Mode::Tune;
  else if (!mode.empty() && mode != "off")
    throw InputError(fmt::format("CUTUNE_ON_MISS: '{}' is not one of off, tune", mode));
  if (const std::string b = env("CUTUNE_ON_MISS_BUDGET"); !b.empty())
    o.budget_s = detail::parse_seconds("CUTUNE_ON_MISS_BUDGET", b);
  o.db = env("CUTUNE_ON_MISS_DB");
  return o;
}

namespace detail {

double parse_seconds(const std::string& what, const std::string& text) {
  double v = 0.0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || v <= 0)
    throw InputError(fmt::format("{}: '{}' is not a number of seconds > 0", what, text));
  return v;
}

std::optional<OnMissSettings> resolve_on_miss(const std::optional<OnMiss>& option, const std::filesystem::path& winners,
                                              bool winners_is_db) {
  const OnMiss o = option ? *option : on_miss_from_environment();
  if (o.mode == OnMiss::Mode::Off) return std::nullopt;
  for (const auto& [name, v] : {std::pair{"budget_s", o.budget_s}, std::pair{"poll_s", o.poll_s}})
    if (!std::isfinite(v) || v <= 0)
      throw InputError(fmt::format("LoaderOptions::on_miss.{}: {} is not a number of seconds > 0", name, v));
  OnMissSettings s;
  s.budget_s = o.budget_s;
  s.poll_s = o.poll_s;
  // --time-budget bounds the search only: the process start, the compiles still in flight and
  // the finalists' re-measurement come after it. Twice the budget plus two minutes leaves room
  // for them (not measured: a guess on the safe side) without letting a dead holder's claim
  // block the others for long.
  s.claim_s = 2 * o.budget_s + 120;
  s.db = o.db.empty() ? default_db(winners, winners_is_db) : o.db;
  s.tuner = find_tuner(o.tuner, &s.no_tuner);
  s.log_dir = s.db.string() + ".on-miss";
  return s;
}

}  // namespace detail
}  // namespace cutune::loader
