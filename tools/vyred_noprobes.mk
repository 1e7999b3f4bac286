# tools/vyred_noprobes.mk: vyred with every USDT probe compiled out
# (VYRE_PROBES=0), for the "probes" benchmark suite. Only vyred's own files
# fire probes, so only they are rebuilt, into $(BUILD)/noprobes/; the core
# library is shared. Included after tools/vyred.mk, which sets VYRED_SRCS.

VYRED_NOPROBES_OBJS := $(patsubst %.c,$(BUILD)/noprobes/obj/%.o,$(VYRED_SRCS))

$(BUILD)/noprobes/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -UVYRE_PROBES -DVYRE_PROBES=0 $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/noprobes/vyred: $(VYRED_NOPROBES_OBJS) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a
	$(CC) $(SAN_FLAGS) -o $@ $(VYRED_NOPROBES_OBJS) $(BUILD)/libvyre-core.a $(BUILD)/libvyre.a \
		$(VYRED_LIBS) $(URING_LIBS) $(LDLIBS) -lm

EXTRA_ALL += $(BUILD)/noprobes/vyred

-include $(wildcard $(BUILD)/noprobes/obj/tools/vyred/*.d)
