#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Automatic mutants of KVM's interrupt delivery code (make mutation).

Small mechanical changes, each on a line that the coverage run executed
(make coverage's lcov tracefiles): a condition negated, a statement
dropped, a comparison's bound or sense changed, && and || swapped, a
constant swapped for its neighbour, true and false swapped.  N per file
are drawn with a fixed seed from all such changes, and each is written as a
patch of the tree (3 lines of context) with the headers scripts/mutants.sh
reads: "Platforms: " (the first platform of PREFER whose run executed the
line) and "Mutant: " (where and what).  With --scope, a file the scope
names gives only the lines of its functions whose names match the scope's
pattern (a line belongs to the function whose start line, from the
tracefile's FN records, is the last at or before it): the interrupt
delivery parts of files that hold much else (x86.c, vmx.c, svm.c).

usage: mutation-gen.py --tree KTREE --cov DIR --files "lapic.c ..." --seed S
                       --n N --prefer "bochs-vmx qemu-svm ..." --out DIR
                       [--scope FILE]
"""
import argparse
import difflib
import os
import random
import re
import sys

KEYWORDS = {"return", "break", "continue", "goto", "case", "default", "else",
            "do", "if", "while", "for", "switch", "sizeof", "typeof"}
TYPE_WORDS = {"int", "unsigned", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
              "s64", "bool", "long", "char", "short", "struct", "union", "enum",
              "const", "static", "void", "gpa_t", "gfn_t", "hpa_t", "gva_t",
              "size_t", "ulong", "__u32", "__u64", "fastpath_t"}


def executed_lines(info, want, starts):
    """{file: {line: count}} of a tracefile, files relative to arch/x86/kvm/;
    fills STARTS with {file: {start line: function}} from its FN records"""
    out = {}
    cur = None
    with open(info) as f:
        for rec in f:
            rec = rec.rstrip("\n")
            if rec.startswith("SF:"):
                m = re.search(r"/arch/x86/kvm/(.*)$", rec[3:])
                cur = m.group(1) if m and m.group(1) in want else None
                if cur:
                    out.setdefault(cur, {})
            elif cur and rec.startswith("FN:"):
                fields = rec[3:].split(",")
                line, name = fields[0], fields[-1]
                starts.setdefault(cur, {})[int(line)] = name
            elif cur and rec.startswith("DA:"):
                line, count = rec[3:].split(",")[:2]
                out[cur][int(line)] = out[cur].get(int(line), 0) + int(count)
    return out


def read_scope(path):
    """{file: compiled pattern} from lines "FILE PATTERN" ('#' comments)"""
    scope = {}
    with open(path) as f:
        for rec in f:
            rec = rec.split("#", 1)[0].strip()
            if rec:
                name, pattern = rec.split(None, 1)
                scope[name] = re.compile(pattern)
    return scope


def function_of(starts, line):
    """the function whose start is the last at or before LINE, or None"""
    best = max((s for s in starts if s <= line), default=None)
    return starts[best] if best is not None else None


def balanced(s):
    depth = 0
    for c in s:
        depth += c == "("
        depth -= c == ")"
        if depth < 0:
            return False
    return depth == 0


def code_part(text):
    """the line without a trailing // or /* */ comment, or None for a
    line that is a comment, a preprocessor line or inside a string"""
    s = text.strip()
    if not s or s.startswith(("#", "/*", "*", "//")) or '"' in s or "'" in s:
        return None
    return re.sub(r"\s*(/\*.*\*/|//.*)$", "", text.rstrip("\n"))


def mutations(text):
    """(operator, new line) for each change the line allows"""
    code = code_part(text)
    if code is None:
        return []
    out = []
    # a condition negated: "if (C)" / "while (C)" on one line
    m = re.match(r"^(\s*(?:\} else )?(?:if|while) )\((.*)\)(\s*\{?)$", code)
    if m and balanced(m.group(2)):
        out.append(("negate", "%s(!(%s))%s\n" % (m.group(1), m.group(2), m.group(3))))
    # a statement dropped: a call or an assignment, whole on the line
    s = code.strip()
    first = re.match(r"[A-Za-z_]\w*", s)
    if (first and s.endswith(";") and first.group(0) not in KEYWORDS and
            first.group(0) not in TYPE_WORDS and balanced(s) and
            ("(" in s or "=" in s) and
            not re.match(r"[A-Za-z_]\w*\s+\**[A-Za-z_]\w*\s*(=|;|\[)", s)):
        indent = code[:len(code) - len(code.lstrip())]
        out.append(("drop", indent + ";\n"))
    # comparisons: the bound (< and <=, > and >=) or the sense (== and !=)
    swaps = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">"}
    for m in re.finditer(r"(?<![<>\-=!])(==|!=|<=|>=|<|>)(?![<>=])", code):
        new = code[:m.start()] + swaps[m.group(1)] + code[m.end():]
        out.append(("compare", new + "\n"))
    for m in re.finditer(r"&&|\|\|", code):
        new = code[:m.start()] + ("||" if m.group(0) == "&&" else "&&") + code[m.end():]
        out.append(("logic", new + "\n"))
    # a constant swapped for its neighbour (not in an array's size)
    for m in re.finditer(r"(?<![\w.])(0x[0-9a-fA-F]+|\d+)([uUlL]*)(?![\w.])", code):
        if code[:m.start()].rstrip().endswith("["):
            continue
        v = int(m.group(1), 0)
        n = v + 1 if v == 0 or (m.start() % 2 == 0) else v - 1
        lit = hex(n) if m.group(1).lower().startswith("0x") else str(n)
        out.append(("constant", code[:m.start()] + lit + m.group(2) + code[m.end():] + "\n"))
    for m in re.finditer(r"\b(true|false)\b", code):
        new = code[:m.start()] + ("false" if m.group(1) == "true" else "true") + code[m.end():]
        out.append(("boolean", new + "\n"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", required=True)
    ap.add_argument("--cov", required=True)
    ap.add_argument("--files", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--prefer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scope")
    args = ap.parse_args()

    want = set(args.files.split())
    prefer = args.prefer.split()
    scope = read_scope(args.scope) if args.scope else {}
    per_platform = {}
    starts = {}
    for p in prefer:
        info = os.path.join(args.cov, p + ".info")
        if os.path.exists(info):
            per_platform[p] = executed_lines(info, want, starts)
    if not per_platform:
        sys.exit("no tracefile of %s in %s: run make coverage first" % (" ".join(prefer), args.cov))
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for f in sorted(want):
        path = os.path.join(args.tree, "arch/x86/kvm", f)
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            src = fh.readlines()
        cands = []
        for i, text in enumerate(src, 1):
            plats = [p for p in prefer if per_platform.get(p, {}).get(f, {}).get(i, 0) > 0]
            if not plats:
                continue
            if f in scope:
                fn = function_of(starts.get(f, {}), i)
                if fn is None or not scope[f].search(fn):
                    continue
            for op, new in mutations(text):
                if new != text:
                    cands.append((i, op, new, plats[0]))
        picked = rng.sample(cands, min(args.n, len(cands)))
        for i, op, new, plat in sorted(picked):
            mutated = src[:i - 1] + [new] + src[i:]
            rel = "arch/x86/kvm/" + f
            diff = "".join(difflib.unified_diff(src, mutated, "a/" + rel, "b/" + rel, n=3))
            base = "%s-%d-%s" % (f.replace("/", "-").replace(".c", ""), i, op)
            # two changes of one kind on a line (two constants, say)
            name, k = base, 2
            while os.path.exists(os.path.join(args.out, name + ".patch")):
                name, k = "%s-%d" % (base, k), k + 1
            with open(os.path.join(args.out, name + ".patch"), "w") as out:
                out.write("Mutant: %s:%d %s: %s\n" % (rel, i, op, new.strip()))
                out.write("Was: %s\n" % src[i - 1].strip())
                out.write("Platforms: %s\n" % plat)
                out.write(diff)
            total += 1
        print("%s: %d candidate changes on executed lines, %d drawn" % (f, len(cands), len(picked)))
    print("%d mutants in %s (seed %d)" % (total, args.out, args.seed))


if __name__ == "__main__":
    main()
