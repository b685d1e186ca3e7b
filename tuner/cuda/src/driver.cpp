#include "cutune/cuda/driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

namespace cutune::cuda {
namespace {

struct Loaded {
  Driver driver;
  std::string error;  ///< non-empty when loading failed
};

const Loaded& loaded() {
  static const Loaded instance = [] {
    Loaded l;
    // Never closed: the driver stays loaded for the life of the process.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      // dlerror() names the library itself: "libcuda.so.1: cannot open shared object file: ...".
      std::string why = dlerror();
      if (why.find("libcuda.so.1") == std::string::npos) why = "libcuda.so.1: " + why;
      l.error = fmt::format("no CUDA driver on this machine ({})", why);
      return l;
    }
    // Each symbol is looked up under the name cuda.h's macros give it (cuMemAlloc ->
    // "cuMemAlloc_v2"), whose prototype is exactly the one cuda.h declares. Not
    // cuGetProcAddress(name, CUDA_VERSION): that returns the newest variant, and some
    // change signature (cuCtxSynchronize at 13.0 takes a context), a crash seen on the H200.
#define CUTUNE_STR(x) #x
#define CUTUNE_XSTR(x) CUTUNE_STR(x)
#define CUTUNE_LOAD(fn)                                                                 \
  {                                                                                     \
    void* p = dlsym(lib, CUTUNE_XSTR(fn));                                              \
    if (!p) {                                                                           \
      l.error = fmt::format("the CUDA driver lacks {} (need a driver for CUDA {}.{}+)", \
                            CUTUNE_XSTR(fn), CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10); \
      return l;                                                                         \
    }                                                                                   \
    l.driver.fn = reinterpret_cast<decltype(l.driver.fn)>(p);                           \
  }
    CUTUNE_DRIVER_FUNCTIONS(CUTUNE_LOAD)
#undef CUTUNE_LOAD
    l.driver.cuFuncGetParamInfo = reinterpret_cast<decltype(l.driver.cuFuncGetParamInfo)>(dlsym(lib, "cuFuncGetParamInfo"));
    CUresult rc = l.driver.cuInit(0);
    if (rc != CUDA_SUCCESS) {
      const char* name = "?";
      l.driver.cuGetErrorName(rc, &name);
      l.error = fmt::format("the CUDA driver did not initialise: cuInit returned {}", name);
    }
    return l;
  }();
  return instance;
}

}  // namespace

const Driver* Driver::try_get(std::string* why) {
  const Loaded& l = loaded();
  if (!l.error.empty()) {
    if (why) *why = l.error;
    return nullptr;
  }
  return &l.driver;
}

const Driver& Driver::get() {
  std::string why;
  const Driver* d = try_get(&why);
  if (!d) throw NoDriver(why);
  return *d;
}

bool DriverError::sticky() const {
  switch (code_) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return true;
    default:
      return false;
  }
}

void check(CUresult rc, const char* call, const char* file, int line) {
  if (rc == CUDA_SUCCESS) return;
  const char* name = "?";
  const char* text = "?";
  const Driver* d = Driver::try_get();
  if (d) {
    d->cuGetErrorName(rc, &name);
    d->cuGetErrorString(rc, &text);
  }
  throw DriverError(rc, fmt::format("{} ({}): {} at {}:{}", name, text, call, file, line));
}

}  // namespace cutune::cuda
