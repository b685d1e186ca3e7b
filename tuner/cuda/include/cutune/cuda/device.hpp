#pragma once
// GPU identity and RAII handles over the run-time-loaded driver (STYLE.md, convention 4).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cutune/cuda/driver.hpp"
#include "cutune/model/device_identity.hpp"

namespace cutune::cuda {

/// Number of GPUs; 0 when there is no driver (never throws).
int device_count(std::string* why_none = nullptr);
/// The structured identity of GPU `ordinal` (NVRTC version filled by the caller's layer).
DeviceIdentity identify(int ordinal);

struct DeviceLimits {
  int max_threads_per_block = 0;
  int max_shared_per_block_optin = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;  ///< resident threads per SM: the occupancy's denominator
};
DeviceLimits limits(int ordinal);

/// The device's primary context made current on this thread; released on destruction.
/// Not copyable or movable: exactly one release per retain.
class Context {
 public:
  explicit Context(int ordinal);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  void synchronize() const;
  int ordinal() const { return ordinal_; }

 private:
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

/// Device memory; movable, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes);
  void download(void* dst, std::size_t bytes) const;

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory the GPU can write directly (unified addressing): a kernel
/// stores into it and the host reads it after a synchronize, with no copy call.
class PinnedHostBuffer {
 public:
  explicit PinnedHostBuffer(std::size_t bytes);
  ~PinnedHostBuffer();
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  void* get() const { return ptr_; }
  /// The same memory as a device address (identical under unified addressing).
  CUdeviceptr device_ptr() const { return reinterpret_cast<CUdeviceptr>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

/// A loaded cubin; movable, unloaded on destruction.
class Module {
 public:
  explicit Module(const std::vector<char>& cubin);
  ~Module();
  Module(Module&& o) noexcept : module_(o.module_) { o.module_ = nullptr; }
  Module& operator=(Module&&) = delete;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel named `name`; throws DriverError when the cubin has none.
  CUfunction function(const std::string& name) const;
  /// The module-scope variable `name` (a __constant__ or __device__ symbol) and its size in
  /// bytes; nullopt when the module has none of that name.
  std::optional<std::pair<CUdeviceptr, std::size_t>> global(const std::string& name) const;
  static int attribute(CUfunction f, CUfunction_attribute a);

 private:
  CUmodule module_ = nullptr;
};

/// A CUDA event (timing enabled); not copyable.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(CUstream stream = nullptr);
  void synchronize();
  /// Milliseconds from `start` to this event.
  float elapsed_ms_since(const Event& start) const;

 private:
  CUevent ev_ = nullptr;
};

}  // namespace cutune::cuda
