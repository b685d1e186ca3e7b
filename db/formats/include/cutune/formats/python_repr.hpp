#pragma once
// Python's text forms of values, as Kernel Tuner produces them: a cache key is
// ",".join(str(v) for v in config), so cutune must print values exactly as Python's str()
// does (True/False, float repr) or Kernel Tuner looks up a key that is not in the file.
#include <nlohmann/json.hpp>
#include <string>

namespace cutune::db {

/// repr(x) / str(x) of a Python float: the shortest digits that round-trip, fixed notation
/// when the decimal exponent e of d.ddd×10^e is in [-4, 16), else d.ddde±XX with at least
/// two exponent digits; fixed notation always has a fractional part. Examples: 1.0 "1.0",
/// 2.45 "2.45", 1e-05 "1e-05", 1e16 "1e+16", -0.0 "-0.0", inf "inf", nan "nan".
std::string python_float_repr(double x);

/// str(v) of the Python value json.loads would make of v: true "True", false "False",
/// null "None", ints plain, floats python_float_repr, strings as they are; lists and dicts as
/// Python prints them (elements as repr: "[1, 'a', True]", "{'a': 1.0}").
std::string python_str(const nlohmann::ordered_json& v);

/// repr(v): as python_str(v), except that a string is quoted as Python quotes it ('abc', "it's").
/// Non-ASCII characters are copied as UTF-8 (Python prints printable ones the same way).
std::string python_repr(const nlohmann::ordered_json& v);

}  // namespace cutune::db
