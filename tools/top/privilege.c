/* SPDX-License-Identifier: MIT */
/*
 * What vyre-top needs before it tries anything: CAP_BPF and CAP_PERFMON (or
 * CAP_SYS_ADMIN, which implies both on older kernels) to load a tracing
 * program and open uprobe perf events, and a kernel with the uprobe PMU and
 * BPF ring buffers. Checking first turns libbpf's EPERM into a sentence that
 * names the missing piece.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "top.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define UPROBE_PMU "/sys/bus/event_source/devices/uprobe/type"

static int have_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1u;
}

int top_check_privilege(char *why, size_t why_len)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0) {
		snprintf(why, why_len, "cannot read this process's capabilities: %s",
			 strerror(errno));
		return -EPERM;
	}
	int bpf = have_cap(data, CAP_BPF), perfmon = have_cap(data, CAP_PERFMON);
	if (!have_cap(data, CAP_SYS_ADMIN) && !(bpf && perfmon)) {
		snprintf(why, why_len,
			 "missing %s%s%s: loading the BPF program and attaching uprobes needs "
			 "CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); run as root or "
			 "`setcap cap_bpf,cap_perfmon+ep vyre-top`",
			 bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
			 perfmon ? "" : "CAP_PERFMON");
		return -EPERM;
	}
	if (access(UPROBE_PMU, R_OK) != 0) {
		snprintf(why, why_len,
			 "the kernel has no uprobe PMU (%s: %s): it needs "
			 "CONFIG_UPROBE_EVENTS",
			 UPROBE_PMU, strerror(errno));
		return -ENOTSUP;
	}
	return 0;
}
