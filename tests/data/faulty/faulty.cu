// A vector addition whose "mode" parameter injects the failures cutune must record as
// data and tune past: 1 does not compile, 2 computes a wrong result, 3 declares launch
// bounds smaller than the block it is launched with (too many resources).
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
  c[i] = a[i] + b[i];
}
