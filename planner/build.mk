# planner/: arenas, dedupe, dependencies, barrier layering, frontier memory
# planning and launch fusion (pure: no I/O). See docs/planner.md.
CORE_SRCS += planner/arena.c planner/errors.c planner/barrier.c planner/frontier.c \
	     planner/fusion.c planner/buffers.c planner/dedupe.c planner/cross_arm.c \
	     planner/context.c planner/plan.c

TESTS += test_planner_goldens
