#!/usr/bin/env bash
# Session ak, batch ak3: clusters of 8 blocks (CLUSTER_M 4 x CLUSTER_N 2) at 1000^3, the
# widest gap of issue 10 (0.81x cuBLAS on the H200). cuBLAS's kernel there runs 112 CTAs
# of 128 x 72 in clusters of 8 (session l's and r's Nsight Compute): 14 clusters, all the
# H200 runs at once (30 clusters of 4 fit, so 14 of 8), sharing both operands by
# multicast. Ours runs 64 CTAs of 128x128 without a cluster; rows 2000 bytes apart make
# TMA's reads from L2 what binds (batches 02zd, 03r1), and multicast cuts those reads:
# 128x80 tiles in 4x2 clusters are 14 clusters (112 CTAs, as cuBLAS), 18.5 MB of box rows
# from L2 against 32 MB for 128x128 alone. Every config is checked against the host
# reference by the tuner; memcheck and synccheck on 8-block clusters at an edge shape.
# Binaries: the CLI (`baseline`, `aot`) and tests/kernels.rs (`--release --features baseline`)
# at the commits in COMMIT, as .dev/ak3s (both gzipped).
# Carry: [".dev/ak3s"]. ~5 minutes.
# Written before: at 1000^3 128x80 4x2 within 10% of cuBLAS (12.0 -> ~10 us on the H200),
# ahead of 128x128 alone by 10-20%; at 1024^3 (aligned rows) no gain over 64x128 alone.
BATCH=${BATCH:-ak3}
B=${B:-.dev/ak3s}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)" CROSSGEMM_LOG=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
# cfg BK BM BN STAGES CONSUMERS INFLIGHT CLUSTER_M EXTRA
c() { cfg 64 $1 $2 $3 $4 ${6:-false} $5 ",\"cluster_n\":${7:-1}"; }
ALONE="$(c 128 128 6 2 1)"          # 1000^3's tuned winner (records/h200.json)
O64="$(c 64 128 8 1 1 true)"        # 1024^3's
C8=("$(c 128 80 6 2 4 false 2)" "$(c 128 96 6 2 4 false 2)" "$(c 128 112 6 2 4 false 2)" "$(c 128 128 6 2 4 false 2)"
    "$(c 64 128 8 1 2 false 4)" "$(c 128 80 6 2 4)" "$(c 128 80 6 2 2 false 2)" "$(c 128 64 6 2 2 false 4)")
tune() { # shape dtype configs...
  local sh=$1 dt=$2; shift 2; local C=(); for x in "$@"; do C+=(--config "$x"); done
  timeout 150 $B/crossgemm tune --shape $sh --dtype $dt --epilogue none --json --cache-dir /tmp/cg-$BATCH-$sh-$dt "${C[@]}" > $R/tune-$sh-$dt.json 2> $R/tune-$sh-$dt.err
  echo "tune $sh $dt rc=$?"; python3 bench/tune_summary.py "$sh $dt" $R/tune-$sh-$dt.json
  grep -h "clusters of" $R/tune-$sh-$dt.err | sed 's/.*runs/  runs/' | sort -u | head -6
}
# Clusters of 8 against the host reference at ragged and looping shapes (tests/kernels.rs).
timeout 150 $B/kernels --test-threads 1 cluster_blocks_share_their_tiles > $R/clusters.log 2>&1; echo "kernels clusters rc=$?"
grep -E "test result|panicked" $R/clusters.log | head -3
tune 1000x1000x1000 f16 "$ALONE" "$O64" "${C8[@]}"
tune 1024x1024x1024 f16 "$ALONE" "$O64" "${C8[@]}"
tune 1000x1000x1000 bf16 "$ALONE" "${C8[0]}" "${C8[1]}" "${C8[3]}"
# Beside cuBLAS in the same process (sides timed together).
timeout 150 $B/crossgemm bench --shape 1000x1000x1000 --shape 1024x1024x1024 --dtypes f16 --epilogues none,bias_relu \
  --config "$ALONE" --config "${C8[0]}" --config "${C8[1]}" --cache-dir /tmp/cg-$BATCH-bench --out $R --name bench > $R/bench.log 2>&1
echo "bench rc=$?"; python3 bench/rows.py $R/bench.json | tail -6
# compute-sanitizer on 8-block clusters at an edge shape (partial clusters, tiles past M and N).
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 304x264x136 --dtype f16 --epilogue bias_relu --json \
    --cache-dir /tmp/cg-$BATCH-san-$tool --config "${C8[0]}" --config "${C8[5]}" > $R/san-$tool.json 2> $R/san-$tool.err
  echo "san $tool rc=$?: $(grep -h 'ERROR SUMMARY' $R/san-$tool.err $R/san-$tool.json | tail -1)"
done
finish
