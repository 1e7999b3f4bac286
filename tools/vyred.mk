# tools/vyred: the daemon (io_uring event loop + drain/resolve/plan/execute/complete).
VYRED_SRCS := $(wildcard tools/vyred/*.c)
PROGRAMS += vyred

$(BUILD)/vyred: $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a \
		$(BUILD)/libvyre.a $(VYRED_LIBS) $(URING_LIBS) $(LDLIBS) -lm

# The demo producer used by `make demo` (tools/demo.sh); installed with the
# demo script (dist/install.mk) so the demo runs against installed binaries.
EXTRA_ALL += $(BUILD)/vyre-demo
$(BUILD)/vyre-demo: $(call obj,tools/vyre-demo.c) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $< $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a $(LDLIBS)

# vyred's command line: bad values refused, --cpu pins the loop
TESTS += test_vyred_cli
TEST_EXTRA_OBJS_test_vyred_cli := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_vyred_cli: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# several batches in flight: independence, hazards across batches, deferred frees and leaves
TESTS += test_inflight
TEST_EXTRA_OBJS_test_inflight := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_inflight: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# several batches of one client in flight (--client-batches): order, own hazards, FENCE, CQ credit
TESTS += test_client_batches
TEST_EXTRA_OBJS_test_client_batches := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_client_batches: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# batches whose items share no written buffer, planned without the planner, and ones that clash
TESTS += test_disjoint
TEST_EXTRA_OBJS_test_disjoint := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_disjoint: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# what a disjoint batch charges against the group budget: a shared table once
TESTS += test_disjoint_budget
TEST_EXTRA_OBJS_test_disjoint_budget := $(BUILD)/obj/tools/vyred/disjoint.o
$(BUILD)/tests/test_disjoint_budget: $(BUILD)/obj/tools/vyred/disjoint.o

# op module manifests (docs/design.md 6.7): every field, every refusal, fuzzed text, op numbers
TESTS += test_opmod_manifest
TEST_EXTRA_OBJS_test_opmod_manifest := $(BUILD)/obj/tools/vyred/opmod_manifest.o
$(BUILD)/tests/test_opmod_manifest: $(BUILD)/obj/tools/vyred/opmod_manifest.o

# priority classes: per-uid/gid bounds, a class-2 item never behind more than one flood batch
TESTS += test_priority
TEST_EXTRA_OBJS_test_priority := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_priority: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# several event loops: routing by domain, a shared domain in one loop, limits over all loops
TESTS += test_loops
TEST_EXTRA_OBJS_test_loops := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_loops: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# op modules in a running vyred (docs/design.md 6.7): --ops-dir, lookup, crc32c items, foreign numbers, refusals, vyre-submit ops
TESTS += test_ops_dir
TEST_EXTRA_OBJS_test_ops_dir := $(BUILD)/obj/tests/test_integration_daemon.o \
	$(BUILD)/obj/tools/vyred/ops_dir.o $(BUILD)/obj/tools/vyred/opmods.o \
	$(BUILD)/obj/tools/vyred/opmod_manifest.o $(BUILD)/obj/tools/vyred/log.o
$(BUILD)/tests/test_ops_dir: $(TEST_EXTRA_OBJS_test_ops_dir) $(BUILD)/vyred $(BUILD)/vyre-submit \
	$(BUILD)/examples/ops/libvyre_op_crc32c.so

# op modules through vyred on a GPU: the crc32c example's module directory, cuda against cpu
ifneq ($(NVCC),)
TESTS += test_ops_dir_cuda
$(BUILD)/tests/test_ops_dir_cuda: tests/test_ops_dir_cuda.sh $(call OPMOD_FILES,crc32c) \
	$(BUILD)/vyred $(BUILD)/vyre-submit
	@mkdir -p $(dir $@)
	sed 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' $< > $@
	chmod +x $@
endif
