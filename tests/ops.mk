# tests/ops.mk: running vyred as a service (docs/operations.md).

# Socket activation, READY=1/STATUS=/STOPPING=1 and watchdog pings without systemd.
TESTS += test_sd_activation
TEST_EXTRA_OBJS_test_sd_activation := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_sd_activation: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred

# make install PREFIX= / DESTDIR=, and make deb with the packages installed,
# used and purged (root, apt-get; skipped from sanitizer builds). Shell tests,
# copied next to the C tests with the source tree and the build filled in.
TESTS += test_install test_deb
OPS_SHELL_DEPS := $(BUILD)/vyred $(BUILD)/vyre-submit $(BUILD)/vyre-demo $(BUILD)/libvyre.so \
		  dist/install.mk dist/deb.mk $(wildcard dist/deb/* dist/systemd/*)
$(BUILD)/tests/test_install $(BUILD)/tests/test_deb: $(BUILD)/tests/%: tests/%.sh $(OPS_SHELL_DEPS)
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@BUILD@|$(abspath $(BUILD))|g' \
	    -e 's|@SANITIZE@|$(SANITIZE)|g' -e 's|@CFLAGS@|$(CFLAGS)|g' $< > $@
	chmod +x $@
