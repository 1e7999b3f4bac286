# bench/: vyre-bench and its suites. Every bench/bench_*.c is linked in: a
# suite (listed in bench/suites.c), or a part of one (bench_peers_*.c,
# bench_scan_*.c); bench/harness*.c is what the suites share; bench/plot*.c
# draw the figures of --plot (bench/plot.h); a suite that
# needs more libraries adds them to BENCH_LIBS, and extra objects as
# prerequisites of $(BUILD)/vyre-bench (they are linked too).

BENCH_SRCS := bench/vyre-bench.c bench/suites.c bench/bench.c $(sort $(wildcard bench/harness*.c)) \
	      $(sort $(wildcard bench/bench_*.c)) $(sort $(wildcard bench/plot*.c))
BENCH_LIBS +=
PROGRAMS += vyre-bench

# The DFA compiler of the scan, dfa and dfacompile suites is libvyre's (vyre/dfa.h).
$(BUILD)/vyre-bench: $(call obj,$(BENCH_SRCS)) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	$(CC) $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(BUILD)/libvyre-core.a \
		$(BUILD)/libvyre.a $(BENCH_LIBS) $(URING_LIBS) $(LDLIBS) -lm

# The peers suite's own-launch peer needs the CUDA headers and gpu/ when the
# CUDA backend is built (gpu/cuda.mk, read after this file: hence `=`).
CFLAGS_bench_bench_peers_gpu = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)
# So does the modules suite's; its kernels (bench/bench_modules_peer.cu) are a
# fatbin gpu/cuda.mk embeds, and its items are checked against the examples'
# host functions (examples/ops.mk links them in).
CFLAGS_bench_bench_modules_gpu = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)

# The scan suite's Hyperscan peer, when libhs is installed (libhyperscan-dev,
# amd64 only). Linked statically when the archive is there, so vyre-bench (and
# the GPU bundle, gpu/cuda.mk) needs no libhs.so where it runs; libhs is C++.
ifeq ($(call pc_exists,libhs),yes)
HS_ARCHIVE := $(wildcard $(shell $(PKG_CONFIG) --variable=libdir libhs 2>/dev/null)/libhs.a)
HS_CFLAGS := -DVYRE_HAVE_HS $(call pc_cflags,libhs)
BENCH_LIBS += $(or $(HS_ARCHIVE),$(call pc_libs,libhs)) -lstdc++ -lm
endif
# Only the scan suite's Hyperscan part includes libhs's headers; the suite just
# knows whether that part is there.
CFLAGS_bench_bench_scan = $(if $(HS_CFLAGS),-DVYRE_HAVE_HS)
CFLAGS_bench_bench_scan_hs = $(HS_CFLAGS)
# The dfa suite drives the megakernel directly (gpu/cuda_peers.h) over the scan suite's text.
CFLAGS_bench_bench_dfa = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)
# Its physical-limit rows use the CUDA driver loader (gpu/cuda_driver.h).
CFLAGS_bench_bench_scan_limits = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)
# The lower suite times the CUDA lowering (gpu/cuda_lower.h) on the host.
CFLAGS_bench_bench_lower = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)
# The gpus suite asks the same loader how many GPUs there are.
CFLAGS_bench_bench_gpus_count = $(if $(NVCC),-DVYRE_HAVE_CUDA -Igpu -I$(CUDA_HOME)/include)

TESTS += test_bench_smoke
$(BUILD)/tests/test_bench_smoke: $(BUILD)/vyre-bench
# it insists on the scan suite's Hyperscan rows when vyre-bench has them
CFLAGS_tests_test_bench_smoke := $(if $(HS_CFLAGS),-DVYRE_HAVE_HS) \
	-DBENCH_ROWS_FIXTURE='"$(CURDIR)/tests/bench_rows.json"'
