#include "cutune/cuda/nvml.hpp"

#include <dlfcn.h>

namespace cutune::cuda {
namespace {

// NVML's documented C ABI, declared here because nvml.h is not part of this toolkit
// install. nvmlReturn_t is an int (0 = success), nvmlDevice_t an opaque pointer.
using Handle = void*;
using InitFn = int (*)();
using VersionFn = int (*)(char*, unsigned int);
using ByUuidFn = int (*)(const char*, Handle*);
using ClockFn = int (*)(Handle, int, unsigned int*);        // nvmlClockType_t: SM = 1
using TemperatureFn = int (*)(Handle, int, unsigned int*);  // NVML_TEMPERATURE_GPU = 0
using PowerFn = int (*)(Handle, unsigned int*);             // milliwatts
using EnergyFn = int (*)(Handle, unsigned long long*);      // millijoules
using ReasonsFn = int (*)(Handle, unsigned long long*);
constexpr int kClockSm = 1;
constexpr int kTemperatureGpu = 0;

struct Nvml {
  InitFn init = nullptr;
  VersionFn version = nullptr;
  ByUuidFn by_uuid = nullptr;
  ClockFn clock = nullptr;
  TemperatureFn temperature = nullptr;
  PowerFn power = nullptr;
  EnergyFn energy = nullptr;
  ReasonsFn reasons = nullptr;
  std::string error;
};

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

// Loaded and initialised once, never shut down: readings are taken for the whole run.
const Nvml& nvml() {
  static const Nvml instance = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      n.error = "NVML not found (libnvidia-ml.so.1)";
      return n;
    }
    n.init = symbol<InitFn>(lib, "nvmlInit_v2");
    n.version = symbol<VersionFn>(lib, "nvmlSystemGetDriverVersion");
    n.by_uuid = symbol<ByUuidFn>(lib, "nvmlDeviceGetHandleByUUID");
    n.clock = symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo");
    n.temperature = symbol<TemperatureFn>(lib, "nvmlDeviceGetTemperature");
    n.power = symbol<PowerFn>(lib, "nvmlDeviceGetPowerUsage");
    n.energy = symbol<EnergyFn>(lib, "nvmlDeviceGetTotalEnergyConsumption");
    // Renamed in NVML 12.4 ("throttle" became "clocks event"); the old name still exists.
    n.reasons = symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n.reasons) n.reasons = symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!n.init || !n.by_uuid) {
      n.error = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByUUID";
    } else if (int rc = n.init(); rc != 0) {
      n.error = "nvmlInit_v2 returned " + std::to_string(rc);
    }
    return n;
  }();
  return instance;
}

}  // namespace

NvmlDevice::NvmlDevice(const std::string& uuid) {
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    why_ = n.error;
    return;
  }
  if (uuid.empty()) {
    why_ = "the device has no UUID";
    return;
  }
  Handle h = nullptr;
  if (int rc = n.by_uuid(uuid.c_str(), &h); rc != 0) {
    why_ = "NVML does not know " + uuid + " (error " + std::to_string(rc) + ")";
    return;
  }
  handle_ = h;
}

std::optional<double> NvmlDevice::sm_clock_mhz() const {
  unsigned int v = 0;
  if (!handle_ || !nvml().clock || nvml().clock(handle_, kClockSm, &v) != 0) return std::nullopt;
  return v;
}

std::optional<double> NvmlDevice::temperature_c() const {
  unsigned int v = 0;
  if (!handle_ || !nvml().temperature || nvml().temperature(handle_, kTemperatureGpu, &v) != 0)
    return std::nullopt;
  return v;
}

std::optional<double> NvmlDevice::power_w() const {
  unsigned int mw = 0;
  if (!handle_ || !nvml().power || nvml().power(handle_, &mw) != 0) return std::nullopt;
  return mw / 1000.0;
}

std::optional<std::uint64_t> NvmlDevice::total_energy_mj() const {
  unsigned long long mj = 0;
  if (!handle_ || !nvml().energy || nvml().energy(handle_, &mj) != 0) return std::nullopt;
  return mj;
}

std::optional<std::uint64_t> NvmlDevice::clock_event_reasons() const {
  unsigned long long r = 0;
  if (!handle_ || !nvml().reasons || nvml().reasons(handle_, &r) != 0) return std::nullopt;
  return r;
}

std::string nvml_driver_release() {
  const Nvml& n = nvml();
  char buf[96] = {};
  if (!n.error.empty() || !n.version || n.version(buf, sizeof buf) != 0) return {};
  return buf;
}

NvmlMonitor::NvmlMonitor(const NvmlDevice& device, std::chrono::milliseconds period) : device_(device) {
  auto read = [this] {
    Reading r{device_.sm_clock_mhz(), device_.temperature_c(), device_.power_w()};
    std::lock_guard lock(mutex_);
    latest_ = r;
  };
  if (!device_.available()) return;
  read();
  thread_ = std::jthread([this, read, period](std::stop_token stop) {
    std::mutex m;
    std::unique_lock lock(m);
    while (true) {
      wake_.wait_for(lock, stop, period, [] { return false; });  // a stop request wakes it at once
      if (stop.stop_requested()) return;
      read();
    }
  });
}

NvmlMonitor::~NvmlMonitor() = default;  // jthread: requests stop, wakes the wait, joins

NvmlMonitor::Reading NvmlMonitor::latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

}  // namespace cutune::cuda
