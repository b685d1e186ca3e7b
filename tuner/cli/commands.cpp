#include "commands.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <iterator>

#include "cutune/cluster/rank_server.hpp"
#include "cutune/cluster/world.hpp"
#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/jit/compiler_choice.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/model/verification.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "interop_commands.hpp"
#include "report_command.hpp"
#include "progress.hpp"
#include "replay_commands.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/search/strategy.hpp"
#include "cutune/templates/catalog.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace cutune::cli {
namespace {

/// Seconds since this process started (the kernel's start time in /proc, 10 ms ticks):
/// where a tuning's process wall time goes before the tuning starts. -1 if unknown.
double process_age_s() {
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  double up = 0;
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos || !(uptime >> up)) return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  unsigned long long start_ticks = 0;
  if (!(rest >> start_ticks)) return -1;
  return up - static_cast<double>(start_ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  for (const auto& [name, path] : templates::builtin_templates()) names.push_back(name);
  return names;
}

KernelProblem load_kernel(const std::string& kernel, const std::string& compiler = "") {
  KernelProblem p = KernelProblem::load(resolve_kernel(kernel));
  for (const auto& w : p.warnings()) std::cerr << "warning: " << w << '\n';
  if (!compiler.empty()) {
    const auto c = parse_compiler(compiler);
    if (!c) throw InputError(fmt::format("--compiler {}: must be nvrtc, nvcc or auto", compiler));
    p.set_compiler(*c);
  }
  return p;
}

worker::MeasureOptions measure_options(const MeasureArgs& a) {
  worker::MeasureOptions o;
  o.cold_l2 = a.l2 != "warm";
  o.rotate_when_fits = a.l2 == "cold";
  if (a.screening_min > a.samples)
    throw InputError(fmt::format("--screening-min {}: more than --samples {}", a.screening_min, a.samples));
  o.screening.max_samples = static_cast<std::size_t>(a.samples);
  o.screening.min_samples = a.screening_min > 0 ? static_cast<std::size_t>(a.screening_min)
                                                : std::min(o.screening.min_samples, o.screening.max_samples);
  o.thorough.min_samples = static_cast<std::size_t>(a.min_samples);
  o.thorough.max_samples = std::max(o.thorough.max_samples, o.thorough.min_samples);
  o.thorough.max_rel_noise = a.max_noise;
  o.thorough.time_cap_s = a.time_cap_s;
  o.energy_every_config = a.energy;
  const auto timer = parse_sample_timer(a.timer);
  if (!timer) throw InputError(fmt::format("--timer {}: must be activity or events", a.timer));
  o.sampler.timer = *timer;
  o.sampler.flush_l2_multiple = a.flush_size;
  o.verify = a.verify;
  return o;
}

runner::CompilePoolOptions pool_options(const CompilePoolArgs& a) {
  runner::CompilePoolOptions o;
  o.workers = a.workers;
  o.mode = runner::parse_compile_mode(a.mode);
  if (!a.no_cache) o.cache_dir = a.cache_dir.empty() ? jit::CubinCache::default_dir() : fs::path(a.cache_dir);
  return o;
}

json summary_json(const Summary& s) {
  return json{{"samples", s.count},          {"median_ms", s.median}, {"mean_ms", s.mean},
              {"min_ms", s.min},             {"max_ms", s.max},       {"stddev_ms", s.stddev},
              {"ci_low_ms", s.ci_low},       {"ci_high_ms", s.ci_high}, {"ci_coverage", s.ci_coverage},
              {"rel_ci_half_width", s.rel_ci_half_width}};
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string values_text(const Parameter& p) {
  std::vector<std::string> v;
  for (const auto& x : p.values) v.push_back(x.str());
  return "[" + join(v, ", ") + "]";
}

/// A GPU model key for people: an imported or simulated device whose compute capability
/// the file did not give is keyed "NAME/sm_00"; show it as its name.
std::string gpu_label(const std::string& model_key) {
  constexpr std::string_view unknown_arch = "/sm_00";
  if (model_key.size() > unknown_arch.size() && model_key.ends_with(unknown_arch))
    return model_key.substr(0, model_key.size() - unknown_arch.size());
  return model_key;
}

/// What `query` says when no winner matches: what the DB does hold for the query (or at
/// all), and how a winner comes about. A DB full of measurements answered "no winners
/// stored", which read as an empty DB.
std::string no_winner_text(const db::Store& store, const QueryArgs& a, const fs::path& path) {
  const bool filtered = !a.kernel.empty() || !a.gpu.empty() || !a.problem.empty() || !a.objective.empty();
  auto targets = store.measurement_targets({a.kernel, a.gpu, a.problem, ""});
  const bool matching = !targets.empty();
  if (!matching) targets = store.measurement_targets({});
  if (targets.empty()) return fmt::format("{} holds no measurements and no winners yet\n", path.string());
  std::string out = fmt::format("no winner stored in {}{}; ", path.string(), filtered ? " for that query" : "");
  out += matching ? "it holds measurements of:\n" : "what it holds (query with these names):\n";
  for (std::size_t i = 0; i < targets.size() && i < 20; ++i) {
    const auto& t = targets[i];
    std::vector<std::string> objectives;
    for (const auto& w : store.winners({t.kernel, "", t.problem_key, ""}))
      if (w.gpu_model == t.gpu_model) objectives.push_back(w.objective.name());
    out += fmt::format("  --kernel {} --problem {} --gpu '{}': {} measurements, {}\n", t.kernel, t.problem_key,
                       gpu_label(t.gpu_model), t.count,
                       objectives.empty() ? std::string("no winner")
                                          : "a winner for " + join(objectives, ", "));
  }
  if (targets.size() > 20) out += fmt::format("  ... and {} more\n", targets.size() - 20);
  const bool every_target_has_one = std::all_of(targets.begin(), targets.end(), [&](const auto& t) {
    for (const auto& w : store.winners({t.kernel, "", t.problem_key, ""}))
      if (w.gpu_model == t.gpu_model) return true;
    return false;
  });
  if (matching && every_target_has_one && !a.objective.empty())
    out += fmt::format("Their winners are for the objectives listed, not {}: give one of those to --objective, or "
                       "leave it out.\n",
                       a.objective);
  else if (matching)
    out += "A winner is stored when a run ends (tune, tune --simulate --db, import); a run that was interrupted "
           "has none: run the same tune again with --resume to finish it. Without a winner, `cutune export "
           "--format cache` writes every measurement.\n";
  return out;
}

}  // namespace

fs::path resolve_kernel(const std::string& kernel) { return templates::resolve_template(kernel); }

fs::path default_db_path() {
  if (const char* env = std::getenv("CUTUNE_DB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return fs::path(xdg) / "cutune/cutune.db";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".local/share/cutune/cutune.db";
  return "cutune.db";
}

int cmd_devices(bool as_json) {
  std::string why;
  int n = cuda::device_count(&why);
  if (n == 0) {
    if (as_json)
      std::cout << json{{"devices", json::array()}, {"reason", why}}.dump(2) << '\n';
    else
      std::cout << "No GPU: " << why << ".\nWithout a GPU cutune can still list kernels, show "
                << "spaces, compile configurations with NVRTC (" << jit::nvrtc_version_string()
                << ") and query results.\n";
    return kOk;
  }
  json all = json::array();
  for (int i = 0; i < n; ++i) {
    DeviceIdentity d = cuda::identify(i);
    d.nvrtc_version = jit::nvrtc_version();
    if (as_json) {
      json j = cutune::to_json(d);
      j["ordinal"] = i;
      all.push_back(j);
      continue;
    }
    std::cout << fmt::format(
        "GPU {}: {}\n  compute capability {}.{} ({}), {} SMs, {:.1f} GiB, L2 {} MiB\n"
        "  clocks: SM {} MHz, memory {} MHz, {}-bit bus\n"
        "  driver {} (CUDA {}.{}), NVRTC {}\n  {}\n",
        i, d.name, d.cc_major, d.cc_minor, d.arch(), d.sm_count,
        static_cast<double>(d.memory_bytes) / (1 << 30), d.l2_bytes >> 20, d.sm_clock_khz / 1000,
        d.memory_clock_khz / 1000, d.memory_bus_bits,
        d.driver_release.empty() ? "?" : d.driver_release, d.driver_version / 1000,
        (d.driver_version % 1000) / 10, jit::nvrtc_version_string(), d.uuid);
  }
  if (as_json) std::cout << json{{"devices", all}}.dump(2) << '\n';
  return kOk;
}

int cmd_kernels() {
  auto names = builtin_names();
  if (names.empty()) {
    std::cout << "no built-in templates found (searched:";
    for (const auto& d : templates::template_dirs()) std::cout << ' ' << d.string();
    std::cout << ")\n";
    return kFailure;
  }
  for (const auto& name : names) {
    KernelProblem p = load_kernel(name);
    const Space& s = p.space();
    std::cout << fmt::format("{}  ({} of {} configurations valid)\n", name, s.count_valid(),
                             s.cartesian_size());
    for (const auto& par : s.parameters())
      std::cout << fmt::format("  {:<22} {}  default {}\n", par.name, values_text(par),
                               par.default_value.str());
    for (const auto& v : p.variables())
      std::cout << fmt::format("  problem: {}={} (default)\n", v.name, v.default_value);
  }
  return kOk;
}

int cmd_space(const std::string& kernel, const std::string& problem, int show, const std::string& t1,
              const std::string& listing, long long max_threads) {
  using clock = std::chrono::steady_clock;
  const auto ms_since = [](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(clock::now() - t).count();
  };
  const auto start = clock::now();
  KernelProblem p = load_kernel(kernel);
  if (max_threads > 0) p.set_max_threads_per_block(max_threads);
  ProblemInstance inst = p.instantiate(problem);
  if (!t1.empty()) write_t1(p, inst, t1);
  const Space& s = p.space();
  if (listing == "timing") {
    // What a tuning waits for before its first evaluation (load, then the first valid
    // configuration), and what listing the whole valid set costs; the enumeration is lazy,
    // so its memory does not grow with the Cartesian size (peak_rss_kib says so).
    const double load_ms = ms_since(start);
    const auto first_start = clock::now();
    Config first;
    const bool any = s.next_valid(first);
    const double first_ms = ms_since(first_start);
    const auto count_start = clock::now();
    const std::uint64_t valid = s.count_valid();
    const double count_ms = ms_since(count_start);
    // VmHWM, the high-water mark of this process image: getrusage's ru_maxrss keeps the
    // parent's across fork and exec (a benchmark script that held 400 MiB made every
    // cutune it started report 469 MiB).
    long peak_kib = -1;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0) peak_kib = std::strtol(line.c_str() + 6, nullptr, 10);
    if (peak_kib < 0) {
      struct rusage usage {};
      getrusage(RUSAGE_SELF, &usage);
      peak_kib = usage.ru_maxrss;
    }
    json j;
    j["kernel"] = p.name();
    j["cartesian"] = s.cartesian_size();
    j["valid"] = valid;
    j["first_valid"] = any ? s.key(first) : "";
    j["load_ms"] = load_ms;
    j["first_valid_ms"] = first_ms;
    j["count_ms"] = count_ms;
    j["peak_rss_kib"] = peak_kib;
    std::cout << j.dump() << '\n';
    return kOk;
  }
  if (listing == "keys") {
    s.for_each_valid([&](const Config& c) {
      std::cout << s.key(c) << '\n';
      return true;
    });
    return kOk;
  }
  if (listing == "json") {
    nlohmann::json j;
    j["parameters"] = nlohmann::json::array();
    for (const auto& par : s.parameters()) j["parameters"].push_back(par.name);
    j["block_size_names"] = p.block_size_names();
    j["max_threads"] = p.max_threads_per_block();
    j["default"] = s.key(s.default_config());
    j["default_first"] = runner::evaluates_default_first(p);  // a tuning evaluates it before the strategy
    j["warnings"] = p.warnings();
    j["valid"] = nlohmann::json::array();
    s.for_each_valid([&](const Config& c) {
      j["valid"].push_back(s.key(c));
      return true;
    });
    std::cout << j.dump() << '\n';
    return kOk;
  }
  std::cout << fmt::format("{} ({}), problem {}\n", p.name(), p.json_file().string(), inst.key());
  std::cout << "parameters:\n";
  for (const auto& par : s.parameters())
    std::cout << fmt::format("  {:<22} {}  default {}\n", par.name, values_text(par), par.default_value.str());
  std::cout << "restrictions:\n";
  if (s.restrictions().empty() && s.block_limit().empty()) std::cout << "  (none)\n";
  for (const auto& r : s.restrictions()) std::cout << "  " << r.expression.text() << '\n';
  if (!s.block_limit().empty()) std::cout << "  " << s.block_limit() << "  (threads per block)\n";
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t valid = s.count_valid();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("cartesian size: {}\nvalid size:     {} (enumerated in {:.1f} ms)\n",
                           s.cartesian_size(), valid, ms);
  // Why a tuning does or does not evaluate it first: a nameless default that is evaluated first
  // anyway (an output without a reference) had looked named (Kernel Tuner's convolution_correct.py).
  const char* why_default = !runner::evaluates_default_first(p)
                                ? " (named by no Default: a tuning starts with its strategy instead)"
                            : s.default_named() ? ""
                                                : " (named by no Default, but an output without a reference is verified "
                                                  "against its output: a tuning evaluates it first)";
  std::cout << fmt::format("default: {}{}\n", s.key(s.default_config()), why_default);
  std::cout << fmt::format("first {} valid configurations ({}):\n", show,
                           join([&] {
                             std::vector<std::string> n;
                             for (const auto& par : s.parameters()) n.push_back(par.name);
                             return n;
                           }(), ","));
  int shown = 0;
  if (show > 0) s.for_each_valid([&](const Config& c) {
    LaunchGeometry g = p.geometry(c, inst);
    std::cout << fmt::format("  {:<24} grid ({},{},{}) block ({},{},{})\n", s.key(c), g.grid[0],
                             g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2]);
    return ++shown < show;
  });
  return kOk;
}

int cmd_compile(const CompileArgs& a) {
  KernelProblem p = load_kernel(a.kernel, a.compiler);
  const Space& s = p.space();
  auto archs = jit::supported_archs();
  if (std::find(archs.begin(), archs.end(), a.arch) == archs.end())
    throw InputError(fmt::format("--arch {}: NVRTC {} supports {}", a.arch, jit::nvrtc_version_string(),
                                 join(archs, ", ")));
  if (!a.all) {
    const Configuration config =
        a.config.empty() ? Configuration::default_of(s) : Configuration::from_assignments(s, a.config);
    const Config& c = config.index();
    if (std::string r = config.violated_restriction(); !r.empty())
      throw InputError(fmt::format("configuration {} violates the restriction \"{}\"", config.key(), r));
    auto req = runner::compile_request(p, c, a.arch);
    auto res = jit::compile(req);
    if (!res.ok) {
      // A kernel name the source has in no configuration is the problem file's mistake.
      if (std::string e = jit::kernel_name_error(req); !e.empty())
        throw InputError(fmt::format("{}: KernelSpecification.KernelName: {}", p.json_file().string(), e));
      // The error line first: a failure after a clean compile (the redefined macro of a
      // tuning parameter) has no error in its log, and an empty log said nothing at all.
      const char* by = compiler_display_name(req.compiler);
      std::cerr << fmt::format("compile failed: {} {}: {}\nconfiguration: {}\ndefines (prepended as #define "
                               "lines): {}\nkernel names: {}\n{} options: {}\n--- {} log ---\n{}\n",
                               p.name(), config.key(), res.error, config.json(), join(p.defines(c), " "),
                               join(req.kernel_names, " "), by, join(res.full_options, " "), by,
                               res.log.empty() ? std::string("(empty)") : res.log);
      return kFailure;
    }
    std::cout << fmt::format("{} {}: {} bytes of cubin for {} in {:.1f} ms by {}\n", p.name(), config.key(),
                             res.cubin.size(), a.arch, res.compile_ms, compiler_display_name(req.compiler));
    for (std::size_t i = 0; i < req.kernel_names.size() && i < res.lowered_names.size(); ++i)
      if (req.kernel_names[i] != res.lowered_names[i])
        std::cout << fmt::format("kernel {}: symbol {}\n", req.kernel_names[i], res.lowered_names[i]);
    if (!res.log.empty()) std::cout << res.log << '\n';
    return kOk;
  }
  // Every valid configuration, through the same compile pool the tuner uses.
  if (std::string e = jit::kernel_name_error(runner::compile_request(p, s.default_config(), a.arch)); !e.empty())
    throw InputError(fmt::format("{}: KernelSpecification.KernelName: {}", p.json_file().string(), e));
  runner::CompilePool pool(p, a.arch, pool_options(a.pool));
  std::uint64_t total = 0, failed = 0;
  auto t0 = std::chrono::steady_clock::now();
  // With --quiet nothing was printed for the minutes a large space takes (94 s for the
  // reduction's 720 on 2 cores): the live line on a terminal, else a line per tenth.
  ProgressPrinter live(std::cerr);
  runner::TuneOptions::Progress progress;
  progress.total = s.count_valid();
  std::uint64_t next_tenth = 1;
  const auto show_progress = [&] {
    progress.done = total;
    progress.failed = failed;
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (live.live()) {
      live.update(progress);
    } else if (total * 10 >= next_tenth * progress.total && total < progress.total) {
      std::cout << fmt::format("compiled {}\n", progress_line(progress)) << std::flush;
      while (total * 10 >= next_tenth * progress.total) ++next_tenth;
    }
  };
  Config cursor;
  bool more = true;
  while (true) {
    while (more && pool.pending() < 4 * pool.workers()) {
      more = s.next_valid(cursor);
      if (more) pool.submit(cursor);
    }
    auto done = pool.next();
    if (!done) break;
    ++total;
    if (!done->result.ok) {
      ++failed;
      std::cerr << fmt::format("FAILED {} ({})\n  defines: {}\n  compiler options: {}\n{}\n", s.key(done->config),
                               done->result.error, join(p.defines(done->config), " "),
                               join(done->result.full_options, " "), done->result.log);
    } else if (!a.quiet) {
      std::cout << fmt::format("ok {} ({} bytes, {:.1f} ms{})\n", s.key(done->config), done->result.cubin.size(),
                               done->result.compile_ms,
                               done->shared ? ", shared" : done->result.from_cache ? ", cached" : "");
    }
    if (a.quiet) show_progress();
  }
  live.end();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto st = pool.stats();
  std::cout << fmt::format("{}: {} configurations for {} by {}: {} ok, {} failed; {} compiled, {} from the cache, {} "
                           "shared; {} {} workers, {:.2f} s wall, {:.1f} configurations/s, {:.1f} ms per compile\n",
                           p.name(), total, a.arch, jit::decide_compiler(p, a.arch).describe(), total - failed, failed,
                           st.compiled, st.cache_hits, st.shared,
                           pool.workers(), a.pool.mode, wall_s, wall_s > 0 ? static_cast<double>(total) / wall_s : 0.0,
                           st.compiled ? st.compile_ms / static_cast<double>(st.compiled) : 0.0);
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    if (!out) throw InputError(fmt::format("--json {}: cannot be written", a.json));
    out << json{{"kernel", p.name()},
                {"arch", a.arch},
                {"compiler", compiler_name(jit::decide_compiler(p, a.arch).compiler)},
                {"configs", total},
                {"failed", failed},
                {"unique_compiles", st.compiled},
                {"cache_hits", st.cache_hits},
                {"shared", st.shared},
                {"workers", pool.workers()},
                {"mode", a.pool.mode},
                {"wall_s", wall_s},
                {"configs_per_s", wall_s > 0 ? static_cast<double>(total) / wall_s : 0.0},
                {"compile_ms_mean", st.compiled ? st.compile_ms / static_cast<double>(st.compiled) : 0.0}}
               .dump(2)
        << '\n';
  }
  return failed ? kFailure : kOk;
}

