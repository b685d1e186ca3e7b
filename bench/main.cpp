// cutune-bench-vendor: for each built-in template in a fixed list, the winner the DB holds
// for this GPU against the vendor's implementation of the same operation (CUB, cuBLAS), or
// against a device-to-device copy for the bandwidth-bound kernels; in one run, on the same
// input data, both sides verified and timed the same way. Writes
// results/<gpu-slug>/vendor_comparison.json and prints a table last. See bench/README.md.
//
// Exit codes (as the cutune tool's): 0 every entry measured and verified on both sides;
// 1 an entry is missing (not tuned, no template) or failed; 2 bad input; 3 no GPU.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cutune/cuda/device.hpp"
#include "cutune/db/store.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/measure/sampler.hpp"
#include "cutune/measure/statistics.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"
#include "cutune/runner/compile_pool.hpp"
#include "cutune/runner/runner.hpp"
#include "cutune/templates/catalog.hpp"
#include "cutune/templates/references.hpp"
#include "cutune/worker/gpu_stage.hpp"
#include "vendor_comparison.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace cutune::bench {
namespace {

enum ExitCode { kOk = 0, kFailure = 1, kBadInput = 2, kNoGpu = 3 };

enum class Reference { CubReduceSum, CubExclusiveSum, CublasSgemm, CopyD2D };

const char* reference_name(Reference r) {
  switch (r) {
    case Reference::CubReduceSum: return "cub::DeviceReduce::Sum";
    case Reference::CubExclusiveSum: return "cub::DeviceScan::ExclusiveSum";
    case Reference::CublasSgemm: return "cublasSgemm fp32 (CUBLAS_PEDANTIC_MATH)";
    case Reference::CopyD2D: return "cudaMemcpy device-to-device";
  }
  return "?";
}

const char* short_name(Reference r) {
  switch (r) {
    case Reference::CubReduceSum: return "CUB Reduce::Sum";
    case Reference::CubExclusiveSum: return "CUB Scan::ExclusiveSum";
    case Reference::CublasSgemm: return "cuBLAS SGEMM fp32 pedantic";
    case Reference::CopyD2D: return "cudaMemcpy D2D";
  }
  return "?";
}

/// How many input arguments the reference reads.
std::size_t input_count(Reference r) { return r == Reference::CublasSgemm ? 2 : 1; }

// ---------------------------------------------------------------------------------------
// The comparisons: edit here when a template's name, problem variables or argument names
// change. `inputs` / `output` name the template arguments the reference reads / writes;
// left empty they are found by role: the ReadOnly Vector arguments in JSON order, and the
// first argument marked Output. For the copy, the source is the first input and the
// destination the output (the same bytes the kernel reads and writes).
// `gemm_dims`: the problem variables holding m, n, k (row-major A[m][k] * B[k][n]).
// `target`: the ratio cutune's tuned kernel is expected to reach against the vendor's on the
// H100/H200 (ratio > 1: cutune is faster; bench/README.md).
// ---------------------------------------------------------------------------------------
struct Entry {
  std::string kernel;   ///< template name (the JSON file's stem)
  std::string problem;  ///< problem-variable overrides, as `cutune tune --problem` takes them
  Reference reference;
  double target;
  std::vector<std::string> inputs = {};
  std::string output = {};
  std::array<std::string, 3> gemm_dims = {"m", "n", "k"};
};

const std::vector<Entry>& comparison_table() {
  static const std::vector<Entry> table = {
      {"reduction", "n=268435456", Reference::CubReduceSum, 1.00},
      {"scan", "n=268435456,inclusive=0", Reference::CubExclusiveSum, 1.00},
      {"matmul", "m=4096,n=4096,k=4096", Reference::CublasSgemm, 0.85},
      {"transpose", "rows=16384,cols=16384", Reference::CopyD2D, 0.90},
      {"vector_add", "n=67108864", Reference::CopyD2D, 0.90},
  };
  return table;
}

struct Options {
  fs::path db, out, templates;
  std::vector<std::string> only;
  int device = 0;
  int warmup = 3;
  int samples = 20;
  std::uint64_t data_seed = runner::TuneOptions{}.data_seed;
  std::string command;
};

/// What one entry produced. `status` is "ok" or says what is missing or failed.
struct Result {
  const Entry* entry = nullptr;
  std::string problem_key;
  std::string status = "ok";
  std::string message;  ///< why, when status != "ok"; notes otherwise
  std::string config_key;
  json config = nullptr;
  double db_ms = 0.0;  ///< the winner's median as the DB recorded it (its tuning run)
  std::vector<double> tuned_samples_ms, reference_samples_ms;
  double tuned_ms = 0.0, reference_ms = 0.0, ratio = 0.0;
  bool flops = false;        ///< work is in FLOPs (else bytes)
  double work = 0.0;         ///< bytes (or FLOPs) the kernel must move (or do)
  double copy_bytes = 0.0;   ///< bytes each copy moves, counting read + write
  double tuned_rate = 0.0, reference_rate = 0.0;  ///< GB/s or GFLOP/s
  std::string tuned_check, reference_check;     ///< "ok" or the first mismatch
  double cpu_reference_s = 0.0;
  std::vector<std::pair<std::string, double>> template_metrics;
  bool measured() const { return tuned_ms > 0 && reference_ms > 0; }
};

/// A failure after which no more GPU work can be done in this process.
struct ContextLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

/// The template's T1 file: from --templates DIR when given, else the tool's own search.
std::optional<fs::path> find_template(const Options& o, const std::string& kernel) {
  auto kernels = templates::builtin_templates(o.templates);
  if (auto it = kernels.find(kernel); it != kernels.end()) return it->second;
  return std::nullopt;
}


HostArgument& argument(std::vector<HostArgument>& args, const std::string& name) {
  for (auto& a : args)
    if (a.spec->name == name) return a;
  std::vector<std::string> names;
  for (const auto& a : args) names.push_back(a.spec->name);
  throw InputError(fmt::format("the template has no argument '{}' (it has: {}); adjust "
                               "comparison_table() in bench/main.cpp",
                               name, join(names, ", ")));
}

/// The arguments the reference reads and writes: named in the table, or found by role.
struct Roles {
  std::vector<std::string> inputs;
  std::string output;
};

Roles roles_of(const Entry& e, const std::vector<HostArgument>& args) {
  Roles r{e.inputs, e.output};
  if (r.inputs.empty())
    for (const auto& a : args)
      if (a.spec->is_vector && a.spec->access == AccessType::ReadOnly && !a.spec->output &&
          r.inputs.size() < input_count(e.reference))
        r.inputs.push_back(a.spec->name);
  if (r.output.empty())
    for (const auto& a : args)
      if (a.spec->output) {
        r.output = a.spec->name;
        break;
      }
  if (r.inputs.size() != input_count(e.reference) || r.output.empty())
    throw InputError(fmt::format("{} needs {} ReadOnly Vector input(s) and an Output argument; "
                                 "the template gives inputs [{}], output '{}' (name them in "
                                 "comparison_table(), bench/main.cpp)",
                                 reference_name(e.reference), input_count(e.reference),
                                 join(r.inputs, ", "), r.output));
  return r;
}

void require_float(const HostArgument& a, const Entry& e) {
  if (!a.spec->is_vector || a.spec->type != ElementType::Float32)
    throw InputError(fmt::format("{}: argument '{}' is {} {}; {} compares float32 vectors", e.kernel,
                                 a.spec->name, a.spec->is_vector ? "a Vector of" : "a Scalar",
                                 element_type_name(a.spec->type), reference_name(e.reference)));
}

void require_count(const HostArgument& a, std::int64_t expected, const Entry& e) {
  if (a.count != expected)
    throw InputError(fmt::format("{}: argument '{}' has {} elements, {} expects {}", e.kernel,
                                 a.spec->name, a.count, reference_name(e.reference), expected));
}

std::int64_t variable(const ProblemInstance& instance, const std::string& name, const Entry& e) {
  auto it = instance.variables.find(name);
  if (it == instance.variables.end())
    throw InputError(fmt::format("{}: no problem variable '{}' (adjust gemm_dims in "
                                 "comparison_table(), bench/main.cpp)",
                                 e.kernel, name));
  return it->second;
}

double median(const std::vector<double>& samples) { return measure::summarize(samples).median; }

/// The vendor side: its own device buffers filled from the same host data the GpuStage
/// uploaded (same template, instance and seed: the same bytes by construction), the output
/// poisoned first so that an element the vendor does not write shows, then timed, then
/// checked: against the template's CPU reference, or (the copy) against its source.
void run_reference(const Entry& e, const ProblemInstance& instance, const KernelProblem& problem,
                   std::vector<HostArgument>& host, const std::vector<HostArgument>& expected,
                   const Timing& timing, Result& r) {
  const Roles roles = roles_of(e, host);
  std::vector<HostArgument*> in;
  for (const auto& name : roles.inputs) in.push_back(&argument(host, name));
  HostArgument& out = argument(host, roles.output);
  for (auto* a : in) require_float(*a, e);
  require_float(out, e);

  std::vector<std::int64_t> dims;
  switch (e.reference) {
    case Reference::CubReduceSum:
      require_count(out, 1, e);
      break;
    case Reference::CubExclusiveSum:
      require_count(out, in[0]->count, e);
      break;
    case Reference::CublasSgemm: {
      for (const auto& d : e.gemm_dims) dims.push_back(variable(instance, d, e));
      require_count(*in[0], dims[0] * dims[2], e);
      require_count(*in[1], dims[2] * dims[1], e);
      require_count(out, dims[0] * dims[1], e);
      break;
    }
    case Reference::CopyD2D:
      break;
  }

  // Work: the bytes the problem must move (each input read once, the output written
  // once: reduction 4n, scan 8n, transpose 8*rows*cols, vector_add 12n bytes
  // for n float32), or 2mnk FLOPs for the GEMM.
  if (e.reference == Reference::CublasSgemm) {
    r.flops = true;
    r.work = 2.0 * static_cast<double>(dims[0]) * static_cast<double>(dims[1]) *
             static_cast<double>(dims[2]);
  } else {
    // Every ReadOnly input (vector_add's b too, which the copy does not read) + the output.
    r.work = static_cast<double>(out.bytes.size());
    for (const auto& a : host)
      if (a.spec->is_vector && a.spec->access == AccessType::ReadOnly && !a.spec->output)
        r.work += static_cast<double>(a.bytes.size());
  }

  std::vector<cuda::DeviceBuffer> in_dev;
  for (auto* a : in) {
    in_dev.emplace_back(a->bytes.size());
    in_dev.back().upload(a->bytes.data(), a->bytes.size());
  }
  const std::size_t copy_bytes = std::min(in[0]->bytes.size(), out.bytes.size());
  HostArgument poisoned = out;
  poison(poisoned);
  cuda::DeviceBuffer out_dev(out.bytes.size());
  out_dev.upload(poisoned.bytes.data(), poisoned.bytes.size());

  switch (e.reference) {
    case Reference::CubReduceSum:
      r.reference_samples_ms = time_cub_reduce_sum(in_dev[0].get(), out_dev.get(), in[0]->count, timing);
      break;
    case Reference::CubExclusiveSum:
      r.reference_samples_ms = time_cub_exclusive_sum(in_dev[0].get(), out_dev.get(), in[0]->count, timing);
      break;
    case Reference::CublasSgemm:
      r.reference_samples_ms = time_cublas_sgemm_row_major(
          in_dev[0].get(), in_dev[1].get(), out_dev.get(), dims[0], dims[1], dims[2], timing);
      break;
    case Reference::CopyD2D:
      r.reference_samples_ms = time_memcpy_d2d(out_dev.get(), in_dev[0].get(), copy_bytes, timing);
      r.copy_bytes = 2.0 * static_cast<double>(copy_bytes);
      break;
  }
  r.reference_ms = median(r.reference_samples_ms);

  HostArgument got = out;
  out_dev.download(got.bytes.data(), got.bytes.size());
  if (e.reference == Reference::CopyD2D) {
    r.reference_check = std::memcmp(got.bytes.data(), in[0]->bytes.data(), copy_bytes) == 0
                            ? "ok"
                            : "the copy's destination differs from its source";
  } else {
    const HostArgument* exp = nullptr;
    for (const auto& x : expected)
      if (x.spec->name == out.spec->name) exp = &x;
    if (!exp) throw std::logic_error("no expected output for " + out.spec->name);
    VerifyResult v = compare(*exp, got, problem.tolerance());
    r.reference_check = v.ok ? "ok" : v.message;
  }
}

Result run_entry(const Entry& e, const Options& o, measure::Sampler& sampler, const db::Store& store,
                 const DeviceIdentity& device, std::ostream& log) {
  Result r;
  r.entry = &e;
  r.problem_key = e.problem;
  auto json_file = find_template(o, e.kernel);
  if (!json_file) {
    std::vector<std::string> dirs;
    for (const auto& d : templates::template_dirs(o.templates)) dirs.push_back(d.string());
    r.status = "no template";
    r.message = fmt::format("no {}.json under {} (use --templates DIR)", e.kernel, join(dirs, ", "));
    return r;
  }
  KernelProblem problem = KernelProblem::load(*json_file);
  ProblemInstance instance = problem.instantiate(e.problem);
  r.problem_key = instance.key();

  // 1. The winner the DB holds for this kernel, problem and GPU model.
  std::vector<db::Winner> winners;
  for (auto& w : store.winners({e.kernel, device.model_key(), r.problem_key, "time"}))
    if (w.gpu_model == device.model_key()) winners.push_back(std::move(w));
  if (winners.empty()) {
    r.status = "not tuned";
    r.message = fmt::format("no winner in {} for {} {} on {} (run: cutune tune {} --problem {} "
                            "--db {})",
                            o.db.string(), e.kernel, r.problem_key, device.model_key(), e.kernel,
                            e.problem, o.db.string());
    return r;
  }
  // Winners are kept per kernel source (kernel rows are keyed by name and source hash), so
  // after an edited template there is one per version, and the store does not say which
  // is the current source's. Take the newest one that is a valid configuration of the
  // template as it is now; a winner of an older source may still run, so say so.
  std::sort(winners.begin(), winners.end(),
            [](const db::Winner& a, const db::Winner& b) { return a.updated_at > b.updated_at; });
  const Space& space = problem.space();
  const db::Winner* chosen = nullptr;
  Config config;
  std::string rejected;
  for (const auto& w : winners) {
    try {
      Config c = space.parse_key(w.config.key());
      if (std::string why = space.violated_restriction(c); !why.empty()) {
        rejected += fmt::format(" {} violates \"{}\";", w.config.key(), why);
        continue;
      }
      chosen = &w;
      config = c;
      break;
    } catch (const InputError& ex) {
      rejected += fmt::format(" {}: {};", w.config.key(), ex.what());
    }
  }
  if (!chosen) {
    r.status = "stale winner";
    r.message = fmt::format("no stored winner is a valid configuration of the template as it is "
                            "now (edited since it was tuned?):{} re-tune",
                            rejected);
    return r;
  }
  if (winners.size() > 1)
    r.message = fmt::format("{} winners stored for this kernel name (the template was edited "
                            "between tunings?); using {} of {}",
                            winners.size(), chosen->config.key(), chosen->updated_at);
  r.config_key = chosen->config.key();
  r.config = chosen->config.to_json();
  r.db_ms = chosen->median_ms;
  log << fmt::format("== {} {}: winner {} ({:.4f} ms when tuned) vs {}\n", e.kernel, r.problem_key,
                     r.config_key, r.db_ms, reference_name(e.reference))
      << std::flush;

  // 2. Compiled exactly as the tuner compiles it.
  jit::CompileResult compiled = jit::compile(runner::compile_request(problem, config, device.arch()));
  if (!compiled.ok) {
    r.status = "compile failed";
    r.message = compiled.error;
    return r;
  }

  // The inputs and the CPU reference's outputs, for checking the vendor's result. (The
  // GpuStage computes the same again for the tuned kernel; see README, "Caveats".)
  const auto ref = templates::find_reference(problem.reference());
  if (!ref) {
    r.status = "error";
    r.message = fmt::format("{} has no CPU reference ('{}'): the vendor result cannot be checked",
                            json_file->string(), problem.reference());
    return r;
  }
  std::vector<HostArgument> host = make_host_arguments(problem, instance, o.data_seed);
  std::vector<HostArgument> expected = host;
  auto t0 = std::chrono::steady_clock::now();
  ref(instance, expected);
  r.cpu_reference_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log << fmt::format("   CPU reference: {:.1f} s\n", r.cpu_reference_s) << std::flush;

  // 3. The tuned kernel through the tuner's own GPU stage: seeded inputs, every output
  //    element verified against the CPU reference, then timed.
  // Exactly o.samples samples: the thorough criterion with its minimum at the cap and no
  // time cap to speak of; timed by the same method as the vendor side (timing_method()).
  worker::MeasureOptions settings;
  settings.sampler.warmup_launches = o.warmup;
  settings.thorough.min_samples = settings.thorough.max_samples = static_cast<std::size_t>(o.samples);
  settings.thorough.time_cap_s = 3600;
  {
    worker::GpuStage gpu(problem, instance, o.device, settings, o.data_seed);
    GpuEvaluation ev = gpu.evaluate(config, compiled.cubin, compiled.lowered_names, std::nullopt, /*thorough=*/true);
    if (ev.context_lost) throw ContextLost(fmt::format("{}: {}", e.kernel, ev.error));
    if (ev.status != Status::Ok) {
      r.status = fmt::format("tuned {}", status_name(ev.status));
      r.message = ev.error;
      r.tuned_check = ev.status == Status::Correctness ? ev.error : "";
      return r;
    }
    r.tuned_check = "ok";
    r.tuned_samples_ms = ev.samples_ms();
    r.tuned_ms = ev.median_ms();
    r.template_metrics = problem.evaluate_metrics(instance, r.tuned_ms * 1e-3);
  }  // its buffers are freed before the vendor's are allocated
  log << fmt::format("   tuned:     {:.4f} ms (median of {})\n", r.tuned_ms, r.tuned_samples_ms.size())
      << std::flush;

  // 4. The vendor reference on the same data, timed the same way.
  try {
    run_reference(e, instance, problem, host, expected, Timing{o.warmup, o.samples, [&](const std::function<void()>& call) { return sampler.sample_call(call).ms; }}, r);
  } catch (const VendorError& ex) {
    if (ex.sticky()) throw ContextLost(fmt::format("{} ({}): {}", e.kernel, reference_name(e.reference), ex.what()));
    r.status = "reference failed";
    r.message = ex.what();
    return r;
  } catch (const cuda::DriverError& ex) {
    if (ex.sticky()) throw ContextLost(fmt::format("{} ({}): {}", e.kernel, reference_name(e.reference), ex.what()));
    r.status = "reference failed";
    r.message = ex.what();
    return r;
  }
  log << fmt::format("   reference: {:.4f} ms (median of {}), check: {}\n", r.reference_ms,
                     r.reference_samples_ms.size(), r.reference_check)
      << std::flush;

  // ratio > 1: cutune is faster. Same work on both sides: the time ratio. Against the copy:
  // achieved bandwidths, each counting the bytes it moves.
  const double scale = 1e9;  // GFLOP/s or GB/s
  r.tuned_rate = r.work / (r.tuned_ms * 1e-3) / scale;
  if (e.reference == Reference::CopyD2D) {
    r.reference_rate = r.copy_bytes / (r.reference_ms * 1e-3) / scale;
    r.ratio = r.tuned_rate / r.reference_rate;
  } else {
    r.reference_rate = r.work / (r.reference_ms * 1e-3) / scale;
    r.ratio = r.reference_ms / r.tuned_ms;
  }
  if (r.reference_check != "ok") {
    r.status = "reference check failed";
    r.message = r.reference_check;
  }
  return r;
}

json result_json(const Result& r) {
  const Entry& e = *r.entry;
  json j;
  j["kernel"] = e.kernel;
  j["problem"] = r.problem_key;
  j["status"] = r.status;
  if (!r.message.empty()) j["message"] = r.message;
  j["tuned_config"] = r.config;
  j["tuned_config_key"] = r.config_key;
  auto num = [&](double v) { return r.measured() ? json(v) : json(nullptr); };
  j["tuned_ms"] = r.tuned_ms > 0 ? json(r.tuned_ms) : json(nullptr);
  j["tuned_ms_when_tuned"] = r.db_ms > 0 ? json(r.db_ms) : json(nullptr);
  j["reference"] = reference_name(e.reference);
  j["reference_ms"] = r.reference_ms > 0 ? json(r.reference_ms) : json(nullptr);
  j["ratio"] = num(r.ratio);
  j["ratio_kind"] = e.reference == Reference::CopyD2D ? "bandwidth: tuned GB/s / copy GB/s"
                                                      : "time: reference_ms / tuned_ms";
  j["target"] = e.target;
  j["meets_target"] = r.measured() ? json(r.ratio >= e.target) : json(nullptr);
  const char* unit = r.flops ? "gflops" : "gbps";
  j[fmt::format("tuned_{}", unit)] = num(r.tuned_rate);
  j[fmt::format("reference_{}", unit)] = num(r.reference_rate);
  if (r.measured()) {
    j[r.flops ? "work_flops" : "work_bytes"] = r.work;
    if (e.reference == Reference::CopyD2D) j["copy_bytes_read_plus_write"] = r.copy_bytes;
  }
  j["verification"] = json{{"tuned", r.tuned_check.empty() ? json(nullptr) : json(r.tuned_check)},
                           {"reference", r.reference_check.empty() ? json(nullptr) : json(r.reference_check)}};
  json metrics = json::object();
  for (const auto& [name, v] : r.template_metrics) metrics[name] = v;
  j["template_metrics"] = metrics;
  j["tuned_samples_ms"] = r.tuned_samples_ms;
  j["reference_samples_ms"] = r.reference_samples_ms;
  j["cpu_reference_s"] = r.cpu_reference_s;
  return j;
}

void print_table(const std::vector<Result>& results, std::ostream& os) {
  os << fmt::format("\n{:<11} {:<24} {:>9} {:<26} {:>9} {:>14} {:>14} {:>7} {:>6}  {}\n", "kernel",
                    "problem", "tuned ms", "reference", "ref ms", "tuned rate", "ref rate",
                    "ratio", "target", "status");
  for (const auto& r : results) {
    const Entry& e = *r.entry;
    const std::string ref = short_name(e.reference);
    const char* unit = r.flops ? "GFLOP/s" : "GB/s";
    auto ms = [](double v) { return v > 0 ? fmt::format("{:.4f}", v) : std::string("-"); };
    auto rate = [&](double v) { return r.measured() ? fmt::format("{:.0f} {}", v, unit) : std::string("-"); };
    std::string status = r.status;
    if (r.measured() && r.status == "ok") status = r.ratio >= e.target ? "ok, meets target" : "ok, BELOW target";
    os << fmt::format("{:<11} {:<24} {:>9} {:<26} {:>9} {:>14} {:>14} {:>7} {:>6}  {}\n", e.kernel,
                      r.problem_key, ms(r.tuned_ms), ref, ms(r.reference_ms), rate(r.tuned_rate),
                      rate(r.reference_rate), r.measured() ? fmt::format("{:.3f}x", r.ratio) : "-",
                      fmt::format("{:.2f}x", e.target), status);
  }
  bool any_message = false;
  for (const auto& r : results)
    if (!r.message.empty()) {
      if (!any_message) os << '\n';
      any_message = true;
      os << fmt::format("{}: {}\n", r.entry->kernel, r.message);
    }
  os << "\nratio > 1: cutune is faster. CUB/cuBLAS: reference_ms / tuned_ms (same work); "
        "copy: tuned GB/s / copy GB/s (the copy counts read + write).\n";
}

/// The row of an entry that produced no comparison, with why.
Result unrun(const Entry* e, const std::string& status, const std::string& message) {
  Result r;
  r.entry = e;
  r.problem_key = e->problem;
  r.status = status;
  r.message = message;
  return r;
}

int run(const Options& o) {
  std::string why;
  const int count = cuda::device_count(&why);
  if (count == 0) {
    std::cerr << "cutune-bench-vendor: this needs a GPU and there is none: " << why << '\n';
    return kNoGpu;
  }
  if (o.device < 0 || o.device >= count)
    throw InputError(fmt::format("--device {}: there are {} GPU(s) (0..{})", o.device, count, count - 1));
  if (o.samples < 1 || o.warmup < 0) throw InputError("--samples must be >= 1 and --warmup >= 0");

  std::vector<const Entry*> selected;
  for (const auto& e : comparison_table())
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), e.kernel) != o.only.end())
      selected.push_back(&e);
  for (const auto& name : o.only)
    if (std::none_of(comparison_table().begin(), comparison_table().end(),
                     [&](const Entry& e) { return e.kernel == name; })) {
      std::vector<std::string> names;
      for (const auto& e : comparison_table()) names.push_back(e.kernel);
      throw InputError(fmt::format("--only {}: not in the comparison table ({})", name, join(names, ", ")));
    }

  if (!fs::exists(o.db)) throw InputError(fmt::format("--db {}: no such file", o.db.string()));
  db::Store store = db::Store::open(o.db, /*create=*/false);

  // One retain of the primary context for the whole run: each GpuStage retains and
  // releases it too, and without this one its release would destroy the context (and the
  // runtime's, CUB's and cuBLAS's state in it) between the tuned and the vendor side.
  cuda::Context context(o.device);
  DeviceIdentity device = cuda::identify(o.device);
  device.nvrtc_version = jit::nvrtc_version();
  vendor_init(o.device);
  const VendorVersions versions = vendor_versions();
  // The vendor side's sampler: L2 flushed before each sample, like the tuned side's
  // GpuStage (whose problems here are all larger than the L2, so it flushes too).
  measure::Sampler sampler(static_cast<std::size_t>(device.l2_bytes), device.sm_count, device.sm_clock_khz / 1000.0,
                           measure::SamplerSettings{});

  fs::path out = o.out.empty() ? fs::path("results") / device.slug() / "vendor_comparison.json" : o.out;
  std::cout << fmt::format("cutune-bench-vendor on {} [{}], GPU {}; DB {}; {} warm-up + {} samples "
                           "per side (median); CUDA runtime {}, cuBLAS {}, CUB {}, NVRTC {}\n",
                           device.name, device.arch(), o.device, o.db.string(), o.warmup, o.samples,
                           versions.cuda_runtime, versions.cublas, versions.cub,
                           jit::nvrtc_version_string())
            << std::flush;

  std::vector<Result> results;
  std::string aborted;
  for (const Entry* e : selected) {
    if (!aborted.empty()) {
      results.push_back(unrun(e, "skipped", "not run: the GPU context was lost earlier in this run"));
      continue;
    }
    try {
      results.push_back(run_entry(*e, o, sampler, store, device, std::cout));
    } catch (const ContextLost& ex) {
      aborted = ex.what();
      results.push_back(unrun(e, "context lost", ex.what()));
    } catch (const std::exception& ex) {
      // Bad data in one entry (a template not written yet, a renamed variable...) is
      // reported in its row; the other entries still run.
      results.push_back(unrun(e, "error", ex.what()));
    }
    if (!results.back().message.empty() && results.back().status != "ok")
      std::cout << fmt::format("   {}: {}\n", results.back().status, results.back().message) << std::flush;
  }

  json doc;
  doc["device"] = cutune::to_json(device);
  doc["date"] = db::utc_now_iso();
  doc["command"] = o.command;
  doc["db"] = o.db.string();
  doc["timing"] = json{{"warmup", o.warmup},
                       {"samples", o.samples},
                       {"statistic", "median"},
                       {"method", "both sides alike (measure::Sampler): warm-up, then per sample: "
                                  "L2 flush, blocking kernel, event, one launch sequence or call, "
                                  "event, release, synchronize"}};
  doc["data_seed"] = o.data_seed;
  doc["versions"] = json{{"cuda_runtime", versions.cuda_runtime},
                         {"cublas", versions.cublas},
                         {"cub", versions.cub},
                         {"nvrtc", jit::nvrtc_version_string()}};
  if (!aborted.empty()) doc["aborted"] = aborted;
  doc["entries"] = json::array();
  for (const auto& r : results) doc["entries"].push_back(result_json(r));
  std::error_code ec;
  if (out.has_parent_path()) fs::create_directories(out.parent_path(), ec);
  {
    std::ofstream f(out);
    f << doc.dump(2) << '\n';
    if (!f) throw std::runtime_error(fmt::format("could not write {}", out.string()));
  }

  print_table(results, std::cout);
  std::cout << "wrote " << out.string() << '\n';
  const bool all_ok = std::all_of(results.begin(), results.end(),
                                  [](const Result& r) { return r.status == "ok"; });
  return all_ok ? kOk : kFailure;
}

}  // namespace
}  // namespace cutune::bench

