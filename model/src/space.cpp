#include "cutune/model/space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <unordered_map>

#include "cutune/model/errors.hpp"
#include "restriction_program.hpp"

namespace cutune {
namespace {

// Names visible to a restriction while enumerating: the parameters assigned so far, then
// the constants. A parameter not yet assigned is never read, because a restriction is only
// checked once all the parameters it names are set.
class PartialScope final : public Scope {
 public:
  PartialScope(const std::vector<Parameter>& params, const std::vector<std::uint32_t>& index,
               std::size_t assigned, const std::map<std::string, Value>& constants)
      : params_(params), index_(index), assigned_(assigned), constants_(constants) {}

  const Value* lookup(std::string_view name) const override {
    for (std::size_t i = 0; i < assigned_; ++i)
      if (params_[i].name == name) return &params_[i].values[index_[i]];
    auto it = constants_.find(std::string(name));
    return it == constants_.end() ? nullptr : &it->second;
  }

 private:
  const std::vector<Parameter>& params_;
  const std::vector<std::uint32_t>& index_;
  std::size_t assigned_;
  const std::map<std::string, Value>& constants_;
};

// Equal values (Python's ==: 1 == 1.0 == True) hash alike: numbers by their double (an int
// equal to a float converts to exactly that float), lists by their size only.
std::size_t equality_hash(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Bool:
    case Value::Kind::Int:
    case Value::Kind::Float: {
      const double d = v.to_double();
      return d == 0 ? 0 : std::hash<double>{}(d);  // 0.0 == -0.0
    }
    case Value::Kind::String:
      return std::hash<std::string>{}(v.as_string());
    case Value::Kind::List:
      return v.as_list().size() * 31 + 7;
    case Value::Kind::None:
      break;
  }
  return 1;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Space::Space(std::vector<Parameter> parameters, const std::vector<std::string>& restrictions,
             std::map<std::string, Value> constants)
    : parameters_(std::move(parameters)), constants_(std::move(constants)) {
  std::set<std::string> names;
  for (const auto& p : parameters_) {
    if (p.name.empty()) throw InputError("a tuning parameter has an empty name");
    if (!names.insert(p.name).second)
      throw InputError(fmt::format("tuning parameter '{}' is declared twice", p.name));
    if (p.values.empty())
      throw InputError(fmt::format("tuning parameter '{}' has no values", p.name));
    // Hashed, not pairwise: a pairwise check of list(range(100000)) took minutes.
    std::unordered_multimap<std::size_t, std::size_t> seen;
    seen.reserve(p.values.size());
    for (std::size_t i = 0; i < p.values.size(); ++i) {
      const std::size_t h = equality_hash(p.values[i]);
      const auto [first, last] = seen.equal_range(h);
      for (auto it = first; it != last; ++it)
        if (p.values[i] == p.values[it->second])
          throw InputError(fmt::format("tuning parameter '{}' lists the value {} twice", p.name,
                                       p.values[i].repr()));
      seen.emplace(h, i);
    }
    if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end())
      throw InputError(fmt::format("tuning parameter '{}': default {} is not one of its values",
                                   p.name, p.default_value.repr()));
  }