namespace {

int tune_here(const TuneArgs& a, cluster::Ranks* ranks, const std::function<std::vector<int>()>& my_gpus);

/// --gpus: "all" (every GPU the driver sees) or a list of ordinals. The workers check the
/// ordinals against the GPUs there are; "all" without a GPU is the no-GPU case.
std::vector<int> parse_gpus(const std::string& text, bool device_given) {
  if (text.empty()) return {};
  if (device_given) throw InputError(fmt::format("--gpus {} and --device: give one", text));
  std::vector<int> out;
  if (text == "all") {
    std::string why;
    const int n = cuda::device_count(&why);
    if (n == 0) throw cuda::NoDriver(why);
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    int v = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 0)
      throw InputError(fmt::format("--gpus {}: \"{}\" is not a GPU ordinal (all, or ordinals such as 0,2,3)", text, item));
    out.push_back(v);
  }
  if (out.empty()) throw InputError(fmt::format("--gpus {}: no GPU named", text));
  return out;
}

}  // namespace

namespace {
json workers_json(const std::vector<runner::TuneReport::Worker>& workers) {
  json out = json::array();
  for (const auto& w : workers)
    out.push_back({{"name", w.name},
                   {"evaluations", w.evaluations},
                   {"evaluate_ms", w.evaluate_ms},
                   {"verify_ms", w.verify_ms},
                   {"sampling_ms", w.sampling_ms},
                   {"load_ms", w.load_ms},
                   {"stage_ms", w.stage_ms},
                   {"idle_ms", w.idle_ms},
                   {"restarts", w.restarts},
                   {"lost", w.lost}});
  return out;
}
}  // namespace

