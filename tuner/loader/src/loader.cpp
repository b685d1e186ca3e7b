#include "cutune/loader/loader.hpp"

#include <fmt/format.h>

#include <set>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <variant>
#include <stdexcept>

#include "config_check.hpp"
#include "cutune/cuda/launch_plan.hpp"
#include "cutune/formats/wisdom.hpp"
#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/cubin_cache.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/templates/catalog.hpp"
#include "background_tuning.hpp"
#include "ladder.hpp"
#include "selector_choice.hpp"
#include "tuned_kernel_impl.hpp"
#include "on_miss_settings.hpp"
#include "verify_borrowed.hpp"

namespace cutune::loader {

const char* rung_name(Rung rung) {
  switch (rung) {
    case Rung::Exact: return "exact";
    case Rung::NearestProblem: return "nearest problem";
    case Rung::SameComputeCapability: return "same compute capability";
    case Rung::TemplateDefault: return "template default";
    case Rung::Selector: return "selector";
  }
  return "?";
}

std::string Selection::describe() const {
  std::string s = fmt::format("{} {} on {}: rung {} ({}), config {}", kernel, problem, gpu_model,
                              static_cast<int>(rung), rung_name(rung), config_key);
  if (rung == Rung::Selector)
    s += fmt::format(", {}, distilled on {} ({})", selector, tuned_gpu, source);
  else if (rung != Rung::TemplateDefault || run_id != 0)
    s += fmt::format(", tuned for {} on {} (run {}, median {:.4g} ms, default {:.4g} ms, {}, distance {:.3g}, {})",
                     tuned_problem, tuned_gpu, run_id, median_ms, default_ms, verdict, distance, source);
  if (check != "not checked") s += ", check " + check;
  if (!on_miss.empty()) s += ", " + on_miss;
  return s;
}

namespace {

/// A cubin for one compile key, shared by every selection that needs it.
struct Cubin {
  std::vector<char> bytes;
  std::vector<std::string> lowered_names;
  bool from_cache = false;
  double compile_ms = 0.0;
};

/// By content, not by name: an SQLite file starts with its 16-byte magic; anything else is
/// read as a wisdom file (whose reader names what is wrong with it).
bool is_sqlite_file(const std::filesystem::path& p) {
  char magic[16] = {};
  std::ifstream in(p, std::ios::binary);
  in.read(magic, sizeof magic);
  return in.gcount() == sizeof magic && std::memcmp(magic, "SQLite format 3", sizeof magic) == 0;
}

/// The winners the ladder reads: the source's, then those of the DB that tuning on first use
/// stores into (when that is another file). Immutable: a fresh read replaces it whole.
struct Winners {
  std::vector<db::WisdomEntry> entries;
  std::size_t primary_count = 0;  ///< entries[0, primary_count) are the source's
  std::string primary, extra;     ///< "db:<path>", "wisdom:<path>" or ""
  const std::string& source_of(const db::WisdomEntry* e) const {
    return static_cast<std::size_t>(e - entries.data()) < primary_count ? primary : extra;
  }
};

/// Rungs that mean "no winner for this GPU model and problem": tuning on first use tunes them.
bool is_miss(Rung rung) {
  return rung == Rung::NearestProblem || rung == Rung::SameComputeCapability || rung == Rung::TemplateDefault;
}

}  // namespace

struct Loader::State {
  std::shared_ptr<const Winners> winners = std::make_shared<Winners>();  ///< replaced under mutex
  std::vector<ShapeSelector> selectors;
  bool use_selectors = true;
  std::string source;  ///< "db:<path>", "wisdom:<path>" or ""
  std::optional<detail::OnMissSettings> on_miss;
  bool on_miss_db_is_source = false;  ///< the on-miss DB is the winners' source itself
  std::optional<jit::CubinCache> cache;
  int nvrtc_version = 0;

  std::mutex mutex;  ///< guards everything below
  std::map<std::filesystem::path, std::shared_ptr<const KernelProblem>> problems;
  std::map<std::string, std::shared_future<std::shared_ptr<const Cubin>>> cubins;  ///< by compile key
  std::map<std::string, std::shared_future<std::shared_ptr<const TunedKernel>>> loaded;
  LoaderStats stats;
  std::optional<DeviceIdentity> device;
  std::unique_ptr<cuda::Context> context;  ///< keeps the primary context retained
  cuda::DeviceLimits limits;
  /// Last member: destroyed first, so its watcher stops before what its callbacks use goes.
  std::unique_ptr<detail::BackgroundTuning> background;

