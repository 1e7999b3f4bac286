# examples/scanlog: scan a log file streamed in 64 KiB items against a rule
# file, through vyred (DFA_REPORT_COUNTED with a stream, docs/design.md 6.8).
SCANLOG_OBJS := $(BUILD)/obj/examples/scanlog/scanlog.o $(BUILD)/obj/examples/scanlog/rules.o
EXTRA_ALL += $(BUILD)/examples/scanlog
$(BUILD)/examples/scanlog: $(SCANLOG_OBJS) $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $(SCANLOG_OBJS) $(BUILD)/libvyre.a $(LDLIBS)

# scanlog against a live vyred on the CPU backend: every (rule, line) of a
# generated log equal to a Python reference's, with the table in the heap and
# in a device buffer
TESTS += test_scanlog
$(BUILD)/tests/test_scanlog: tests/test_scanlog.sh $(BUILD)/vyred $(BUILD)/examples/scanlog
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' $< > $@
	chmod +x $@
