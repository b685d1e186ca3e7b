// cutune.Configurations: the space and per-configuration launch and defines as the Python
// package computed them (the user's restrictions, problem_size, grid divisors and defines are
// Python, called as Kernel Tuner calls them; their values reach the engine as data). Rows are
// binary (a million configurations of ten parameters are 40 MB of uint32, read in
// milliseconds; the same as JSON took seconds to parse).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "cutune/model/errors.hpp"
#include "t1_sections.hpp"

namespace cutune {

std::optional<std::size_t> ConfigurationTable::row(const Config& config) const {
  auto it = std::lower_bound(configs.begin(), configs.end(), config);
  if (it == configs.end() || *it != config) return std::nullopt;
  return static_cast<std::size_t>(it - configs.begin());
}

namespace detail {

namespace {

std::vector<std::uint32_t> read_words(const Loader& L, const json& j, const std::string& field,
                                      std::size_t expected) {
  const std::filesystem::path file = L.file.parent_path() / L.string_of(j, field);
  std::ifstream in(file, std::ios::binary);
  if (!in) L.fail(field, fmt::format("{}: cannot be read", file.string()));
  std::vector<std::uint32_t> words(expected);
  in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(expected * sizeof(std::uint32_t)));
  if (static_cast<std::size_t>(in.gcount()) != expected * sizeof(std::uint32_t) || in.peek() != EOF)
    L.fail(field, fmt::format("{}: expected {} bytes (uint32 values)", file.string(), expected * sizeof(std::uint32_t)));
  return words;
}

std::vector<std::vector<std::string>> read_define_rows(const Loader& L, const json& t, std::size_t count,
                                                       std::size_t names) {
  const auto& rows = L.list_of(t["Defines"], "cutune.Configurations.Defines");
  if (rows.size() != count)
    L.fail("cutune.Configurations.Defines", fmt::format("has {} rows, Count is {}", rows.size(), count));
  std::vector<std::vector<std::string>> out(count);
  for (std::size_t r = 0; r < count; ++r) {
    const std::string field = fmt::format("cutune.Configurations.Defines[{}]", r);
    const auto& row = L.list_of(rows[r], field);
    if (row.size() != names) L.fail(field, fmt::format("has {} values for {} DefineNames", row.size(), names));
    for (const auto& v : row) out[r].push_back(L.string_of(v, field));
  }
  return out;
}

// VariantArguments (names) and Variants (a file of uint32, one row per configuration, one
// column per name): which variant of each Tunable argument a configuration passes. Rows are
// put in the table's sorted order; the indices are checked against the arguments later
// (bind_variants), once they are read.
void read_variant_columns(const Loader& L, const json& t, const std::vector<std::size_t>& order,
                          ConfigurationTable& table) {
  const json& names = L.require(t, "VariantArguments", "cutune.Configurations");
  for (const auto& name : L.list_of(names, "cutune.Configurations.VariantArguments"))
    table.variant_names.push_back(L.string_of(name, "cutune.Configurations.VariantArguments"));
  const std::size_t n = order.size(), k = table.variant_names.size();
  const auto words = read_words(L, L.require(t, "Variants", "cutune.Configurations"), "cutune.Configurations.Variants",
                                n * k);
  table.variants.assign(n, std::vector<std::uint32_t>(k));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < k; ++c) table.variants[i][c] = words[order[i] * k + c];
}

}  // namespace

std::vector<std::size_t> bind_variants(const Loader& L, const ConfigurationTable* table,
                                       const std::vector<ArgumentSpec>& arguments) {
  std::vector<std::size_t> column(arguments.size(), kNoVariants);
  const std::vector<std::string> none;
  const auto& names = table ? table->variant_names : none;
  for (std::size_t c = 0; c < names.size(); ++c) {
    const auto it = std::find_if(arguments.begin(), arguments.end(), [&](const ArgumentSpec& a) { return a.name == names[c]; });
    const std::string field = fmt::format("cutune.Configurations.VariantArguments[{}]", c);
    if (it == arguments.end()) L.fail(field, fmt::format("no argument named '{}'", names[c]));
    if (it->variants.empty()) L.fail(field, fmt::format("'{}' has no Variants", names[c]));
    const auto a = static_cast<std::size_t>(it - arguments.begin());
    if (column[a] != kNoVariants) L.fail(field, fmt::format("'{}' is named twice", names[c]));
    column[a] = c;
    for (std::size_t r = 0; r < table->variants.size(); ++r)
      if (table->variants[r][c] >= it->variants.size())
        L.fail("cutune.Configurations.Variants",
               fmt::format("the configuration of value indices [{}]: variant {} of '{}' is out of range ({} variants)",
                           fmt::join(table->configs[r].index, ","), table->variants[r][c], names[c],
                           it->variants.size()));
  }
  for (std::size_t a = 0; a < arguments.size(); ++a)
    if (!arguments[a].variants.empty() && column[a] == kNoVariants)
      L.fail(fmt::format("KernelSpecification.Arguments[{}].Variants", a),
             fmt::format("'{}' has Variants but cutune.Configurations.VariantArguments has no column for it (which "
                         "variant each configuration passes)", arguments[a].name));
  return column;
}

std::shared_ptr<const ConfigurationTable> read_configuration_table(const Loader& L, const json& cut,
                                                                   const Space& space) {
  if (!cut.is_object() || !cut.contains("Configurations")) return nullptr;
  const json& t = cut["Configurations"];
  if (!t.is_object()) L.fail("cutune.Configurations", "must be an object");
  const std::int64_t count = L.int_of(L.require(t, "Count", "cutune.Configurations"), "cutune.Configurations.Count");
  if (count < 0) L.fail("cutune.Configurations.Count", "is negative");
  const auto n = static_cast<std::size_t>(count);
  const auto& params = space.parameters();
  const std::size_t width = params.size();
  const auto words = read_words(L, L.require(t, "Indices", "cutune.Configurations"), "cutune.Configurations.Indices",
                                n * width);
  std::vector<Config> rows(n);
  for (std::size_t r = 0; r < n; ++r) {
    rows[r].index.assign(words.begin() + static_cast<std::ptrdiff_t>(r * width),
                         words.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
    for (std::size_t p = 0; p < width; ++p)
      if (rows[r].index[p] >= params[p].values.size())
        L.fail("cutune.Configurations.Indices",
               fmt::format("row {}: index {} of '{}' is out of range ({} values)", r, rows[r].index[p], params[p].name,
                           params[p].values.size()));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
  auto table = std::make_shared<ConfigurationTable>();
  table->configs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && rows[order[i]] == rows[order[i - 1]])
      L.fail("cutune.Configurations.Indices", fmt::format("row {} repeats row {}", order[i], order[i - 1]));
    table->configs.push_back(rows[order[i]]);
  }
  if (t.contains("Launch")) {
    const auto launch = read_words(L, t["Launch"], "cutune.Configurations.Launch", n * 4);
    table->launch.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < 4; ++c) table->launch[i][c] = launch[order[i] * 4 + c];
  }
  if (t.contains("VariantArguments") || t.contains("Variants")) read_variant_columns(L, t, order, *table);
  if (t.contains("DefineNames")) {
    for (const auto& name : L.list_of(t["DefineNames"], "cutune.Configurations.DefineNames"))
      table->define_names.push_back(L.string_of(name, "cutune.Configurations.DefineNames"));
    auto values = read_define_rows(L, t, n, table->define_names.size());
    table->define_values.resize(n);
    for (std::size_t i = 0; i < n; ++i) table->define_values[i] = std::move(values[order[i]]);
  }
  return table;
}

}  // namespace detail

}  // namespace cutune
