#!/usr/bin/env python3
# bench/locked_ops.py -- locked instructions (lock-prefixed, and xchg with memory) executed per
# operation, from a callgrind profile taken with --dump-instr=yes and the binary's disassembly.
# On this 2-core EPYC VM a locked RMW costs about 6 ns (../shared/docs/fast-paths.md), so their
# count explains much of a coroutine round's time (docs/BENCHMARKS.md, "Session 23").
#   valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out ./ppprobe 1 50 oneshot
#   objdump -d --no-show-raw-insn ./ppprobe | grep -E '^\s+[0-9a-f]+:\s+(lock|xchg)' | awk '{print $1}' | tr -d ':' > locks.txt
#   bench/locked_ops.py cg.out 51000 locks.txt      (profile, operations in it, addresses)
# Prints the total per operation, then the busiest sites (function, address).
import collections
import sys

locks = set(int(a, 16) for a in open(sys.argv[3]))
names={}; cnt=collections.Counter(); fn=None; cur=0; skip=False
def pp(p,cur):
    if p=='*': return cur
    if p.startswith('0x'): return int(p,16)
    if p[0] in '+-':
        v=p[1:]; n=int(v,16) if v.startswith('0x') else int(v); return cur+n if p[0]=='+' else cur-n
    return int(p)
for line in open(sys.argv[1]):
    line=line.rstrip('\n')
    if line.startswith('fn='):
        v=line[3:]
        if v.startswith('('):
            i=v.index(')'); idn=v[:i+1]; rest=v[i+1:].strip()
            if rest: names[idn]=rest
            fn=names.get(idn,idn)
        else: fn=v
        continue
    if line.startswith('calls='): skip=True; continue
    if not line or not (line[0].isdigit() or line[0] in '+-*'): continue
    parts=line.split()
    try: cur=pp(parts[0],cur)
    except Exception: continue
    if skip: skip=False; continue
    if cur in locks: cnt[(fn,cur)]+=int(parts[-1])
tot=sum(cnt.values()); R=float(sys.argv[2])
print("locked instructions per operation:", round(tot / R, 2))
for (f,a),c in cnt.most_common(22): print(round(c/R,2), f[:110], hex(a))
