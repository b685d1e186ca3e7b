#include "cutune/jit/global_functions.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace cutune::jit {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Comments, string and character literals and preprocessor lines become spaces (newlines
// kept), so that neither a commented-out kernel nor a `__launch_bounds__` under an #if
// (BAT's dedisp and hotspot kernels) is mistaken for code.
std::string code_only(std::string_view s) {
  std::string out(s);
  std::size_t i = 0;
  bool line_start = true;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      std::size_t e = s.find('\n', i);
      if (e == std::string_view::npos) e = s.size();
      blank(i, e);
      i = e;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      std::size_t e = s.find("*/", i + 2);
      e = e == std::string_view::npos ? s.size() : e + 2;
      blank(i, e);
      i = e;
    } else if (c == '"' || c == '\'') {
      std::size_t e = i + 1;
      while (e < s.size() && s[e] != c && s[e] != '\n') e += s[e] == '\\' ? 2 : 1;
      e = std::min(e + 1, s.size());
      blank(i, e);
      i = e;
    } else if (c == '#' && line_start) {
      // A directive runs to the end of the line, continued by a trailing backslash.
      std::size_t e = i;
      while (e < s.size() && s[e] != '\n') {
        if (s[e] == '\\' && e + 1 < s.size() && s[e + 1] == '\n') ++e;
        ++e;
      }
      blank(i, e);
      i = e;
    } else {
      if (c == '\n') line_start = true;
      else if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
      ++i;
    }
  }
  return out;
}

struct Token {
  std::string text;
  std::size_t pos;
};

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (ident_start(s[i])) {
      std::size_t e = i;
      while (e < s.size() && ident_char(s[e])) ++e;
      out.push_back({s.substr(i, e - i), i});
      i = e;
    } else if (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      out.push_back({"::", i});
      i += 2;
    } else {
      out.push_back({std::string(1, s[i]), i});
      ++i;
    }
  }
  return out;
}

std::string collapse_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Identifiers followed by a parenthesised list that are not the function's name.
bool is_attribute(const std::string& t) {
  return t == "__launch_bounds__" || t == "__attribute__" || t == "__declspec" || t == "alignas" ||
         t == "__align__" || t == "__cluster_dims__" || t == "__maxnreg__" || t == "decltype";
}

}  // namespace

std::string GlobalFunction::display() const {
  return template_parameters.empty() ? name : "template <" + template_parameters + "> " + name;
}

std::string unqualified_name(std::string_view expr) {
  std::string s = collapse_spaces(expr);
  if (!s.empty() && s.front() == '&') s.erase(0, 1);
  if (auto lt = s.find('<'); lt != std::string::npos) s.erase(lt);
  if (auto q = s.rfind("::"); q != std::string::npos) s.erase(0, q + 2);
  return collapse_spaces(s);
}

std::vector<GlobalFunction> global_functions(std::string_view source) {
  const std::string code = code_only(source);
  const std::vector<Token> t = tokenize(code);
  std::vector<GlobalFunction> out;
  // Open namespaces: (name, brace depth inside it); "" for an anonymous one.
  std::vector<std::pair<std::string, int>> namespaces;
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string& tok = t[i].text;
    if (tok == "{") {
      ++depth;
    } else if (tok == "}") {
      --depth;
      while (!namespaces.empty() && namespaces.back().second > depth) namespaces.pop_back();
    } else if (tok == "namespace") {
      // namespace a::b { ... }: each component opens at the same brace.
      std::vector<std::string> parts;
      std::size_t k = i + 1;
      while (k < t.size() && (ident_start(t[k].text[0]) || t[k].text == "::")) {
        if (t[k].text != "::" && t[k].text != "inline") parts.push_back(t[k].text);
        ++k;
      }
      if (k < t.size() && t[k].text == "{") {
        if (parts.empty()) parts.push_back("");
        for (const auto& p : parts) namespaces.emplace_back(p, depth + 1);
        ++depth;
        i = k;
      }
    } else if (tok == "__global__") {
      // The name: the first identifier followed by '(' that is not an attribute.
      std::string name;
      for (std::size_t k = i + 1; k + 1 < t.size(); ++k) {
        const std::string& a = t[k].text;
        if (a == ";" || a == "{" || a == "}") break;
        if (!ident_start(a[0]) || t[k + 1].text != "(") continue;
        if (is_attribute(a)) {
          int paren = 0;  // skip the balanced argument list
          for (++k; k < t.size(); ++k) {
            if (t[k].text == "(") ++paren;
            else if (t[k].text == ")" && --paren == 0) break;
          }
          continue;
        }
        name = a;
        // A qualified definition `void ns::k(...)`.
        for (std::size_t q = k; q >= 2 && t[q - 1].text == "::" && ident_start(t[q - 2].text[0]); q -= 2)
          name = t[q - 2].text + "::" + name;
        break;
      }
      if (name.empty()) continue;
      // Its template parameter list: a `template <...>` since the previous declaration.
      std::string params;
      for (std::size_t k = i; k-- > 0;) {
        const std::string& a = t[k].text;
        if (a == ";" || a == "{" || a == "}") break;
        if (a != "template" || k + 1 >= t.size() || t[k + 1].text != "<") continue;
        int angle = 0;
        std::size_t e = k + 1;
        for (; e < i; ++e) {
          if (t[e].text == "<") ++angle;
          else if (t[e].text == ">" && --angle == 0) break;
        }
        if (e < i) params = collapse_spaces(code.substr(t[k + 1].pos + 1, t[e].pos - t[k + 1].pos - 1));
        break;
      }
      std::string qualified;
      for (const auto& [ns, d] : namespaces)
        if (!ns.empty()) qualified += ns + "::";
      GlobalFunction f{qualified + name, params};
      if (std::none_of(out.begin(), out.end(), [&](const GlobalFunction& g) {
            return g.name == f.name && g.template_parameters == f.template_parameters;
          }))
        out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace cutune::jit
