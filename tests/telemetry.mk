# tests/telemetry.mk: telemetry tests, the probe fixture (a stand-in for
# vyred that fires known probe values) and the probe semaphores.

# The semaphores live in the daemon's core library; only binaries that fire
# probes pull them in.
CORE_SRCS += tools/vyred/probes.c

# make VYRE_PROBES=0 compiles every probe out (use its own BUILD directory).
VYRE_PROBES ?= 1
CPPFLAGS += -DVYRE_PROBES=$(VYRE_PROBES)

TM_PATTERN_OBJ := $(BUILD)/obj/tests/telemetry_pattern.o
TM_FIXTURE     := $(BUILD)/tests/vyre-tm-fixture

$(TM_FIXTURE): $(BUILD)/obj/tests/telemetry_fixture.o $(TM_PATTERN_OBJ) $(BUILD)/libvyre-core.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

TESTS += test_telemetry_unit test_telemetry_bpf test_telemetry_top test_telemetry_tmux \
	 test_telemetry_scripts

TEST_EXTRA_OBJS_test_telemetry_unit := $(BUILD)/libvyre-top.a
TEST_LIBS_test_telemetry_unit = $(TOP_LIBS)
$(BUILD)/tests/test_telemetry_unit: $(BUILD)/libvyre-top.a

TEST_EXTRA_OBJS_test_telemetry_bpf := $(TM_PATTERN_OBJ) $(BUILD)/libvyre-top.a
TEST_LIBS_test_telemetry_bpf = $(TOP_LIBS)
$(BUILD)/tests/test_telemetry_bpf: $(TM_PATTERN_OBJ) $(BUILD)/libvyre-top.a

# Shell tests: copied next to the C tests with the source directory filled in.
TM_SHELL_DEPS := tests/telemetry_lib.sh $(BUILD)/vyre-top $(TM_FIXTURE) \
		 $(wildcard bpf/scripts/*.bt)
$(BUILD)/tests/test_telemetry_%: tests/test_telemetry_%.sh $(TM_SHELL_DEPS)
	@mkdir -p $(dir $@)
	sed 's|@VYRE_SRCDIR@|$(CURDIR)|g' $< > $@ && chmod +x $@

# A vyred client whose load the vyred telemetry test counts from its CQEs.
TM_PRODUCER := $(BUILD)/tests/vyre-tm-producer
$(TM_PRODUCER): $(BUILD)/obj/tests/telemetry_producer.o $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $^ $(LDLIBS)

# Counts seen by vyre-top and the scripts against a live vyred under a known load.
TESTS += test_telemetry_vyred
$(BUILD)/tests/test_telemetry_vyred: $(BUILD)/vyred $(BUILD)/noprobes/vyred $(TM_PRODUCER)

# The same with two GPUs (vyred --backend cpu --gpus 0,1): rows, clients and items per GPU.
TESTS += test_telemetry_gpus
$(BUILD)/tests/test_telemetry_gpus: $(BUILD)/vyred $(TM_PRODUCER)

# vyre-top --openmetrics and --listen under a counted load, read with prometheus_client.
TESTS += test_telemetry_metrics
$(BUILD)/tests/test_telemetry_metrics: $(BUILD)/vyred $(TM_PRODUCER)

# Deduplicated + invalid + executed = items, the same in vyred's log, vyre-top --json and
# --openmetrics, under a load with items that fail before planning and at execution.
TESTS += test_telemetry_partition
$(BUILD)/tests/test_telemetry_partition: $(BUILD)/vyred $(TM_PRODUCER)

# Per-op items, failures and latency (the ops and op_info probes) against a vyred that loaded
# the example modules: vyre-top --json, --openmetrics, -b and ops.bt, equal to the load.
TESTS += test_telemetry_ops
$(BUILD)/tests/test_telemetry_ops: $(BUILD)/vyred $(BUILD)/vyre-submit $(OPMOD_ALL_FILES)
