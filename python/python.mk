# python/: the ctypes binding (python/vyre), its example and its test. The
# package needs no build; `make install` copies PYTHON_PKG_DIR.
PYTHON_PKG_DIR := python/vyre

# A Python producer against a live vyred, checked against vyre-submit --local.
TESTS += test_python
PY_SAN_RUNTIME = $(if $(SANITIZE),$(shell $(CC) -print-file-name=lib$(patsubst address,asan,$(patsubst thread,tsan,$(SANITIZE))).so))
$(BUILD)/tests/test_python: tests/test_python.sh tests/test_python.py $(wildcard python/vyre/*.py) \
		python/examples/producer.py python/examples/scan_report.py $(BUILD)/vyred $(BUILD)/vyre-submit $(BUILD)/libvyre.so \
		$(BUILD)/examples/ops/libvyre_op_crc32c.so
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' \
	    -e 's|@VYRE_SANITIZE@|$(SANITIZE)|g' -e 's|@VYRE_SAN_RUNTIME@|$(PY_SAN_RUNTIME)|g' $< > $@ \
	    && chmod +x $@
