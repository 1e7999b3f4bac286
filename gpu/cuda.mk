# gpu/cuda.mk - the CUDA backend. Built when nvcc is found (NVCC= disables it);
# otherwise gpu/cuda_missing.c stands in and vyred says why.
#
# gpu/megakernel.cu becomes one fatbin (sm_90 code, sm_90 PTX, and sm_75 PTX
# that newer or older GPUs JIT), embedded in libvyre-core.a as a byte array.
# The driver itself is dlopen'ed at run time (gpu/cuda_driver.c).

NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))

ifneq ($(NVCC),)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_SRCS := gpu/cuda_driver.c gpu/cuda_device.c gpu/cuda_lower_item.c gpu/cuda_lower_chain.c gpu/cuda_lower.c \
	gpu/cuda_immediate.c \
	gpu/cuda_core.c gpu/cuda_persistent.c gpu/cuda_launch.c gpu/cuda_slots.c \
	gpu/cuda_group.c gpu/cuda_devmem.c gpu/cuda_backend.c gpu/cuda_hooks.c \
	gpu/cuda_peers.c gpu/cuda_modules.c
CORE_SRCS += $(CUDA_SRCS) $(BUILD)/gen/megakernel_fatbin.c $(BUILD)/gen/megakernel_rdc_fatbin.c
$(foreach s,$(CUDA_SRCS),$(eval CFLAGS_$(subst /,_,$(s:.c=)) := -I$(CUDA_HOME)/include))

# megakernel.cu first: the rules compile $<, which includes the rest.
MK_SRCS := gpu/megakernel.cu gpu/mk_elementwise.cuh gpu/mk_sequential.cuh gpu/mk_units.cuh \
	gpu/mk_barrier.cuh gpu/mk_launch.cuh gpu/mk_doorbell.cuh gpu/mk_pool.cuh gpu/mk_decode.cuh \
	gpu/mk_fuse.cuh gpu/mk_report.cuh \
	gpu/mk_dfa.cuh gpu/mk_dfa_stage.cuh gpu/mk_dfa_walk.cuh gpu/digits.h gpu/cuda_abi.h include/vyre/abi.h
MK_NVCCFLAGS := -std=c++17 -O3 -Iinclude -Igpu \
	--generate-code arch=compute_90,code=[sm_90,compute_90] \
	--generate-code arch=compute_75,code=compute_75

$(BUILD)/gen/megakernel.fatbin: $(MK_SRCS)
	@mkdir -p $(dir $@)
	$(NVCC) $(MK_NVCCFLAGS) -fatbin $< -o $@

# The same megakernel calling vyre_module_dispatch for module ops
# (docs/design.md 6.7): vyred links it with the op modules' device code at
# start (gpu/cuda_modules.c), and loads the plain one when it has none.
# Extensible whole-program (-ewp), not -rdc: with -rdc ptxas compiles each
# function apart and the DFA walks outgrow the 64 registers that 1024
# threads a block leave; -ewp keeps the plain build's code and leaves only
# the dispatch call to the linker.
$(BUILD)/gen/megakernel_rdc.fatbin: $(MK_SRCS) include/vyre/op_module.h
	@mkdir -p $(dir $@)
	$(NVCC) $(MK_NVCCFLAGS) -ewp -DVYRE_MK_MODULES=1 -fatbin $< -o $@

# vyre-bench's modules suite: the examples' device functions in kernels of
# the peer's own (bench/bench_modules_peer.cu includes them: one
# translation unit, no device linking), 64 registers a thread as the
# megakernel's linker compiles module code.
$(BUILD)/gen/bench_modules.fatbin: bench/bench_modules_peer.cu bench/bench_modules_abi.h \
		$(OPMOD_DEVICE_SRCS) examples/ops/op_device.h examples/ops/hash64/xxh64.h \
		include/vyre/op_module.h include/vyre/abi.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 -Iinclude -maxrregcount=64 \
		--generate-code arch=compute_90,code=[sm_90,compute_90] \
		--generate-code arch=compute_75,code=compute_75 -fatbin $< -o $@
$(BUILD)/vyre-bench: $(BUILD)/obj/$(BUILD)/gen/bench_modules_fatbin.o

