#include "cutune/cuda/activity.hpp"

#include <cupti_activity.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <new>

namespace cutune::cuda {
namespace {

using RegisterFn = CUptiResult (*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
using EnableFn = CUptiResult (*)(CUpti_ActivityKind);
using FlushFn = CUptiResult (*)(uint32_t);
using NextFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
using TimestampFn = CUptiResult (*)(uint64_t*);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char**);

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kAlignment = 8;  // CUPTI requires 8-byte aligned buffers

struct Cupti {
  RegisterFn register_callbacks = nullptr;
  EnableFn enable = nullptr;
  FlushFn flush_all = nullptr;
  NextFn next_record = nullptr;
  TimestampFn timestamp = nullptr;
  ResultStringFn result_string = nullptr;
  std::string error;
};

Cupti& cupti() {
  static Cupti c;
  return c;
}

// Records arrive in CUPTI's completion callback, possibly on its own thread.
std::mutex records_mutex;
std::vector<GpuActivity> records;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(::operator new(kBufferBytes, std::align_val_t(kAlignment), std::nothrow));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(records_mutex);
  CUpti_Activity* record = nullptr;
  while (cupti().next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    GpuActivity a;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        a = {k->name ? k->name : "", k->start, k->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        a = {"memcpy", m->start, m->end};
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        a = {"memset", m->start, m->end};
        break;
      }
      default:
        continue;
    }
    records.push_back(std::move(a));
  }
  ::operator delete(buffer, std::align_val_t(kAlignment));
}

void* open_cupti() {
  std::vector<std::string> names;
  if (const char* env = std::getenv("CUTUNE_CUPTI"); env && *env) names.emplace_back(env);
  names.push_back(fmt::format("libcupti.so.{}", CUDA_VERSION / 1000));
  names.emplace_back("libcupti.so");
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64"})
    names.push_back(fmt::format("{}/libcupti.so.{}", dir, CUDA_VERSION / 1000));
  for (const auto& n : names)
    if (void* lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  return nullptr;
}

std::string describe(CUptiResult rc) {
  const char* s = nullptr;
  if (cupti().result_string) cupti().result_string(rc, &s);
  return s ? s : fmt::format("CUPTI error {}", static_cast<int>(rc));
}

}  // namespace

ActivityTrace* ActivityTrace::try_get(std::string* why) {
  // Never destroyed: CUPTI keeps calling back into this process until it exits.
  static ActivityTrace* instance = [] () -> ActivityTrace* {
    Cupti& c = cupti();
    void* lib = open_cupti();
    if (!lib) {
      c.error = fmt::format("CUPTI not found (libcupti.so.{}; set CUTUNE_CUPTI to its path)", CUDA_VERSION / 1000);
      return nullptr;
    }
    c.register_callbacks = reinterpret_cast<RegisterFn>(dlsym(lib, "cuptiActivityRegisterCallbacks"));
    c.enable = reinterpret_cast<EnableFn>(dlsym(lib, "cuptiActivityEnable"));
    c.flush_all = reinterpret_cast<FlushFn>(dlsym(lib, "cuptiActivityFlushAll"));
    c.next_record = reinterpret_cast<NextFn>(dlsym(lib, "cuptiActivityGetNextRecord"));
    c.timestamp = reinterpret_cast<TimestampFn>(dlsym(lib, "cuptiGetTimestamp"));
    c.result_string = reinterpret_cast<ResultStringFn>(dlsym(lib, "cuptiGetResultString"));
    if (!c.register_callbacks || !c.enable || !c.flush_all || !c.next_record || !c.timestamp) {
      c.error = "libcupti lacks the activity API";
      return nullptr;
    }
    if (auto rc = c.register_callbacks(buffer_requested, buffer_completed); rc != CUPTI_SUCCESS) {
      c.error = "cuptiActivityRegisterCallbacks: " + describe(rc);
      return nullptr;
    }
    // CONCURRENT_KERNEL, not KERNEL: the latter serialises all kernels.
    for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                      CUPTI_ACTIVITY_KIND_MEMSET}) {
      if (auto rc = c.enable(kind); rc != CUPTI_SUCCESS) {
        c.error = fmt::format("cuptiActivityEnable({}): {}", static_cast<int>(kind), describe(rc));
        return nullptr;
      }
    }
    return new ActivityTrace();
  }();
  if (!instance && why) *why = cupti().error;
  return instance;
}

std::uint64_t ActivityTrace::now_ns() const {
  std::uint64_t t = 0;
  cupti().timestamp(&t);
  return t;
}

std::vector<GpuActivity> ActivityTrace::collect(std::uint64_t since_ns) {
  cupti().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::vector<GpuActivity> out;
  std::lock_guard lock(records_mutex);
  for (auto& r : records)
    if (r.start_ns >= since_ns && r.end_ns >= r.start_ns) out.push_back(std::move(r));
  records.clear();
  return out;
}

}  // namespace cutune::cuda
