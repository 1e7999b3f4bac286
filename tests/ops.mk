# tests/ops.mk: running vyred as a service (docs/operations.md).

# Socket activation, READY=1/STATUS=/STOPPING=1 and watchdog pings without systemd.
TESTS += test_sd_activation
TEST_EXTRA_OBJS_test_sd_activation := $(BUILD)/obj/tests/test_integration_daemon.o
$(BUILD)/tests/test_sd_activation: $(BUILD)/obj/tests/test_integration_daemon.o $(BUILD)/vyred
