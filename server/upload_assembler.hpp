#pragma once
// Turns the chunks of one Upload stream into a validated host CSR. Chunks are checked as they
// arrive (sizes against the header, the byte limit), so a bad or oversized stream is refused
// early; the complete matrix is validated once at the end. A CSR upload's rows are sorted and
// their duplicate columns summed; an FP32 upload whose values overflow single precision is
// refused.

#include <cstdint>
#include <string>

#include "core/csr_matrix.hpp"
#include "core/csr_normalize.hpp"
#include "core/precision.hpp"
#include "proto/spmvd.pb.h"

namespace spmvd {

struct UploadedMatrix {
  CsrMatrix<double> matrix;
  Precision precision = Precision::fp64;
  std::string name;
  std::uint64_t expected_multiplies = 0;  // the header's hint; 0: the daemon's default
  NormalizeOutcome normalized;  // CSR uploads: rows put in order, duplicates summed
};

class UploadAssembler {
 public:
  explicit UploadAssembler(std::uint64_t max_upload_bytes) : max_upload_bytes_(max_upload_bytes) {}

  // Throws Error(invalid_argument / resource_exhausted) naming the chunk and what was wrong.
  void add(const v1::UploadChunk& chunk);
  // The stream ended: checks completeness, parses Matrix Market text, validates the CSR.
  UploadedMatrix finish();

 private:
  void start(const v1::UploadHeader& header);
  void add_csr(const v1::CsrChunk& csr);
  void add_text(const std::string& bytes);
  std::string where() const;

  std::uint64_t max_upload_bytes_;
  std::uint64_t received_bytes_ = 0;
  std::uint64_t chunk_index_ = 0;
  bool started_ = false;
  v1::UploadHeader header_;
  UploadedMatrix result_;
  std::string text_;
};

}  // namespace spmvd
