#pragma once
// A Device that forwards to another and counts its allocations and what crosses from the host:
// the tests' check that a build or a timer allocates and uploads what it should and no more.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "kernels/device.hpp"

namespace spmvd::testing {

class CountingDevice final : public Device {
 public:
  explicit CountingDevice(std::unique_ptr<Device> inner) : inner_(std::move(inner)) {}

  const DeviceInfo& info() const noexcept override { return inner_->info(); }
  void* allocate(std::size_t bytes) override {
    ++allocations;
    allocated_bytes += bytes;
    return inner_->allocate(bytes);
  }
  void release(void* pointer) noexcept override { inner_->release(pointer); }
  void copy_from_host(void* dst, const void* src, std::size_t bytes) override {
    uploaded_bytes += bytes;
    inner_->copy_from_host(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    inner_->copy_to_host(dst, src, bytes);
  }
  void copy_on_device(void* dst, const void* src, std::size_t bytes) override {
    inner_->copy_on_device(dst, src, bytes);
  }
  void fill_bytes(void* dst, unsigned char byte, std::size_t bytes) override {
    inner_->fill_bytes(dst, byte, bytes);
  }
  void fill_hashed_uniform(void* dst, std::size_t count, Precision precision,
                           std::uint64_t seed) override {
    inner_->fill_hashed_uniform(dst, count, precision, seed);
  }
  void synchronize() override { inner_->synchronize(); }
  double time_ms(const std::function<void()>& work) override { return inner_->time_ms(work); }
  void* native_stream() const noexcept override { return inner_->native_stream(); }

  int allocations = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t uploaded_bytes = 0;

 private:
  std::unique_ptr<Device> inner_;
};

}  // namespace spmvd::testing
