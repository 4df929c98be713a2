#pragma once
// What the bench tools measure: a Matrix Market file or a generator spec, optionally replicated
// block-diagonally ("derived": a real matrix pushed past the L2 size, reported as derived, never
// as real). Suite files list one input per line:
//
//   # comment
//   <path.mtx[.gz] | generator spec> [label=NAME] [derived=COPIES] [renumber=SEED]
//
// renumber=SEED applies one random permutation to the rows and the columns of a square matrix
// (after the copies): the same structure and row lengths with the locality gone, the class
// where cuSPARSE is strongest and x gathers cost most (issue 16).
//
// Relative paths are resolved against the data directory (--data-dir or $BUNDLE_DATA).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/csr_matrix.hpp"

namespace spmvd {

struct BenchInput {
  std::string source;       // the path or spec as written
  std::string label;        // short name for tables; defaults to the file stem or the spec
  std::int64_t copies = 1;  // block-diagonal copies; > 1 makes the input derived
  std::uint64_t renumber_seed = 0;  // > 0: rows and columns randomly renumbered with this seed
  bool derived() const noexcept { return copies > 1 || renumber_seed > 0; }
};

// An input given on the command line (no label/derived tokens): label from the source.
BenchInput make_bench_input(const std::string& source);

// Parses a suite. Throws Error(invalid_argument) with "<origin>:<line>: ..." for an unknown
// token, a bad copy count or a repeated label.
std::vector<BenchInput> parse_suite(std::istream& in, const std::string& origin);
// Opens and parses a suite file; a missing file is Error(not_found).
std::vector<BenchInput> read_suite_file(const std::string& path);

// Generates or reads the matrix (relative paths against data_dir when it is not empty),
// replicates it `copies` times and renumbers it. Throws what the generator or reader throws,
// and Error(invalid_argument) when a non-square matrix is to be renumbered.
CsrMatrix<double> load_bench_input(const BenchInput& input, const std::string& data_dir);

}  // namespace spmvd
