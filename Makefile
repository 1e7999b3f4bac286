# vyre - one GNU make build for libraries, tools, BPF, tests and benchmarks.
#
#   make              build everything this machine can build
#   make setup        install missing Debian packages (as root), else print the apt line
#   make test         build and run the whole test suite
#   make check        what CI runs: test, then the suite under ASan+UBSan and TSan
#   make demo         start vyred, run the multi-producer demo, stop it
#   make asan / tsan  the test suite under ASan+UBSan / TSan (separate build dirs)
#   make install      PREFIX=/usr/local DESTDIR=: binaries, library, headers, vyre.pc,
#                     systemd units, man pages, the Python package (dist/install.mk)
#   make deb          Debian packages in $(BUILD)/deb/ (dist/deb.mk)
#
# Each part adds its sources, programs and tests in its own */*.mk fragment.

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= gcc
PKG_CONFIG ?= pkg-config
SANITIZE ?=

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   ?= -O2 -g
CPPFLAGS += -Iinclude -D_GNU_SOURCE
ALL_CFLAGS = -std=c17 $(WARN) $(CFLAGS) $(SAN_FLAGS) -fPIC -MMD -MP
LDLIBS   += -lpthread

ifeq ($(SANITIZE),address)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
ifeq ($(SANITIZE),thread)
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)
pc_exists = $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo yes)

URING_CFLAGS  := $(call pc_cflags,liburing)
URING_LIBS    := $(or $(call pc_libs,liburing),-luring)
CMOCKA_CFLAGS := $(call pc_cflags,cmocka)
CMOCKA_LIBS   := $(or $(call pc_libs,cmocka),-lcmocka)

# Filled by the build.mk fragments.
LIBVYRE_SRCS :=   # client library (libvyre.a / libvyre.so)
CORE_SRCS    :=   # daemon internals shared with tests (libvyre-core.a)
PROGRAMS     :=   # installed binaries, built into $(BUILD)/
TESTS        :=   # test programs, run by `make test` in this order
EXTRA_ALL    :=   # other things `make` builds

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

.PHONY: all setup test check demo asan tsan clean format
.SECONDARY:
all: build-all

-include $(sort $(wildcard */*.mk))

LIBVYRE_OBJS := $(call obj,$(LIBVYRE_SRCS))
CORE_OBJS    := $(call obj,$(CORE_SRCS))

build-all: $(BUILD)/libvyre.a $(BUILD)/libvyre.so $(BUILD)/vyre.pc $(BUILD)/libvyre-core.a \
	   $(addprefix $(BUILD)/,$(PROGRAMS)) $(addprefix $(BUILD)/tests/,$(TESTS)) $(EXTRA_ALL)
.PHONY: build-all

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(CFLAGS_$(subst /,_,$*)) -c $< -o $@

$(BUILD)/libvyre.a: $(LIBVYRE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libvyre.so: $(LIBVYRE_OBJS)
	$(CC) -shared -Wl,-soname,libvyre.so.$(VYRE_SO_MAJOR) $(SAN_FLAGS) -o $@ $^ -lpthread

$(BUILD)/libvyre-core.a: $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

VYRE_VERSION  := 0.1.0
VYRE_SO_MAJOR := 0
$(BUILD)/vyre.pc: Makefile
	@mkdir -p $(dir $@)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: vyre' 'Description: vyre shared-memory GPU work-submission client' \
	  'Version: $(VYRE_VERSION)' 'Libs: -L$${libdir} -lvyre' 'Libs.private: -lpthread' \
	  'Cflags: -I$${includedir}' > $@

setup:
	@sh tools/setup-deps.sh

test: build-all
	@sh tests/run.sh $(BUILD)/tests $(TESTS)

demo: build-all
	@sh tools/demo.sh $(BUILD)

check:
	$(MAKE) test
	$(MAKE) asan
	$(MAKE) tsan

asan:
	$(MAKE) BUILD=build-asan SANITIZE=address CFLAGS="-O1 -g" test

tsan:
	$(MAKE) BUILD=build-tsan SANITIZE=thread CFLAGS="-O1 -g" test

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
