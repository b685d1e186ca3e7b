#include "expression_lexer.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "expression_errors.hpp"
#include "python_number_text.hpp"

namespace cutune::detail {

namespace {

constexpr std::array<std::string_view, 35> kKeywords{
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    tokenize();
    return std::move(toks_);
  }

 private:
  [[noreturn]] void error(std::size_t pos, const std::string& msg) const {
    syntax_error(text_, pos, msg);
  }

  void tokenize() {
    std::size_t i = 0;
    while (true) {
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' ||
                                  text_[i] == '\r' || text_[i] == '\f' || text_[i] == '\\')) {
        if (text_[i] == '\\' &&
            !(i + 1 < text_.size() && (text_[i + 1] == '\n' || text_[i + 1] == '\r'))) {
          error(i, "unexpected character '\\'");
        }
        ++i;
      }
      Token t;
      t.pos = static_cast<std::uint32_t>(i);
      if (i >= text_.size()) {
        toks_.push_back(std::move(t));
        return;
      }
      const char c = text_[i];
      if (is_digit(c) || (c == '.' && i + 1 < text_.size() && is_digit(text_[i + 1]))) {
        i = lex_number(i, t);
      } else if (c == '\'' || c == '"') {
        i = lex_string(i, i, false, t);
      } else if (ident_start(c)) {
        std::size_t j = i;
        while (j < text_.size() && ident_char(text_[j])) ++j;
        const std::string_view word = text_.substr(i, j - i);
        if (j < text_.size() && (text_[j] == '\'' || text_[j] == '"') && word.size() <= 2 &&
            word.find_first_not_of("rRuUbBfF") == std::string_view::npos) {
          if (word.find_first_of("bB") != std::string_view::npos)
            error(i, "bytes literals are not supported");
          if (word.find_first_of("fF") != std::string_view::npos)
            error(i, "f-strings are not supported");
          i = lex_string(i, j, word.find_first_of("rR") != std::string_view::npos, t);
        } else {
          t.kind = Tok::Name;
          t.text = word;
          i = j;
        }
      } else {
        static constexpr std::array<std::string_view, 10> two{
            "**", "//", "<=", ">=", "==", "!=", "<<", ">>", "->", ":="};
        static constexpr std::string_view one = "+-*/%<>()[],:~&|^.";
        t.kind = Tok::Op;
        const std::string_view rest = text_.substr(i);
        bool found = false;
        for (const auto op : two) {
          if (rest.substr(0, 2) == op) {
            if (op == "->" || op == ":=")
              error(i, "unsupported operator '" + std::string(op) + "'");
            t.text = op;
            found = true;
            break;
          }
        }
        if (!found) {
          if (one.find(c) == std::string_view::npos) {
            if (c == '=') error(i, "assignment is not allowed (did you mean '=='?)");
            error(i, std::string("unexpected character '") + c + "'");
          }
          t.text = rest.substr(0, 1);
        }
        i += t.text.size();
      }
      toks_.push_back(std::move(t));
    }
  }

  std::size_t lex_number(std::size_t start, Token& t) {
    t.kind = Tok::Number;
    std::size_t i = start;
    const auto scan_digits = [&](auto valid) {
      // digits with single underscores between them
      bool prev_digit = false;
      while (i < text_.size()) {
        const char c = text_[i];
        if (c == '_') {
          if (!prev_digit || i + 1 >= text_.size() || !valid(text_[i + 1]))
            error(i, "invalid underscore in number");
          prev_digit = false;
        } else if (valid(c)) {
          prev_digit = true;
        } else {
          break;
        }
        ++i;
      }
    };
    const auto check_end = [&] {
      if (i < text_.size() && (text_[i] == 'j' || text_[i] == 'J'))
        error(start, "complex literals are not supported");
      if (i < text_.size() && ident_char(text_[i])) error(start, "invalid number literal");
    };
    const auto finish_int = [&](std::string_view digits, int base) {
      std::int64_t v = 0;
      bool overflow = false;
      if (!parse_int_text(digits, base, v, overflow)) error(start, "invalid number literal");
      if (overflow) {
        // -9223372036854775808 is a valid int64; its magnitude alone is not.
        std::int64_t negated = 0;
        bool negated_overflow = false;
        const std::string neg_text = "-" + std::string(digits);
        if (parse_int_text(neg_text, base, negated, negated_overflow) && !negated_overflow &&
            negated == std::numeric_limits<std::int64_t>::min()) {
          t.int_min_magnitude = true;
        } else {
          error(start, "integer literal too large (cutune integers are 64-bit)");
        }
      }
      t.value = v;
    };
    if (text_[i] == '0' && i + 1 < text_.size()) {
      const char p = text_[i + 1];
      int base = 0;
      if (p == 'x' || p == 'X') base = 16;
      if (p == 'o' || p == 'O') base = 8;
      if (p == 'b' || p == 'B') base = 2;
      if (base != 0) {
        i += 2;
        if (i < text_.size() && text_[i] == '_') ++i;
        const std::size_t digits_start = i;
        scan_digits([](char c) { return digit_value(c) < 16; });
        if (i == digits_start) error(start, "invalid number literal");
        check_end();
        finish_int(text_.substr(start, i - start), 0);
        return i;
      }
    }
    scan_digits(is_digit);
    bool is_float = false;
    if (i < text_.size() && text_[i] == '.') {
      is_float = true;
      ++i;
      if (i < text_.size() && is_digit(text_[i])) scan_digits(is_digit);
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && is_digit(text_[j])) {
        is_float = true;
        i = j;
        scan_digits(is_digit);
      } else {
        error(start, "invalid number literal");
      }
    }
    check_end();
    const std::string_view lit = text_.substr(start, i - start);
    if (is_float) {
      double d = 0;
      if (!parse_float_text(lit, d)) error(start, "invalid number literal");
      t.value = d;
    } else {
      if (lit.size() > 1 && lit[0] == '0' &&
          lit.find_first_not_of("0_") != std::string_view::npos) {
        error(start, "leading zeros in decimal integer literals are not permitted");
      }
      finish_int(lit, 10);
    }
    return i;
  }

  std::size_t lex_string(std::size_t start, std::size_t quote_pos, bool raw, Token& t) {
    t.kind = Tok::String;
    const char q = text_[quote_pos];
    const bool triple = text_.substr(quote_pos, 3) == std::string(3, q);
    std::size_t i = quote_pos + (triple ? 3 : 1);
    std::string out;
    while (true) {
      if (i >= text_.size()) error(start, "unterminated string literal");
      const char c = text_[i];
      if (c == q && (!triple || text_.substr(i, 3) == std::string(3, q))) {
        i += triple ? 3 : 1;
        break;
      }
      if ((c == '\n' || c == '\r') && !triple) error(start, "unterminated string literal");
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= text_.size()) error(start, "unterminated string literal");
      const char e = text_[i + 1];
      if (raw) {
        // Raw strings keep the backslash; it still prevents the quote from ending the string.
        out += c;
        out += e;
        i += 2;
        continue;
      }
      i += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t len = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          if (i + len > text_.size()) error(i - 2, "truncated \\" + std::string(1, e) + " escape");
          std::uint32_t cp = 0;
          for (std::size_t k = 0; k < len; ++k) {
            const int d = digit_value(text_[i + k]);
            if (d >= 16) error(i - 2, "truncated \\" + std::string(1, e) + " escape");
            cp = cp * 16 + static_cast<std::uint32_t>(d);
          }
          if (cp > 0x10FFFF) error(i - 2, "illegal Unicode character");
          append_utf8(out, cp);
          i += len;
          break;
        }
        case 'N':
          error(i - 2, "\\N{...} escapes are not supported");
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < text_.size() && text_[i] >= '0' && text_[i] <= '7';
                 ++k, ++i) {
              cp = cp * 8 + static_cast<std::uint32_t>(text_[i] - '0');
            }
            append_utf8(out, cp);
          } else {
            out += '\\';  // unknown escapes stay as written, as in Python
            out += e;
          }
      }
    }
    t.value = std::move(out);
    return i;
  }

  std::string_view text_;
  std::vector<Token> toks_;
};

}  // namespace

bool is_keyword(std::string_view s) {
  return std::find(kKeywords.begin(), kKeywords.end(), s) != kKeywords.end();
}

std::vector<Token> tokenize(std::string_view text) { return Lexer(text).run(); }

}  // namespace cutune::detail
