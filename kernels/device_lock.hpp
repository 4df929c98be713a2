#pragma once
// The device lock, released while a build runs a host algorithm.
//
// The engine serialises everything it does on the device behind one lock (server/engine.hpp):
// a multiply, a tuning's build, a tuning's run. A format built by a host algorithm (METIS for
// EHYB, OPA and the BCE layout, BRO's encoders) spends 0.1-5 s of its build on the host before
// it touches the device, and a multiply of any other matrix would wait for all of it. So the
// code that takes the lock for a build says so (HeldForBuild), and the builder runs its host
// phase inside without_device_lock: the lock is released for it and taken again after, the way
// an interpreter releases its global lock around a blocking call. A builder that never calls it
// holds the lock throughout, as before; without a HeldForBuild on this thread (calibration,
// tests, spmv-bench) the host work simply runs.
//
// The host phase must not touch the device (no allocation, copy or launch): a multiply may be
// using it meanwhile.

#include <type_traits>
#include <utility>

namespace spmvd {

// Whoever holds the device lock for a build: how to give it up and take it back.
class DeviceLockHolder {
 public:
  virtual void release() = 0;
  // Blocks until the lock is this thread's again.
  virtual void reacquire() = 0;

 protected:
  ~DeviceLockHolder() = default;
};

// While alive, `holder` is the device lock this thread holds for a build (the previous one, if
// any, is restored after).
class HeldForBuild {
 public:
  explicit HeldForBuild(DeviceLockHolder& holder) noexcept;
  ~HeldForBuild();
  HeldForBuild(const HeldForBuild&) = delete;
  HeldForBuild& operator=(const HeldForBuild&) = delete;

 private:
  DeviceLockHolder* previous_;
};

namespace device_lock_detail {
DeviceLockHolder* held_for_build() noexcept;
void set_held_for_build(DeviceLockHolder* holder) noexcept;
}  // namespace device_lock_detail

// Runs `host_work` (host memory only) with this thread's build lock released, taking it back
// when the work returns or throws; its result is returned.
template <typename HostWork>
decltype(auto) without_device_lock(HostWork&& host_work) {
  DeviceLockHolder* holder = device_lock_detail::held_for_build();
  if (holder == nullptr) return std::forward<HostWork>(host_work)();
  holder->release();
  // Taken back however the work ends; nothing is registered meanwhile, so a nested call runs
  // its work without releasing anything twice.
  struct Reacquire {
    DeviceLockHolder* holder;
    ~Reacquire() {
      device_lock_detail::set_held_for_build(holder);
      holder->reacquire();
    }
  } reacquire{holder};
  device_lock_detail::set_held_for_build(nullptr);
  return std::forward<HostWork>(host_work)();
}

}  // namespace spmvd
