#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Say, without failing, whether the Debian mirror (unstable, experimental)
# serves a linux-source newer than the newest series in patches/: then a
# new kernel wants its series.  One line, "drift: ...", naming the package
# and its version; "no drift: ..." otherwise, or why the mirror could not
# be asked.
set -uo pipefail
. "$(dirname "$0")/common.sh"

newest=$(printf '%s\n' $KERNELS_SUPPORTED | sort -V | tail -1)
if ! mirror_index 2>/dev/null; then
	echo "drift: unknown, the Debian mirror's index cannot be read ($MIRROR_STATE/update.log)"
	exit 0
fi
newer=
for pkg in $(mirror_apt apt-cache pkgnames linux-source- 2>/dev/null |
	     grep -xE 'linux-source-[0-9]+\.[0-9]+' | sort -V); do
	k=${pkg#linux-source-}
	[ "$(printf '%s\n%s\n' "$k" "$newest" | sort -V | tail -1)" != "$newest" ] || continue
	newer="$newer $pkg"
	echo "drift: the Debian mirror serves $pkg $(served_version "$pkg"), newer than the newest series, patches/$newest/"
done
[ -n "$newer" ] ||
	echo "no drift: the newest linux-source the Debian mirror serves has a series (patches/$newest/, linux-source-$newest $(served_version "linux-source-$newest"))"