int main(int argc, char** argv) {
  using namespace cutune::bench;
  CLI::App app{"cutune-bench-vendor: the tuned winners (from a cutune DB) against CUB, cuBLAS "
               "(fp32, pedantic) and a device-to-device copy, on the same data, timed the same "
               "way. Exit: 0 all measured and verified, 1 an entry missing or failed, 2 bad "
               "input, 3 no GPU."};
  Options o;
  app.add_option("--db", o.db, "the cutune DB holding the winners (read-only)")->required();
  app.add_option("--out", o.out, "JSON output (default results/<gpu-slug>/vendor_comparison.json)");
  app.add_option("--templates", o.templates,
                 "template folder (default: the cutune tool's search: $CUTUNE_TEMPLATE_DIR, beside the executable, the source tree)");
  app.add_option("--only", o.only, "run only these kernels of the table")->delimiter(',');
  app.add_option("--device", o.device, "GPU ordinal")->capture_default_str();
  app.add_option("--warmup", o.warmup, "warm-up launches/calls per side")->capture_default_str();
  app.add_option("--samples", o.samples, "timed launches/calls per side (median)")->capture_default_str();
  app.add_option("--data-seed", o.data_seed, "input data seed (as cutune tune's)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kBadInput;
  }
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  try {
    return run(o);
  } catch (const cutune::InputError& e) {
    std::cerr << "cutune-bench-vendor: " << e.what() << '\n';
    return kBadInput;
  } catch (const cutune::cuda::NoDriver& e) {
    std::cerr << "cutune-bench-vendor: this needs a GPU: " << e.what() << '\n';
    return kNoGpu;
  } catch (const std::exception& e) {
    std::cerr << "cutune-bench-vendor: error: " << e.what() << '\n';
    return kFailure;
  }
}
