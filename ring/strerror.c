/* SPDX-License-Identifier: MIT */
/* Names of the VYRE_E_* codes. */
#include "vyre/vyre.h"

const char *vyre_strerror(int err)
{
	switch (err) {
	case VYRE_OK:
		return "success";
	case VYRE_E_INVAL:
		return "invalid argument or work item";
	case VYRE_E_AGAIN:
		return "submission queue full, reap completions and retry";
	case VYRE_E_NOMEM:
		return "out of memory (heap, handles or system)";
	case VYRE_E_PERM:
		return "permission denied (uid/gid not allowed by vyred or the domain)";
	case VYRE_E_DISCONNECTED:
		return "disconnected from vyred (not running, shut down, or dropped this client)";
	case VYRE_E_DEVICE:
		return "device error while executing";
	case VYRE_E_TIMEDOUT:
		return "timed out";
	case VYRE_E_PROTO:
		return "protocol error (ABI version mismatch or malformed message)";
	case VYRE_E_CANCELED:
		return "not run: an earlier item of its chain failed";
	case VYRE_E_EXIST:
		return "a buffer of that name already exists in the domain";
	case VYRE_E_NOENT:
		return "no buffer of that name in the domain";
	case VYRE_E_RESTARTED:
		return "accepted by a vyred that died before completing it; it may have run";
	default:
		return "unknown vyre error";
	}
}
