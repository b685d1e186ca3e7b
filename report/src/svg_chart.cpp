#include "svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace cutune::report::svg {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string coord(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = fmt::format("{:.1f}", v);
  if (s == "-0.0") s = "0.0";
  return s;
}

std::string number(double v, int digits) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e-4 && a < 1e7) {
    // Fixed notation with `digits` significant digits, trailing zeros dropped.
    const int decimals = std::max(0, digits - 1 - static_cast<int>(std::floor(std::log10(a))));
    std::string s = fmt::format("{:.{}f}", v, decimals);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    return s;
  }
  return fmt::format("{:.{}g}", v, digits);
}

const std::vector<std::string>& palette() {
  static const std::vector<std::string> colors{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return colors;
}

double Scale::operator()(double v) const {
  double a = lo, b = hi, x = v;
  if (log) {
    a = std::log10(lo);
    b = std::log10(hi);
    x = v > 0 ? std::log10(v) : a;
  }
  if (b == a) return (px_lo + px_hi) / 2;
  return px_lo + (x - a) / (b - a) * (px_hi - px_lo);
}

namespace {

std::vector<double> linear_ticks(double lo, double hi, int wanted) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / wanted;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag * 1.0000001) {
      step = m * mag;
      break;
    }
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int i = 0; i < 100; ++i) {
    const double t = first + i * step;
    if (t > hi + step * 1e-9) break;
    out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return out;
}

// A legend entry's lines: at most `width` characters each, broken at spaces where possible.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string rest = text;
  while (rest.size() > width) {
    std::size_t cut = rest.rfind(' ', width);
    if (cut == std::string::npos || cut == 0) cut = width;
    lines.push_back(rest.substr(0, cut));
    rest = rest.substr(cut + (rest[cut] == ' ' ? 1 : 0));
  }
  if (!rest.empty() || lines.empty()) lines.push_back(rest);
  return lines;
}

constexpr std::size_t kLegendChars = 27;
constexpr int kLegendLine = 13, kLegendGap = 6;

}  // namespace

std::vector<double> Scale::ticks() const {
  if (!log) return linear_ticks(lo, hi, 6);
  std::vector<double> out;
  const int d0 = static_cast<int>(std::floor(std::log10(lo))), d1 = static_cast<int>(std::ceil(std::log10(hi)));
  for (int d = d0; d <= d1; ++d) {
    const double t = std::pow(10.0, d);
    if (t >= lo * 0.999999 && t <= hi * 1.000001) out.push_back(t);
  }
  if (out.size() < 3) {
    std::vector<double> more;
    for (int d = d0; d <= d1; ++d)
      for (double m : {1.0, 2.0, 5.0}) {
        const double t = m * std::pow(10.0, d);
        if (t >= lo * 0.999999 && t <= hi * 1.000001) more.push_back(t);
      }
    out = more;
  }
  if (out.size() < 2) return linear_ticks(lo, hi, 4);  // within one 1-2-5 step: plain steps
  return out;
}

std::pair<double, double> domain(const std::vector<double>& values, bool log, bool from_zero) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v) && (!log || v > 0)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) return log ? std::pair{0.1, 10.0} : std::pair{0.0, 1.0};
  if (log) {
    if (hi == lo) return {lo / 2, hi * 2};
    const double f = std::pow(hi / lo, 0.05);
    return {lo / f, hi * f};
  }
  if (from_zero) lo = std::min(lo, 0.0);
  if (hi == lo) return {lo - 1, hi + 1};
  const double pad = (hi - lo) * 0.05;
  return {from_zero && lo == 0 ? 0.0 : lo - pad, hi + pad};
}

Chart::Chart(int width, int height, std::string title, std::string x_label, std::string y_label)
    : width_(width), height_(height), title_(std::move(title)), x_label_(std::move(x_label)),
      y_label_(std::move(y_label)) {}

void Chart::x_axis(double lo, double hi, bool log) { x_.lo = lo, x_.hi = hi, x_.log = log; }
void Chart::y_axis(double lo, double hi, bool log) { y_.lo = lo, y_.hi = hi, y_.log = log; }

void Chart::x_categories(std::vector<std::string> names) {
  x_axis(-0.5, static_cast<double>(names.size()) - 0.5, false);
  x_categories_ = std::move(names);
}
void Chart::y_categories(std::vector<std::string> names) {
  y_axis(-0.5, static_cast<double>(names.size()) - 0.5, false);
  y_categories_ = std::move(names);
}

