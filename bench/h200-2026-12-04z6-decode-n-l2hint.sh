#!/usr/bin/env bash
# Session z, batch z6 (.dev/z6: base.gz, the CLI at f1c4976; l2.gz, the same with
# decode_n's copies of W's rows asking the L2 for 256 bytes,
# `cp.async.cg.shared.global.L2::256B`; gzipped to fit one call's carry): a block reads 128
# bytes of each row of W and its neighbour the next 128 at about the same time, so one
# miss could bring both (the column-major `decode` kernel's stream loads carry the same
# hint). The two binaries alternate process by process over two rounds, each tuning
# decode_n's planned winners (`--config`), f16, none.
# Written before: 0-5% faster at 4096x4096 (the kernel pulls 2.76 TB/s, z5), the same
# at 16x12288x4096.
B=.dev/z6
source bench/lib.sh z6
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
chmod +x $B/base $B/l2
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":4,\"warps\":$2,\"stages\":$3,\"ksplit\":1}"; }
for round in 1 2; do
  for tag in base l2; do
    for s in 2x4096x4096:1 8x4096x4096:1 16x4096x4096:2 32x4096x4096:4 16x12288x4096:2; do
      shape=${s%:*}; mt=${s#*:}
      timeout 60 $B/$tag tune --shape $shape --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z6-$tag-$round --config "$(d $mt 8 4)" --config "$(d $mt 4 8)" > $R/tune-$shape-$tag-$round.json 2> $R/tune-$shape-$tag-$round.err
      python3 bench/tune_summary.py "$shape $tag round $round" $R/tune-$shape-$tag-$round.json
    done
  done
done
finish
