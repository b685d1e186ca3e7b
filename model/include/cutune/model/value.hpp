#pragma once
// A dynamically typed value with Python's semantics: what tuning parameters, restriction
// expressions and T1 "Values" strings produce. Kernel Tuner writes all of these in Python,
// so cutune keeps Python's types (bool, int, float, str, list) and their printing rules.
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cutune {

class Value;
using ValueList = std::vector<Value>;

class Value {
 public:
  enum class Kind { None, Bool, Int, Float, String, List };

  Value() = default;  // None
  Value(bool b) : v_(b) {}
  Value(int i) : v_(static_cast<std::int64_t>(i)) {}
  Value(std::int64_t i) : v_(i) {}
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(ValueList l) : v_(std::make_shared<ValueList>(std::move(l))) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }

  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const ValueList& as_list() const { return *std::get<std::shared_ptr<ValueList>>(v_); }

  /// Numeric value as double (bool and int promote, like Python); throws otherwise.
  double to_double() const;
  /// Integer value (bool promotes; a float with no fraction is accepted); throws otherwise.
  std::int64_t to_int() const;
  /// Python truthiness.
  bool truthy() const;

  /// Python's str(): 128, 2.45, 1e-05, True, None, alg_2, [1, 2].
  std::string str() const;
  /// Python's repr(): strings quoted ('alg_2'), otherwise as str().
  std::string repr() const;
  /// Python's type name, for error messages: int, float, bool, str, list, NoneType.
  std::string type_name() const;

  /// Python's == (1 == 1.0 == True); lists compare element-wise.
  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string,
               std::shared_ptr<ValueList>>
      v_;
};

/// Python's repr of a float: the shortest string that round-trips ("0.1", "1e-05", "inf").
std::string python_float_repr(double d);
/// Python's repr of a str ('alg_2'; double quotes only when that avoids escaping a ').
std::string python_string_repr(const std::string& s);
/// Appends the UTF-8 encoding of code point `cp` (lone surrogates get the 3-byte form).
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace cutune