# $(call EMBED,NAME,FILE): shell commands that print FILE's bytes as C,
# `const unsigned char NAME[]` and `NAME_bytes` (od keeps this free of xxd
# and python). NAME may hold a shell variable, braced: $${m} in a recipe.
EMBED = printf '%s\n' "extern const unsigned char $(1)[];" "extern const uint64_t $(1)_bytes;" \
	  "const unsigned char $(1)[] __attribute__((aligned(64))) = {"; \
	od -An -v -tx1 $(2) | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	printf '%s\n' '};' "const uint64_t $(1)_bytes = sizeof($(1));"

# A fatbin as a C array.
$(BUILD)/gen/%_fatbin.c: $(BUILD)/gen/%.fatbin
	{ printf '%s\n' '/* generated from $*.fatbin by gpu/cuda.mk */' '#include <stdint.h>'; \
	  $(call EMBED,vyre_$*_fatbin,$<); } > $@.tmp && mv $@.tmp $@

# The PTX alone, for reading (make BUILD=... ptx).
.PHONY: ptx
ptx: $(BUILD)/gen/megakernel.sm_90.ptx $(BUILD)/gen/megakernel.sm_75.ptx
$(BUILD)/gen/megakernel.sm_%.ptx: $(MK_SRCS)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 -Iinclude -Igpu -arch=compute_$* -ptx $< -o $@

# The tests' module ops as PTX (test_cuda_modules links them into the megakernel).
$(BUILD)/gen/test_module_ops.ptx: tests/test_module_ops.cu include/vyre/op_module.h include/vyre/abi.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 -Iinclude -rdc=true -ptx -arch=compute_75 $< -o $@
$(BUILD)/gen/test_module_ops_ptx.c: $(BUILD)/gen/test_module_ops.ptx
	{ printf '%s\n' '/* generated from tests/test_module_ops.cu by gpu/cuda.mk */' \
	  '#include <stdint.h>'; $(call EMBED,vyre_test_module_ops_ptx,$<); } > $@.tmp && mv $@.tmp $@

# The shipped examples' PTX as C arrays (test_cuda_examples links them into the megakernel).
$(BUILD)/gen/example_ops_ptx.c: $(foreach m,$(OPMOD_EXAMPLES),$(call OPMOD_DIR,$(m))/$(m).ptx)
	@mkdir -p $(dir $@)
	{ printf '%s\n' '/* generated from examples/ops by gpu/cuda.mk */' '#include <stdint.h>'; \
	  for m in $(OPMOD_EXAMPLES); do \
	    $(call EMBED,vyre_example_ptx_$${m},$(BUILD)/examples/ops/$${m}/$${m}.ptx); \
	  done; } > $@.tmp && mv $@.tmp $@

# test_cuda_lower runs anywhere; the others exit 77 without a GPU.
CUDA_TESTS := test_cuda_lower test_cuda_immediate test_cuda_diff test_cuda_fault test_cuda_inflight \
	test_cuda_e2e test_cuda_dfa test_cuda_report test_cuda_modules test_cuda_examples
TESTS += $(CUDA_TESTS)
$(foreach t,$(CUDA_TESTS),$(eval TEST_EXTRA_OBJS_$(t) := $(BUILD)/obj/tests/test_cuda_gen.o))
$(foreach t,$(CUDA_TESTS) test_cuda_gen,$(eval CFLAGS_tests_$(t) := -I$(CUDA_HOME)/include -Igpu))
$(addprefix $(BUILD)/tests/,$(CUDA_TESTS)): $(BUILD)/obj/tests/test_cuda_gen.o
# the lowering test models split DFA items over literal-set tables
TEST_EXTRA_OBJS_test_cuda_lower += $(BUILD)/obj/tests/test_cuda_dfa_model.o $(BUILD)/libvyre-submit.a
CFLAGS_tests_test_cuda_lower += -Itools/submit
CFLAGS_tests_test_cuda_dfa_model := -Igpu
$(BUILD)/tests/test_cuda_lower: $(BUILD)/obj/tests/test_cuda_dfa_model.o $(BUILD)/libvyre-submit.a
# the GPU DFA test scans literal-set tables too
TEST_EXTRA_OBJS_test_cuda_dfa += $(BUILD)/libvyre-submit.a
CFLAGS_tests_test_cuda_dfa += -Itools/submit
TEST_LIBS_test_cuda_dfa := -lpthread
$(BUILD)/tests/test_cuda_dfa: $(BUILD)/libvyre-submit.a
# DFA_REPORT against the oracle: literal-set tables from vyre_dfa_compile (libvyre) too
CFLAGS_tests_test_cuda_report += -Itests
# module ops linked into the megakernel against their host functions
TEST_EXTRA_OBJS_test_cuda_modules += $(BUILD)/obj/tests/test_module_ops.o \
	$(BUILD)/obj/$(BUILD)/gen/test_module_ops_ptx.o
