# ring/: shared-memory regions, SQ/CQ rings, doorbells (client + daemon halves),
# and vyred's buffer bookkeeping (domain heaps, handle table, resolve).
LIBVYRE_SRCS += ring/ring.c ring/doorbell.c ring/region.c ring/proto.c
LIBVYRE_SRCS += ring/client_connect.c ring/client_buffers.c ring/client_submit.c
LIBVYRE_SRCS += ring/client_wait.c ring/strerror.c
CORE_SRCS += ring/region_create.c ring/heap.c ring/handles.c ring/resolve.c
TESTS += test_ring test_ring_buffers test_ring_proto
