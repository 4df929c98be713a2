#pragma once
// A fit drawn as an SVG picture in the manner of paper 004's Figures 3-6: measured samples as
// dots, the fitted curve as a polyline, axes with tick labels, a title, optional log axes.
// Plain SVG text, no library.

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "models/fitting.hpp"

namespace spmvd {

// One picture and the file it is written to.
struct NamedSvg {
  std::string file_name;  // "fp64_csr_vector_t8_b256.svg": unique within one model set
  std::string svg;
};

struct SvgSeries {
  std::string label;                   // legend text; empty: no legend entry
  std::vector<SamplePoint> samples;    // drawn as <circle class="sample">
  std::function<double(double)> curve;  // drawn as <polyline class="fit"> over the x range; may be empty
};

struct SvgPlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  int width_px = 640;
  int height_px = 420;
  int curve_points = 200;  // polyline vertices per curve
};

// One <circle class="sample"> per sample that can be drawn (on log axes, only positive
// coordinates), one <polyline class="fit"> per series with a curve. The x range spans every
// series' samples; each curve is drawn over its own series' sample range. Throws
// Error(invalid_argument) when no sample can be drawn.
std::string plot_svg(std::span<const SvgSeries> series, const SvgPlotOptions& options);

// One series: the samples and the fit evaluated between them.
std::string plot_fit_svg(std::span<const SamplePoint> samples,
                         const std::function<double(double)>& curve,
                         const SvgPlotOptions& options);

// The ELL grid (paper 004 Fig. 5) as one series per calibrated row count: grid points as dots,
// the interpolation along width as the curve;
// both axes are logarithmic whatever options says, as the grid is interpolated in logs.
std::string plot_log_grid_svg(const LogGridFit& grid, SvgPlotOptions options);

// Writes text to path; throws Error(unavailable) naming the path when it cannot.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace spmvd
