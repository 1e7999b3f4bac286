/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/sd.h - the two systemd service protocols vyred speaks, without
 * libsystemd (docs/operations.md):
 *  - socket activation (sd_listen_fds(3)): LISTEN_PID names this process and
 *    LISTEN_FDS is 1: fd 3 is the listening SOCK_SEQPACKET unix socket;
 *  - the notification socket (sd_notify(3)): READY=1, STATUS=, STOPPING=1 and
 *    WATCHDOG=1 datagrams to $NOTIFY_SOCKET.
 * Without these variables nothing changes: vyred binds --socket itself and
 * sends nothing.
 */
#ifndef VYRED_SD_H
#define VYRED_SD_H

#include <stdint.h>

/*
 * Reads and unsets LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, NOTIFY_SOCKET,
 * WATCHDOG_USEC and WATCHDOG_PID. Call before any thread exists (unsetenv).
 * Returns 0, or -1 (logged) when systemd passed sockets vyred cannot use.
 */
int vyre_sd_init(void);
void vyre_sd_fini(void);

/* The listening socket systemd passed (close-on-exec, non-blocking), or -1. */
int vyre_sd_listen_fd(void);

/* Loop 0 pings the watchdog this often (half of WATCHDOG_USEC); 0: no watchdog. */
uint64_t vyre_sd_watchdog_ns(void);

/* Sends @state ("KEY=value" lines) to $NOTIFY_SOCKET, if any; never blocks. */
void vyre_sd_notify(const char *state);

#endif /* VYRED_SD_H */
