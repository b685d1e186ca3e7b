// A vector addition whose "mode" parameter injects the failures cutune must record as
// data and tune past: 1 does not compile, 2 computes a wrong result, 3 declares launch
// bounds smaller than the block it is launched with (too many resources), 4 writes far out
// of bounds (an illegal address: a sticky error that costs the GPU worker its context),
// 5 never finishes (the worker is killed after the timeout).
#ifndef block_size_x
#define block_size_x 64
#endif
#ifndef mode
#define mode 0
#endif

#if mode == 1
#error "mode 1 is a deliberate compile error"
#endif

#if mode == 3
#define BOUNDS __launch_bounds__(64)
#else
#define BOUNDS
#endif

extern "C" __global__ void BOUNDS faulty(float* c, const float* a, const float* b, int n) {
  int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i >= n) return;
#if mode == 2
  if (i == n / 2) { c[i] = a[i] - b[i]; return; }
#endif
#if mode == 4
  if (i == n / 2) c[i - (1LL << 40)] = 1.0f;  // 4 TiB below the buffer: unmapped
#endif
#if mode == 5
  if (i == 0)
    for (;;)
      if (clock64() < 0) break;  // never true; clock64 is volatile, so the loop stays
#endif
  c[i] = a[i] + b[i];
}
