BATCH=ak3b
B=.dev/ak3s
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)" CROSSGEMM_LOG=1
eval "$(sed -n '/^c() {/,/^tune() {/p' bench/h100-2026-12-06ak3-cluster8.sh | sed '$d')"
tune() { local sh=$1 dt=$2; shift 2; local C=(); for x in "$@"; do C+=(--config "$x"); done
  timeout 150 $B/crossgemm tune --shape $sh --dtype $dt --epilogue none --json --cache-dir /tmp/cg-$BATCH-$sh-$dt "${C[@]}" > $R/tune-$sh-$dt.json 2> $R/tune-$sh-$dt.err
  echo "tune $sh $dt rc=$?"; python3 bench/tune_summary.py "$sh $dt" $R/tune-$sh-$dt.json
  grep -h "clusters of" $R/tune-$sh-$dt.err | sed 's/.*runs/  runs/' | sort -u | head -6; }
tune 1000x1000x1000 f16 "$ALONE" "$O64" "${C8[@]}"
tune 1024x1024x1024 f16 "$ALONE" "$O64" "${C8[@]}"
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 304x264x136 --dtype f16 --epilogue bias_relu --json \
    --cache-dir /tmp/cg-$BATCH-san-$tool --config "${C8[0]}" --config "${C8[4]}" > $R/san-$tool.json 2> $R/san-$tool.err
  echo "san $tool rc=$?: $(grep -h 'ERROR SUMMARY' $R/san-$tool.err $R/san-$tool.json | tail -1)"
done
finish
