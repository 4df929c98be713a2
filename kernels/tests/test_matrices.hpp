#pragma once
// Seeded random CSR matrices for the format conformance tests: the shapes that break SpMV
// kernels (empty rows, one very long row, non-square both ways, one row, one column, no
// entries, no rows, no columns, more rows than one grid-stride sweep covers) and a band whose
// numbering was scrambled (where reorderings such as RCM pay).

#include <cstdint>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd::testing {

struct NamedMatrix {
  std::string name;
  CsrMatrix<double> matrix;  // validate()d, values uniform in [-1, 1]
};

std::vector<NamedMatrix> conformance_matrices(std::uint64_t seed);

// The seed for this run: SPMVD_TEST_SEED from the environment, else a fixed default.
std::uint64_t test_seed();

}  // namespace spmvd::testing
