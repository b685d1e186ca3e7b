#pragma once
// A small SVG plotter: axes with ticks, labels and units, lines, points, rectangles and a
// legend, written as text with fixed formatting so the same data gives the same bytes.
// Private to cutune::report.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cutune::report::svg {

/// Text for XML/HTML content and attributes (&, <, >, ", ').
std::string escape(std::string_view text);
/// A coordinate: one decimal, "-0.0" never written.
std::string coord(double v);
/// A tick or table label: up to `digits` significant digits, no exponent for ordinary sizes.
std::string number(double v, int digits = 4);

/// The palette, in legend order (Tableau 10: distinct in print and for most colour vision).
const std::vector<std::string>& palette();

/// One axis: data -> pixels, linear or log10.
struct Scale {
  double lo = 0, hi = 1;          ///< data domain
  bool log = false;
  double px_lo = 0, px_hi = 100;  ///< pixel range (px_hi < px_lo for a y axis)
  double operator()(double v) const;
  /// Ticks inside the domain: 1-2-5 steps, or decades (with 2 and 5 when few).
  std::vector<double> ticks() const;
};

/// The domain of `values` with a margin, for a log axis when asked and all are positive.
std::pair<double, double> domain(const std::vector<double>& values, bool log, bool from_zero = false);

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> xy;
  enum class Kind { Line, Step, Dashed, Points } kind = Kind::Line;
  double radius = 2.5;   ///< points
  double opacity = 1.0;  ///< points
};

/// A chart with a plot area, axes, grid, title and legend. Categories on an axis replace its
/// numeric ticks: category i sits at i (the scale's domain is then -0.5 .. n - 0.5).
class Chart {
 public:
  Chart(int width, int height, std::string title, std::string x_label, std::string y_label);
  void x_axis(double lo, double hi, bool log);
  void y_axis(double lo, double hi, bool log);
  void x_categories(std::vector<std::string> names);
  void y_categories(std::vector<std::string> names);
  void add(Series s);
  /// A rectangle in data coordinates (a bar, a box).
  void rect(double x0, double y0, double x1, double y1, const std::string& fill, const std::string& title = "");
  /// A line segment in data coordinates.
  void segment(double x0, double y0, double x1, double y1, const std::string& color, double width = 1.0);
  /// Text at a data position (anchor: start, middle, end).
  void text(double x, double y, const std::string& text, const std::string& anchor = "middle", int size = 11);
  /// A legend entry drawn as a filled box (for bars), beside the series' own entries.
  void legend_box(const std::string& name, const std::string& color);
  /// A line under the title, in smaller type (what the chart shows, where its data comes from).
  void subtitle(std::string s) { subtitle_ = std::move(s); }
  const Scale& x() const { return x_; }
  const Scale& y() const { return y_; }
  std::string render() const;

 private:
  int width_, height_;
  std::string title_, subtitle_, x_label_, y_label_;
  Scale x_, y_;
  std::vector<std::string> x_categories_, y_categories_;
  std::vector<Series> series_;
  std::vector<std::pair<std::string, std::string>> boxes_;  ///< legend boxes: name, colour
  /// Rectangles, segments and texts in data coordinates, in the order added: placed when
  /// rendered, once the legend says how wide the plot area is.
  struct Shape {
    enum class Kind { Rect, Segment, Text } kind;
    double x0, y0, x1, y1;
    std::string color, text, anchor;
    double width;
    int size;
  };
  std::vector<Shape> shapes_;
};

}  // namespace cutune::report::svg
