#include "core/fingerprint.hpp"

#include <xxhash.h>

#include <bit>
#include <cstdio>
#include <memory>

#include "core/error.hpp"

namespace spmvd {

// The fingerprint hashes the raw bytes of the arrays: stable across machines only where the
// byte order agrees (fingerprint.hpp promises little-endian hosts).
static_assert(std::endian::native == std::endian::little,
              "structural_fingerprint hashes little-endian array bytes");

std::string Fingerprint::hex() const {
  char buffer[33];
  std::snprintf(buffer, sizeof buffer, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return std::string(buffer, 32);
}

template <typename Value>
Fingerprint structural_fingerprint(const CsrMatrix<Value>& m) {
  struct StateDeleter {
    void operator()(XXH3_state_t* s) const noexcept { XXH3_freeState(s); }
  };
  const std::unique_ptr<XXH3_state_t, StateDeleter> state(XXH3_createState());
  if (!state) throw Error(ErrorCode::internal, "XXH3_createState failed (out of memory)");
  if (XXH3_128bits_reset(state.get()) == XXH_ERROR)
    throw Error(ErrorCode::internal, "XXH3_128bits_reset failed");

  // The array lengths go in with the dimensions so that two byte streams can only collide
  // through the hash itself, even for matrices that have not passed validate().
  const std::int64_t header[4] = {m.rows, m.cols, static_cast<std::int64_t>(m.row_offsets.size()),
                                  static_cast<std::int64_t>(m.col_indices.size())};
  // The arrays are hashed in place, one update each: XXH3 streams them at memory speed.
  const bool ok =
      XXH3_128bits_update(state.get(), header, sizeof header) == XXH_OK &&
      XXH3_128bits_update(state.get(), m.row_offsets.data(),
                          m.row_offsets.size() * sizeof(RowOffset)) == XXH_OK &&
      XXH3_128bits_update(state.get(), m.col_indices.data(),
                          m.col_indices.size() * sizeof(ColIndex)) == XXH_OK;
  if (!ok) throw Error(ErrorCode::internal, "XXH3_128bits_update failed");
  const XXH128_hash_t h = XXH3_128bits_digest(state.get());
  return Fingerprint{h.high64, h.low64};
}

template Fingerprint structural_fingerprint(const CsrMatrix<float>&);
template Fingerprint structural_fingerprint(const CsrMatrix<double>&);

}  // namespace spmvd
