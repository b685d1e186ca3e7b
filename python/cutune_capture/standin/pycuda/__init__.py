"""Stand-in for PyCUDA under the capture: scripts that set up a context or page-locked host
memory for Kernel Tuner run without a GPU (nothing is launched during a capture)."""