  checks_at_.resize(parameters_.size());
  for (const auto& text : restrictions) {
    Expression expr = [&] {
      try {
        return Expression::parse(text);
      } catch (const ExpressionError& e) {
        throw InputError(fmt::format("restriction \"{}\": {}", text, e.what()));
      }
    }();
    Restriction r{expr, {}, 0};
    for (const auto& name : expr.names()) {
      if (has_parameter(name)) {
        r.parameters.push_back(index_of(name));
      } else if (!constants_.count(name)) {
        throw InputError(
            fmt::format("restriction \"{}\" names '{}', which is not a tuning parameter", text,
                        name));
      }
    }
    std::sort(r.parameters.begin(), r.parameters.end());
    // A restriction over constants only is checked at the first parameter.
    r.check_at = r.parameters.empty() ? 0 : r.parameters.back();
    if (parameters_.empty())
      throw InputError(fmt::format("restriction \"{}\" given but there are no parameters", text));
    checks_at_[r.check_at].push_back(restrictions_.size());
    restrictions_.push_back(std::move(r));
  }
  compile_programs();
}

void Space::compile_programs() {
  auto numbers = std::make_shared<std::vector<std::optional<std::vector<detail::Num>>>>();
  for (const auto& p : parameters_) {
    std::vector<detail::Num> nums;
    for (const Value& v : p.values) {
      if (v.is_bool()) nums.push_back({Value::Kind::Bool, v.as_bool() ? 1 : 0, 0});
      else if (v.is_int()) nums.push_back({Value::Kind::Int, v.as_int(), 0});
      else if (v.is_float()) nums.push_back({Value::Kind::Float, 0, v.as_float()});
      else break;
    }
    if (nums.size() == p.values.size()) numbers->emplace_back(std::move(nums));
    else numbers->emplace_back(std::nullopt);
  }
  const detail::RestrictionProgram::ParameterNumbers shared = numbers;
  const auto index = [this](std::string_view name) {
    for (std::size_t i = 0; i < parameters_.size(); ++i)
      if (parameters_[i].name == name) return static_cast<int>(i);
    return -1;
  };
  const std::vector<std::uint32_t> none;
  const PartialScope constants(parameters_, none, 0, constants_);
  const auto compile = [&](const Restriction& r) -> std::shared_ptr<const detail::RestrictionProgram> {
    auto p = detail::RestrictionProgram::compile(r.expression, index, shared, constants);
    if (!p) return nullptr;
    return std::make_shared<const detail::RestrictionProgram>(std::move(*p));
  };
  programs_.clear();
  for (const auto& r : restrictions_) programs_.push_back(compile(r));
  block_program_ = block_limit_ ? compile(*block_limit_) : nullptr;
  plan_.assign(parameters_.size(), {});
  for (std::size_t d = 0; d < parameters_.size(); ++d) {
    for (std::size_t r : checks_at_[d]) plan_[d].push_back({programs_[r].get(), r});
    if (block_limit_ && block_limit_->check_at == d) plan_[d].push_back({block_program_.get(), kBlockLimit});
  }
}

bool Space::holds(const Restriction& r, const detail::RestrictionProgram* program,
                  const std::vector<std::uint32_t>& partial, std::size_t assigned, const char* kind,
                  const std::string& text) const {
  if (program != nullptr) {
    const auto result = program->evaluate(partial.data());
    if (result != detail::RestrictionProgram::Result::Unsure) return result == detail::RestrictionProgram::Result::True;
  }
  PartialScope scope(parameters_, partial, assigned, constants_);
  try {
    return r.expression.evaluate(scope).truthy();
  } catch (const ExpressionError& e) {
    throw InputError(fmt::format("{} \"{}\": {}", kind, text, e.what()));
  }
}

bool Space::has_parameter(std::string_view name) const {
  return std::any_of(parameters_.begin(), parameters_.end(),
                     [&](const Parameter& p) { return p.name == name; });
}

std::size_t Space::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].name == name) return i;
  throw InputError(fmt::format("unknown tuning parameter '{}'", name));
}

std::uint64_t Space::cartesian_size() const {
  std::uint64_t n = 1;
  for (const auto& p : parameters_) {
    if (n > std::numeric_limits<std::uint64_t>::max() / p.values.size())
      return std::numeric_limits<std::uint64_t>::max();
    n *= p.values.size();
  }
  return n;
}

bool Space::check(const std::vector<std::uint32_t>& partial, std::size_t depth) const {
  for (const Check& c : plan_[depth]) {
    if (c.program != nullptr) {
      const auto result = c.program->evaluate(partial.data());
      if (result == detail::RestrictionProgram::Result::True) continue;
      if (result == detail::RestrictionProgram::Result::False) return false;
    }
    const bool block = c.restriction == kBlockLimit;
    if (!holds(block ? *block_limit_ : restrictions_[c.restriction], nullptr, partial, depth + 1,
               block ? "thread-block limit" : "restriction",
               block ? block_limit_text_ : restrictions_[c.restriction].expression.text()))
      return false;
  }
  return true;
}

