#include "commands.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
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
#include "printers/compile_printer.hpp"
#include "printers/progress_printer.hpp"
#include "printers/query_printer.hpp"
#include "printers/space_printer.hpp"
#include "printers/report_json_printer.hpp"
#include "printers/terminal_printer.hpp"
#include "printers/tune_summary.hpp"
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

}  // namespace

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
  o.verifier = a.verifier;
  return o;
}

namespace {

runner::CompilePoolOptions pool_options(const CompilePoolArgs& a) {
  runner::CompilePoolOptions o;
  o.workers = a.workers;
  o.mode = runner::parse_compile_mode(a.mode);
  if (!a.no_cache) o.cache_dir = a.cache_dir.empty() ? jit::CubinCache::default_dir() : fs::path(a.cache_dir);
  return o;
}

/// Writes `doc` to `path` (the value of `option`); InputError when it cannot be written.
void write_json_file(const std::string& path, std::string_view option, const json& doc) {
  std::ofstream out(path);
  if (!out) throw InputError(fmt::format("{} {}: cannot be written", option, path));
  out << doc.dump(2) << '\n';
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
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
    print_parameters(std::cout, s);
    for (const auto& v : p.variables())
      std::cout << fmt::format("  problem: {}={} (default)\n", v.name, v.default_value);
  }
  return kOk;
}

