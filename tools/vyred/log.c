/* SPDX-License-Identifier: MIT */
/* vyred logs to stderr, one line per event, as a systemd service should. */
#include <stdarg.h>
#include <stdio.h>

#include "daemon.h"

void vyre_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vyred: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
