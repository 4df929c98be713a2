#include "server/large_allocations.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>

#include "core/error.hpp"

namespace spmvd {
namespace {

// Bytes glibc holds in mmapped chunks (mallinfo2().hblkhd) while `bytes` are allocated.
std::size_t mapped_bytes_while_holding(std::size_t bytes) {
  void* p = std::malloc(bytes);
  static_cast<volatile char*>(p)[0] = 1;
  const std::size_t mapped = mallinfo2().hblkhd;
  std::free(p);
  return mapped;
}

TEST(LargeAllocations, BuffersAboveTheThresholdAreTheirOwnMappingEvenAfterAFreeOfABiggerOne) {
  serve_large_allocations_by_mmap(std::uint64_t{1} << 20);
  const std::size_t before = mallinfo2().hblkhd;
  // glibc's default would raise its threshold to 24 MiB after this free...
  EXPECT_GE(mapped_bytes_while_holding(24u << 20), before + (24u << 20));
  // ...and then serve 2 MiB from an arena; fixed at 1 MiB, it stays a mapping.
  EXPECT_GE(mapped_bytes_while_holding(2u << 20), before + (2u << 20));
  // Below the threshold: the arena.
  EXPECT_LT(mapped_bytes_while_holding(512u << 10), before + (512u << 10));
}

TEST(LargeAllocations, RefusesAThresholdGlibcCannotHave) {
  try {
    serve_large_allocations_by_mmap(kMaxMmapThresholdBytes + 1);
    FAIL() << "expected invalid_argument";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("malloc-mmap-threshold-bytes"), std::string::npos);
  }
}

}  // namespace
}  // namespace spmvd
