# tests/reliability.mk: reliability and security suites (issue 6) - the
# Promela model of the ring protocol, libFuzzer harnesses and their corpus
# replay, and the process-level crash, hostile-client, isolation, restart and
# limits tests. See docs/reliability.md.

# models/check.sh runs spin on models/ring.pml; the test is a wrapper script
# so tests/run.sh finds it in $(BUILD)/tests like every other test.
TESTS += test_model
$(BUILD)/tests/test_model: models/check.sh models/ring.pml tests/reliability.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/models/check.sh" "$$@"\n' '$(CURDIR)' >$@
	chmod +x $@

# ---- fuzzing -----------------------------------------------------------------
# Each harness tests/fuzz/fuzz_H.c is built twice:
#  - $(BUILD)/fuzz/fuzz_H with clang's libFuzzer + ASan + UBSan, run for a
#    bounded time by test_fuzz_H (tests/fuzz/run.sh; VYRE_FUZZ_SECONDS);
#  - into test_fuzz_replay with the project's compiler and sanitizers, which
#    replays tests/fuzz/corpus/H and tests/fuzz/regressions/H.
# The sources each harness needs are listed explicitly (wildcards, because
# other fragments are read after this one).
FUZZ_HARNESSES := decode dfa plan proto ring submit
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# -MMD: a header change (a struct's layout) rebuilds every object that uses it
FUZZ_CFLAGS := -std=c17 -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP
FUZZ_PROBE := int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) \
	{ (void)d; (void)n; return 0; }
FUZZ_OK := $(shell printf '%s\n' '$(FUZZ_PROBE)' | \
	$(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null && echo yes)

FUZZ_SRCS_decode := gpu/ops_bytes.c
FUZZ_SRCS_dfa := gpu/ops.c gpu/op_modules.c gpu/ops_bytes.c gpu/ops_report.c $(wildcard ring/dfa_*.c)
FUZZ_SRCS_proto := ring/proto.c
FUZZ_SRCS_ring := ring/ring.c ring/doorbell.c ring/region.c
FUZZ_SRCS_plan := gpu/ops.c gpu/op_modules.c gpu/ops_bytes.c gpu/ops_report.c gpu/sequential.c ring/handles.c ring/resolve.c \
	ring/resolve_range.c \
	$(wildcard planner/*.c) $(wildcard tools/vyred/plan_stage*.c)
FUZZ_SRCS_plan += gpu/handoff.c
FUZZ_SRCS_submit := gpu/ops.c gpu/op_modules.c gpu/ops_bytes.c gpu/ops_report.c ring/proto.c ring/resolve_range.c \
	$(wildcard ring/dfa_*.c) $(filter-out tools/submit/target_client.c,$(wildcard tools/submit/*.c))

fuzz_obj = $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(1))

ifeq ($(FUZZ_OK),yes)
EXTRA_ALL += $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_HARNESSES))

# The harnesses are ours: warnings are errors. Other parts' sources are built
# with warnings shown but not fatal, since clang's differ from gcc's.
$(BUILD)/fuzz/obj/tests/fuzz/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(WARN) -c $< -o $@

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(filter-out -Werror,$(WARN)) -c $< -o $@

define fuzz_harness_rule
$(BUILD)/fuzz/fuzz_$(1): $(call fuzz_obj,tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)))
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $$@ $$^ -lpthread -lm
endef
$(foreach h,$(FUZZ_HARNESSES),$(eval $(call fuzz_harness_rule,$(h))))
-include $(shell find $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
else
EXTRA_ALL += $(BUILD)/fuzz/UNAVAILABLE
$(BUILD)/fuzz/UNAVAILABLE:
	@mkdir -p $(dir $@)
	echo "$(FUZZ_CC) cannot link -fsanitize=fuzzer (install clang with compiler-rt)" >$@
endif

TESTS += $(addprefix test_fuzz_,$(FUZZ_HARNESSES))
$(addprefix $(BUILD)/tests/test_fuzz_,$(FUZZ_HARNESSES)): tests/reliability.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/fuzz/run.sh" "%s" %s "$$@"\n' \
		'$(CURDIR)' '$(abspath $(BUILD))/fuzz' '$(@F:test_fuzz_%=%)' >$@
	chmod +x $@

# The replay of every committed input, with the project's compiler.
TESTS += test_fuzz_replay
FUZZ_REPLAY_OBJS := $(BUILD)/obj/tests/fuzz/replay.o \
	$(patsubst %,$(BUILD)/obj/tests/fuzz/replay_%.o,$(FUZZ_HARNESSES)) \
	$(call obj,$(wildcard tools/vyred/plan_stage*.c))
CFLAGS_tests_fuzz_replay := -DFUZZ_DIR='"$(CURDIR)/tests/fuzz"'

$(BUILD)/obj/tests/fuzz/replay_%.o: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -DFUZZ_ENTRY=vyre_fuzz_$* -c $< -o $@

$(BUILD)/tests/test_fuzz_replay: $(FUZZ_REPLAY_OBJS) $(BUILD)/libvyre-submit.a \
		$(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $(FUZZ_REPLAY_OBJS) $(BUILD)/libvyre-submit.a \
		$(BUILD)/libvyre-core.a $(BUILD)/libvyre.a $(URING_LIBS) $(LDLIBS) -lm

# ---- process-level tests against a real vyred ---------------------------------
# They share the transport's daemon harness and our /proc observation and
# honest-producer helpers.
REL_HELPERS := $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/obj/tests/test_crash_proc.o \
	$(BUILD)/obj/tests/test_crash_honest.o
REL_PROCESS_TESTS := test_crash test_hostile_region test_hostile_control test_isolation \
	test_restart test_limits test_resume test_resume_hostile test_resume_edges
TESTS += $(REL_PROCESS_TESTS)
$(foreach t,$(REL_PROCESS_TESTS),$(eval TEST_EXTRA_OBJS_$(t) := $(REL_HELPERS)))
TEST_LIBS_test_resume_edges := -lpthread
$(addprefix $(BUILD)/tests/,$(REL_PROCESS_TESTS)): $(REL_HELPERS) $(BUILD)/vyred