  std::shared_ptr<const Winners> winners_now() {
    std::lock_guard lock(mutex);
    return winners;
  }
  /// Reads the on-miss DB's winners again (a tuning stored one), keeping the source's.
  void reload_on_miss_winners();
  std::string objective_for(const KernelProblem& p, const std::string& objective);
  std::shared_ptr<const KernelProblem> problem(const std::string& kernel, const std::filesystem::path& template_dir);
  std::pair<Selection, Config> select(const KernelProblem& p, const ProblemInstance& instance,
                                      const DeviceIdentity& gpu, const std::string& objective, bool default_only);
  std::shared_ptr<const CompiledKernel> compile(std::shared_ptr<const KernelProblem> p, Selection selection,
                                                const Config& config, const std::string& arch);
};

std::shared_ptr<const KernelProblem> Loader::State::problem(const std::string& kernel,
                                                            const std::filesystem::path& template_dir) {
  // $CUTUNE_TEMPLATE_DIR first (the catalog's own order), then the installed templates.
  const char* env = std::getenv("CUTUNE_TEMPLATE_DIR");
  const bool explicit_dir = !(env && *env) && !template_dir.empty() && std::filesystem::is_directory(template_dir);
  const std::filesystem::path path = templates::resolve_template(kernel, explicit_dir ? template_dir : std::filesystem::path{});
  std::lock_guard lock(mutex);
  auto& p = problems[path];
  if (!p) p = std::make_shared<const KernelProblem>(KernelProblem::load(path));
  return p;
}

std::pair<Selection, Config> Loader::State::select(const KernelProblem& p, const ProblemInstance& instance,
                                                   const DeviceIdentity& gpu, const std::string& objective,
                                                   bool default_only) {
  Selection s;
  s.kernel = p.name();
  s.problem = instance.key();
  s.gpu_model = gpu.model_key();
  const std::string wanted = objective_for(p, objective);
  const std::shared_ptr<const Winners> all = winners_now();
  const detail::Choice choice =
      default_only ? detail::Choice{} : detail::choose(all->entries, p.name(), s.problem, gpu, wanted);
  Config config;
  const ShapeSelector* selector =
      default_only || choice.rung == Rung::Exact || !use_selectors
          ? nullptr
          : detail::find_selector(selectors, p.name(), s.gpu_model, wanted);
  if (selector) {
    config = detail::select_by(p, *selector, instance, source, s);
  } else if (choice.entry) {
    const db::Winner& w = choice.entry->winner;
    config = detail::checked_config(p, w.config,
                                    fmt::format("{} (winner for {} on {}, objective {})", all->source_of(choice.entry),
                                                w.problem_key, w.gpu_model, w.objective.name()));
    s.rung = choice.rung;
    s.distance = choice.distance;
    s.source = all->source_of(choice.entry);
    s.tuned_gpu = w.gpu_model;
    s.tuned_problem = w.problem_key;
    s.run_id = w.run_id;
    s.median_ms = w.median_ms;
    s.default_ms = w.default_ms;
    s.verdict = verdict_name(w.verdict);
    s.tuned_device = choice.entry->device;
  } else {
    config = p.space().default_config();
  }
  s.config_key = p.space().key(config);
  for (const auto& [name, value] : p.space().assignments(config)) s.config.emplace_back(name, value.str());
  return {std::move(s), std::move(config)};
}

std::string Loader::State::objective_for(const KernelProblem& p, const std::string& objective) {
  if (!objective.empty()) return objective;
  std::set<std::string> objectives;
  for (const auto& e : winners_now()->entries)
    if (e.winner.kernel == p.name()) objectives.insert(e.winner.objective.name());
  if (objectives.size() == 1) return *objectives.begin();
  if (objectives.empty() || objectives.contains("time")) return "time";
  std::string list;
  for (const auto& o : objectives) list += (list.empty() ? "" : ", ") + o;
  throw InputError(fmt::format("cutune::loader: {} holds winners of {} for several objectives ({}): set "
                               "LoaderOptions::objective to one",
                               source, p.name(), list));
}

void Loader::State::reload_on_miss_winners() {
  const db::Store store = db::Store::open(on_miss->db, /*create=*/false);
  std::vector<db::WisdomEntry> fresh = db::wisdom_from_store(store);
  std::lock_guard lock(mutex);
  auto next = std::make_shared<Winners>(*winners);
  if (on_miss_db_is_source) {
    next->entries = std::move(fresh);
    next->primary_count = next->entries.size();
  } else {
    next->entries.resize(next->primary_count);
    next->entries.insert(next->entries.end(), std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
  }
  winners = std::move(next);
}

std::shared_ptr<const CompiledKernel> Loader::State::compile(std::shared_ptr<const KernelProblem> p, Selection selection,
                                                             const Config& config, const std::string& arch) {
  auto out = std::make_shared<CompiledKernel>();
  const jit::CompileRequest request = jit::compile_request(*p, config, arch);
  out->compile_key = jit::compile_key(request, nvrtc_version);
  out->selection = std::move(selection);
  out->problem = std::move(p);
  out->config_index = config.index;
  out->arch = arch;

  // The first thread to ask for a key compiles it; the others wait on its future.
  std::shared_future<std::shared_ptr<const Cubin>> earlier;
  std::promise<std::shared_ptr<const Cubin>> mine;
  {
    std::lock_guard lock(mutex);
    if (auto it = cubins.find(out->compile_key); it != cubins.end()) {
      earlier = it->second;
      ++stats.memo_hits;
    } else {
      cubins.emplace(out->compile_key, mine.get_future().share());
    }
  }
  std::shared_ptr<const Cubin> cubin;
  if (earlier.valid()) {
    cubin = earlier.get();
  } else {
    try {
      auto c = std::make_shared<Cubin>();
      std::optional<jit::CompileResult> result;
      if (cache) result = cache->get(out->compile_key);
      const bool hit = result.has_value();
      if (!hit) {
        result = jit::compile(request);
        if (cache) cache->put(out->compile_key, *result);
      }
      {
        std::lock_guard lock(mutex);
        if (hit) ++stats.cache_hits;
        else {
          ++stats.nvrtc_compiles;
          stats.compile_ms += result->compile_ms;
        }
      }
      if (!result->ok)
        throw std::runtime_error(fmt::format("cutune::loader: {} configuration {} does not compile for {}: {}",
                                             out->selection.kernel, out->selection.config_key, arch, result->error));
      c->bytes = std::move(result->cubin);
      c->lowered_names = std::move(result->lowered_names);
      c->from_cache = hit;
      c->compile_ms = result->compile_ms;
      cubin = c;
      mine.set_value(cubin);
    } catch (...) {
      mine.set_exception(std::current_exception());
      throw;
    }
  }
  out->cubin = cubin->bytes;
  out->lowered_names = cubin->lowered_names;
  out->from_cache = cubin->from_cache;
  out->compile_ms = cubin->compile_ms;
  return out;
}

Loader::Loader(LoaderOptions options) : options_(std::move(options)), state_(std::make_unique<State>()) {
  const auto& w = options_.winners;
  Winners winners;
  bool winners_is_db = false;
  if (!w.empty()) {
    if (!std::filesystem::exists(w)) throw InputError(fmt::format("{}: no such file", w.string()));
    if (is_sqlite_file(w)) {
      const db::Store store = db::Store::open(w, /*create=*/false);
      winners.entries = db::wisdom_from_store(store);
      state_->selectors = store.selectors();
      state_->source = "db:" + w.string();
      winners_is_db = true;
    } else {
      db::WisdomFile file = db::read_wisdom_file(w);
      winners.entries = std::move(file.winners);
      state_->selectors = std::move(file.selectors);
      state_->source = "wisdom:" + w.string();
    }
  }
  winners.primary = state_->source;
  winners.primary_count = winners.entries.size();
  state_->on_miss = detail::resolve_on_miss(options_.on_miss, w, winners_is_db);
  if (const auto& om = state_->on_miss) {
    std::error_code ec;
    state_->on_miss_db_is_source = winners_is_db && std::filesystem::equivalent(om->db, w, ec);
    // What earlier runs of the application tuned on first use (a DB other than the source).
    if (!state_->on_miss_db_is_source && std::filesystem::exists(om->db, ec)) {
      const db::Store store = db::Store::open(om->db, /*create=*/false);
      auto tuned = db::wisdom_from_store(store);
      winners.entries.insert(winners.entries.end(), tuned.begin(), tuned.end());
    }
    winners.extra = "db:" + om->db.string();
    state_->background = std::make_unique<detail::BackgroundTuning>(*om);
  }
  state_->winners = std::make_shared<const Winners>(std::move(winners));
  state_->use_selectors = options_.use_selectors;
  if (options_.use_cache)
    state_->cache.emplace(options_.cache_dir.empty() ? jit::CubinCache::default_dir() : options_.cache_dir);
  state_->nvrtc_version = jit::nvrtc_version();
}

Loader::~Loader() {
  if (state_) state_->background.reset();  // the watcher first: its callbacks use the rest
}

bool Loader::wait_for_background(double timeout_s) {
  return !state_->background || state_->background->wait_idle(timeout_s);
}

Selection Loader::select(const std::string& kernel, const std::string& problem, const DeviceIdentity& gpu) {
  auto p = state_->problem(kernel, options_.template_dir);
  return state_->select(*p, p->instantiate(problem), gpu, options_.objective, false).first;
}

std::shared_ptr<const CompiledKernel> Loader::compile(const std::string& kernel, const std::string& problem,
                                                      const DeviceIdentity& gpu) {
  auto p = state_->problem(kernel, options_.template_dir);
  auto [selection, config] = state_->select(*p, p->instantiate(problem), gpu, options_.objective, false);
  return state_->compile(p, std::move(selection), config, gpu.arch());
}

const DeviceIdentity& Loader::device() {
  std::lock_guard lock(state_->mutex);
  if (!state_->device) {
    state_->context = std::make_unique<cuda::Context>(options_.device);
    DeviceIdentity d = cuda::identify(options_.device);
    d.nvrtc_version = state_->nvrtc_version;
    state_->limits = cuda::limits(options_.device);
    state_->device = d;
  }
  return *state_->device;
}

namespace {

/// Loads the cubin and resolves its launch sequence; the refusal text when the device
/// cannot run it (too many threads or too much shared memory for this GPU).
std::variant<std::shared_ptr<TunedKernel::Impl>, std::string> load_module(const CompiledKernel& compiled,
                                                                         const ProblemInstance& instance,
                                                                         const cuda::DeviceLimits& limits) {
  const KernelProblem& p = *compiled.problem;
  auto impl = std::make_shared<TunedKernel::Impl>(cuda::Module(compiled.cubin));
  const Config config{compiled.config_index};
  cuda::ResolvedLaunches resolved = cuda::resolve_launches(impl->module, p, config, instance, limits, compiled.lowered_names);
  if (!resolved.refused.empty()) return resolved.refused;
  if (resolved.launches.empty()) return std::string("no launch's Condition holds for this configuration");
  const std::size_t n = p.arguments().size();
  for (const cuda::ResolvedLaunch& r : resolved.launches) {
    TunedKernel::Impl::Launch l{r.function, r.geometry.grid, r.geometry.block, r.geometry.dynamic_shared_bytes, {}, false};
    for (std::size_t a : r.spec->arguments) l.arguments.push_back(static_cast<std::uint32_t>(a));
    l.all_arguments = l.arguments.size() == n;
    for (std::size_t i = 0; l.all_arguments && i < n; ++i) l.all_arguments = l.arguments[i] == i;
    impl->launches.push_back(std::move(l));
  }
  impl->launch_kernel = cuda::Driver::get().cuLaunchKernel;
  return impl;
}

}  // namespace

std::shared_ptr<TunedKernel> Loader::make_tuned(const std::shared_ptr<const KernelProblem>& p,
                                                const ProblemInstance& instance, Selection selection,
                                                const std::vector<std::uint32_t>& config_index,
                                                std::string* refused) {
  const std::string arch = state_->device->arch();
  auto compiled = state_->compile(p, selection, Config{config_index}, arch);
  auto loaded = load_module(*compiled, instance, state_->limits);
  if (auto* why = std::get_if<std::string>(&loaded)) {
    if (!refused)
      throw std::runtime_error(fmt::format("cutune::loader: {} configuration {} cannot launch: {}", p->name(),
                                           selection.config_key, *why));
    *refused = *why;
    return nullptr;
  }
  return std::shared_ptr<TunedKernel>(new TunedKernel(std::move(compiled), std::move(selection),
                                                      std::get<0>(std::move(loaded)), p->arguments().size()));
}

std::shared_ptr<const TunedKernel> Loader::load(const std::string& kernel, const std::string& problem) {
  const DeviceIdentity gpu = device();
  auto p = state_->problem(kernel, options_.template_dir);
  const ProblemInstance instance = p->instantiate(problem);
  const std::string memo_key = p->json_file().string() + '\n' + instance.key();

  std::shared_future<std::shared_ptr<const TunedKernel>> earlier;
  std::promise<std::shared_ptr<const TunedKernel>> mine;
  {
    std::lock_guard lock(state_->mutex);
    if (auto it = state_->loaded.find(memo_key); it != state_->loaded.end()) {
      earlier = it->second;
      ++state_->stats.memo_hits;
    } else {
      state_->loaded.emplace(memo_key, mine.get_future().share());
    }
  }
  cuda::Context current(options_.device);  // the primary context, current on this thread
  if (earlier.valid()) return earlier.get();
  try {
    auto [selection, config] = state_->select(*p, instance, gpu, options_.objective, /*default_only=*/false);
    Selection fallback = state_->select(*p, instance, gpu, options_.objective, /*default_only=*/true).first;
    const auto default_index = p->space().default_config().index;
    auto use_default = [&](const std::string& why) {
      fallback.check = fmt::format("{}; using the template default (not {})", why, selection.config_key);
      return make_tuned(p, instance, fallback, default_index, nullptr);
    };
    std::string refused;
    std::shared_ptr<TunedKernel> result = make_tuned(p, instance, selection, config.index, &refused);
    if (!result) {
      if (selection.rung == Rung::TemplateDefault)
        throw std::runtime_error(fmt::format("cutune::loader: {}: the template default cannot launch: {}", p->name(), refused));
      result = use_default("refused on this GPU: " + refused);
    } else if (options_.verify_borrowed && (selection.rung == Rung::NearestProblem ||
                                            selection.rung == Rung::SameComputeCapability ||
                                            selection.rung == Rung::Selector)) {
      auto reference = make_tuned(p, instance, fallback, default_index, nullptr);
      const VerifyResult check = detail::compare_with_default(*p, instance, *reference, *result);
      if (check.ok) result->first_selection().check = fmt::format("passed (max error {:.3g})", check.max_error);
      else result = use_default("failed: " + check.message);
    }
    if (state_->background && is_miss(result->selection().rung)) tune_on_miss(p, instance, problem, result);
    mine.set_value(result);
    return result;
  } catch (...) {
    mine.set_exception(std::current_exception());
    throw;
  }
}

void Loader::tune_on_miss(const std::shared_ptr<const KernelProblem>& p, const ProblemInstance& instance,
                          const std::string& problem, const std::shared_ptr<TunedKernel>& kernel) {
  detail::TuneJob job;
  job.kernel_file = p->json_file();
  job.problem = problem;
  job.key.kernel = p->name();
  job.key.problem_key = instance.key();
  job.key.gpu_model = state_->device->model_key();
  job.key.objective = state_->objective_for(*p, options_.objective);
  job.objective = options_.objective;
  job.device = options_.device;
  if (options_.use_cache) job.cache_dir = options_.cache_dir;
  const std::string before = rung_name(kernel->selection().rung);
  kernel->first_selection().on_miss = "tuning on first use: queued";
  const auto loaded_at = std::chrono::steady_clock::now();
  // On the watcher thread. The kernel changes only through its atomic plan, so the application
  // may launch it meanwhile.
  auto on_event = [this, p, instance, kernel, before, loaded_at](const detail::TuneEvent& e) {
    if (e.kind != detail::TuneEvent::Kind::Stored) {
      kernel->set_on_miss(e.kind == detail::TuneEvent::Kind::Failed ? fmt::format("{}; staying on the {}", e.text, before)
                                                                     : e.text);
      return;
    }
    try {
      state_->reload_on_miss_winners();
      cuda::Context current(options_.device);  // the primary context, current on this thread
      auto [selection, config] = state_->select(*p, instance, *state_->device, options_.objective, false);
      if (selection.rung != Rung::Exact)
        return kernel->set_on_miss(fmt::format("{}, but the DB holds no winner of objective {} for it; staying on the {}",
                                               e.text, state_->objective_for(*p, options_.objective), before));
      selection.on_miss = fmt::format("{}; switched {:.1f} s after load", e.text,
                                      std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded_at).count());
      std::string refused;
      std::shared_ptr<TunedKernel> next = make_tuned(p, instance, std::move(selection), config.index, &refused);
      if (!next) return kernel->set_on_miss(fmt::format("{}, but the winner cannot launch here ({}); staying on the {}",
                                                        e.text, refused, before));
      kernel->switch_to(next->plans_.front());
    } catch (const std::exception& x) {
      kernel->set_on_miss(fmt::format("{}, but switching failed ({}); staying on the {}", e.text, x.what(), before));
    }
  };
  state_->background->submit(std::move(job), std::move(on_event));
}

LoaderStats Loader::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace cutune::loader
