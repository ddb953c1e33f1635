#!/usr/bin/env python3
"""Whether two PTX files hold the same code for the kernels named KERNEL, up to register and label
numbering, symbol linkage and the template argument kShift=false added to the newer names.

  nvcc -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++17 -x cu -ptx -I<tree> \
       -I<build>/generated <tree>/collectives/gpu/fifo_ring.cu -o new.ptx   (and old.ptx from a15f6c6)
  ptx_compare.py old.ptx new.ptx ring_kernel
Prints one line per kernel of OLD: its template argument and "same" or "different"; exit 1 if any
differs or is missing."""
import re
import sys


def functions(text):
    """Each .entry/.func of a PTX file by name, its anonymous-namespace tag and namespace removed."""
    text = re.sub(r"[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_\w+?_cu_[0-9a-f]{8}(?=[0-9]+\w+_kernel)", "NS", text)
    text = re.sub(r"4fifo(?=[0-9]+\w+_kernel)", "NS", text)
    parts = re.split(r"\n(?=(?:\.visible |\.weak )?\.(?:entry|func) )", text)
    out = {}
    for part in parts:
        m = re.match(r"(?:\.visible |\.weak )?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?(\S+?)\(", part)
        if m:
            out[m.group(1)] = part
    return out


def normalized(body):
    lines = [l.replace(".visible ", "") for l in body.splitlines()
             if not l.strip().startswith((".loc", ".reg", "// .globl"))]
    seen = {}
    rename = lambda m: seen.setdefault(m.group(0), f"R{len(seen)}")
    return re.sub(r"%[a-z]+[0-9]+|\$L__BB[0-9]+_[0-9]+|__local_depot[0-9]*", rename, "\n".join(lines))


def main():
    old_path, new_path, kernel = sys.argv[1:4]
    old = functions(open(old_path).read())
    new = functions(open(new_path).read())
    bad = 0
    for name, body in old.items():
        m = re.match(rf"(.*{kernel}I)(.+?)(EEvN.*)", name)
        if not m:
            continue
        new_name = m.group(1) + m.group(2) + "Lb0E" + m.group(3)
        if new_name not in new:
            print(m.group(2), "missing")
            bad += 1
            continue
        same = normalized(body) == normalized(new[new_name].replace(f"{kernel}I{m.group(2)}Lb0E", f"{kernel}I{m.group(2)}"))
        print(m.group(2), "same" if same else "different")
        bad += not same
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