// What the run started from: each prior offered, used or not (and why not).
static json prior_json(const std::vector<search::PriorUse>& uses) {
  json out = json::array();
  for (const auto& u : uses) out.push_back(prior_use_json(u));
  return out;
}

int cmd_tune(const TuneArgs& a) {
  // Started by mpirun or srun as one of several ranks: rank 0 tunes (strategy, compiles, the
  // DB), every other rank serves its GPUs to it (tuner/cluster).
  std::optional<cluster::World> world;
  if (cluster::launched_as_ranks()) {
    if (!cluster::built_with_mpi())
      throw InputError("started as one of several MPI ranks, but this cutune was built without MPI (install "
                       "libopenmpi-dev and rebuild)");
    world.emplace();
    if (const std::string w = cluster::binding_warning(); !w.empty())
      std::cerr << fmt::format("warning: rank {}: {}\n", world->rank(), w);
  }
  // Each rank's GPUs: --gpus, else --device, else under MPI the rank's place on its node
  // (ranks of a node take its GPUs in turn), else GPU 0.
  auto my_gpus = [&]() -> std::vector<int> {
    std::vector<int> gpus = parse_gpus(a.gpus, a.device_given);
    if (!gpus.empty()) return gpus;
    if (a.device_given || !world) return {a.device};
    std::string why;
    const int n = cuda::device_count(&why);
    return {n > 0 ? cluster::node_local_rank() % n : 0};
  };
  if (world && world->rank() != 0) {
    std::vector<int> gpus;
    try {
      gpus = my_gpus();
    } catch (const std::exception&) {
      gpus = {0};  // rank 0 reads the same command line and refuses it for every rank
    }
    return cluster::serve_rank(*world, gpus);
  }
  // Rank 0: the other ranks are started by the tuning, or told to stop when it ends first.
  std::optional<cluster::Ranks> ranks;
  if (world) ranks.emplace(*world);
  return tune_here(a, ranks ? &*ranks : nullptr, my_gpus);
}