void Space::set_block_limit(const std::vector<Expression>& block_dimensions, std::int64_t max_threads) {
  block_limit_.reset();
  block_limit_text_.clear();
  if (block_dimensions.empty() || parameters_.empty()) {
    compile_programs();
    return;
  }
  std::string text;
  for (const auto& e : block_dimensions) {
    if (!text.empty()) text += " * ";
    const bool name = std::all_of(e.text().begin(), e.text().end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    text += name ? e.text() : "(" + e.text() + ")";
  }
  text += fmt::format(" <= {}", max_threads);
  Restriction r{Expression::parse(text), {}, 0};
  for (const auto& n : r.expression.names()) {
    if (has_parameter(n)) r.parameters.push_back(index_of(n));
    else if (!constants_.count(n))
      throw InputError(fmt::format("thread block \"{}\" names '{}', which is not a tuning parameter", text, n));
  }
  std::sort(r.parameters.begin(), r.parameters.end());
  r.check_at = r.parameters.empty() ? 0 : r.parameters.back();
  block_limit_ = std::move(r);
  block_limit_text_ = std::move(text);
  compile_programs();
}

void Space::set_default(const Config& config) {
  for (std::size_t i = 0; i < parameters_.size(); ++i) parameters_[i].default_value = value(config, i);
}

bool Space::next_valid(Config& config) const {
  if (parameters_.empty()) return false;
  const std::size_t last = parameters_.size() - 1;
  std::size_t depth = 0;
  if (config.index.empty()) {
    config.index.assign(parameters_.size(), 0);
    return walk(config, depth, true);
  }
  // Resume after `config`: find the first level whose restrictions fail (the config may
  // be invalid) and advance there; a valid config advances at the last level.
  while (depth < last && check(config.index, depth)) ++depth;
  return walk(config, depth, false);
}

bool Space::walk(Config& config, std::size_t& depth, bool descend) const {
  const std::size_t last = parameters_.size() - 1;
  // Depth-first walk: check the restrictions that become decidable at `depth`, descend on
  // success, advance the value at `depth` on failure, backtracking over exhausted levels.
  while (true) {
    if (descend) {
      if (check(config.index, depth)) {
        if (depth == last) {
          if (!membership_ || membership_(config)) return true;
          descend = false;  // not a member: advance the last level
          continue;
        }
        config.index[++depth] = 0;
        continue;
      }
    }
    descend = true;
    while (++config.index[depth] == parameters_[depth].values.size()) {
      if (depth == 0) {
        config.index.clear();
        return false;
      }
      --depth;
    }
  }
}

void Space::for_each_valid(const std::function<bool(const Config&)>& visit) const {
  if (parameters_.empty()) return;
  // One walk, resumed where it stopped: next_valid would re-check the whole prefix of
  // every valid configuration (on the CLBlast GEMM space, 116,928 configurations times
  // eight restrictions, most of the enumeration's time).
  Config config;
  config.index.assign(parameters_.size(), 0);
  std::size_t depth = 0;
  bool descend = true;
  while (walk(config, depth, descend)) {
    if (!visit(config)) return;
    descend = false;
  }
}

std::uint64_t Space::count_valid() const {
  std::uint64_t n = 0;
  for_each_valid([&](const Config&) {
    ++n;
    return true;
  });
  return n;
}

std::string Space::violated_restriction(const Config& config) const {
  if (config.index.size() != parameters_.size()) return "<configuration of the wrong size>";
  for (std::size_t d = 0; d < parameters_.size(); ++d) {
    if (config.index[d] >= parameters_[d].values.size()) return "<value index out of range>";
  }
  for (std::size_t i = 0; i < restrictions_.size(); ++i) {
    const Restriction& r = restrictions_[i];
    if (!holds(r, programs_[i].get(), config.index, parameters_.size(),
               "restriction", r.expression.text()))
      return r.expression.text();
  }
  if (block_limit_ && !holds(*block_limit_, block_program_.get(), config.index, parameters_.size(),
                             "thread-block limit", block_limit_text_))
    return block_limit_text_;
  if (membership_ && !membership_(config)) return std::string(kNotAMember);
  return "";
}

Config Space::default_config() const {
  Config c;
  for (const auto& p : parameters_) {
    auto it = std::find(p.values.begin(), p.values.end(), p.default_value);
    c.index.push_back(static_cast<std::uint32_t>(it - p.values.begin()));
  }
  return c;
}

const Value& Space::value(const Config& config, std::size_t parameter) const {
  return parameters_.at(parameter).values.at(config.index.at(parameter));
}

std::vector<std::pair<std::string, Value>> Space::assignments(const Config& config) const {
  std::vector<std::pair<std::string, Value>> out;
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    out.emplace_back(parameters_[i].name, value(config, i));
  return out;
}

std::string Space::key(const Config& config) const {
  std::string k;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (i) k += ',';
    k += value(config, i).str();
  }
  return k;
}

std::uint32_t Space::find_value(std::size_t parameter, std::string_view text) const {
  const auto& p = parameters_.at(parameter);
  text = trim(text);
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    const Value& v = p.values[i];
    if (v.str() == text) return static_cast<std::uint32_t>(i);
    // 4 matches 4.0, 1 matches True etc.: compare numerically when the text is a number.
    if (v.is_number()) {
      double d = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc() && ptr == text.data() + text.size() && !v.is_bool() &&
          v.to_double() == d)
        return static_cast<std::uint32_t>(i);
    }
  }
  std::string list;
  for (const auto& v : p.values) list += (list.empty() ? "" : ", ") + v.str();
  throw InputError(fmt::format("value '{}' is not declared for parameter '{}' (declared: {})",
                               text, p.name, list));
}

Config Space::parse_key(std::string_view key) const {
  Config c;
  std::size_t start = 0;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    std::size_t end = key.find(',', start);
    if (end == std::string_view::npos) end = key.size();
    if (start > key.size())
      throw InputError(fmt::format("configuration key '{}' has {} values, expected {}", key, i,
                                   parameters_.size()));
    c.index.push_back(find_value(i, key.substr(start, end - start)));
    start = end + 1;
  }
  if (start <= key.size())
    throw InputError(fmt::format("configuration key '{}' has more than {} values", key,
                                 parameters_.size()));
  return c;
}

Config Space::parse_assignments(std::string_view text) const {
  Config c = default_config();
  std::set<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = trim(text.substr(start, end - start));
    start = end + 1;
    if (item.empty()) {
      if (end == text.size()) break;
      throw InputError(fmt::format("configuration '{}': empty item", text));
    }
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw InputError(fmt::format("configuration item '{}' is not name=value", item));
    std::string name(trim(item.substr(0, eq)));
    std::size_t p = index_of(name);
    if (!seen.insert(name).second)
      throw InputError(fmt::format("configuration names '{}' twice", name));
    c.index[p] = find_value(p, item.substr(eq + 1));
  }
  return c;
}

}  // namespace cutune
