# bpf/: the telemetry BPF program, its libbpf skeleton (bpftool gen skeleton)
# and the bpftrace scripts. The program uses no kernel types, so the build
# needs neither vmlinux.h nor kernel BTF.

BPF_CLANG ?= clang
BPFTOOL   ?= bpftool
BPF_ARCH  := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -ffreestanding -Wall -Wextra -Wno-unused-parameter -Werror \
	      -Iinclude -Ibpf $(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH))

$(BUILD)/bpf/vyre.bpf.o: bpf/vyre.bpf.c bpf/vyre_bpf.h include/vyre/telemetry.h include/vyre/abi.h
	@mkdir -p $(dir $@)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/vyre.skel.h: $(BUILD)/bpf/vyre.bpf.o
	$(BPFTOOL) gen skeleton $< name vyre_bpf > $@.tmp && mv $@.tmp $@

EXTRA_ALL += $(BUILD)/bpf/vyre.skel.h