namespace {

int tune_here(const TuneArgs& a, cluster::Ranks* ranks, const std::function<std::vector<int>()>& my_gpus) {
  KernelProblem p = load_kernel(a.kernel, a.compiler);
  if (a.budget && *a.budget == 0) throw InputError("--budget 0: must be at least 1");
  if (a.higher_is_better && a.lower_is_better)
    throw InputError("--objective-higher-is-better and --objective-lower-is-better: give one");
  runner::TuneOptions o;
  o.problem = a.problem;
  o.strategy = a.strategy;
  o.budget = a.budget;
  o.resume = a.resume;
  o.reuse = runner::parse_reuse(a.reuse);
  if (!a.shard.empty()) o.shard = parse_shard(a.shard);
  o.time_budget_s = a.time_budget_s;
  o.seed = a.seed;
  o.prior = runner::parse_prior_mode(a.prior);
  o.priors = a.priors;
  o.db = a.db.empty() ? default_db_path() : fs::path(a.db);
  o.kt_cache = a.kt_cache;
  try {
    o.devices = my_gpus();
  } catch (const cuda::NoDriver& e) {
    std::cerr << fmt::format("cutune tune --gpus all needs a GPU: {}\n", e.what());
    return kNoGpu;
  }
  if (ranks)
    o.start_remote_lanes = [ranks, silence_s = a.rank_timeout_s](const worker::Setup& setup) {
      return ranks->start(setup, std::chrono::milliseconds(static_cast<std::int64_t>(silence_s * 1e3)));
    };
  o.measure = measure_options(a.measure);
  o.first = a.first;
  o.objective = a.objective;
  if (a.higher_is_better || a.lower_is_better) o.objective_higher_is_better = a.higher_is_better;
  o.measure.finalists = a.measure.finalists;
  o.command = a.command;
  o.log = &std::cout;
  o.compile = pool_options(a.pool);
  o.lookahead = a.lookahead;
  o.timeout_floor_s = a.timeout_s;
  ProgressPrinter progress(std::cerr);
  if (progress.live()) o.progress = [&](const runner::TuneOptions::Progress& p) { progress.update(p); };
  // Every check before any GPU work or write; the problem, the strategy and the store are
  // built here once and used by the tuning.
  runner::TuningSession session(p, o);
  const double age_at_tune_s = process_age_s();
  std::optional<runner::TuneReport> report;
  try {
    // No driver check before this: the driver's start in this process overlaps the GPU
    // worker's; tune() stores nothing before it has found the device.
    report = runner::tune(std::move(session));
  } catch (const cuda::NoDriver& e) {
    std::cerr << fmt::format("cutune tune needs a GPU: {}.\nOn this machine: `cutune compile {} --all` "
                             "compiles the space ({} configurations) with NVRTC.\n",
                             e.what(), a.kernel, p.space().count_valid());
    return kNoGpu;
  }
  const runner::TuneReport& r = *report;

  std::cout << fmt::format("\n{} on {} ({}), problem {}\n", r.kernel, r.device.name, r.device.arch(), r.problem_key);
  std::cout << fmt::format("configurations: {} valid, {} evaluated now, {} resumed from {}{}, {} failed\n",
                           r.space_valid, r.configs_tried, r.configs_resumed, o.db.string(),
                           r.configs_resumed_other_gpus
                               ? fmt::format(" ({} measured on other GPUs of the model)", r.configs_resumed_other_gpus)
                               : std::string(),
                           r.configs_failed);
  for (const auto& [status, n] : r.failures_by_status) std::cout << fmt::format("  failed ({}): {}\n", status, n);
  const std::string default_key = r.default_config ? r.default_config->key() : std::string();
  if (!r.winner) {
    std::cout << "no configuration ran successfully\n";
  } else {
    std::cout << fmt::format("winner:  {} {}\n  median {:.4f} ms", r.winner->key(), r.winner->json(), r.winner_ms);
    for (const auto& [name, v] : r.winner_metrics) std::cout << fmt::format(", {} {:.6g}", name, v);
    std::cout << '\n';
    if (!r.objective.is_time())
      std::cout << fmt::format("  ranked by {} ({} is better): {:.6g}\n", r.objective.name(),
                               r.objective.higher_is_better ? "higher" : "lower", r.winner_objective_value);
    if (r.verdict == Verdict::Separated)
      std::cout << "  declared: its interval separates from every other finalist's\n";
    else if (r.verdict == Verdict::Tie)
      std::cout << "  TIE: its interval overlaps another finalist's (see the report's finalists)\n";
    if (r.default_ms > 0)
      std::cout << fmt::format("default: {} median {:.4f} ms -> speedup {:.3f}x\n", default_key, r.default_ms,
                               r.default_ms / r.winner_ms);
    else if (r.default_evaluated)
      std::cout << fmt::format("default: {} failed\n", default_key);
    else
      std::cout << fmt::format("default: {} not evaluated (the problem names no default: no speedup baseline)\n",
                               default_key);
  }
  if (r.copy_gbps > 0) std::cout << fmt::format("device-to-device copy: {:.1f} GB/s (read + write)\n", r.copy_gbps);
  std::cout << fmt::format("{:.2f} s wall: {} compiled by {} {} workers ({} from the cache, {} shared); {} GPU "
                           "worker restart(s); timeout {:.1f} s\n",
                           r.wall_s, r.compile.compiled, r.compile_workers, a.pool.mode, r.compile.cache_hits,
                           r.compile.shared, r.worker_restarts, r.timeout_s);
  if (r.workers.size() > 1)
    for (const auto& w : r.workers)
      std::cout << fmt::format("  {}: {} evaluated, {:.0f} ms evaluating ({:.0f} ms sampling), {:.0f} ms idle, "
                               "{} restart(s){}\n",
                               w.name, w.evaluations, w.evaluate_ms, w.sampling_ms, w.idle_ms, w.restarts,
                               w.lost ? ", lost" : "");
  if (!r.prior_summary.empty()) std::cout << r.prior_summary << '\n';
  std::cout << report_hint(o.db.string(), r.kernel, r.problem_key) << '\n';

  if (!a.report.empty()) {
    json j{{"device", cutune::to_json(r.device)},
           {"date", r.date},
           {"command", a.command},
           {"kernel", r.kernel},
           {"problem", r.problem_key},
           {"strategy", a.strategy},
           {"seed", a.seed},
           {"run_id", r.run_id},
           {"verification", r.verification},
           {"prior", prior_json(r.prior)},
           {"l2", r.l2_method},
           {"screening_samples_max", a.measure.samples},
           {"space_valid", r.space_valid},
           {"configs_tried", r.configs_tried},
           {"configs_resumed", r.configs_resumed},
           {"configs_resumed_other_gpus", r.configs_resumed_other_gpus},
           {"configs_failed", r.configs_failed},
           {"winner", r.winner ? r.winner->to_json() : json(nullptr)},
           {"winner_key", r.winner ? r.winner->key() : std::string()},
           {"winner_ms", r.winner_ms},
           {"default", default_key},
           {"default_ms", r.default_ms},
           // false: the problem names no default and the strategy did not propose it (no baseline)
           {"default_evaluated", r.default_evaluated},
           {"speedup_over_default", r.default_ms > 0 && r.winner_ms > 0 ? r.default_ms / r.winner_ms : 0.0},
           {"objective", r.objective.name()},
           {"objective_higher_is_better", r.objective.higher_is_better},
           {"winner_objective_value", r.winner_objective_value},
           {"verdict", verdict_name(r.verdict)},
           {"finalists", json::parse(r.finalists_json())},
           {"cost", {{"screening_ms_per_config", r.screening_ms_per_config},
                     {"thorough_ms_per_config", r.thorough_ms_per_config}}},
           {"copy_gbps", r.copy_gbps},
           {"wall_s", r.wall_s},
           {"timed_ms_total", r.timed_ms_total},
           {"compile_workers", r.compile_workers},
           {"compiler", r.compiler},
           {"compiler_reason", r.compiler_reason},
           {"learnt_budget", r.learnt_budget ? json(*r.learnt_budget) : json(nullptr)},
           {"workers", workers_json(r.workers)},
           {"compile_mode", a.pool.mode},
           {"compiled", r.compile.compiled},
           {"cache_hits", r.compile.cache_hits},
           {"shared_compiles", r.compile.shared},
           {"compile_ms_total", r.compile.compile_ms},
           {"gpu_worker_restarts", r.worker_restarts},
           {"timeout_s", r.timeout_s},
           {"compile_ms_median", r.compile_ms_median},
           {"time_breakdown", {{"startup_s", r.startup_s},
                               {"gpu_setup_ms", json::parse(r.gpu_setup_ms)},
                               {"compile_wait_ms", r.compile_wait_ms},
                               {"evaluate_ms", r.evaluate_ms},
                               {"verify_ms", r.verify_ms},
                               {"sampling_ms", r.sampling_ms},
                               {"store_ms", r.store_ms},
                               {"search_ms", r.search_ms},
                               {"worker_load_ms", r.worker_load_ms},
                               {"worker_stage_ms", r.worker_stage_ms},
                               {"worker_idle_ms", r.worker_idle_ms},
                               {"after_search_ms", r.after_search_ms},
                               // Process start to the tuning's start, and to this report.
                               {"process_before_tune_s", age_at_tune_s},
                               {"process_at_report_s", process_age_s()}}}};
    json fails = json::object();
    for (const auto& [status, n] : r.failures_by_status) fails[status] = n;
    j["failures_by_status"] = fails;
    for (const auto& [name, v] : r.winner_metrics) j[name] = v;
    std::ofstream out(a.report);
    if (!out) throw InputError(fmt::format("--report {}: cannot be written", a.report));
    out << j.dump(2) << '\n';
  }
  return kOk;
}

}  // namespace

