#pragma once
// Where glibc serves the daemon's large host buffers from (issue 18, docs/OPERATIONS.md
// "Memory").
//
// Why: glibc raises its mmap threshold each time a mapped chunk is freed (up to 32 MiB), so
// after the first matrix is released, the next matrices' CSR arrays and trial format layouts
// (1-32 MB each) are carved from the per-thread arenas of the gRPC and tuning threads, between
// small long-lived allocations. Freed, they stay resident: on an H100 daemon, 32 clients
// uploading, multiplying and releasing 100k-200k-row matrices left 811, 1325, 1353 MB resident
// after three rounds (start 159 MB), malloc_trim after every release notwithstanding. With the
// threshold fixed at 1 MiB (which also stops glibc moving it) every such buffer is its own
// mapping and goes back to the OS when freed: 208, 209, 212 MB after the same rounds, and the
// peak while the matrices were resident fell from 2255 to 824 MB (bench/gpu_session.sh
// memory, 2026-11-23). Small allocations, the gRPC traffic, stay in the arenas.

#include <cstdint>

namespace spmvd {

// glibc's largest mmap threshold (HEAP_MAX_SIZE / 2 on 64-bit).
inline constexpr std::uint64_t kMaxMmapThresholdBytes = std::uint64_t{32} << 20;

// Serves every host allocation of at least `bytes` with its own mapping, returned to the OS
// when freed (mallopt M_MMAP_THRESHOLD; fixing it turns off glibc's moving threshold). 0 leaves
// glibc's default. Call once at start, before the first large allocation. Throws
// Error(invalid_argument) above kMaxMmapThresholdBytes, Error(internal) where mallopt refuses.
void serve_large_allocations_by_mmap(std::uint64_t bytes);

}  // namespace spmvd
