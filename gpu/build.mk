# gpu/: operation semantics (the oracle) and execution backends.
CORE_SRCS += gpu/ops.c gpu/sequential.c
