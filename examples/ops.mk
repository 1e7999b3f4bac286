# examples/ops: the shipped op modules (docs/design.md 6.7, docs/opmods.md).
# Each examples/ops/NAME/ holds host.c (the host function), device.cu (the
# device function) and NAME.opmod (the manifest); the build makes
# $(BUILD)/examples/ops/NAME/ a ready module directory: the manifest, the
# host object libvyre_op_NAME.so and, when nvcc is found, the PTX NAME.ptx.
# Without nvcc the directory has no PTX and is not loadable as it is (the
# tests stage a stand-in PTX text, which the loader does not interpret).
OPMOD_EXAMPLES := crc32c hash64 histogram dot

# gpu/cuda.mk, read after this file, sets the same default; NVCC= disables both.
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))

OPMOD_DIR = $(BUILD)/examples/ops/$(1)
OPMOD_FILES = $(call OPMOD_DIR,$(1))/$(1).opmod $(call OPMOD_DIR,$(1))/libvyre_op_$(1).so \
	$(if $(NVCC),$(call OPMOD_DIR,$(1))/$(1).ptx)
OPMOD_ALL_FILES := $(foreach m,$(OPMOD_EXAMPLES),$(call OPMOD_FILES,$(m)))
EXTRA_ALL += $(foreach m,$(OPMOD_EXAMPLES),$(BUILD)/examples/ops/libvyre_op_$(m).so) $(OPMOD_ALL_FILES)

# the host objects (-lm: dot calls fmaf)
$(BUILD)/examples/ops/libvyre_op_%.so: $(BUILD)/obj/examples/ops/%/host.o
	@mkdir -p $(dir $@)
	$(CC) -shared $(SAN_FLAGS) -o $@ $< -lm

# A module directory: copies of the manifest and the host object, and the PTX.
define OPMOD_DIR_RULES
$(call OPMOD_DIR,$(1))/$(1).opmod: examples/ops/$(1)/$(1).opmod
	@mkdir -p $$(dir $$@)
	cp $$< $$@
$(call OPMOD_DIR,$(1))/libvyre_op_$(1).so: $(BUILD)/examples/ops/libvyre_op_$(1).so
	@mkdir -p $$(dir $$@)
	cp $$< $$@
