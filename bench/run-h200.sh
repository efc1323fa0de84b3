#!/usr/bin/env bash
# The whole benchmark on the GPU machine, from prebuilt release binaries (it has no Rust
# toolchain): crossgemm beside cuBLAS / cuBLASLt in one process (`crossgemm bench`),
# Triton through bench/torch_baseline.py, `crossgemm diagnose` on a few shapes, then one
# combined report: <dir>/<device>-<date>.{json,md,svg}.
#
#   bench/run-h200.sh OUTDIR [PART...]
#
# PARTs (default: all, in this order): f16 bf16 f32 (f32 and tf32) triton diagnose report.
# A device call may be limited to 10 minutes, so the parts can run in separate calls into
# the same OUTDIR; `report` combines whatever parts are there. Binaries are read from
# $BIN (default .dev: `cargo build --release --bin crossgemm` copied there); the tuning
# cache lives in /tmp/crossgemm-bench-cache unless CROSSGEMM_CACHE_DIR is set.
set -uo pipefail
out=${1:?usage: bench/run-h200.sh OUTDIR [f16|bf16|f32|triton|diagnose|report ...]}
shift
parts=${*:-f16 bf16 f32 triton diagnose report}
BIN=${BIN:-.dev}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=${CROSSGEMM_CACHE_DIR:-${TMPDIR:-/tmp}/crossgemm-bench-cache}
export CROSSGEMM_COMMIT=${CROSSGEMM_COMMIT:-$(cat "$BIN/COMMIT" 2>/dev/null || echo unknown)}
# Candidates per tune (the tuner's GPU default; fewer saves device time on the slow f32
# kernels but misses winners: 12 lost 4x at 1024x1024x2048 f16).
max=${CROSSGEMM_BENCH_MAX:-48}
bench() { # name, extra args...
    local name=$1; shift
    echo "== crossgemm bench $name: $*"
    timeout "${PART_TIMEOUT:-560}" "$BIN/crossgemm" bench --out "$out" --name "part-$name" --max "$max" "$@" 2>&1 | tee "$out/part-$name.log" | grep -vE '^\s+ours' | tail -3
}
for p in $parts; do
    case $p in
        f16|bf16) bench "$p" --dtypes "$p" ;;
        f32) bench f32 --dtypes f32,tf32 ;;
        triton)
            echo "== Triton (bench/torch_baseline.py --triton-only)"
            timeout "${TRITON_TIMEOUT:-540}" python3 bench/torch_baseline.py --triton-only --dtypes "${TRITON_DTYPES:-f16,bf16}" \
                --epilogues "${TRITON_EPILOGUES:-none,bias_relu}" > "$out/triton.jsonl" 2> "$out/triton.log"
            echo "$(wc -l < "$out/triton.jsonl") Triton rows" ;;
        diagnose)
            for s in ${DIAGNOSE_SHAPES:-4096x4096x4096 16x4096x4096 3000x5000x700 2048x11008x4096}; do
                echo "== crossgemm diagnose --shape $s --dtype f16 --epilogue bias_relu"
                timeout 120 "$BIN/crossgemm" diagnose --shape "$s" --dtype f16 --epilogue bias_relu 2>&1 | tail -30
            done 2>&1 | tee "$out/diagnose.txt" ;;
        report)
            inputs=()
            for f in "$out"/part-*.json; do [ -e "$f" ] && inputs+=(--input "$f"); done
            merge=()
            [ -s "$out/triton.jsonl" ] && merge=(--merge "$out/triton.jsonl")
            "$BIN/crossgemm" bench --report-only "${inputs[@]}" "${merge[@]}" --out "$out" ;;
        *) echo "unknown part '$p'" >&2; exit 2 ;;
    esac
done
