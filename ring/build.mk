# ring/: shared-memory regions, SQ/CQ rings, doorbells (client + daemon halves),
# and vyred's buffer bookkeeping (domain heaps, handle table, resolve).
LIBVYRE_SRCS += ring/ring.c ring/doorbell.c ring/region.c ring/proto.c
LIBVYRE_SRCS += ring/client_connect.c ring/client_buffers.c ring/client_submit.c
LIBVYRE_SRCS += ring/client_wait.c ring/client_watch.c ring/strerror.c ring/client_list.c
LIBVYRE_SRCS += ring/client_resume.c ring/client_socket.c ring/client_call.c ring/client_ops.c
# The pattern compiler (include/vyre/dfa.h): every client builds its own DFA tables.
LIBVYRE_SRCS += ring/dfa_compile.c ring/dfa_set.c ring/dfa_ac.c ring/dfa_lists.c ring/dfa_product.c \
		ring/dfa_table.c
CORE_SRCS += ring/region_create.c ring/heap.c ring/handles.c ring/resolve.c ring/resolve_range.c ring/ledger.c
CORE_SRCS += ring/region_adopt.c ring/handles_adopt.c
TESTS += test_ring test_ring_buffers test_ring_proto
# What a new vyred adopts after a restart: ledgers, heaps, handles (design.md 3).
TESTS += test_adopt

# Integration tests run the real vyred; they share the daemon harness.
TESTS += test_integration
DAEMON_HARNESS := $(BUILD)/obj/tests/test_integration_daemon.o
TEST_EXTRA_OBJS_test_integration := $(DAEMON_HARNESS)
$(BUILD)/tests/test_integration: $(DAEMON_HARNESS) $(BUILD)/vyred
TESTS += test_wake
TEST_EXTRA_OBJS_test_wake := $(DAEMON_HARNESS)
$(BUILD)/tests/test_wake: $(DAEMON_HARNESS) $(BUILD)/vyred
TESTS += test_badinput
TEST_EXTRA_OBJS_test_badinput := $(DAEMON_HARNESS)
$(BUILD)/tests/test_badinput: $(DAEMON_HARNESS) $(BUILD)/vyred
TESTS += test_badinput_uid
TEST_EXTRA_OBJS_test_badinput_uid := $(DAEMON_HARNESS)
$(BUILD)/tests/test_badinput_uid: $(DAEMON_HARNESS) $(BUILD)/vyred
TESTS += test_disconnect
TEST_EXTRA_OBJS_test_disconnect := $(DAEMON_HARNESS)
$(BUILD)/tests/test_disconnect: $(DAEMON_HARNESS) $(BUILD)/vyred
# An event-fd-only client sees vyred die (the hang-up watcher, docs/design.md 5).
TESTS += test_event_fd_death
TEST_EXTRA_OBJS_test_event_fd_death := $(DAEMON_HARNESS)
$(BUILD)/tests/test_event_fd_death: $(DAEMON_HARNESS) $(BUILD)/vyred
