#include "cutune/formats/python_json.hpp"

#include "cutune/model/value.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cutune/formats/python_repr.hpp"
#include "cutune/model/errors.hpp"
#include "python_json_parser.hpp"

namespace cutune::db {

using nlohmann::ordered_json;

namespace detail {

PyJsonParser::PyJsonParser(std::string_view text) : text_(text) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

void PyJsonParser::skip_ws() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
    ++pos_;
  }
}

bool PyJsonParser::at_end() {
  skip_ws();
  return pos_ >= text_.size();
}

void PyJsonParser::fail(const std::string& what) const {
  throw JsonSyntaxError(what, pos_, pos_ >= text_.size());
}

char PyJsonParser::peek() {
  if (at_end()) fail("unexpected end of the text");
  return text_[pos_];
}

bool PyJsonParser::consume(char c) {
  if (at_end() || text_[pos_] != c) return false;
  ++pos_;
  return true;
}

void PyJsonParser::expect(char c, const char* what) {
  if (at_end()) fail(fmt::format("unexpected end of the text, expected {}", what));
  if (text_[pos_] != c) fail(fmt::format("expected {}", what));
  ++pos_;
}

bool PyJsonParser::only_padding_from(std::size_t offset) const {
  for (std::size_t i = offset; i < text_.size(); ++i) {
    const char c = text_[i];
    if (c != '\0' && c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

std::string PyJsonParser::location(std::size_t offset) const {
  std::size_t line = 1, line_start = 0;
  const std::size_t end = std::min(offset, text_.size());
  for (std::size_t i = 0; i < end; ++i)
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return fmt::format("line {}, column {}", line, end - line_start + 1);
}

void PyJsonParser::expect_word(std::string_view word) {
  const std::size_t start = pos_;
  for (const char c : word) {
    if (pos_ >= text_.size()) fail("unexpected end of the text");
    if (text_[pos_] != c) {
      pos_ = start;  // report where the value starts, as Python does
      fail("invalid literal");
    }
    ++pos_;
  }
}

unsigned PyJsonParser::parse_hex4() {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    if (pos_ >= text_.size()) fail("unexpected end of the text in a \\u escape");
    const char c = text_[pos_];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      fail("invalid \\u escape");
    v = v * 16 + d;
    ++pos_;
  }
  return v;
}

namespace {


}  // namespace

std::string PyJsonParser::parse_string() {
  expect('"', "a string");
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) fail("unexpected end of the text in a string");
    const char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (static_cast<unsigned char>(c) < 0x20) fail("invalid control character in a string");
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    ++pos_;
    if (pos_ >= text_.size()) fail("unexpected end of the text in a string");
    const char e = text_[pos_++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = parse_hex4();
        // A high surrogate followed by an escaped low one is one code point (as Python).
        if (cp >= 0xD800 && cp <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
          const std::size_t save = pos_;
          pos_ += 2;
          const unsigned lo = parse_hex4();
          if (lo >= 0xDC00 && lo <= 0xDFFF)
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          else
            pos_ = save;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        --pos_;
        fail("invalid escape in a string");
    }
  }
}

ordered_json PyJsonParser::parse_number() {
  // Python's NUMBER_RE: (-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?
  const std::size_t start = pos_;
  auto digit = [&](std::size_t i) { return i < text_.size() && text_[i] >= '0' && text_[i] <= '9'; };
  if (text_[pos_] == '-') ++pos_;
  if (!digit(pos_)) fail(pos_ >= text_.size() ? "unexpected end of the text" : "invalid number");
  if (text_[pos_] == '0')
    ++pos_;
  else
    while (digit(pos_)) ++pos_;
  bool is_float = false;
  // A number cut by the end of the text ("3.", "1e", "1e-") is a truncation, not a syntax
  // error: report it at the end, so that a cache cut by a crash keeps its complete entries.
  auto cut_at_end = [&](std::size_t p) {
    if (p >= text_.size()) {
      pos_ = text_.size();
      fail("unexpected end of the text in a number");
    }
  };
  if (pos_ < text_.size() && text_[pos_] == '.') cut_at_end(pos_ + 1);
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    std::size_t p = pos_ + 1;
    if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
    cut_at_end(p);
  }
  if (pos_ < text_.size() && text_[pos_] == '.' && digit(pos_ + 1)) {
    is_float = true;
    ++pos_;
    while (digit(pos_)) ++pos_;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    std::size_t p = pos_ + 1;
    if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
    if (digit(p)) {
      is_float = true;
      pos_ = p;
      while (digit(pos_)) ++pos_;
    }
  }
  const char* first = text_.data() + start;
  const char* last = text_.data() + pos_;
  if (!is_float) {
    std::int64_t i = 0;
    if (auto r = std::from_chars(first, last, i); r.ec == std::errc() && r.ptr == last)
      return i;
    std::uint64_t u = 0;
    if (auto r = std::from_chars(first, last, u); r.ec == std::errc() && r.ptr == last)
      return u;
  }
  double d = 0.0;
  if (auto r = std::from_chars(first, last, d); r.ec == std::errc() && r.ptr == last) return d;
  // Out of range: Python's float() gives +-inf or +-0.0, as strtod does.
  const std::string copy(first, last);
  return std::strtod(copy.c_str(), nullptr);
}

