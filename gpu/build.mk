# gpu/: operation semantics (the oracle) and execution backends.
CORE_SRCS += gpu/ops.c gpu/op_modules.c gpu/ops_bytes.c gpu/ops_report.c gpu/sequential.c gpu/handoff.c gpu/inject.c
CORE_SRCS += gpu/cpu_backend.c gpu/cpu_pool.c gpu/cpu_unit.c  # gpu/cuda.mk adds the CUDA backend or gpu/cuda_missing.c
