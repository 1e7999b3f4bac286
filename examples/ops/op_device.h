/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/op_device.h - what the example modules' device code
 * includes: the module ABI (include/vyre/op_module.h) and the error codes
 * of vyre/abi.h, a C header whose _Static_assert is static_assert in C++.
 */
#ifndef VYRE_EXAMPLE_OP_DEVICE_H
#define VYRE_EXAMPLE_OP_DEVICE_H

#include <stdint.h>

#define _Static_assert static_assert
#include "vyre/abi.h"
#undef _Static_assert
#include "vyre/op_module.h"

#endif /* VYRE_EXAMPLE_OP_DEVICE_H */
