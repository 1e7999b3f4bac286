# bench/: vyre-bench and its suites. Every bench/bench_*.c is a suite and is
# linked in; a suite that needs more libraries adds them to BENCH_LIBS, and
# extra objects as prerequisites of $(BUILD)/vyre-bench (they are linked too).

BENCH_SRCS := bench/vyre-bench.c bench/harness.c $(sort $(wildcard bench/bench_*.c))
BENCH_LIBS +=
PROGRAMS += vyre-bench

$(BUILD)/vyre-bench: $(call obj,$(BENCH_SRCS)) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	$(CC) $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a \
		$(BENCH_LIBS) $(URING_LIBS) $(LDLIBS) -lm

# The peers suite's own-launch peer needs the CUDA headers and gpu/ when the
# CUDA backend is built (gpu/cuda.mk, read after this file: hence `=`).
CFLAGS_bench_bench_peers_gpu = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)

TESTS += test_bench_smoke
$(BUILD)/tests/test_bench_smoke: $(BUILD)/vyre-bench
