"""The corpus of third-party Kernel Tuner scripts: what Kernel Tuner 1.5 builds from each, and
how far cutune's capture gets with it (see README.md)."""
