# examples/ops: op modules (docs/design.md 6.7). The host objects build
# everywhere; tests load them through vyred's module loader.
OPMOD_EXAMPLES := crc32c
EXTRA_ALL += $(foreach m,$(OPMOD_EXAMPLES),$(BUILD)/examples/ops/libvyre_op_$(m).so)

$(BUILD)/examples/ops/libvyre_op_%.so: $(BUILD)/obj/examples/ops/%/host.o
	@mkdir -p $(dir $@)
	$(CC) -shared $(SAN_FLAGS) -o $@ $<

# the module loader: files checked as root or vyred's own, manifests, symbols, clashes, optional modules
TESTS += test_opmods
TEST_EXTRA_OBJS_test_opmods := $(BUILD)/obj/tools/vyred/opmods.o $(BUILD)/obj/tools/vyred/opmod_manifest.o
$(BUILD)/tests/test_opmods: $(TEST_EXTRA_OBJS_test_opmods) $(BUILD)/examples/ops/libvyre_op_crc32c.so
