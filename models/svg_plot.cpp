#include "models/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.hpp"

namespace spmvd {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr double kMarginLeft = 78, kMarginRight = 24, kMarginTop = 40, kMarginBottom = 56;

std::string escape_xml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}
std::string pixel(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", v);
  return buffer;
}

// One axis: data range mapped to [pixel_from, pixel_to], linear or logarithmic.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // in axis space (log10 of the data on a log axis)
  double pixel_from = 0, pixel_to = 1;
  bool drawable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double space(double v) const { return log ? std::log10(v) : v; }
  double to_pixel(double v) const {
    return pixel_from + (space(v) - lo) / (hi - lo) * (pixel_to - pixel_from);
  }
  // 1-2-5 steps on a linear axis; decades on a log axis, or 1-2-5 of each decade when it spans
  // less than two. Returns data values.
  std::vector<double> ticks() const {
    std::vector<double> out;
    if (log && hi - lo >= 2.0) {
      const double step = std::max(1.0, std::ceil((hi - lo) / 8.0));
      for (double e = std::ceil(lo); e <= hi + 1e-9; e += step) out.push_back(std::pow(10.0, e));
      return out;
    }
    if (log) {  // under two decades: 1, 2 and 5 of each decade
      for (double e = std::floor(lo); e <= hi; e += 1.0) {
        for (double m : {1.0, 2.0, 5.0}) {
          const double t = m * std::pow(10.0, e);
          if (std::log10(t) >= lo && std::log10(t) <= hi) out.push_back(t);
        }
      }
      return out;
    }
    const double raw = (hi - lo) / 6.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
      step = m * magnitude;
      if (step >= raw) break;
    }
    for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
      out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    }
    return out;
  }
};

void fit_range(Axis& axis, double min_value, double max_value) {
  axis.lo = axis.space(min_value);
  axis.hi = axis.space(max_value);
  if (axis.hi - axis.lo <= 0) {  // a single value: open a window around it
    const double pad = axis.log ? 0.5 : std::max(std::abs(axis.lo) * 0.1, 1.0);
    axis.lo -= pad;
    axis.hi += pad;
  } else {
    const double pad = 0.04 * (axis.hi - axis.lo);
    axis.lo -= pad;
    axis.hi += pad;
  }
}

}  // namespace

