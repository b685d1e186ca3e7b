#include "cutune/formats/wisdom.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

#include "cutune/model/errors.hpp"
#include "text_file.hpp"

namespace cutune::db {
namespace {

using ojson = nlohmann::ordered_json;
constexpr const char* kFormat = "cutune-wisdom";
constexpr int kVersion = 1;

/// "NVIDIA H200/sm_90" -> name, compute capability: what identifies a GPU model when the
/// measuring device's row is not known (imported winners).
DeviceIdentity identity_from_model_key(const std::string& model_key) {
  DeviceIdentity d;
  const auto slash = model_key.rfind("/sm_");
  d.name = model_key.substr(0, slash);
  if (slash != std::string::npos) {
    const std::string digits = model_key.substr(slash + 4);
    if (digits.size() >= 2) {
      d.cc_major = std::stoi(digits.substr(0, digits.size() - 1));
      d.cc_minor = digits.back() - '0';
    }
  }
  return d;
}

ojson device_json(const Winner& w, const std::optional<DeviceIdentity>& device) {
  ojson g{{"model", w.gpu_model}};
  if (!device) return g;
  g["name"] = device->name;
  g["arch"] = device->arch();
  g["sm_count"] = device->sm_count;
  g["memory_bytes"] = device->memory_bytes;
  g["driver_version"] = device->driver_version;
  g["nvrtc_version"] = device->nvrtc_version;
  return g;
}

/// Field access that names the file and the field in every error.
struct Reader {
  const std::filesystem::path& path;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", path.string(), field, what));
  }
  const ojson& require(const ojson& object, const char* key, const std::string& where) const {
    auto it = object.find(key);
    if (it == object.end()) fail(where.empty() ? key : where + "." + key, "missing");
    return *it;
  }
  std::string text(const ojson& object, const char* key, const std::string& where) const {
    const ojson& v = require(object, key, where);
    if (!v.is_string()) fail(where + "." + key, "must be a string");
    return v.get<std::string>();
  }
  double number(const ojson& object, const char* key, const std::string& where) const {
    const ojson& v = require(object, key, where);
    if (!v.is_number()) fail(where + "." + key, "must be a number");
    return v.get<double>();
  }
  template <class Int>
  Int integer(const ojson& object, const char* key, const std::string& where) const {
    const ojson& v = require(object, key, where);
    if (!v.is_number_integer()) fail(where + "." + key, "must be an integer");
    return v.get<Int>();
  }
};

}  // namespace

std::vector<WisdomEntry> wisdom_from_store(const Store& store, const WinnerFilter& filter) {
  std::vector<WisdomEntry> out;
  for (Winner& w : store.winners(filter)) {
    WisdomEntry e;
    if (w.run_id > 0)
      if (auto run = store.run(w.run_id)) e.device = store.device(run->device_id);
    w.finalists.clear();
    e.winner = std::move(w);
    out.push_back(std::move(e));
  }
  return out;
}

ojson wisdom_json(const std::vector<WisdomEntry>& entries, const std::vector<ShapeSelector>& selectors) {
  ojson winners = ojson::array();
  for (const auto& [w, device] : entries) {
    ojson provenance{{"run_id", w.run_id},         {"median_ms", w.median_ms}, {"default_ms", w.default_ms},
                     {"verdict", verdict_name(w.verdict)}, {"updated_at", w.updated_at}};
    if (!w.objective.is_time()) provenance["objective_value"] = w.objective_value;
    if (w.objective.higher_is_better) provenance["objective_higher_is_better"] = true;
    winners.push_back(ojson{{"kernel", w.kernel},
                            {"problem", w.problem_key},
                            {"objective", w.objective.name()},
                            {"gpu", device_json(w, device)},
                            {"config", w.config.to_json()},
                            {"provenance", std::move(provenance)}});
  }
  ojson doc{{"format", kFormat}, {"version", kVersion}, {"generated_at", utc_now_iso()}, {"winners", winners}};
  if (!selectors.empty()) {
    doc["selectors"] = ojson::array();
    for (const auto& s : selectors) doc["selectors"].push_back(selector_json(s));
  }
  return doc;
}

