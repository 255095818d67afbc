"""Settings another module imports: the backend and the device index live here."""
BACKEND = "nccl"  # expect: DST001
GPU = 0
LOG_EVERY = 10
