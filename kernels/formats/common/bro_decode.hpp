#pragma once
// The BRO decoder the kernels run (paper 001, Algorithm 1), written once for host and device:
// nvcc compiles it into the kernels of bro_stream.cuh, g++ into the unit tests, which run it on
// the built arrays so that the decode the GPU executes is checked without a GPU. Bit order and
// multiplexing: bro_stream.hpp.

#include <cstdint>

#if defined(__CUDACC__)
#define SPMVD_BRO_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SPMVD_BRO_HOST_DEVICE inline
#endif

namespace spmvd::bro {

// A read-only load: through the non-coherent cache on the device (__ldg), plain on the host.
template <typename T>
SPMVD_BRO_HOST_DEVICE T load(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// Four consecutive words of a 16-byte-aligned symbol: one 128-bit load on the device.
SPMVD_BRO_HOST_DEVICE void load_symbol4(const std::uint32_t* p, std::uint32_t& w0,
                                        std::uint32_t& w1, std::uint32_t& w2, std::uint32_t& w3) {
#if defined(__CUDA_ARCH__)
  const uint4 s = __ldg(reinterpret_cast<const uint4*>(p));
  w0 = s.x;
  w1 = s.y;
  w2 = s.z;
  w3 = s.w;
#else
  w0 = p[0];
  w1 = p[1];
  w2 = p[2];
  w3 = p[3];
#endif
}

// The words of one row stream in order, 32-bit symbols: `next` is the row's first word, its
// words `stride` apart (the slice's or the interval's height).
struct ScalarWords {
  const std::uint32_t* next;
  std::int64_t stride;
  SPMVD_BRO_HOST_DEVICE std::uint32_t operator()() {
    const std::uint32_t w = load(next);
    next += stride;
    return w;
  }
};

// The words of one row stream with 128-bit symbols (bro_stream.hpp, multiplexing): first
// `vector_left` 16-byte symbols from `next` (`stride` words apart), then the 32-bit tail words
// from `tail` (`tail_stride` apart).
struct VectorWords {
  const std::uint32_t* next;
  std::int64_t stride;
  std::int64_t vector_left;
  const std::uint32_t* tail;
  std::int64_t tail_stride;
  std::uint32_t held0 = 0, held1 = 0, held2 = 0;  // words of the current symbol not yet used
  std::uint32_t held_count = 0;
  SPMVD_BRO_HOST_DEVICE std::uint32_t operator()() {
    if (held_count > 0) {
      const std::uint32_t w = held0;
      held0 = held1;
      held1 = held2;
      --held_count;
      return w;
    }
    if (vector_left > 0) {
      std::uint32_t w0;
      load_symbol4(next, w0, held0, held1, held2);
      next += stride;
      --vector_left;
      held_count = 3;
      return w0;
    }
    const std::uint32_t w = load(tail);
    tail += tail_stride;
    return w;
  }
};

// Reads consecutive b-bit values (0 <= b <= 32) of one row stream, least significant bit first,
// from its words in order. Algorithm 1's two branches are the `avail < bits` test: threads that
// share bit widths and row lengths in words (a slice's warp, an interval's warp) take it, and
// the word source's own tests, together, so none of them diverges.
template <typename Words>
struct BitReader {
  Words words;
  std::uint64_t buffer = 0;
  std::uint32_t avail = 0;

  SPMVD_BRO_HOST_DEVICE std::uint32_t read(std::uint32_t bits) {
    if (avail < bits) {
      buffer |= static_cast<std::uint64_t>(words()) << avail;
      avail += 32;
    }
    const auto value = static_cast<std::uint32_t>(buffer & ((std::uint64_t{1} << bits) - 1));
    buffer >>= bits;
    avail -= bits;
    return value;
  }
};

// The reader of row t of a BRO-ELL slice of `height` rows of `row_words` words each whose
// stream starts at `slice_stream` (kWords: 1 or 4 words per symbol).
template <int kWords>
SPMVD_BRO_HOST_DEVICE auto bro_ell_row_reader(const std::uint32_t* slice_stream,
                                              std::int64_t height, std::int64_t t,
                                              std::int64_t row_words) {
  static_assert(kWords == 1 || kWords == 4, "symbols are 1 or 4 words");
  if constexpr (kWords == 1) {
    return BitReader<ScalarWords>{ScalarWords{slice_stream + t, height}};
  } else {
    const std::int64_t vectors = row_words / 4;
    return BitReader<VectorWords>{VectorWords{slice_stream + t * 4, height * 4, vectors,
                                              slice_stream + vectors * 4 * height + t, height}};
  }
}

// Algorithm 1's loop for one stream row: row t of a slice of `height` rows of `row_words`
// words each, whose stream starts at `slice_stream`, whose num_col widths are `widths` and
// whose values start at `slice_values`. Returns the sum over the row's entries of
// value * x[column].
template <typename Value, int kWords>
SPMVD_BRO_HOST_DEVICE Value bro_ell_row_sum(const std::uint32_t* slice_stream, std::int64_t height,
                                            std::int64_t t, std::int64_t row_words,
                                            const std::uint8_t* widths, std::int64_t num_col,
                                            const Value* slice_values, const Value* x) {
  auto reader = bro_ell_row_reader<kWords>(slice_stream, height, t, row_words);
  const Value* v = slice_values + t;
  Value sum = 0;
  std::int64_t column = -1;  // deltas count from column -1 (bro_stream.hpp: delta_0 = c_0 + 1)
  for (std::int64_t c = 0; c < num_col; ++c) {
    const std::uint32_t delta = reader.read(load(widths + c));
    // Algorithm 1, line 17: delta 0 is padding after the row's entries; no value or x is read.
    if (delta != 0) {
      column += delta;
      sum += load(v + c * height) * load(x + column);
    }
  }
  return sum;
}

}  // namespace spmvd::bro
