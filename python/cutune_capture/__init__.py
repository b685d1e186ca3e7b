"""Capture Kernel Tuner scripts as T1 files for cutune: python3 -m cutune_capture SCRIPT.py."""