void Chart::add(Series s) { series_.push_back(std::move(s)); }

void Chart::rect(double x0, double y0, double x1, double y1, const std::string& fill, const std::string& title) {
  shapes_.push_back({Shape::Kind::Rect, x0, y0, x1, y1, fill, title, "", 0, 0});
}
void Chart::segment(double x0, double y0, double x1, double y1, const std::string& color, double width) {
  shapes_.push_back({Shape::Kind::Segment, x0, y0, x1, y1, color, "", "", width, 0});
}
void Chart::text(double x, double y, const std::string& t, const std::string& anchor, int size) {
  shapes_.push_back({Shape::Kind::Text, x, y, x, y, "#222", t, anchor, 0, size});
}
void Chart::legend_box(const std::string& name, const std::string& color) { boxes_.emplace_back(name, color); }

std::string Chart::render() const {
  const bool legend = !boxes_.empty() ||
                      std::any_of(series_.begin(), series_.end(), [](const Series& s) { return !s.name.empty(); });
  // The widest y category label decides the left margin (run names on a bar chart).
  std::size_t widest = 0;
  for (const auto& c : y_categories_) widest = std::max(widest, c.size());
  const int left = y_categories_.empty() ? 72 : std::clamp(static_cast<int>(widest) * 7 + 16, 72, 260);
  const int right = legend ? 200 : 24;
  const int top = subtitle_.empty() ? 34 : 50;
  const int bottom = x_categories_.empty() ? 48 : 58;
  // The legend's entries, and the height they need: a chart grows to hold its legend.
  std::vector<std::string> names;
  for (const auto& s : series_)
    if (!s.name.empty()) names.push_back(s.name);
  for (const auto& b : boxes_) names.push_back(b.first);
  int legend_height = 12;
  for (const auto& n : names) legend_height += static_cast<int>(wrap(n, kLegendChars).size()) * kLegendLine + kLegendGap;
  const int height = legend ? std::max(height_, top + legend_height + bottom) : height_;
  Scale x = x_, y = y_;
  x.px_lo = left;
  x.px_hi = width_ - right;
  y.px_lo = height - bottom;
  y.px_hi = top;
  if (!y_categories_.empty()) std::swap(y.px_lo, y.px_hi);  // categories read top down

  std::string o;
  auto out = std::back_inserter(o);
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                 "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\" role=\"img\">\n",
                 width_, height);
  fmt::format_to(out, "<title>{}</title>\n", escape(title_));
  fmt::format_to(out, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width_, height);
  // Title and subtitle from the left edge: a wide label column would push them off the right.
  fmt::format_to(out, "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", escape(title_));
  if (!subtitle_.empty())
    fmt::format_to(out, "<text x=\"10\" y=\"37\" font-size=\"11\" fill=\"#555\">{}</text>\n", escape(subtitle_));
  // Grid and ticks.
  o += "<g class=\"axes\" stroke=\"#ddd\" stroke-width=\"1\">\n";
  std::string labels;
  auto lab = std::back_inserter(labels);
  if (x_categories_.empty()) {
    for (double t : x.ticks()) {
      const double px = x(t);
      fmt::format_to(out, "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", coord(px), top,
                     height - bottom);
      fmt::format_to(lab, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", coord(px),
                     height - bottom + 15, number(t, 3));
    }
  } else {
    const bool slant = x_categories_.size() > 8;
    for (std::size_t i = 0; i < x_categories_.size(); ++i) {
      const double px = x(static_cast<double>(i));
      if (slant)
        fmt::format_to(lab, "<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-40 {0} {1})\">{2}</text>\n",
                       coord(px), height - bottom + 12, escape(x_categories_[i]));
      else
        fmt::format_to(lab, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", coord(px),
                       height - bottom + 15, escape(x_categories_[i]));
    }
  }
  if (y_categories_.empty()) {
    for (double t : y.ticks()) {
      const double py = y(t);
      fmt::format_to(out, "<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>\n", coord(py), coord(x.px_lo),
                     coord(x.px_hi));
      fmt::format_to(lab, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", coord(x.px_lo - 5),
                     coord(py + 4), number(t, 3));
    }
  } else {
    for (std::size_t i = 0; i < y_categories_.size(); ++i)
      fmt::format_to(lab, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", coord(x.px_lo - 6),
                     coord(y(static_cast<double>(i)) + 4), escape(y_categories_[i]));
  }
  o += "</g>\n";
  fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n",
                 coord(x.px_lo), top, coord(x.px_hi - x.px_lo), height - bottom - top);
  o += "<g class=\"tick-labels\" fill=\"#333\" font-size=\"11\">\n" + labels + "</g>\n";
  // Axis labels.
  fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", coord((x.px_lo + x.px_hi) / 2),
                 height - 8, escape(x_label_));
  if (!y_label_.empty())
    fmt::format_to(out, "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                   coord((y.px_lo + y.px_hi) / 2), escape(y_label_));

  // Shapes, clipped to nothing: they are placed by the caller inside the domain.
  o += "<g class=\"shapes\">\n";
  for (const auto& s : shapes_) {
    switch (s.kind) {
      case Shape::Kind::Rect: {
        const double px0 = std::min(x(s.x0), x(s.x1)), px1 = std::max(x(s.x0), x(s.x1));
        const double py0 = std::min(y(s.y0), y(s.y1)), py1 = std::max(y(s.y0), y(s.y1));
        fmt::format_to(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">", coord(px0), coord(py0),
                       coord(px1 - px0), coord(py1 - py0), s.color);
        if (!s.text.empty()) fmt::format_to(out, "<title>{}</title>", escape(s.text));
        o += "</rect>\n";
        break;
      }
      case Shape::Kind::Segment:
        fmt::format_to(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
                       coord(x(s.x0)), coord(y(s.y0)), coord(x(s.x1)), coord(y(s.y1)), s.color, s.width);
        break;
      case Shape::Kind::Text:
        fmt::format_to(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\" fill=\"{}\">{}</text>\n",
                       coord(x(s.x0)), coord(y(s.y0) + 4), s.anchor, s.size, s.color, escape(s.text));
        break;
    }
  }
  o += "</g>\n";
  // Series.
  for (const auto& s : series_) {
    if (s.xy.empty()) continue;
    if (s.kind == Series::Kind::Points) {
      fmt::format_to(out, "<g class=\"series\" fill=\"{}\" fill-opacity=\"{}\" data-name=\"{}\">\n", s.color,
                     s.opacity, escape(s.name));
      for (const auto& [px, py] : s.xy)
        fmt::format_to(out, "<circle cx=\"{}\" cy=\"{}\" r=\"{}\"/>\n", coord(x(px)), coord(y(py)), s.radius);
      o += "</g>\n";
      continue;
    }
    std::string pts;
    for (std::size_t i = 0; i < s.xy.size(); ++i) {
      const auto& [px, py] = s.xy[i];
      if (s.kind == Series::Kind::Step && i > 0)  // horizontal first: the value holds until the next point
        pts += coord(x(px)) + "," + coord(y(s.xy[i - 1].second)) + " ";
      pts += coord(x(px)) + "," + coord(y(py)) + " ";
    }
    if (!pts.empty()) pts.pop_back();
    fmt::format_to(out, "<polyline class=\"series\" data-name=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                   escape(s.name), s.color, s.kind == Series::Kind::Dashed ? " stroke-dasharray=\"6 4\"" : "", pts);
  }
  // Legend, in its own column right of the plot.
  if (legend) {
    const double lx = x.px_hi + 14;
    double ly = top + 6;
    o += "<g class=\"legend\" font-size=\"11\">\n";
    auto entry = [&](const std::string& name, const std::string& swatch) {
      o += swatch;
      // Long names wrap so that they stay inside the column.
      double line_y = ly + 4;
      for (const auto& part : wrap(name, kLegendChars)) {
        fmt::format_to(out, "<text x=\"{}\" y=\"{}\">{}</text>\n", coord(lx + 24), coord(line_y), escape(part));
        line_y += kLegendLine;
      }
      ly = line_y - 4 + kLegendGap;
    };
    for (const auto& s : series_) {
      if (s.name.empty()) continue;
      std::string sw;
      if (s.kind == Series::Kind::Points)
        sw = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n", coord(lx + 9), coord(ly), s.color);
      else
        sw = fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                         coord(lx), coord(ly), coord(lx + 18), coord(ly), s.color,
                         s.kind == Series::Kind::Dashed ? " stroke-dasharray=\"6 4\"" : "");
      entry(s.name, sw);
    }
    for (const auto& [name, color] : boxes_)
      entry(name, fmt::format("<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"10\" fill=\"{}\"/>\n", coord(lx),
                              coord(ly - 5), color));
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace cutune::report::svg
