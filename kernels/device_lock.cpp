#include "kernels/device_lock.hpp"

namespace spmvd {
namespace {

thread_local DeviceLockHolder* current_holder = nullptr;

}  // namespace

namespace device_lock_detail {

DeviceLockHolder* held_for_build() noexcept { return current_holder; }
void set_held_for_build(DeviceLockHolder* holder) noexcept { current_holder = holder; }

}  // namespace device_lock_detail

HeldForBuild::HeldForBuild(DeviceLockHolder& holder) noexcept : previous_(current_holder) {
  current_holder = &holder;
}

HeldForBuild::~HeldForBuild() { current_holder = previous_; }

}  // namespace spmvd
