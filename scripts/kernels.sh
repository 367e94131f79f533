#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernels (series) a make target covers: KERNEL= if given, else
# the one KSRC= is (a 6.12 or a 7.x tree), else every supported one.
set -euo pipefail
want=${KERNEL:-}
unset KERNEL
. "$(dirname "$0")/common.sh"

if [ -n "$want" ]; then
	case " $KERNELS_SUPPORTED " in
	*" $want "*) echo "$want" ;;
	*) die "KERNEL=$want: use one of $KERNELS_SUPPORTED" ;;
	esac
elif [ -n "${KSRC:-}" ]; then
	[ -f "$KSRC/Makefile" ] || die "KSRC=$KSRC is not a kernel source tree"
	ver=$(make -s -C "$KSRC" kernelversion)
	k=$(kernel_of_version "$ver")
	[ "$k" != unsupported ] ||
		die "KSRC=$KSRC is Linux $ver: this project has series for $KERNELS_SUPPORTED (7.x trees take 7.2's)"
	echo "$k"
else
	echo "$KERNELS_SUPPORTED"
fi
