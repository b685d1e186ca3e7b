#pragma once
// The CUDA driver API, loaded at run time with dlopen (ARCHITECTURE.md, decision 1): cuda.h
// supplies the types and prototypes, dlsym the entry points under their versioned names.
#include <cuda.h>

#include <stdexcept>
#include <string>

namespace cutune::cuda {

/// No driver on this machine (libcuda.so.1 missing or unusable). what() says why.
class NoDriver : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failing driver call: the raw result, its name, and the call text (STYLE.md, 3).
class DriverError : public std::runtime_error {
 public:
  DriverError(CUresult code, const std::string& what) : std::runtime_error(what), code_(code) {}
  CUresult code() const { return code_; }
  /// Errors after which the context is unusable (illegal address, launch failure...).
  bool sticky() const;

 private:
  CUresult code_;
};

#define CUTUNE_DRIVER_FUNCTIONS(X)                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                 \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)         \
  X(cuDeviceTotalMem) X(cuDeviceGetUuid) X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)                   \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute)    \
  X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)     \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)              \
  X(cuMemsetD32Async) X(cuMemAllocHost) X(cuMemFreeHost) X(cuModuleGetGlobal)          \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)             \
  X(cuEventElapsedTime) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

/// The driver's entry points. The macro names map to the versioned symbols of cuda.h
/// (cuMemAlloc -> cuMemAlloc_v2), so each pointer has exactly the prototype we call.
struct Driver {
#define CUTUNE_DECLARE(fn) decltype(&::fn) fn = nullptr;
  CUTUNE_DRIVER_FUNCTIONS(CUTUNE_DECLARE)
#undef CUTUNE_DECLARE
  /// Drivers for CUDA 12.4 and later only: nullptr on older ones (the check it serves is skipped).
  decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo = nullptr;

  /// Loads and initialises the driver once; throws NoDriver when there is none.
  static const Driver& get();
  /// nullptr (and `why` set) when there is no usable driver; never throws.
  static const Driver* try_get(std::string* why = nullptr);
};

/// Throws DriverError naming the call, result name and string, and file:line.
void check(CUresult rc, const char* call, const char* file, int line);

}  // namespace cutune::cuda

#define CUTUNE_CU(call) ::cutune::cuda::check((call), #call, __FILE__, __LINE__)
#define CU_FN(fn) ::cutune::cuda::Driver::get().fn
