# planner/: arenas, dedupe, dependencies, barrier layering, frontier memory
# planning and launch fusion (pure: no I/O). See docs/planner.md.
CORE_SRCS += planner/arena.c planner/errors.c planner/barrier.c planner/frontier.c \
	     planner/fusion.c planner/buffers.c planner/dedupe.c planner/cross_arm.c \
	     planner/context.c planner/plan.c planner/plan_analyse.c planner/handoff.c \
	     planner/ranges.c

TESTS += test_planner_goldens
TESTS += test_planner_budget

# The planner tests share a stand-in for vyred's data and loop.
PLANNER_WORLD_OBJ := $(BUILD)/obj/tests/test_planner_world.o
TESTS += test_planner_diff
TEST_EXTRA_OBJS_test_planner_diff := $(PLANNER_WORLD_OBJ)
$(BUILD)/tests/test_planner_diff: $(PLANNER_WORLD_OBJ)
TESTS += test_planner_batch
TESTS += test_planner_fault
TEST_EXTRA_OBJS_test_planner_fault := $(PLANNER_WORLD_OBJ)
$(BUILD)/tests/test_planner_fault: $(PLANNER_WORLD_OBJ)
TESTS += test_planner_alloc
TEST_EXTRA_OBJS_test_planner_alloc := $(PLANNER_WORLD_OBJ)
TEST_LIBS_test_planner_alloc := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free \
	-Wl,--wrap=aligned_alloc,--wrap=posix_memalign
$(BUILD)/tests/test_planner_alloc: $(PLANNER_WORLD_OBJ)

# vyre-bench's planner suite counts allocator calls per batch by wrapping them.
BENCH_LIBS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free \
	-Wl,--wrap=aligned_alloc,--wrap=posix_memalign

# module ops in the core library: the registry, vyre_exec_one's host calls, and planner-world
# batches with module ops in place of built-in ones against the sequential oracle
TESTS += test_op_modules
TEST_EXTRA_OBJS_test_op_modules := $(PLANNER_WORLD_OBJ) $(BUILD)/obj/examples/ops/crc32c/host.o \
	$(BUILD)/obj/tests/test_module_ops.o
$(BUILD)/tests/test_op_modules: $(PLANNER_WORLD_OBJ) $(BUILD)/obj/examples/ops/crc32c/host.o \
	$(BUILD)/obj/tests/test_module_ops.o
