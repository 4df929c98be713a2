#pragma once
// A matrix built into one storage format on one device: built once (expensive), applied many
// times (cheap) — CUTLASS's configuration/arguments split, Kokkos Kernels' SPMVHandle.

#include <cstddef>
#include <memory>

#include "core/plan_partition.hpp"
#include "core/precision.hpp"

namespace spmvd {

class SpmvOperator {
 public:
  virtual ~SpmvOperator() = default;
  // y = alpha*A*x + beta*y. x (cols entries) and y (rows entries) are device pointers holding
  // values of precision(), in the caller's row and column order (a format that permutes rows
  // undoes it). With beta == 0, y is write-only (NaN in y does not propagate). Asynchronous
  // on the device's stream.
  virtual void apply(const void* x, void* y, double alpha, double beta) = 0;
  virtual Precision precision() const noexcept = 0;
  // Device memory held by the built format (arrays, workspaces).
  virtual std::size_t device_bytes() const noexcept = 0;
  // The partition or row order this build computed from the structure, or was handed by its
  // BuildSource (a stored plan's): what the tuned plan carries so that a plan-cache hit does not
  // compute it again (core/plan_partition.hpp). Null (the default) for formats that compute
  // none.
  virtual std::shared_ptr<const PlanPartition> partition() const { return nullptr; }
};

}  // namespace spmvd
