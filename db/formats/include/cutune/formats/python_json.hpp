#pragma once
// JSON as Python's json module reads and writes it. Kernel Tuner's files come from
// json.dumps, which writes NaN, Infinity and -Infinity (nlohmann::json rejects them), and
// Kernel Tuner looks configurations up by text, so what cutune writes must be what
// json.dumps would write, byte for byte.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cutune::db {

/// Parses `text` as Python's json.loads does: standard JSON plus NaN, Infinity and
/// -Infinity; raw control characters inside strings are refused (strict mode); objects keep
/// their members in file order and a repeated key keeps its first position with its last
/// value (a Python dict). Integers beyond 64 bits become doubles. A leading UTF-8 BOM is
/// skipped. Throws InputError "NAME: line L, column C: malformed JSON: ..." (one line).
nlohmann::ordered_json parse_python_json(std::string_view text, std::string_view name_for_errors);

/// json.dumps(v): separators ", " and ": ", ensure_ascii (non-ASCII as \uXXXX, lowercase hex,
/// surrogate pairs above the BMP), floats as repr, NaN / Infinity / -Infinity.
std::string dump_python_json(const nlohmann::ordered_json& v);

/// json.dumps(v, indent=indent): one member per line, each line indented by `indent`
/// repeated to its depth, separators "," and ": ", empty containers as [] and {}.
std::string dump_python_json_indented(const nlohmann::ordered_json& v, std::string_view indent);

/// Appends json.dumps(s) of one string (quoted, escaped) to `out`.
void append_python_json_string(std::string& out, std::string_view s);

}  // namespace cutune::db
