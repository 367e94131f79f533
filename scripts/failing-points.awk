# SPDX-License-Identifier: GPL-2.0
#
# What made one test of a platform's KTAP (scripts/report.awk's output)
# fail: -v t=TEST prints, indented, its nested failing points and their
# diagnostics (at most 12 lines), the kernel reports before the point and
# the reason report.awk gave after it.  Used where a failure is repeated
# for a reader: the flake count and make check's closing lines.

# a test's nested lines come before its own top-level point
/^(not )?ok [0-9]+ / {
	if (mine)
		exit
	name = $0
	sub(/^(not )?ok [0-9]+ /, "", name)
	sub(/ # .*/, "", name)
	if (name == t) {
		for (i = 1; i <= n && i <= 12; i++)
			print "    " lines[i]
		mine = 1
	}
	n = 0
	next
}
mine && /^# / { print "    " $0; next }
mine { exit }
/^# (guest|host) kernel: / || /^ +(# )?not ok / ||
(/^ +# / && !/^ +# (selftests:|TAP version|[0-9]+\.\.|ok )/) {
	sub(/^ +/, "")
	lines[++n] = $0
}
