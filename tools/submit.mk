# tools/submit.mk: vyre-submit - its parser, runner and tests (its DFA compiler is
# libvyre's, ring/dfa_*.c; test_dfa_compile tests it).

SUBMIT_SRCS := tools/submit/lex.c tools/submit/parse.c \
	       tools/submit/print.c tools/submit/run.c tools/submit/target_local.c \
	       tools/submit/numbers.c tools/submit/parser.c tools/submit/parse_buffer.c \
	       tools/submit/parse_item.c
SUBMIT_OBJS := $(call obj,$(SUBMIT_SRCS))

# Everything vyre-submit needs beyond libvyre; tests link parts of it.
$(BUILD)/libvyre-submit.a: $(SUBMIT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

TESTS += test_dfa_compile test_submit_parse test_submit_local
TEST_EXTRA_OBJS_test_submit_parse := $(BUILD)/libvyre-submit.a
TEST_EXTRA_OBJS_test_submit_local := $(BUILD)/libvyre-submit.a
$(BUILD)/tests/test_submit_parse $(BUILD)/tests/test_submit_local: $(BUILD)/libvyre-submit.a
CFLAGS_tests_test_submit_parse := -DVYRE_SRCDIR='"$(CURDIR)"'
CFLAGS_tests_test_submit_local := -DVYRE_SRCDIR='"$(CURDIR)"'

PROGRAMS += vyre-submit
$(BUILD)/vyre-submit: $(call obj,tools/vyre-submit.c tools/submit/target_client.c) \
		      $(BUILD)/libvyre-submit.a $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	$(CC) $(SAN_FLAGS) -o $@ $(filter %.o,$^) $(BUILD)/libvyre-submit.a \
		$(BUILD)/libvyre-core.a $(BUILD)/libvyre.a $(URING_LIBS) $(LDLIBS)

# End to end against a live vyred: the examples, shared domains, random programs vs --local.
TESTS += test_submit_e2e
TEST_EXTRA_OBJS_test_submit_e2e := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_submit_e2e: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred \
				$(BUILD)/vyre-submit $(BUILD)/vyre-bench
CFLAGS_tests_test_submit_e2e := -DVYRE_SRCDIR='"$(CURDIR)"'
