# ring/: shared-memory regions, SQ/CQ rings, doorbells (client + daemon halves).
LIBVYRE_SRCS += ring/ring.c ring/doorbell.c ring/region.c
CORE_SRCS += ring/region_create.c
TESTS += test_ring
