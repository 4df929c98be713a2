#pragma once
// Every fit of a model set drawn as an SVG in the manner of paper 004's figures: the measured
// samples the record keeps as dots, the fitted curve through them. For `spmv-calibrate --plots`
// and `spmvctl model plot`.

#include <string>
#include <vector>

#include "models/model_set.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

// Each family record's pictures (its plots_of), families in registry order: csr_vector ms
// against row length c (Fig. 3, piecewise fit), ell the log grid (Fig. 5), coo ms against
// non-zeros (Fig. 6), bytes ms against bytes moved. A variant without samples (the ELL grid
// always has them) is left out. O(samples + curve points).
std::vector<NamedSvg> model_set_plots(const ModelSet& set);

}  // namespace spmvd