int cmd_measure(const MeasureConfigArgs& a) {
  KernelProblem p = load_kernel(a.kernel, a.compiler);
  worker::MeasureOptions o = measure_options(a.measure);
  plan_verification(p, o.verify);  // validates --verify
  o.finalists = 0;
  runner::MeasureSession r = runner::measure_configs(p, a.problem, a.configs, a.device, o, a.loop_s);
  std::cout << fmt::format("{} ({}) on {}, L2 {}{}, compiler {}\n", p.name(), r.problem_key, r.device.name,
                           r.l2_method, r.configs.size() > 1 ? ", interleaved" : "", r.compiler);
  bool all_ok = true;
  json arr = json::array();
  for (const auto& c : r.configs) {
    const auto& ev = c.evaluation;
    std::cout << fmt::format("  {}: ", c.config.key());
    json j{{"config_key", c.config.key()},
           {"config", c.config.to_json()},
           {"status", status_name(ev.status)},
           {"error", ev.error},
           {"compile_ms", c.compile_ms},
           {"verify_ms", ev.verify_ms}};
    if (!ev.stats) {
      all_ok = false;
      std::cout << fmt::format("{}: {}\n", status_name(ev.status), ev.error);
    } else {
      const auto& s = ev.stats->summary;
      std::cout << fmt::format("median {:.5f} ms [{:.5f}, {:.5f}] mean {:.5f} min {:.5f} n={} ({})", s.median,
                               s.ci_low, s.ci_high, s.mean, s.min, s.count, to_string(ev.stats->set.reason));
      if (c.loop_ms > 0) std::cout << fmt::format("; back-to-back loop {:.5f} ms", c.loop_ms);
      std::cout << '\n';
      j["summary"] = summary_json(s);
      j["stats"] = db::stats_object(*ev.stats);
      j["samples_ms"] = ev.stats->set.samples_ms;
      j["clocks_mhz"] = ev.stats->set.clocks_mhz;
      if (c.loop_ms > 0) j["loop"] = json{{"ms_per_launch", c.loop_ms}, {"launches", c.loop_launches}};
    }
    arr.push_back(std::move(j));
  }
  if (!a.json.empty()) {
    json doc{{"device", cutune::to_json(r.device)},
             {"date", db::utc_now_iso()},
             {"command", a.command},
             {"kernel", p.name()},
             {"problem", r.problem_key},
             {"l2", r.l2_method},
             {"verification", r.verification},
             {"compiler", r.compiler},
             {"interleaved", r.configs.size() > 1},
             {"timer_floor_ms", r.timer_floor_ms},
             {"configs", arr}};
    std::ofstream out(a.json);
    if (!out) throw InputError(fmt::format("--json {}: cannot be written", a.json));
    out << doc.dump(2) << '\n';
  }
  return all_ok ? kOk : kFailure;
}

