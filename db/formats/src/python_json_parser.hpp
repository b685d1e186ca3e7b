#pragma once
// The parser behind parse_python_json, open to the readers in this library that need to
// walk a document member by member (the cache reader keeps every complete entry of a file
// that a crash cut in the middle of a line).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cutune::db::detail {

/// A syntax error at byte `offset`; `at_end` when the text ran out (a truncated file).
class JsonSyntaxError : public std::runtime_error {
 public:
  JsonSyntaxError(const std::string& what, std::size_t offset, bool at_end)
      : std::runtime_error(what), offset_(offset), at_end_(at_end) {}
  std::size_t offset() const { return offset_; }
  bool at_end() const { return at_end_; }

 private:
  std::size_t offset_;
  bool at_end_;
};

class PyJsonParser {
 public:
  /// Values nest at most this deep (Python raises RecursionError near 1000).
  static constexpr int kMaxDepth = 512;

  explicit PyJsonParser(std::string_view text);

  /// Skips whitespace (space, tab, CR, LF), then reports whether the text has ended.
  bool at_end();
  /// The next non-whitespace character; throws (at_end) when there is none.
  char peek();
  /// Consumes `c` (after whitespace) when it is next; reports whether it did.
  bool consume(char c);
  /// Consumes `c` (after whitespace) or throws "expected <what>".
  void expect(char c, const char* what);
  std::string parse_string();
  nlohmann::ordered_json parse_value(int depth = 0);
  std::size_t offset() const { return pos_; }
  /// Whether the text from `offset` on is only NUL bytes and whitespace: the zero-filled
  /// tail a file system may leave after a power loss.
  bool only_padding_from(std::size_t offset) const;

  [[noreturn]] void fail(const std::string& what) const;
  /// "line L, column C" of a byte offset (1-based; column in bytes).
  std::string location(std::size_t offset) const;

 private:
  void skip_ws();
  nlohmann::ordered_json parse_number();
  unsigned parse_hex4();
  nlohmann::ordered_json parse_object(int depth);
  nlohmann::ordered_json parse_array(int depth);
  void expect_word(std::string_view word);

  std::string_view text_;
  std::size_t pos_ = 0;
};

/// "NAME: line L, column C: malformed JSON: WHAT" for an InputError.
std::string syntax_error_message(const PyJsonParser& parser, std::string_view name,
                                 const JsonSyntaxError& e);

}  // namespace cutune::db::detail