ordered_json PyJsonParser::parse_array(int depth) {
  ordered_json arr = ordered_json::array();
  ++pos_;  // '['
  if (consume(']')) return arr;
  while (true) {
    arr.push_back(parse_value(depth + 1));
    if (consume(',')) continue;
    expect(']', "',' or ']' in an array");
    return arr;
  }
}

ordered_json PyJsonParser::parse_object(int depth) {
  ++pos_;  // '{'
  std::vector<std::pair<std::string, ordered_json>> members;
  std::unordered_map<std::string, std::size_t> index;  // filled once members are many
  auto add = [&](std::string key, ordered_json value) {
    constexpr std::size_t kLinear = 16;
    if (members.size() < kLinear) {
      for (auto& m : members)
        if (m.first == key) {
          m.second = std::move(value);
          return;
        }
    } else {
      if (index.empty())
        for (std::size_t i = 0; i < members.size(); ++i) index.emplace(members[i].first, i);
      if (auto it = index.find(key); it != index.end()) {
        members[it->second].second = std::move(value);
        return;
      }
      index.emplace(key, members.size());
    }
    members.emplace_back(std::move(key), std::move(value));
  };
  if (!consume('}')) {
    while (true) {
      if (peek() != '"') fail("expected a string as the name of a member");
      std::string key = parse_string();
      expect(':', "':' after the name of a member");
      add(std::move(key), parse_value(depth + 1));
      if (consume(',')) continue;
      expect('}', "',' or '}' in an object");
      break;
    }
  }
  ordered_json obj = ordered_json::object();
  auto& map = obj.get_ref<ordered_json::object_t&>();
  map.reserve(members.size());
  for (auto& [k, v] : members) map.emplace_back(std::move(k), std::move(v));
  return obj;
}

ordered_json PyJsonParser::parse_value(int depth) {
  if (depth > kMaxDepth) fail("nested too deeply");
  const char c = peek();
  switch (c) {
    case '{': return parse_object(depth);
    case '[': return parse_array(depth);
    case '"': return parse_string();
    case 't': expect_word("true"); return true;
    case 'f': expect_word("false"); return false;
    case 'n': expect_word("null"); return nullptr;
    case 'N': expect_word("NaN"); return std::numeric_limits<double>::quiet_NaN();
    case 'I': expect_word("Infinity"); return std::numeric_limits<double>::infinity();
    case '-':
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == 'I') {
        expect_word("-Infinity");
        return -std::numeric_limits<double>::infinity();
      }
      return parse_number();
    default:
      if (c >= '0' && c <= '9') return parse_number();
      fail("expected a value");
  }
}

