#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# QEMU from Debian unstable for the qemu-svm platform, without touching the
# system: the .debs of qemu-system-x86 and of everything it depends on,
# downloaded with the private apt state of common.sh and unpacked under
# $BUILD/emulators/qemu-VERSION/; $BUILD/emulators/bin/qemu-system-x86_64
# runs it through unstable's own dynamic loader (it needs unstable's libc,
# newer than Debian 12's).
#
# Why not Debian 12's QEMU 7.2: its SVM emulation lets an interrupt into a
# nested guest inside STI's one-instruction shadow (its VMRUN does not load
# the shadow from the VMCB; fixed in QEMU 9.1, commit 1a150d331d9b), so a
# guest idling in "sti; hlt", as every KVM selftest does, can take its
# wake-up right before the HLT and then halt for good (docs/platforms.md,
# "qemu-svm and STI's shadow").  The platform must behave as hardware does.
#
#   emulators.sh           fetch and unpack (reused while the mirror serves
#                          the same version, or when it cannot be reached)
#   emulators.sh --print   the wrapper's path, or nothing if not unpacked
set -euo pipefail
. "$(dirname "$0")/common.sh"

PKG=qemu-system-x86
EMU=$BUILD/emulators
WRAPPER=$EMU/bin/qemu-system-x86_64

if [ "${1:-}" = --print ]; then
	[ -x "$WRAPPER" ] && echo "$WRAPPER"
	exit 0
fi

need_cmd dpkg-deb dpkg
mkdir -p "$EMU/bin"
start=$SECONDS
if ! mirror_index; then
	[ -x "$WRAPPER" ] || die "cannot read the Debian mirror's index ($MIRROR_STATE/update.log): unstable's $PKG is needed for qemu-svm"
	say "emulators: the mirror cannot be reached, keeping $("$WRAPPER" --version | head -1)"
	exit 0
fi
ver=$(served_version "$PKG")
[ -n "$ver" ] || die "the Debian mirror ($(mirror_uri)) serves no $PKG in unstable"
root=$EMU/qemu-${ver//[:~]/_}
if [ ! -f "$root/.complete" ]; then
	say "emulators: fetching $PKG $ver and its dependencies from Debian unstable, installing nothing"
	dl=$EMU/debs
	rm -rf "$dl" "$root"
	mkdir -p "$dl" "$root"
	# Depends and Pre-Depends, recursively (not Recommends): concrete
	# packages only, virtual ones are provided by some of them.
	mirror_apt apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "$PKG" |
		awk '/^[a-z0-9]/ { print }' | sort -u >"$dl/packages"
	(cd "$dl" && mirror_apt apt-get download $(cat packages)) >"$dl/download.log" 2>&1 ||
		die "downloading $PKG $ver failed ($dl/download.log)"
	for deb in "$dl"/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	rm -rf "$dl"
	touch "$root/.complete"
fi
loader=$root/usr/lib64/ld-linux-x86-64.so.2
[ -x "$loader" ] || loader=$root/lib64/ld-linux-x86-64.so.2
[ -x "$loader" ] || die "$root has no ld-linux-x86-64.so.2"
cat >"$WRAPPER.new" <<-EOF
	#!/bin/sh
	# Debian unstable's $PKG $ver (scripts/emulators.sh)
	exec "$loader" --library-path "$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \\
		"$root/usr/bin/qemu-system-x86_64" -L "$root/usr/share/seabios" -L "$root/usr/share/qemu" "\$@"
EOF
chmod +x "$WRAPPER.new"
mv "$WRAPPER.new" "$WRAPPER"
version=$("$WRAPPER" --version) || die "$WRAPPER does not run"
say "emulators: ${version%%$'\n'*} in $((SECONDS - start)) s"
