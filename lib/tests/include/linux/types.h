/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel's type names, for building the model on a host without them. */
#ifndef IPI_UNIT_LINUX_TYPES_H
#define IPI_UNIT_LINUX_TYPES_H

#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;
typedef int32_t s32;

#endif
