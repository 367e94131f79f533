#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The commands in the code blocks of README.md and docs/*.md (fenced, or
# indented four spaces) run as written today, as far as they are ours:
# every `make` goal is one of the Makefile's, every VAR= on a make line or
# before one of our scripts is a variable the Makefile or the scripts read,
# KERNEL=, DEBUG=, STRICT= and PLATFORMS= take values that are accepted,
# and every scripts/NAME it runs exists.  A block after a "<!-- in-tree"
# comment (the kernel tree's own make, README's recipe) and a make with
# -C or -f (another Makefile) are not ours.  Prints "ok - ..." or
# "not ok - ..." with each wrong command as "#   FILE:LINE: why".
#
# usage: docs-commands.sh [FILE...]	(default: README.md docs/*.md)
set -uo pipefail
. "$(dirname "$0")/common.sh"

cd "$TOP" || exit 1
[ $# -gt 0 ] || set -- README.md docs/*.md mutants/README.md

# make's goals: the Makefile's rules (its .PHONY line and any "name:" line)
goals=" $(sed -n 's/^\([a-z][a-z0-9_-]*\):.*/\1/p; s/^\.PHONY: *//p' Makefile | tr '\n' ' ') "
# the variables: words in capitals that the Makefile names or a script reads
vars=" $( { grep -o '\b[A-Z][A-Z0-9_]*\b' Makefile; grep -ho '\${\?[A-Z][A-Z0-9_]*' scripts/*.sh |
	tr -d '${'; } | sort -u | tr '\n' ' ') "

# code, as "FILE<TAB>LINE<TAB>TEXT": the lines of code blocks, and the
# inline `code` spans of the text (a paragraph's, joined) that start with
# a command of ours
code_lines() {
	awk '
		function flush(   n, i, part) {
			n = split(para, part, "`")
			for (i = 2; i <= n; i += 2)
				if (part[i] ~ /^([A-Z][A-Z0-9_]*=[^ ]* )*(make( |$)|(\.\/)?scripts\/)/)
					print FILENAME "\t" pline "\t" part[i]
			para = ""
		}
		FNR == 1 { flush(); fence = 0; skip = 0; blank = 1; indented = 0 }
		/^<!-- in-tree/ { skip = 1; next }
		/^[ \t]*```/ { flush(); fence = !fence; if (!fence) skip = 0; next }
		fence && !skip { print FILENAME "\t" FNR "\t" $0; next }
		fence { next }
		/^(    |\t)/ && (indented || blank) {
			flush(); indented = 1; print FILENAME "\t" FNR "\t" $0; next
		}
		/^[ \t]*$/ { flush(); indented = 0; blank = 1; next }
		{ indented = 0; blank = 0; if (para == "") pline = FNR; para = para " " $0 }
		END { flush() }' "$@"
}

bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
n=0
while IFS=$'\t' read -r file line text; do
	# each command of the line: comments off, split at ; && || |
	text=${text%%#*}
	while IFS= read -r cmd; do
		# words, as the shell splits them (quotes kept together)
		mapfile -t words < <(xargs -n1 printf '%s\n' <<<"$cmd" 2>/dev/null) ||
			read -ra words <<<"$cmd"
		[ ${#words[@]} -gt 0 ] || continue
		i=0 assigns=()
		while [ $i -lt ${#words[@]} ] && [[ ${words[i]} =~ ^[A-Z][A-Z0-9_]*= ]]; do
			assigns+=("${words[i]}")
			i=$((i + 1))
		done
		[ $i -lt ${#words[@]} ] || continue
		w=${words[i]}
		case $w in
		make) ;;
		scripts/*.sh | ./scripts/*.sh | scripts/*.awk | ./scripts/*.awk | scripts/tests/* | ./scripts/tests/*)
			w=${w#./}
			compgen -G "$w" >/dev/null || echo "$file:$line: $w does not exist" >>"$bad" ;;
		*) continue ;;	# not ours
		esac
		n=$((n + 1))
		args=("${assigns[@]}")
		if [ "$w" = make ]; then
			ours=1
			for a in "${words[@]:i+1}"; do
				case $a in -C* | -f*) ours= ;; esac
			done
			[ -n "$ours" ] || continue
			for a in "${words[@]:i+1}"; do
				case $a in
				-*) ;;
				[A-Z]*=*) args+=("$a") ;;
				*'$'* | *'<'* | *'['* | *'...'*) ;;	# a placeholder
				*)
					[[ $goals == *" $a "* ]] ||
						echo "$file:$line: make $a: the Makefile has no such goal" >>"$bad" ;;
				esac
			done
		fi
		for a in "${args[@]}"; do
			v=${a%%=*} val=${a#*=}
			val=${val#[\"\']} val=${val%[\"\']}
			[[ $vars == *" $v "* ]] ||
				{ echo "$file:$line: $v=: no Makefile or script reads $v" >>"$bad"; continue; }
			case $val in *'$'* | *'<'* | *'...'* | *N* | '') continue ;; esac
			case $v in
			KERNEL)
				[[ " $KERNELS_SUPPORTED " == *" $val "* ]] ||
					echo "$file:$line: KERNEL=$val: not one of $KERNELS_SUPPORTED" >>"$bad" ;;
			DEBUG | STRICT)
				case $val in 0 | 1) ;; *) echo "$file:$line: $v=$val: 1 or nothing" >>"$bad" ;; esac ;;
			PLATFORMS | MUTANT_PLATFORMS | BENCH_PLATFORMS)
				for p in $val; do
					[[ " $(echo $ALL_PLATFORMS) " == *" $p "* ]] ||
						echo "$file:$line: $v=: no platform '$p'" >>"$bad"
				done ;;
			esac
		done
	done < <(sed 's/&&/\n/g; s/||/\n/g; s/[;|]/\n/g' <<<"$text")
done < <(code_lines "$@")

if [ -s "$bad" ]; then
	echo "not ok - docs: commands in code blocks: $(wc -l <"$bad") of the $n of ours in $# files wrong"
	sed 's/^/#   /' "$bad"
	exit 1
fi
echo "ok - docs: $n commands of ours in the code blocks of $# files name goals, variables and scripts that exist"
