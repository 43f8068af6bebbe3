"""Rewrites a .cu/.cuh file for the CPU emulator: every launch `kernel<<<cfg>>>(args)` becomes
`::emu::launch(::emu::cfg(cfg), "kernel", kernel, args)` (include/cuda_runtime.h), which g++ can
compile; the name (template arguments dropped) is what EMU_COUNTS and EMU_TRACE_KERNEL print.
Usage: rewrite_launches.py IN OUT"""
import sys
src = open(sys.argv[1]).read()
out = []
i = 0
while True:
    p = src.find('<<<', i)
    if p < 0:
        out.append(src[i:]); break
    # the kernel expression ends at p: walk back over template args and a qualified name
    k = p
    while src[k-1] in ' \n\t':
        k -= 1
    if src[k-1] == '>':
        depth = 0
        while True:
            k -= 1
            if src[k] == '>': depth += 1
            elif src[k] == '<':
                depth -= 1
                if depth == 0: break
    while k > 0 and (src[k-1].isalnum() or src[k-1] in '_:'):
        k -= 1
    kernel = src[k:p]
    q = src.find('>>>', p)
    cfg = src[p+3:q]
    assert src[q+3] == '(', src[q:q+20]
    out.append(src[i:k])
    name = kernel.split('<')[0].split('::')[-1].strip()
    out.append('::emu::launch(::emu::cfg(%s), "%s", %s, ' % (cfg, name, kernel))
    i = q + 4
open(sys.argv[2], 'w').write(''.join(out))
