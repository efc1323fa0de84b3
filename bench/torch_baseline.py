"""Vendor baselines on the GPU machine for bench/shapes.toml: cuBLAS through torch.matmul
(fp32 accumulation: reduced-precision reductions are switched off), cuBLASLt's fused
epilogue through torch._addmm_activation, the unfused GEMM + elementwise epilogue, and a
tuned Triton GEMM with the same fused epilogue (the seeds' approach).

  python3 bench/torch_baseline.py [--shapes 4096x4096x4096,...] [--dtypes f16,bf16]
         [--epilogues none,bias_relu] [--no-triton | --triton-only] > rows.jsonl

One JSON object per line: m, n, k, dtype, epilogue, cublas_us (plain GEMM),
unfused_us, cublaslt_us, triton_us, triton_max_rel_err. Times are the median of
triton.testing.do_bench (CUDA events, L2 cleared between runs). This runs in its own
process; `crossgemm bench` times cuBLAS and cuBLASLt in its own process, and folds
this script's Triton rows in with `--merge` (`--triton-only` skips the torch timings).
dtype `tf32` means f32 operands with TF32 tensor cores (Triton's default for f32 dots);
Triton is not run for exact `f32`.

Before the first row, every dtype's GEMMs (torch and Triton) run for about a second on
a shape of no row (`warm_up`): the first timed row of a process otherwise came out
3.5-4.5x slower than its neighbours (clocks ramping up, lazy module loading, and the
autotuner choosing the first shape's config on a cold GPU), and counted as our win.
"""
import argparse, json, sys, time, tomllib
import torch, triton, triton.language as tl
from triton.testing import do_bench

torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "tf32": torch.float32}


def configs():
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                                     (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2),
                                     (256, 128, 64, 3, 8), (128, 128, 64, 4, 4), (16, 256, 64, 4, 4), (16, 128, 128, 4, 4)]]