std::string plot_svg(std::span<const SvgSeries> series, const SvgPlotOptions& o) {
  Axis x{.log = o.log_x, .pixel_from = kMarginLeft, .pixel_to = o.width_px - kMarginRight};
  Axis y{.log = o.log_y, .pixel_from = o.height_px - kMarginBottom, .pixel_to = kMarginTop};
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  std::size_t drawable = 0;
  for (const SvgSeries& s : series) {
    for (const SamplePoint& p : s.samples) {
      if (!x.drawable(p.x) || !y.drawable(p.y)) continue;
      ++drawable;
      x_min = std::min(x_min, p.x);
      x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, p.y);
      y_max = std::max(y_max, p.y);
    }
  }
  if (drawable == 0) {
    throw_invalid("plot_svg: \"" + o.title + "\" has no sample that can be drawn" +
                  (o.log_x || o.log_y ? " on log axes (coordinates must be positive)" : ""));
  }
  // Curves: sampled over each series' own x range, in axis space.
  std::vector<std::vector<std::pair<double, double>>> curves(series.size());
  for (std::size_t i = 0; i < series.size(); ++i) {
    const SvgSeries& s = series[i];
    if (!s.curve) continue;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const SamplePoint& p : s.samples) {
      if (!x.drawable(p.x)) continue;
      lo = std::min(lo, x.space(p.x));
      hi = std::max(hi, x.space(p.x));
    }
    if (!(lo <= hi)) continue;
    const int n = std::max(2, o.curve_points);
    for (int k = 0; k < n; ++k) {
      const double t = lo + (hi - lo) * k / (n - 1);
      const double xv = x.log ? std::pow(10.0, t) : t;
      const double yv = s.curve(xv);
      if (!y.drawable(yv)) continue;
      curves[i].emplace_back(xv, yv);
      y_min = std::min(y_min, yv);
      y_max = std::max(y_max, yv);
    }
  }
  fit_range(x, x_min, x_max);
  fit_range(y, y_min, y_max);

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << o.width_px << "\" height=\""
      << o.height_px << "\" viewBox=\"0 0 " << o.width_px << ' ' << o.height_px
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // Long titles shrink to the picture's width (about 0.55 em per character of sans-serif).
  const double title_px =
      std::clamp(0.95 * o.width_px / (0.55 * std::max<double>(1.0, o.title.size())), 8.0, 15.0);
  svg << "<text x=\"" << pixel(o.width_px / 2.0) << "\" y=\"22\" text-anchor=\"middle\" "
      << "font-size=\"" << pixel(title_px) << "\">" << escape_xml(o.title) << "</text>\n";
  // Axes and ticks.
  const double left = x.pixel_from, right = x.pixel_to, bottom = y.pixel_from, top = y.pixel_to;
  svg << "<g class=\"axes\" stroke=\"black\" fill=\"none\">\n"
      << "<line x1=\"" << pixel(left) << "\" y1=\"" << pixel(bottom) << "\" x2=\"" << pixel(right)
      << "\" y2=\"" << pixel(bottom) << "\"/>\n"
      << "<line x1=\"" << pixel(left) << "\" y1=\"" << pixel(bottom) << "\" x2=\"" << pixel(left)
      << "\" y2=\"" << pixel(top) << "\"/>\n</g>\n";
  svg << "<g class=\"ticks\">\n";
  for (double t : x.ticks()) {
    const double px = x.to_pixel(t);
    if (px < left - 0.5 || px > right + 0.5) continue;
    svg << "<line x1=\"" << pixel(px) << "\" y1=\"" << pixel(bottom) << "\" x2=\"" << pixel(px)
        << "\" y2=\"" << pixel(bottom + 5) << "\" stroke=\"black\"/>"
        << "<text x=\"" << pixel(px) << "\" y=\"" << pixel(bottom + 18)
        << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  }
  for (double t : y.ticks()) {
    const double py = y.to_pixel(t);
    if (py > bottom + 0.5 || py < top - 0.5) continue;
    svg << "<line x1=\"" << pixel(left - 5) << "\" y1=\"" << pixel(py) << "\" x2=\"" << pixel(left)
        << "\" y2=\"" << pixel(py) << "\" stroke=\"black\"/>"
        << "<text x=\"" << pixel(left - 8) << "\" y=\"" << pixel(py + 4)
        << "\" text-anchor=\"end\">" << number(t) << "</text>\n";
  }
  svg << "</g>\n";
  svg << "<text x=\"" << pixel((left + right) / 2) << "\" y=\"" << pixel(o.height_px - 12.0)
      << "\" text-anchor=\"middle\">" << escape_xml(o.x_label) << (o.log_x ? " (log)" : "")
      << "</text>\n";
  svg << "<text transform=\"translate(16 " << pixel((top + bottom) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << escape_xml(o.y_label)
      << (o.log_y ? " (log)" : "") << "</text>\n";
  // Curves under the dots, then the dots, then the legend.
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (curves[i].size() < 2) continue;
    svg << "<polyline class=\"fit\" fill=\"none\" stroke-width=\"1.5\" stroke=\""
        << kColours[i % std::size(kColours)] << "\" points=\"";
    for (const auto& [xv, yv] : curves[i]) svg << pixel(x.to_pixel(xv)) << ',' << pixel(y.to_pixel(yv)) << ' ';
    svg << "\"/>\n";
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    for (const SamplePoint& p : series[i].samples) {
      if (!x.drawable(p.x) || !y.drawable(p.y)) continue;
      svg << "<circle class=\"sample\" cx=\"" << pixel(x.to_pixel(p.x)) << "\" cy=\""
          << pixel(y.to_pixel(p.y)) << "\" r=\"2.5\" fill=\"" << kColours[i % std::size(kColours)]
          << "\"/>\n";
    }
  }
  double legend_y = top + 12;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (series[i].label.empty()) continue;
    svg << "<text class=\"legend\" x=\"" << pixel(left + 12) << "\" y=\"" << pixel(legend_y)
        << "\" fill=\"" << kColours[i % std::size(kColours)] << "\">"
        << escape_xml(series[i].label) << "</text>\n";
    legend_y += 15;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string plot_fit_svg(std::span<const SamplePoint> samples,
                         const std::function<double(double)>& curve,
                         const SvgPlotOptions& options) {
  const SvgSeries one{.label = "", .samples = {samples.begin(), samples.end()}, .curve = curve};
  return plot_svg(std::span<const SvgSeries>(&one, 1), options);
}

std::string plot_log_grid_svg(const LogGridFit& grid, SvgPlotOptions options) {
  const std::size_t nw = grid.widths.size();
  if (nw == 0 || grid.rows.empty() || grid.log_ms.size() != nw * grid.rows.size()) {
    throw_invalid("plot_log_grid_svg: the grid is empty or its table does not match its axes");
  }
  std::vector<SvgSeries> series;
  for (std::size_t r = 0; r < grid.rows.size(); ++r) {
    SvgSeries s;
    s.label = "rows " + number(grid.rows[r]);
    for (std::size_t w = 0; w < nw; ++w) {
      s.samples.push_back({grid.widths[w], std::exp(grid.log_ms[r * nw + w])});
    }
    s.curve = [&grid, rows = grid.rows[r]](double width) { return grid(width, rows); };
    series.push_back(std::move(s));
  }
  options.log_x = true;
  options.log_y = true;
  return plot_svg(series, options);
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error(ErrorCode::unavailable, "cannot write " + path);
}

}  // namespace spmvd
