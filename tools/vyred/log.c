/* SPDX-License-Identifier: MIT */
/* vyred logs to stderr, one line per event, as a systemd service should. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* "vyred: ", or a GPU worker's "vyred[gpu 1]: "; set before any thread starts */
static char log_name[32] = "vyred: ";

void vyre_log_set_gpu(uint32_t first_index)
{
	snprintf(log_name, sizeof(log_name), "vyred[gpu %u]: ", first_index);
}

/* One write a line: the GPU workers share the supervisor's stderr. */
void vyre_log(const char *fmt, ...)
{
	char line[1024];
	const size_t name = strnlen(log_name, sizeof(log_name));
	int n;
	va_list ap;

	va_start(ap, fmt);
	memcpy(line, log_name, name);
	n = vsnprintf(line + name, sizeof(line) - name, fmt, ap);
	va_end(ap);
	n = n < 0 ? (int)name : n + (int)name;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return; /* nowhere to say it */
}
