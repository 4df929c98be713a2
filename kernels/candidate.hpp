#pragma once
#include <ostream>

#include "core/format_id.hpp"
#include "core/launch_config.hpp"

namespace spmvd {

// One point of a format's parameter space: what the tuner ranks, measures and stores.
struct Candidate {
  FormatId format;
  FormatParams params;
  LaunchConfig launch;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

}  // namespace spmvd
