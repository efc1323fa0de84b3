#!/usr/bin/env bash
# Session s, batch s8 (.dev/s1old: the CLI at 6c82d37; .dev/s8new: the same plus the
# epilogue's staging buffers as 128-byte rows with 16-byte units swizzled by row, placed
# 1024-aligned after the ring, instead of 144-byte rows after the barriers). Written in
# session s and not run there (no device time left). To build .dev/s8new: `git apply
# bench/results/h200-2026-12-03s8/staging-swizzle.patch`, `cargo build --release
# --features baseline --bin crossgemm`, copy and strip the binary there, then revert
# (or land it, with the blessed snapshots, once this batch and the CUDA suite agree).
# Batch s7's Nsight Compute: at 4096x4096x128 the staged epilogue's 16-byte shared reads
# take 7.9 wavefronts a request where 4 would do (rows 144 bytes apart from an offset of
# 96 mod 128: each 8-lane phase straddles a 128-byte line), and the K = 128 ping-pong
# winners wait on their epilogue's stores.
# Written before: the K = 128 winners a few % faster in s8new than in s8old (same process
# pairs alternating), the K = 4096 tile within noise. Each config is verified against the
# host reference by the tune (f16, bf16, and tf32 whose f32 output takes the 8-byte
# staging writes).
# Run in three device calls, `bash <this> tunes|sanitizers|suite` (each fits a call's
# 10 minutes; the second and third only if the first shows a gain).
set -u
part=${1:-tunes}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/s8; mkdir -p $R
cp .dev/s1old/COMMIT $R/commit-old.txt; cp .dev/s8new/COMMIT $R/commit-new.txt
cfg() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":false,\"group_m\":8,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5${6:-}}"; }
PP=',"pingpong":true'
C=(--config "$(cfg 64 128 128 6 2 $PP)" --config "$(cfg 128 64 128 4 3 $PP)" --config "$(cfg 64 128 256 3 2)")
if [ $part = tunes ]; then
for e in none bias_relu; do for round in 1 2; do for b in old new; do
  d=.dev/s1old; [ $b = new ] && d=.dev/s8new
  timeout 60 $d/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-s8$b "${C[@]}" > $R/tune-$e-$b$round.json 2> $R/tune-$e-$b$round.err
  python3 bench/tune_summary.py "4096x4096x128 $e $b$round" $R/tune-$e-$b$round.json
done; done; done
for dt in bf16:bias_gelu tf32:bias_relu; do
  timeout 60 .dev/s8new/crossgemm tune --shape 1000x1000x128 --dtype ${dt%%:*} --epilogue ${dt#*:} --json --cache-dir /tmp/cg-s8new --max 6 > $R/tune-${dt%%:*}.json 2> $R/tune-${dt%%:*}.err; echo "${dt} rc=$?"
  python3 bench/tune_summary.py "1000x1000x128 $dt" $R/tune-${dt%%:*}.json
done
fi
if [ $part = sanitizers ]; then
# The sanitizers on the new staging (16-byte and, through tf32's f32 output, 8-byte writes),
# at a shape whose last tiles are partial (their guarded direct stores) and whose blocks
# take several tiles each (the staging reused across tiles).
for tool in memcheck racecheck synccheck; do
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool $tool .dev/s8new/crossgemm tune --shape 3000x1000x136 --dtype tf32 --epilogue bias_relu --cache-dir /tmp/cg-s8san-$tool --config "$(cfg 32 128 128 4 2 $PP)" --config "$(cfg 32 128 256 3 2)" > $R/$tool-tf32.log 2>&1; echo "$tool tf32 rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$tool-tf32.log
  timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool $tool .dev/s8new/crossgemm tune --shape 3000x1000x136 --dtype f16 --epilogue bias_gelu --cache-dir /tmp/cg-s8san-$tool --config "$(cfg 64 128 128 6 2 $PP)" --config "$(cfg 128 64 128 4 3 $PP)" > $R/$tool-f16.log 2>&1; echo "$tool f16 rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$tool-f16.log
done
fi
# The CUDA suite on every planned wgmma config (staged epilogues of every dtype, layout
# and schedule), and the views and batches through them.
if [ $part = suite ]; then
  export CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_TEST_CONFIGS=wgmma CROSSGEMM_CACHE_DIR=/tmp/cg-s8suite
  timeout 330 .dev/s8new/kernels --test-threads 16 > $R/kernels.log 2>&1; echo "kernels rc=$?"
  timeout 100 .dev/s8new/views --test-threads 16 > $R/views.log 2>&1; echo "views rc=$?"
  timeout 100 .dev/s8new/batched --test-threads 16 > $R/batched.log 2>&1; echo "batched rc=$?"
  grep -hE "test result|panicked|FAILED" $R/kernels.log $R/views.log $R/batched.log | head -12
fi
cd $OUT && tar czf s8-$part.tgz s8 && rm -rf s8
