#include "cutune/cuda/device.hpp"

#include "cutune/cuda/nvml.hpp"

#include <fmt/format.h>

namespace cutune::cuda {

int device_count(std::string* why_none) {
  const Driver* d = Driver::try_get(why_none);
  if (!d) return 0;
  int n = 0;
  if (d->cuDeviceGetCount(&n) != CUDA_SUCCESS) {
    if (why_none) *why_none = "cuDeviceGetCount failed";
    return 0;
  }
  if (n == 0 && why_none) *why_none = "the CUDA driver sees no GPU";
  return n;
}

namespace {
int attr(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  CUTUNE_CU(CU_FN(cuDeviceGetAttribute)(&v, a, dev));
  return v;
}
CUdevice device_handle(int ordinal) {
  CUdevice dev = 0;
  CUTUNE_CU(CU_FN(cuDeviceGet)(&dev, ordinal));
  return dev;
}
}  // namespace

DeviceIdentity identify(int ordinal) {
  const Driver& d = Driver::get();
  CUdevice dev = device_handle(ordinal);
  DeviceIdentity id;
  char name[256] = {};
  CUTUNE_CU(d.cuDeviceGetName(name, sizeof name, dev));
  id.name = name;
  id.cc_major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  id.cc_minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  id.sm_count = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  std::size_t mem = 0;
  CUTUNE_CU(d.cuDeviceTotalMem(&mem, dev));
  id.memory_bytes = mem;
  id.sm_clock_khz = attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  id.memory_clock_khz = attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  id.memory_bus_bits = attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  id.l2_bytes = attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  CUTUNE_CU(d.cuDriverGetVersion(&id.driver_version));
  id.driver_release = nvml_driver_release();
  CUuuid uuid{};
  CUTUNE_CU(d.cuDeviceGetUuid(&uuid, dev));
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  id.uuid = fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                        b[12], b[13], b[14], b[15]);
  return id;
}

DeviceLimits limits(int ordinal) {
  CUdevice dev = device_handle(ordinal);
  DeviceLimits l;
  l.max_threads_per_block = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l.max_shared_per_block_optin = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  l.warp_size = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  l.max_threads_per_sm = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  return l;
}

Context::Context(int ordinal) : ordinal_(ordinal) {
  device_ = device_handle(ordinal);
  CUTUNE_CU(CU_FN(cuDevicePrimaryCtxRetain)(&ctx_, device_));
  CUTUNE_CU(CU_FN(cuCtxSetCurrent)(ctx_));
}
Context::~Context() {
  if (ctx_) CU_FN(cuDevicePrimaryCtxRelease)(device_);  // no-throw in a destructor
}
void Context::synchronize() const { CUTUNE_CU(CU_FN(cuCtxSynchronize)()); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  CUTUNE_CU(CU_FN(cuMemAlloc)(&ptr_, bytes == 0 ? 1 : bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) CU_FN(cuMemFree)(ptr_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) CU_FN(cuMemFree)(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}
void DeviceBuffer::upload(const void* src, std::size_t bytes) {
  if (bytes) CUTUNE_CU(CU_FN(cuMemcpyHtoD)(ptr_, src, bytes));
}
void DeviceBuffer::download(void* dst, std::size_t bytes) const {
  if (bytes) CUTUNE_CU(CU_FN(cuMemcpyDtoH)(dst, ptr_, bytes));
}

PinnedHostBuffer::PinnedHostBuffer(std::size_t bytes) {
  CUTUNE_CU(CU_FN(cuMemAllocHost)(&ptr_, bytes));
}
PinnedHostBuffer::~PinnedHostBuffer() {
  if (ptr_) CU_FN(cuMemFreeHost)(ptr_);
}

Module::Module(const std::vector<char>& cubin) {
  CUTUNE_CU(CU_FN(cuModuleLoadData)(&module_, cubin.data()));
}
Module::~Module() {
  if (module_) CU_FN(cuModuleUnload)(module_);
}
CUfunction Module::function(const std::string& name) const {
  CUfunction f = nullptr;
  CUTUNE_CU(CU_FN(cuModuleGetFunction)(&f, module_, name.c_str()));
  return f;
}
std::optional<std::pair<CUdeviceptr, std::size_t>> Module::global(const std::string& name) const {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  const CUresult rc = CU_FN(cuModuleGetGlobal)(&ptr, &bytes, module_, name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) return std::nullopt;
  CUTUNE_CU(rc);
  return std::pair{ptr, bytes};
}
int Module::attribute(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  CUTUNE_CU(CU_FN(cuFuncGetAttribute)(&v, a, f));
  return v;
}

Event::Event() { CUTUNE_CU(CU_FN(cuEventCreate)(&ev_, CU_EVENT_DEFAULT)); }
Event::~Event() {
  if (ev_) CU_FN(cuEventDestroy)(ev_);
}
void Event::record(CUstream stream) { CUTUNE_CU(CU_FN(cuEventRecord)(ev_, stream)); }
void Event::synchronize() { CUTUNE_CU(CU_FN(cuEventSynchronize)(ev_)); }
float Event::elapsed_ms_since(const Event& start) const {
  float ms = 0;
  CUTUNE_CU(CU_FN(cuEventElapsedTime)(&ms, start.ev_, ev_));
  return ms;
}

}  // namespace cutune::cuda