int cmd_query(const QueryArgs& a) {
  fs::path path = a.db.empty() ? default_db_path() : fs::path(a.db);
  db::Store store = db::Store::open(path, /*create=*/false);
  auto winners = store.winners({a.kernel, a.gpu, a.problem, a.objective});
  if (a.json) {
    json arr = json::array();
    for (const auto& w : winners)
      arr.push_back(json{{"kernel", w.kernel}, {"problem", w.problem_key}, {"gpu", w.gpu_model},
                         {"config_key", w.config_key}, {"config", json::parse(w.config_json)},
                         {"median_ms", w.median_ms}, {"default_ms", w.default_ms},
                         {"objective", w.objective.name()}, {"objective_value", w.objective_value},
                         {"objective_higher_is_better", w.objective.higher_is_better},
                         {"verdict", verdict_name(w.verdict)}, {"finalists", json::parse(w.finalists_json)},
                         {"run_id", w.run_id}, {"updated_at", w.updated_at}});
    std::cout << arr.dump(2) << '\n';
    return kOk;
  }
  if (winners.empty()) {
    std::cout << no_winner_text(store, a, path);
    return kOk;
  }
  // Columns as wide as their longest entry: a kernel or GPU name longer than a fixed width
  // pushed the rest of its row out of line.
  struct Row {
    std::array<std::string, 8> cells;
    std::string config;
  };
  const std::array<std::string, 8> head{"kernel", "problem", "gpu", "objective", "median_ms", "default_ms", "speedup",
                                        "verdict"};
  std::vector<Row> rows;
  for (const auto& w : winners) {
    const std::string objective =
        w.objective.is_energy() ? fmt::format("{:.3g} mJ", w.objective_value)
        : w.objective.is_time() ? w.objective.name()
                                : fmt::format("{} {:.6g} ({})", w.objective.name(), w.objective_value,
                                              w.objective.higher_is_better ? "max" : "min");
    // No default measured (an import, a simulation, a default that failed): "-", not 0.
    const bool has_default = w.default_ms > 0 && w.median_ms > 0;
    rows.push_back({{w.kernel, w.problem_key, gpu_label(w.gpu_model), objective, fmt::format("{:.4f}", w.median_ms),
                     has_default ? fmt::format("{:.4f}", w.default_ms) : "-",
                     has_default ? fmt::format("{:.3f}x", w.default_ms / w.median_ms) : "-", verdict_name(w.verdict)},
                    w.config_json});
  }
  std::array<std::size_t, 8> width{};
  for (std::size_t c = 0; c < width.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r.cells[c].size());
  }
  const auto print = [&](const std::array<std::string, 8>& cells, const std::string& config) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c)
      line += c < 4 || c == 7 ? fmt::format("{:<{}}  ", cells[c], width[c])  // text left, numbers right
                              : fmt::format("{:>{}}  ", cells[c], width[c]);
    std::cout << line << config << '\n';
  };
  print(head, "configuration");
  for (const auto& r : rows) print(r.cells, r.config);
  return kOk;
}

}  // namespace cutune::cli
