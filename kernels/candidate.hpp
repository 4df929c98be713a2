#pragma once
#include <ostream>

#include "core/format_id.hpp"
#include "core/format_params.hpp"
#include "core/launch_config.hpp"

namespace spmvd {

// One point of a format's parameter space: what the tuner ranks, measures and stores. params
// is the FieldSet of the format's own parameter struct (empty for a format without one).
struct Candidate {
  FormatId format;
  FormatParams params;
  LaunchConfig launch;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

}  // namespace spmvd