namespace {

/// The peak resident memory of this process image in KiB (VmHWM); -1 unknown.
long peak_rss_kib() {
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
  return peak_kib;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// What a tuning waits for before its first evaluation (load, then the first valid
/// configuration), and what listing the whole valid set costs; the enumeration is lazy, so
/// its memory does not grow with the Cartesian size (peak_rss_kib says so).
SpaceTiming time_space(const KernelProblem& p, std::chrono::steady_clock::time_point start) {
  const Space& s = p.space();
  SpaceTiming t;
  t.kernel = p.name();
  t.cartesian = s.cartesian_size();
  t.load_ms = ms_since(start);
  const auto first_start = std::chrono::steady_clock::now();
  Config first;
  const bool any = s.next_valid(first);
  t.first_valid_ms = ms_since(first_start);
  const auto count_start = std::chrono::steady_clock::now();
  t.valid = s.count_valid();
  t.count_ms = ms_since(count_start);
  t.peak_rss_kib = peak_rss_kib();
  t.first_valid = any ? s.key(first) : "";
  return t;
}

}  // namespace

int cmd_space(const std::string& kernel, const std::string& problem, int show, const std::string& t1,
              const std::string& listing, long long max_threads) {
  const auto start = std::chrono::steady_clock::now();
  KernelProblem p = load_kernel(kernel);
  if (max_threads > 0) p.set_max_threads_per_block(max_threads);
  ProblemInstance inst = p.instantiate(problem);
  if (!t1.empty()) write_t1(p, inst, t1);
  const Space& s = p.space();
  if (listing == "timing") {
    std::cout << space_timing_json(time_space(p, start)).dump() << '\n';
  } else if (listing == "keys") {
    s.for_each_valid([&](const Config& c) {
      std::cout << s.key(c) << '\n';
      return true;
    });
  } else if (listing == "json") {
    std::cout << space_listing_json(p, runner::evaluates_default_first(p)).dump() << '\n';
  } else {
    SpaceOverview o;
    const auto t0 = std::chrono::steady_clock::now();
    o.valid = s.count_valid();
    o.enumerate_ms = ms_since(t0);
    o.default_first = runner::evaluates_default_first(p);
    o.show = show;
    print_space_overview(std::cout, p, inst, o);
  }
  return kOk;
}

namespace {

/// compile --config (or the default): one configuration, its cubin's size or its NVRTC log.
int compile_one(const CompileArgs& a, const KernelProblem& p) {
  const Space& s = p.space();
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

/// compile --all: every valid configuration, through the same compile pool the tuner uses.
int compile_all(const CompileArgs& a, const KernelProblem& p) {
  const Space& s = p.space();
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
  const CompileRunSummary summary{
      .kernel = p.name(),
      .arch = a.arch,
      .compiler_text = jit::decide_compiler(p, a.arch).describe(),
      .compiler = compiler_name(jit::decide_compiler(p, a.arch).compiler),
      .configs = total,
      .failed = failed,
      .stats = pool.stats(),
      .workers = pool.workers(),
      .mode = a.pool.mode,
      .wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  print_compile_summary(std::cout, summary);
  if (!a.json.empty()) write_json_file(a.json, "--json", compile_summary_json(summary));
  return failed ? kFailure : kOk;
}

}  // namespace

int cmd_compile(const CompileArgs& a) {
  KernelProblem p = load_kernel(a.kernel, a.compiler);
  auto archs = jit::supported_archs();
  if (std::find(archs.begin(), archs.end(), a.arch) == archs.end())
    throw InputError(fmt::format("--arch {}: NVRTC {} supports {}", a.arch, jit::nvrtc_version_string(),
                                 join(archs, ", ")));
  return a.all ? compile_all(a, p) : compile_one(a, p);
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

/// The tuning's options from the command line, but for the log and the progress line. Throws
/// cuda::NoDriver when `my_gpus` finds no GPU.
runner::TuneOptions tune_options(const TuneArgs& a, cluster::Ranks* ranks,
                                 const std::function<std::vector<int>()>& my_gpus) {
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
  o.devices = my_gpus();
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
  o.compile = pool_options(a.pool);
  o.lookahead = a.lookahead;
  o.timeout_floor_s = a.timeout_s;
  o.kt_observables = a.observe;
  // Kernel Tuner's nvml_energy is per launch of every configuration: the energy measurement.
  if (std::find(a.observe.begin(), a.observe.end(), "nvml_energy") != a.observe.end())
    o.measure.energy_every_config = true;
  return o;
}

int tune_here(const TuneArgs& a, cluster::Ranks* ranks, const std::function<std::vector<int>()>& my_gpus) {
  KernelProblem p = load_kernel(a.kernel, a.compiler);
  runner::TuneOptions o;
  try {
    o = tune_options(a, ranks, my_gpus);
  } catch (const cuda::NoDriver& e) {
    std::cerr << fmt::format("cutune tune --gpus all needs a GPU: {}\n", e.what());
    return kNoGpu;
  }
  o.log = &std::cout;
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
  TuneSummary summary{.report = std::move(*report),
                      .command = a.command,
                      .strategy = a.strategy,
                      .seed = a.seed,
                      .screening_samples_max = a.measure.samples,
                      .compile_mode = a.pool.mode,
                      .db = o.db.string(),
                      .process_before_tune_s = age_at_tune_s};
  print_tune_summary(std::cout, summary);
  if (!a.report.empty()) {
    summary.process_at_report_s = process_age_s();
    write_json_file(a.report, "--report", tune_report_json(summary));
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
  print_measure_session(std::cout, p.name(), r);
  if (!a.json.empty()) write_json_file(a.json, "--json", measure_json(r, p.name(), a.command, db::utc_now_iso()));
  const bool all_ok = std::all_of(r.configs.begin(), r.configs.end(),
                                  [](const runner::MeasuredConfig& c) { return c.evaluation.stats.has_value(); });
  return all_ok ? kOk : kFailure;
}

int cmd_query(const QueryArgs& a) {
  fs::path path = a.db.empty() ? default_db_path() : fs::path(a.db);
  db::Store store = db::Store::open(path, /*create=*/false);
  auto winners = store.winners({a.kernel, a.gpu, a.problem, a.objective});
  if (a.json) {
    std::cout << winners_json(winners).dump(2) << '\n';
    return kOk;
  }
  if (winners.empty()) {
    std::cout << no_winner_text(store, a, path);
    return kOk;
  }
  print_winner_table(std::cout, winners);
  return kOk;
}

}  // namespace cutune::cli