# -rdc keeps the extern "C" __device__ function as a .visible .func for the CUDA linker
$(call OPMOD_DIR,$(1))/$(1).ptx: examples/ops/$(1)/device.cu $(wildcard examples/ops/$(1)/*.h) examples/ops/op_device.h include/vyre/op_module.h include/vyre/abi.h
	@mkdir -p $$(dir $$@)
	$$(NVCC) -std=c++17 -O3 -rdc=true -ptx -arch=compute_75 -Iinclude $$< -o $$@
endef
$(foreach m,$(OPMOD_EXAMPLES),$(eval $(call OPMOD_DIR_RULES,$(m))))

# The C producers (examples/ops/NAME/producer.c, examples/ops/producer.h) call
# vyre_op_lookup: built as $(BUILD)/examples/ops/producer_NAME once vyre.h declares it.
OPMOD_HAVE_LOOKUP := $(shell grep -qs '^int vyre_op_lookup' include/vyre/vyre.h && echo yes)
ifneq ($(OPMOD_HAVE_LOOKUP),)
EXTRA_ALL += $(foreach m,$(OPMOD_EXAMPLES),$(BUILD)/examples/ops/producer_$(m))
$(BUILD)/examples/ops/producer_%: $(BUILD)/obj/examples/ops/%/producer.o $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $< $(BUILD)/libvyre.a $(LDLIBS)

# the producers, C and Python, against a vyred that loaded the four modules (vyred --ops-dir)
TESTS += test_opmod_producers
$(BUILD)/tests/test_opmod_producers: tests/test_opmod_producers.sh $(BUILD)/vyred $(BUILD)/libvyre.so \
		$(OPMOD_ALL_FILES) $(foreach m,$(OPMOD_EXAMPLES),$(BUILD)/examples/ops/producer_$(m)) \
		python/examples/op_modules.py
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' \
	    -e 's|@VYRE_SANITIZE@|$(SANITIZE)|g' $< > $@
	chmod +x $@
endif

# the module loader: files checked as root or vyred's own, manifests, symbols, clashes, optional modules
TESTS += test_opmods
TEST_EXTRA_OBJS_test_opmods := $(BUILD)/obj/tools/vyred/opmods.o $(BUILD)/obj/tools/vyred/opmod_manifest.o
$(BUILD)/tests/test_opmods: $(TEST_EXTRA_OBJS_test_opmods) $(BUILD)/examples/ops/libvyre_op_crc32c.so

# the shipped examples loaded from their module directories, each host function against an
# independent implementation; their PTX names the manifests' device functions (when built)
TESTS += test_opmod_examples
TEST_EXTRA_OBJS_test_opmod_examples := $(TEST_EXTRA_OBJS_test_opmods)
TEST_LIBS_test_opmod_examples := -lm
CFLAGS_tests_test_opmod_examples = $(if $(NVCC),-DVYRE_OPMOD_PTX_BUILT=1)
$(BUILD)/tests/test_opmod_examples: $(TEST_EXTRA_OBJS_test_opmods) $(OPMOD_ALL_FILES)

# The device functions compiled for the host and run as blocks of host threads, against
# the host functions (tests/opmod_device_cases.h): no GPU needed.
TESTS += test_opmod_blocks
OPMOD_DEVICE_SRCS := $(foreach m,$(OPMOD_EXAMPLES),examples/ops/$(m)/device.cu)
OPMOD_HOST_OBJS := $(foreach m,$(OPMOD_EXAMPLES),$(BUILD)/obj/examples/ops/$(m)/host.o)
# vyre-bench's modules suite stages the module directories for its vyred
# (bench/bench_modules_dir.c) and checks its items against the host
# functions (bench/bench_modules_ops.c; vyre-bench links -lm)
$(BUILD)/vyre-bench: $(OPMOD_HOST_OBJS) | $(OPMOD_ALL_FILES)

$(BUILD)/tests/test_opmod_blocks: tests/test_opmod_blocks.cpp tests/opmod_device_cases.h \
		tests/mk_host_block.h tests/test_rand.h $(OPMOD_DEVICE_SRCS) examples/ops/op_device.h \
		examples/ops/hash64/xxh64.h include/vyre/op_module.h $(OPMOD_HOST_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wshadow -Wno-unknown-pragmas $(CFLAGS) $(SAN_FLAGS) \
		-Iinclude -Itests -o $@ $< $(OPMOD_HOST_OBJS) -lm $(LDLIBS)

# The device functions against the host functions on a GPU (exit 77 without one): a
# kernel of one block calls each device function as the megakernel will (docs/opmods.md).
# Not in sanitizer builds: nvcc links the host objects without the sanitizers' runtimes.
ifneq ($(and $(NVCC),$(if $(SANITIZE),,plain)),)
TESTS += test_opmod_device
$(BUILD)/tests/test_opmod_device: tests/test_opmod_device.cu $(OPMOD_DEVICE_SRCS) $(OPMOD_HOST_OBJS) \
		include/vyre/op_module.h include/vyre/abi.h tests/test_rand.h tests/opmod_device_cases.h \
		examples/ops/op_device.h examples/ops/hash64/xxh64.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 -rdc=true -maxrregcount=64 -Iinclude -Itests \
		--generate-code arch=compute_90,code=[sm_90,compute_90] \
		--generate-code arch=compute_75,code=compute_75 \
		-o $@ tests/test_opmod_device.cu $(OPMOD_DEVICE_SRCS) $(OPMOD_HOST_OBJS) -lm
endif
