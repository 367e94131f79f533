#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernels (series) a make target covers: KERNEL= if given, else
# the one KSRC= is (a 6.12 or a 7.x tree), else the defaults: 6.12 (LTS)
# and the newest 7.x that has a series in patches/ and whose source can be
# had (already downloaded, or served by the Debian mirror: unstable, else
# experimental).  The mirror is asked only with MIRROR_LOOKUP=1 (the make
# goals that download: not help, clean, unit or patches), on Debian, and
# where there is a choice (several 7.x series).  When no 7.x source can be
# had, the newest 7.x series is printed all the same: its phases then SKIP,
# and a run fails, with the reason (scripts/each-kernel.sh).  PLATFORMS=host alone: the one series for the
# running kernel (scripts/platforms.sh, host_kernel): its tests run on the
# one running kernel, and another kernel's list must not run beside them.
set -euo pipefail
want=${KERNEL:-}
unset KERNEL
. "$(dirname "$0")/common.sh"

# ksrc_kernel: the series KSRC='s version takes (supported_trees,
# common.sh), or fail naming its version, KERNEL='s if it differs, and
# the trees this project supports: before make deps and any copy of it
ksrc_kernel() {
	local ver k
	# common.sh refused what is not a kernel tree (this project included)
	ver=$(make -s -C "$KSRC" kernelversion) && [ -n "$ver" ] ||
		die "KSRC=$KSRC: 'make kernelversion' says no version there"
	k=$(kernel_of_version "$ver")
	if [ "$k" = unsupported ]; then
		die "KSRC=$KSRC is Linux $ver${want:+, KERNEL=$want}: this project has no series for it: $(supported_trees --line)"
	elif [ -n "$want" ] && [ "$k" != "$want" ]; then
		die "KSRC=$KSRC is Linux $ver, which takes KERNEL=$k's series, not KERNEL=$want's: drop KERNEL=, or set KSRC to a tree KERNEL=$want takes. $(supported_trees --line)"
	fi
	case $ver in
	"$k" | "$k".* | "$k"-*) ;;
	*) printf 'note: KSRC=%s is Linux %s: %s\n' "$KSRC" "$ver" \
		"$(supported_trees --line | tr ';' '\n' | grep "KERNEL=$k," | sed 's/^ *//')" >&2 ;;
	esac
	echo "$k"
}

if [ "$(printf '%s\n' ${PLATFORMS:-} | sort -u)" = host ]; then
	KERNEL_ASKED=$want host_kernel || exit 1
elif [ -n "$want" ]; then
	case " $KERNELS_SUPPORTED " in
	*" $want "*) ;;
	*) die "KERNEL=$want: use one of $KERNELS_SUPPORTED. $(supported_trees --line)" ;;
	esac
	if [ -n "${KSRC:-}" ]; then
		ksrc_kernel
	else
		echo "$want"
	fi
elif [ -n "${KSRC:-}" ]; then
	ksrc_kernel
else
	mainline=$(printf '%s\n' $KERNELS_SUPPORTED | grep '^7\.' | sort -rV)
	pick= lookup=
	[ "${MIRROR_LOOKUP:-}" != 1 ] || [ "$(echo "$mainline" | wc -l)" -lt 2 ] ||
		! os_is_debian || lookup=1
	for k in $mainline; do
		if [ -f "$(deb_tarball "$k")" ] ||
		   { [ -n "$lookup" ] && [ -n "$(served_version "linux-source-$k")" ]; }; then
			pick=$k
			break
		fi
	done
	echo "6.12 ${pick:-$(echo "$mainline" | head -1)}"
fi
