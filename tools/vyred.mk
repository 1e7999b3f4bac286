# tools/vyred: the daemon (io_uring event loop + drain/resolve/plan/execute/complete).
VYRED_SRCS := $(wildcard tools/vyred/*.c)
PROGRAMS += vyred

$(BUILD)/vyred: $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) -o $@ $(call obj,$(VYRED_SRCS)) $(BUILD)/libvyre-core.a \
		$(BUILD)/libvyre.a $(VYRED_LIBS) $(URING_LIBS) $(LDLIBS) -lm