void write_wisdom(const std::filesystem::path& path, const std::vector<WisdomEntry>& entries,
                  const std::vector<ShapeSelector>& selectors) {
  // One line per winner (and per selector): compact, and still readable in a diff.
  const ojson doc = wisdom_json(entries, selectors);
  std::string text = fmt::format("{{\"format\": \"{}\", \"version\": {}, \"generated_at\": {}, \"winners\": [",
                                 kFormat, kVersion, doc["generated_at"].dump());
  for (std::size_t i = 0; i < doc["winners"].size(); ++i)
    text += (i ? ",\n  " : "\n  ") + doc["winners"][i].dump();
  text += "\n]";
  if (doc.contains("selectors")) {
    text += ", \"selectors\": [";
    for (std::size_t i = 0; i < doc["selectors"].size(); ++i)
      text += (i ? ",\n  " : "\n  ") + doc["selectors"][i].dump();
    text += "\n]";
  }
  text += "}\n";
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw InputError(fmt::format("{}: cannot write the wisdom file", path.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError(fmt::format("{}: cannot write the wisdom file ({})", path.string(), ec.message()));
  }
}

std::vector<WisdomEntry> read_wisdom(const std::filesystem::path& path) { return read_wisdom_file(path).winners; }

WisdomFile read_wisdom_file(const std::filesystem::path& path) {
  const Reader r{path};
  ojson doc;
  try {
    doc = ojson::parse(detail::read_text_file(path));
  } catch (const ojson::parse_error& e) {
    r.fail("(file)", fmt::format("not JSON ({})", e.what()));
  }
  if (!doc.is_object()) r.fail("(top level)", "must be an object");
  if (r.text(doc, "format", "") != kFormat) r.fail("format", fmt::format("must be \"{}\"", kFormat));
  if (const int v = r.integer<int>(doc, "version", ""); v != kVersion)
    r.fail("version", fmt::format("{} is not supported (this cutune reads version {})", v, kVersion));
  const ojson& winners = r.require(doc, "winners", "");
  if (!winners.is_array()) r.fail("winners", "must be a list");
  std::vector<WisdomEntry> out;
  for (std::size_t i = 0; i < winners.size(); ++i) {
    const std::string at = fmt::format("winners[{}]", i);
    const ojson& j = winners[i];
    if (!j.is_object()) r.fail(at, "must be an object");
    WisdomEntry e;
    Winner& w = e.winner;
    w.kernel = r.text(j, "kernel", at);
    w.problem_key = r.text(j, "problem", at);
    const std::string objective = j.contains("objective") ? r.text(j, "objective", at) : "time";
    if (objective.empty()) r.fail(at + ".objective", "must not be empty");
    const ojson& config = r.require(j, "config", at);
    if (!config.is_object()) r.fail(at + ".config", "must be an object");
    // Only the values: the file keeps no key (the loader checks them against the space).
    w.config = ResultConfig("", parameter_values(config));
    const ojson& gpu = r.require(j, "gpu", at);
    if (!gpu.is_object()) r.fail(at + ".gpu", "must be an object");
    w.gpu_model = r.text(gpu, "model", at + ".gpu");
    if (gpu.contains("name")) {
      DeviceIdentity d = identity_from_model_key(w.gpu_model);
      d.name = r.text(gpu, "name", at + ".gpu");
      d.sm_count = r.integer<int>(gpu, "sm_count", at + ".gpu");
      d.memory_bytes = r.integer<std::uint64_t>(gpu, "memory_bytes", at + ".gpu");
      d.driver_version = r.integer<int>(gpu, "driver_version", at + ".gpu");
      d.nvrtc_version = r.integer<int>(gpu, "nvrtc_version", at + ".gpu");
      e.device = d;
    }
    const ojson& p = r.require(j, "provenance", at);
    if (!p.is_object()) r.fail(at + ".provenance", "must be an object");
    w.run_id = r.integer<std::int64_t>(p, "run_id", at + ".provenance");
    w.median_ms = r.number(p, "median_ms", at + ".provenance");
    w.default_ms = r.number(p, "default_ms", at + ".provenance");
    const std::string verdict = r.text(p, "verdict", at + ".provenance");
    const auto parsed_verdict = parse_verdict(verdict);
    if (!parsed_verdict) r.fail(at + ".provenance.verdict", "must be screening, separated or tie");
    w.verdict = *parsed_verdict;
    w.updated_at = r.text(p, "updated_at", at + ".provenance");
    w.objective_value = p.contains("objective_value") ? r.number(p, "objective_value", at + ".provenance")
                                                      : w.median_ms;
    bool higher_is_better = false;
    if (const auto h = p.find("objective_higher_is_better"); h != p.end()) {
      if (!h->is_boolean()) r.fail(at + ".provenance.objective_higher_is_better", "must be true or false");
      higher_is_better = h->get<bool>();
    }
    w.objective = Objective::from_name(objective, higher_is_better);
    out.push_back(std::move(e));
  }
  WisdomFile file{std::move(out), {}};
  if (const auto sel = doc.find("selectors"); sel != doc.end()) {
    if (!sel->is_array()) r.fail("selectors", "must be a list");
    for (std::size_t i = 0; i < sel->size(); ++i)
      file.selectors.push_back(selector_from_json((*sel)[i], fmt::format("{}: selectors[{}]", path.string(), i)));
  }
  return file;
}

}  // namespace cutune::db