std::string syntax_error_message(const PyJsonParser& parser, std::string_view name,
                                 const JsonSyntaxError& e) {
  return fmt::format("{}: {}: malformed JSON: {}", name, parser.location(e.offset()), e.what());
}

}  // namespace detail

ordered_json parse_python_json(std::string_view text, std::string_view name_for_errors) {
  detail::PyJsonParser parser(text);
  try {
    ordered_json v = parser.parse_value();
    if (!parser.at_end()) parser.fail("extra data after the value");
    return v;
  } catch (const detail::JsonSyntaxError& e) {
    throw InputError(detail::syntax_error_message(parser, name_for_errors, e));
  }
}

// ---------------------------------------------------------------------------------------
// Writing, as Lib/json/encoder.py does.

namespace {

/// Decodes one UTF-8 sequence at s[i] (advancing i); malformed bytes give U+FFFD.
unsigned next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
  };
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int n = 0;
  unsigned cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 1;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 2;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 3;
    cp = b0 & 0x07;
  } else {
    ++i;
    return 0xFFFD;
  }
  for (int k = 1; k <= n; ++k) {
    if (!cont(i + static_cast<std::size_t>(k))) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
  }
  i += static_cast<std::size_t>(n) + 1;
  return cp > 0x10FFFF ? 0xFFFD : cp;
}

void append_u_escape(std::string& out, unsigned v) { out += fmt::format("\\u{:04x}", v); }

void append_float(std::string& out, double d) {
  if (std::isnan(d))
    out += "NaN";
  else if (std::isinf(d))
    out += d < 0 ? "-Infinity" : "Infinity";
  else
    out += python_float_repr(d);
}

void dump(std::string& out, const ordered_json& v, std::string_view indent, bool indented,
          int level) {
  using V = ordered_json::value_t;
  auto newline = [&](int lvl) {
    out += '\n';
    for (int k = 0; k < lvl; ++k) out += indent;
  };
  switch (v.type()) {
    case V::null: out += "null"; return;
    case V::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case V::number_integer: out += std::to_string(v.get<std::int64_t>()); return;
    case V::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); return;
    case V::number_float: append_float(out, v.get<double>()); return;
    case V::string: append_python_json_string(out, v.get_ref<const std::string&>()); return;
    case V::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += indented ? "," : ", ";
        first = false;
        if (indented) newline(level + 1);
        dump(out, e, indent, indented, level + 1);
      }
      if (indented) newline(level);
      out += ']';
      return;
    }
    case V::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += indented ? "," : ", ";
        first = false;
        if (indented) newline(level + 1);
        append_python_json_string(out, it.key());
        out += ": ";
        dump(out, it.value(), indent, indented, level + 1);
      }
      if (indented) newline(level);
      out += '}';
      return;
    }
    case V::binary:
    case V::discarded:
      break;
  }
  throw std::invalid_argument("dump_python_json: binary or discarded JSON value");
}

}  // namespace

void append_python_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
      ++i;
      continue;
    }
    if (u < 0x80) {
      ++i;
      switch (c) {
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: append_u_escape(out, u);
      }
      continue;
    }
    const unsigned cp = next_code_point(s, i);
    if (cp >= 0x10000) {
      const unsigned v = cp - 0x10000;
      append_u_escape(out, 0xD800 | (v >> 10));
      append_u_escape(out, 0xDC00 | (v & 0x3FF));
    } else {
      append_u_escape(out, cp);
    }
  }
  out += '"';
}

std::string dump_python_json(const ordered_json& v) {
  std::string out;
  dump(out, v, {}, false, 0);
  return out;
}

std::string dump_python_json_indented(const ordered_json& v, std::string_view indent) {
  std::string out;
  dump(out, v, indent, true, 0);
  return out;
}

}  // namespace cutune::db
