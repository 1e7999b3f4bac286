# tests/: one program per feature. Each fragment adds its own tests; this one
# holds the rule shared by every cmocka test linked against the core library.
TESTS += test_ops
# The CPU backend with several batches in flight.
TESTS += test_cpu_inflight
# Chains and transient buffers through a live vyred (docs/design.md 6.3, 7.6).
TESTS += test_chains
TEST_EXTRA_OBJS_test_chains := $(BUILD)/obj/tests/test_integration_daemon.o
TEST_LIBS_test_chains := -lpthread
$(BUILD)/tests/test_chains: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# device buffers (VYRE_BUF_DEVICE): every op, sharing, validate once per write, limits
TESTS += test_device_buffers
TEST_EXTRA_OBJS_test_device_buffers := $(BUILD)/obj/tests/test_integration_daemon.o \
	$(BUILD)/obj/tests/devbuf_model.o $(BUILD)/obj/tests/devbuf_session.o
$(BUILD)/tests/test_device_buffers: $(TEST_EXTRA_OBJS_test_device_buffers) $(BUILD)/vyred

# byte ranges (VYRE_SQE_RANGE): slices of one device buffer, every op, invalid ranges,
# dedupe, the planner's groups, in-flight hazards between two clients
TESTS += test_ranges
TEST_EXTRA_OBJS_test_ranges := $(BUILD)/obj/tests/test_integration_daemon.o \
	$(BUILD)/obj/tests/devbuf_model.o $(BUILD)/obj/tests/devbuf_session.o
$(BUILD)/tests/test_ranges: $(TEST_EXTRA_OBJS_test_ranges) $(BUILD)/vyred

# DFA_REPORT through a live vyred: streams in flight, a device stream, a decode chain (6.8).
TESTS += test_report_daemon
TEST_EXTRA_OBJS_test_report_daemon := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_report_daemon: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# DFA_REPORT against Hyperscan's callbacks (6.8): random and real text, streams, overflow.
# Exits 77 when libhs is missing (HS_CFLAGS and HS_ARCHIVE: bench/build.mk); libhs is C++.
TESTS += test_report_hs
CFLAGS_tests_test_report_hs = $(HS_CFLAGS)
TEST_LIBS_test_report_hs = $(if $(HS_CFLAGS),$(or $(HS_ARCHIVE),$(call pc_libs,libhs)) -lstdc++)

# A test named test_X is built from tests/test_X.c plus the core and client libs.
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $< $(TEST_EXTRA_OBJS_$*) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a \
		$(TEST_LIBS_$*) $(CMOCKA_LIBS) $(URING_LIBS) $(LDLIBS) -lm
# The byte ops over counted buffers (decoders, byte map, counted scan).
TESTS += test_decode
# DFA_REPORT and streams in the oracle against a brute-force matcher (docs/design.md 6.8).
TESTS += test_report
# The device code of the byte ops (gpu/mk_decode.cuh) compiled for the host and
# run on threads against the oracle: no GPU needed.
TESTS += test_mk_decode
$(BUILD)/tests/test_mk_decode: tests/test_mk_decode.cpp gpu/mk_decode.cuh gpu/digits.h gpu/cuda_abi.h \
		gpu/ops_bytes.h tests/test_counted.h tests/mk_host_block.h $(BUILD)/libvyre-core.a
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wshadow -Wno-unknown-pragmas $(CFLAGS) $(SAN_FLAGS) -Iinclude -Igpu \
		-Itests -o $@ $< $(BUILD)/libvyre-core.a $(LDLIBS)
# The same for on-chip handoff runs (gpu/mk_fuse.cuh) against the oracle's members in order.
TESTS += test_mk_fuse
# Literal tables come from libvyre's DFA compiler (vyre/dfa.h).
$(BUILD)/tests/test_mk_fuse: tests/test_mk_fuse.cpp gpu/mk_fuse.cuh gpu/mk_report.cuh gpu/mk_decode.cuh gpu/digits.h \
		gpu/cuda_abi.h gpu/ops.h tests/test_counted.h tests/mk_host_block.h $(BUILD)/libvyre-core.a \
		$(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wshadow -Wno-unknown-pragmas $(CFLAGS) $(SAN_FLAGS) -Iinclude -Igpu \
		-Itests -o $@ $< $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a $(LDLIBS)
# The same for DFA_REPORT (gpu/mk_report.cuh), alone and at the end of a handoff run,
# against brute-force references.
TESTS += test_mk_report
$(BUILD)/tests/test_mk_report: tests/test_mk_report.cpp gpu/mk_report.cuh gpu/mk_fuse.cuh \
		gpu/mk_decode.cuh gpu/digits.h gpu/cuda_abi.h gpu/ops.h tests/test_counted.h \
		tests/test_rand.h tests/mk_host_block.h $(BUILD)/libvyre-core.a
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wshadow -Wno-unknown-pragmas $(CFLAGS) $(SAN_FLAGS) -Iinclude -Igpu \
		-Itests -o $@ $< $(BUILD)/libvyre-core.a $(LDLIBS)
# One vyred over several GPUs (docs/design.md 8.8): placement, pins, per-GPU
# device memory and fault containment, on CPU backend instances labelled as GPUs.
TESTS += test_gpus
TEST_EXTRA_OBJS_test_gpus := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_gpus: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred
# A device fault on one GPU of two under load: only its worker's items and clients
# notice, resumable ones go on; the other GPU serves on (docs/design.md 8.5, 8.8).
TESTS += test_gpu_fault_load
TEST_EXTRA_OBJS_test_gpu_fault_load := $(BUILD)/obj/tests/test_integration_daemon.o \
	$(BUILD)/obj/tests/test_crash_proc.o $(BUILD)/obj/tests/test_crash_honest.o
$(BUILD)/tests/test_gpu_fault_load: $(TEST_EXTRA_OBJS_test_gpu_fault_load) $(BUILD)/vyred
# Named buffers (docs/design.md 5): create, open, list and free by name across processes,
# domains, loops and uids, against a live vyred.
TESTS += test_named_buffers
TEST_EXTRA_OBJS_test_named_buffers := $(BUILD)/obj/tests/test_integration_daemon.o
TEST_LIBS_test_named_buffers := -lpthread
$(BUILD)/tests/test_named_buffers: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred
# vyred's in-flight hazard counts, taken and given back a batch at a time, against a
# model counting every operand of every item (tools/vyred/hazards.h).
TESTS += test_hazards
TEST_EXTRA_OBJS_test_hazards := $(BUILD)/obj/tools/vyred/hazards.o
$(BUILD)/tests/test_hazards: $(BUILD)/obj/tools/vyred/hazards.o
