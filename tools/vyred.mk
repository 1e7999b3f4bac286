# tools/vyred: the daemon (io_uring event loop + drain/resolve/plan/execute/complete).
VYRED_SRCS := $(wildcard tools/vyred/*.c)
PROGRAMS += vyred

$(BUILD)/vyred: $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a \
		$(BUILD)/libvyre.a $(VYRED_LIBS) $(URING_LIBS) $(LDLIBS) -lm

# The demo producer used by `make demo` (tools/demo.sh); built, not installed.
EXTRA_ALL += $(BUILD)/vyre-demo
$(BUILD)/vyre-demo: $(call obj,tools/vyre-demo.c) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $< $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a $(LDLIBS)