@triton.autotune(configs=configs(), key=["M", "N", "K", "EPI"])
@triton.jit
def mm(a, b, c, bias, M, N, K, sam, sak, sbk, sbn, scm, scn, EPI: tl.constexpr,
       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    npm = tl.cdiv(M, BLOCK_M)
    npn = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * npn
    first = (pid // in_group) * GROUP_M
    gm = min(npm - first, GROUP_M)
    pm = first + (pid % in_group) % gm
    pn = (pid % in_group) // gm
    om = (pm * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    on = (pn * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    ok = tl.arange(0, BLOCK_K)
    ap = a + om[:, None] * sam + ok[None, :] * sak
    bp = b + ok[:, None] * sbk + on[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        x = tl.load(ap, mask=ok[None, :] < K - kk * BLOCK_K, other=0.0)
        y = tl.load(bp, mask=ok[:, None] < K - kk * BLOCK_K, other=0.0)
        acc = tl.dot(x, y, acc)
        ap += BLOCK_K * sak
        bp += BLOCK_K * sbk
    cm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    if EPI != 0:
        acc = acc + tl.load(bias + cn, mask=cn < N, other=0.0).to(tl.float32)[None, :]
    if EPI == 1:
        acc = tl.maximum(acc, 0.0)
    if EPI == 2:  # tanh-form GELU, as cuBLASLt's GELU epilogue
        inner = 0.7978845608 * (acc + 0.044715 * acc * acc * acc)
        acc = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    tl.store(c + scm * cm[:, None] + scn * cn[None, :], acc.to(c.dtype.element_ty), mask=(cm[:, None] < M) & (cn[None, :] < N))


EPI = {"none": 0, "bias_relu": 1, "bias_gelu": 2}

# The warm-up's shape, chosen to be no row's: the autotuner caches its choice per
# (M, N, K, epilogue), and a choice made while the GPU is still cold must not be reused.
WARM_UP_SHAPES = [(1536, 1536, 1536), (1664, 1664, 1664), (1792, 1792, 1792)]


def triton_mm(a, b, bias, epi):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    mm[grid](a, b, c, bias, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), EPI=EPI[epi])
    return c


def torch_epilogue(y, bias, epi):
    if epi == "none":
        return y
    y = y + bias
    return torch.relu(y) if epi == "bias_relu" else torch.nn.functional.gelu(y, approximate="tanh")


def warm_up(dtypes, epis, shapes, torch_on, triton_on, ms=500):
    """Runs each dtype's timed work (torch's GEMM and epilogue, Triton's GEMM with every
    epilogue, autotuned) for about `ms` of warm-up plus `ms` of timing on a shape that is
    no row's, and discards the times: what the first row of a process would otherwise
    pay. Returns the seconds it took."""
    start = time.perf_counter()
    m, n, k = next(s for s in WARM_UP_SHAPES if s not in shapes)
    for dt in dtypes:
        a = torch.randn(m, k, device="cuda", dtype=DT[dt])
        b = torch.randn(n, k, device="cuda", dtype=DT[dt]).t()
        bias = torch.randn(n, device="cuda", dtype=DT[dt])
        torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
        if torch_on:
            do_bench(lambda: torch_epilogue(torch.matmul(a, b), bias, epis[-1]), warmup=ms, rep=ms, return_mode="median")
        if triton_on and dt != "f32":
            for epi in epis:
                triton_mm(a, b, bias, epi)  # autotunes this warm-up key
                do_bench(lambda: triton_mm(a, b, bias, epi), warmup=ms // len(epis), rep=ms // len(epis),
                         return_mode="median")
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes-file", default="bench/shapes.toml")
    ap.add_argument("--shapes", help="comma-separated MxNxK subset")
    ap.add_argument("--dtypes")
    ap.add_argument("--epilogues")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--triton-only", action="store_true", help="skip the torch (cuBLAS) timings")
    args = ap.parse_args()
    table = tomllib.load(open(args.shapes_file, "rb"))
    shapes = [tuple(s) for g in table["shape"] for s in g["mnk"]]
    if args.shapes:
        shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    dtypes = args.dtypes.split(",") if args.dtypes else table["run"]["dtypes"]
    epis = args.epilogues.split(",") if args.epilogues else table["run"]["epilogues"]
    torch.manual_seed(0)
    torch_on, triton_on = not args.triton_only, not args.no_triton
    secs = warm_up(dtypes, epis, shapes, torch_on, triton_on)
    print(f"warm-up before the first row: {secs:.1f} s", file=sys.stderr, flush=True)
    torch.manual_seed(0)
    for dt in dtypes:
        for (m, n, k) in shapes:
            a = torch.randn(m, k, device="cuda", dtype=DT[dt])
            b = torch.randn(n, k, device="cuda", dtype=DT[dt]).t()  # column-major K x N, as crossgemm's `w`
            bias = torch.randn(n, device="cuda", dtype=DT[dt])
            for epi in epis:
                us = lambda f: 1e3 * do_bench(f, warmup=25, rep=100, return_mode="median")
                row = dict(m=m, n=n, k=k, dtype=dt, epilogue=epi, accumulate="fp32")
                torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
                if torch_on:
                    row["cublas_us"] = us(lambda: torch.matmul(a, b))
                    row["unfused_us"] = us(lambda: torch_epilogue(torch.matmul(a, b), bias, epi))
                    row["cublaslt_us"] = (us(lambda: torch._addmm_activation(bias, a, b, use_gelu=(epi == "bias_gelu")))
                                          if epi != "none" and dt != "f32" else None)
                row["triton_us"] = row["triton_max_rel_err"] = None
                if triton_on and dt != "f32":
                    ref = torch_epilogue(a.double() @ b.double(), bias.double(), epi)
                    got = triton_mm(a, b, bias, epi).double()
                    row["triton_max_rel_err"] = ((got - ref).abs().max() / ref.abs().max()).item()
                    row["triton_us"] = us(lambda: triton_mm(a, b, bias, epi))
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
