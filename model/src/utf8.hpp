#pragma once
// UTF-8 code points: Python strings index, iterate and measure by code point, cutune's
// strings hold UTF-8. (append_utf8, the encoder, is public: cutune/model/value.hpp.)
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cutune::detail {

/// Bytes of the code point a lead byte starts; an invalid lead byte counts as one.
std::size_t cp_length(unsigned char c);

bool is_ascii(const std::string& s);

/// The code points of s, each a view of its bytes.
std::vector<std::string_view> code_points(const std::string& s);

}  // namespace cutune::detail
