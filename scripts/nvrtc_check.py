#!/usr/bin/env python3
"""Compile generated CUDA sources with NVRTC (no GPU needed) and report ptxas resource use.

usage: nvrtc_check.py FILE.cu [FILE.cu ...] [-D NAME=VAL ...] [--arch sm_80 --arch sm_90a]
                      [--expect-no-spill]
       nvrtc_check.py --matrix DIR      (the sources of `cargo run -p gemm-core --example
                      dump_cuda -- DIR`: mma_*.cu under every MMA config of MMA_CONFIGS, fma_*.cu
                      under SIMT_CONFIGS, each with vector and element loads)

Each file is compiled once per --arch (default: sm_80 and sm_90a) to a cubin with
`--ptxas-options=-v`; the ptxas lines (registers, spills, shared memory) are printed.
Exit status is non-zero when any compile fails, or with --expect-no-spill when ptxas
reports spill stores/loads. Needs only libnvrtc (pip install nvidia-cuda-nvrtc).
"""
import argparse
import ctypes
import glob
import os
import re
import sys


def find_nvrtc():
    env = os.environ.get("NVRTC_LIB")
    if env:
        return env
    cands = []
    try:
        import nvidia  # namespace package from the nvidia-* wheels

        for root in nvidia.__path__:
            cands += glob.glob(os.path.join(root, "**", "libnvrtc.so*"), recursive=True)
    except ImportError:
        pass
    cands += glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*")
    cands = [c for c in cands if "builtins" not in c]
    if not cands:
        sys.exit("libnvrtc not found: pip install nvidia-cuda-nvrtc or set NVRTC_LIB")
    return sorted(cands)[-1]


class Nvrtc:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(rc).decode()}")

    def compile(self, src, name, opts, keep=None):
        """Returns (ok, log, cubin_size); with `keep`, writes the cubin to that path."""
        prog = ctypes.c_void_p()
        self.check(
            self.lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
            rc = self.lib.nvrtcCompileProgram(prog, len(opts), arr)
            size = ctypes.c_size_t()
            self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value)
            self.lib.nvrtcGetProgramLog(prog, buf)
            log = buf.value.decode(errors="replace")
            cubin = 0
            if rc == 0:
                cs = ctypes.c_size_t()
                if self.lib.nvrtcGetCUBINSize(prog, ctypes.byref(cs)) == 0:
                    cubin = cs.value
                    if keep:
                        data = ctypes.create_string_buffer(cubin)
                        self.check(self.lib.nvrtcGetCUBIN(prog, data), "nvrtcGetCUBIN")
                        with open(keep, "wb") as out:
                            out.write(data.raw)
            return rc == 0, log, cubin
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


MMA_CONFIGS = [  # BM BN BK WARPS_M WARPS_N STAGES
    (128, 128, 32, 2, 2, 3),
    (64, 64, 32, 2, 2, 2),
    (128, 256, 32, 2, 4, 4),
    (64, 128, 64, 1, 4, 3),
    (32, 32, 32, 1, 1, 2),
]
SIMT_CONFIGS = [  # MWG NWG KWG MDIMC NDIMC VW
    (64, 64, 16, 16, 16, 4),
]


def matrix_jobs(folder):
    """(file, defines) pairs: every source under every config of its family."""
    jobs = []
    for f in sorted(glob.glob(os.path.join(folder, "*.cu"))):
        base = os.path.basename(f)
        if base.startswith("mma_"):
            for bm, bn, bk, wm, wn, st in MMA_CONFIGS:
                for vec in (1, 0):
                    jobs.append((f, [f"BM={bm}", f"BN={bn}", f"BK={bk}", f"WARPS_M={wm}", f"WARPS_N={wn}",
                                     f"STAGES={st}", "GROUP_M=8", f"A_VEC={vec}", f"B_VEC={vec}"]))
        elif base.startswith("fma_"):
            for mwg, nwg, kwg, md, nd, vw in SIMT_CONFIGS:
                for al in (8, 1):
                    jobs.append((f, [f"MWG={mwg}", f"NWG={nwg}", f"KWG={kwg}", f"MDIMC={md}", f"NDIMC={nd}",
                                     f"VW={vw}", "GROUP_M=8", f"A_ALIGN={al}", f"B_ALIGN={al}"]))
    return jobs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--matrix", metavar="DIR", help="check every dumped source under the standard configs")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="NAME=VAL")
    ap.add_argument("--arch", action="append", default=[], help="sm_80, sm_90a, ...")
    ap.add_argument("--expect-no-spill", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="print one summary line per compile")
    ap.add_argument("--cubin", metavar="DIR",
                    help="write each cubin to DIR/NAME.ARCH.cubin, for cuobjdump -sass (SASS: HGMMA, LDL/STL)")
    args = ap.parse_args()
    archs = args.arch or ["sm_80", "sm_90a"]
    nv = Nvrtc(find_nvrtc())
    failed = 0
    jobs = [(f, args.defines) for f in args.files]
    if args.matrix:
        jobs += matrix_jobs(args.matrix)
    if not jobs:
        ap.error("no sources")
    for f, defines in jobs:
        src = open(f).read()
        for arch in archs:
            # 177: "declared but never referenced", for the unused helpers of the prelude.
            opts = [f"--gpu-architecture={arch}", "--std=c++17", "--ptxas-options=-v", "--diag-suppress=177"]
            opts += [f"-D{d}" for d in defines]
            keep = None
            if args.cubin:
                os.makedirs(args.cubin, exist_ok=True)
                keep = os.path.join(args.cubin, f"{os.path.splitext(os.path.basename(f))[0]}.{arch}.cubin")
            ok, log, cubin = nv.compile(src, os.path.basename(f), opts, keep)
            regs = re.findall(r"Used (\d+) registers", log)
            spill = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
            smem = re.findall(r"(\d+) bytes smem", log)
            spilled = any(int(a) or int(b) for a, b in spill)
            status = "ok" if ok else "FAIL"
            if ok and spilled and args.expect_no_spill:
                status = "SPILL"
            cfg = " ".join(d for d in defines if not d.startswith("GROUP_M"))
            line = (f"{status:5} {arch:7} {os.path.basename(f)} [{cfg}] regs={','.join(regs) or '?'} "
                    f"spill={';'.join(a + '/' + b for a, b in spill) or '?'} smem={','.join(smem) or '?'} "
                    f"cubin={cubin}")
            print(line)
            if not ok or not args.quiet:
                errs = [l for l in log.splitlines() if l.strip() and ("error" in l or "warning" in l or not ok)]
                if not ok or (errs and not args.quiet):
                    print("\n".join("    " + l for l in (log.splitlines() if not ok else errs)))
            if not ok or (spilled and args.expect_no_spill):
                failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
