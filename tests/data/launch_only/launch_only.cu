// A grid-stride vector addition for the launch-only parameter tests. The second tuning
// parameter only divides the grid (GridDivX in launch_only.json) and is deliberately not
// named in this file, even in a comment: the loop covers whatever grid it gets, so all its
// values share one cubin. use_ldg is named only in the header, and is still compiled in.
#ifndef block_size_x
#define block_size_x 256
#endif

#include "launch_only_load.cuh"

extern "C" __global__ void __launch_bounds__(block_size_x)
    launch_only(float* c, const float* a, const float* b, int n) {
  const int stride = gridDim.x * block_size_x;
  for (int i = blockIdx.x * block_size_x + threadIdx.x; i < n; i += stride)
    c[i] = load(a + i) + load(b + i);
}
