#pragma once
// What a format is built from: the caller's CSR on the host and, uploaded once and shared, the
// same CSR on the device. The tuner and the engine hold one source per matrix while they build
// candidates, so the upload is paid once per matrix, not once per candidate (issue 17 "build
// once"); formats whose arrays are the CSR's own (csr_scalar, csr_vector, cuSPARSE CSR, and the
// COO formats' columns and values) keep a reference to it instead of a copy, and formats that
// convert do it on the device from it.
//
// Layouts shared by candidates that differ only in launch parameters (one ELL for every block
// size) are cached by key while some operator still holds them (weak references): the tuner's
// kept best and the candidate it builds next share one build, and nothing outlives its users,
// so the CSR copy and every layout are freed once no operator of the resident plan uses them.
//
// Partitions and row orders a host builder computes from the structure (METIS's parts, an RCM
// order: core/plan_partition.hpp) are held by the source too, by kind, so the candidates of one
// matrix that need the same one compute it once; and a plan read back from the cache offers its
// stored one before it is built, so a cache hit computes none it can load (issue 16).
//
// Thread safety: the accessors may be called from several threads; builds on one device are
// serialised by their callers (the device lock), as every device operation is.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/plan_partition.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"

namespace spmvd {

// The CSR arrays on a device: 64-bit row offsets (rows + 1), 32-bit column indices and values
// in `precision` (fp64 -> fp32 rounds to nearest, once), nnz each; in the caller's order.
struct DeviceCsrArrays {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  Precision precision = Precision::fp64;
  DeviceBuffer row_offsets;  // RowOffset
  DeviceBuffer col_indices;  // ColIndex
  DeviceBuffer values;       // float or double

  std::size_t bytes() const noexcept {
    return row_offsets.bytes() + col_indices.bytes() + values.bytes();
  }
};

// Uploads `matrix` to `device` with values in `precision`.
std::shared_ptr<const DeviceCsrArrays> upload_csr(Device& device, const CsrMatrix<double>& matrix,
                                                  Precision precision);

class BuildSource {
 public:
  // Both must outlive the source and every operator built from it that keeps no copy of them.
  BuildSource(const CsrMatrix<double>& host, Device& device) : host_(host), device_(device) {}
  BuildSource(const BuildSource&) = delete;
  BuildSource& operator=(const BuildSource&) = delete;

  const CsrMatrix<double>& host() const noexcept { return host_; }
  Device& device() const noexcept { return device_; }

  // The CSR on the device in `precision`: uploaded on the first call, the same arrays after.
  // The source holds it until it is destroyed; operators that use it hold it as long as they do.
  std::shared_ptr<const DeviceCsrArrays> device_csr(Precision precision) const;
  // Whether device_csr(precision) is already uploaded (a build then pays no upload).
  bool has_device_csr(Precision precision) const;

  // A partition stored with the plan about to be built (a plan-cache hit): the next
  // partition() of its kind considers it first. Null: nothing.
  void offer_partition(std::shared_ptr<const PlanPartition> stored) const;
  // The partition of `kind` for this matrix: the one held (offered, or computed by an earlier
  // build from this source) where problem(held) is "" (the build's checks:
  // core/plan_partition.hpp); else compute()'s, held from then on for the builds after. A held
  // one that fails its checks is logged with the reason and replaced, never used: a damaged
  // stored partition costs the computation, not a wrong result. compute() runs without the
  // source's lock.
  std::shared_ptr<const PlanPartition> partition(
      const std::string& kind, const std::function<std::string(const PlanPartition&)>& problem,
      const std::function<std::vector<std::int32_t>()>& compute) const;

  // The layout cached under `key` while some operator still holds it, else make() (which
  // builds it on the device) cached under `key`. The key names the layout and everything it
  // depends on (format, layout parameters, precision), never launch parameters.
  template <typename Layout>
  std::shared_ptr<const Layout> shared_layout(const std::string& key,
                                              const std::function<std::shared_ptr<const Layout>()>& make) const {
    {
      const std::lock_guard lock(mutex_);
      if (auto held = layouts_[key].lock()) return std::static_pointer_cast<const Layout>(held);
    }
    std::shared_ptr<const Layout> made = make();
    const std::lock_guard lock(mutex_);
    layouts_[key] = made;
    return made;
  }

 private:
  const CsrMatrix<double>& host_;
  Device& device_;
  mutable std::mutex mutex_;
  mutable std::array<std::shared_ptr<const DeviceCsrArrays>, 2> csr_;  // fp32, fp64
  mutable std::map<std::string, std::weak_ptr<const void>> layouts_;
  mutable std::map<std::string, std::shared_ptr<const PlanPartition>> partitions_;  // by kind
};

}  // namespace spmvd