$(BUILD)/tests/test_cuda_modules: $(BUILD)/obj/tests/test_module_ops.o \
	$(BUILD)/obj/$(BUILD)/gen/test_module_ops_ptx.o
# the shipped examples linked into the megakernel against their host functions
TEST_EXTRA_OBJS_test_cuda_examples += $(OPMOD_HOST_OBJS) $(BUILD)/obj/$(BUILD)/gen/example_ops_ptx.o
TEST_LIBS_test_cuda_examples := -lm
$(BUILD)/tests/test_cuda_examples: $(OPMOD_HOST_OBJS) $(BUILD)/obj/$(BUILD)/gen/example_ops_ptx.o
# test_cuda_e2e runs vyred and the transport's integration test against it
TEST_EXTRA_OBJS_test_cuda_e2e += $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_cuda_e2e: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred \
	$(BUILD)/tests/test_integration $(BUILD)/tests/test_device_buffers $(BUILD)/tests/test_chains \
	$(BUILD)/tests/test_ranges
# A directory to carry to a GPU machine: the GPU tests, vyred, vyre-bench,
# the shared libraries such a machine may lack, and gpu/cuda_gpu_run.sh as
# run.sh (see docs/cuda.md).
CUDA_BUNDLE := $(BUILD)/cuda-bundle
.PHONY: cuda-bundle
cuda-bundle: $(BUILD)/vyred $(BUILD)/vyre-bench \
	$(addprefix $(BUILD)/tests/,$(CUDA_TESTS) test_integration test_device_buffers test_chains \
	test_ranges test_resume test_resume_edges test_gpu_fault_load test_opmod_device) \
	$(OPMOD_ALL_FILES) $(BUILD)/vyre-submit $(BUILD)/tests/test_ops_dir_cuda gpu/cuda_gpu_run.sh
	rm -rf $(CUDA_BUNDLE) && mkdir -p $(CUDA_BUNDLE)/tests $(CUDA_BUNDLE)/lib
	cp $(BUILD)/vyred $(BUILD)/vyre-bench $(BUILD)/vyre-submit $(CUDA_BUNDLE)/
	cp $(addprefix $(BUILD)/tests/,$(CUDA_TESTS) test_integration test_device_buffers \
		test_chains test_ranges test_resume test_resume_edges test_gpu_fault_load \
		test_opmod_device test_ops_dir_cuda) $(CUDA_BUNDLE)/tests/
	mkdir -p $(CUDA_BUNDLE)/examples/ops && for m in $(OPMOD_EXAMPLES); do \
		cp -r $(BUILD)/examples/ops/$$m $(CUDA_BUNDLE)/examples/ops/; done
	for l in liburing.so.2 libcmocka.so.0; do \
		p=$$(ldconfig -p | awk -v l=$$l '$$1 == l { print $$NF; exit }'); \
		[ -z "$$p" ] || cp -L "$$p" $(CUDA_BUNDLE)/lib/; \
	done
	cp gpu/cuda_gpu_run.sh $(CUDA_BUNDLE)/run.sh

# bench/bench_cuda.c (linked into vyre-bench by bench/build.mk) skips without this
CFLAGS_bench_bench_cuda := -DVYRE_HAVE_CUDA -Igpu
else
CORE_SRCS += gpu/cuda_missing.c
endif
