# tools/layers.mk: the layer check (tools/layers.py over tools/layers.conf,
# docs/layers.md) and its test, which also plants violations the check must find.
TESTS += test_layers
$(BUILD)/tests/test_layers: tests/test_layers.sh tools/layers.py tools/layers.conf
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' $< > $@
	chmod +x $@

.PHONY: layers
layers: build-all
	python3 tools/layers.py --build $(BUILD)
