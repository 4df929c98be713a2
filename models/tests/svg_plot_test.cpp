#include "models/svg_plot.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::vector<SamplePoint> line_samples(int n) {
  std::vector<SamplePoint> samples;
  for (int i = 1; i <= n; ++i) samples.push_back({i * 1000.0, 0.01 + 1e-6 * i * 1000.0});
  return samples;
}

TEST(SvgPlot, DrawsOneDotPerSampleAndOneCurve) {
  const auto samples = line_samples(17);
  const std::string svg = plot_fit_svg(samples, [](double x) { return 0.01 + 1e-6 * x; },
                                       {.title = "COO: ms vs nnz", .x_label = "nnz", .y_label = "ms"});
  EXPECT_EQ(count(svg, "<circle class=\"sample\""), 17u);
  EXPECT_EQ(count(svg, "<polyline class=\"fit\""), 1u);
  EXPECT_NE(svg.find(">COO: ms vs nnz</text>"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
  EXPECT_GE(count(svg, "text-anchor=\"middle\">"), 4u);  // x tick labels and the title
}

TEST(SvgPlot, LogAxesSkipSamplesThatCannotBeDrawn) {
  auto samples = line_samples(5);
  samples.push_back({0.0, 1.0});  // log10(0) has no place on the axis
  const std::string svg = plot_fit_svg(samples, {}, {.title = "t", .x_label = "x", .y_label = "y", .log_x = true, .log_y = true});
  EXPECT_EQ(count(svg, "<circle class=\"sample\""), 5u);
  EXPECT_EQ(count(svg, "<polyline"), 0u);
  EXPECT_NE(svg.find("(log)"), std::string::npos);
}

TEST(SvgPlot, DrawsEverySeriesWithItsLegend) {
  std::vector<SvgSeries> series;
  for (int r = 0; r < 3; ++r) {
    series.push_back({.label = "rows " + std::to_string(r), .samples = line_samples(4 + r),
                      .curve = [](double x) { return 0.01 + 1e-6 * x; }});
  }
  const std::string svg = plot_svg(series, {.title = "ELL", .x_label = "width", .y_label = "ms"});
  EXPECT_EQ(count(svg, "<circle class=\"sample\""), 4u + 5u + 6u);
  EXPECT_EQ(count(svg, "<polyline class=\"fit\""), 3u);
  EXPECT_EQ(count(svg, "class=\"legend\""), 3u);
}

TEST(SvgPlot, EscapesTheTitle) {
  const std::string svg = plot_fit_svg(line_samples(2), {}, {.title = "a < b & c", .x_label = "x", .y_label = "y"});
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
}

TEST(SvgPlot, RefusesAPlotWithNothingToDraw) {
  const std::vector<SamplePoint> none{{-1.0, 2.0}};
  EXPECT_THROW(plot_fit_svg(none, {}, {.title = "empty", .x_label = "x", .y_label = "y", .log_x = true}), Error);
}

TEST(SvgPlot, WritesTheFile) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("spmvd_svg_plot_test_" + std::to_string(::getpid()) + ".svg");
  const std::string svg = plot_fit_svg(line_samples(3), {}, {.title = "file", .x_label = "x", .y_label = "y"});
  write_text_file(path.string(), svg);
  std::ifstream in(path);
  std::stringstream read;
  read << in.rdbuf();
  EXPECT_EQ(read.str(), svg);
  std::filesystem::remove(path);
  EXPECT_THROW(write_text_file("/nonexistent-dir/x.svg", svg), Error);
}

}  // namespace
}  // namespace spmvd

namespace spmvd {
namespace {

TEST(SvgPlot, DrawsTheEllGridAsOneSeriesPerRowCount) {
  LogGridFit grid;
  grid.widths = {1, 4, 16};
  grid.rows = {1e3, 1e5};
  grid.log_ms = {-4.6, -4.0, -3.2, -2.3, -1.6, -0.7};
  const std::string svg =
      plot_log_grid_svg(grid, {.title = "ELL", .x_label = "width", .y_label = "ms"});
  EXPECT_EQ(count(svg, "<circle class=\"sample\""), 6u);
  EXPECT_EQ(count(svg, "<polyline class=\"fit\""), 2u);
  EXPECT_NE(svg.find(">rows 1e+05</text>"), std::string::npos);
}

}  // namespace
}  // namespace spmvd
