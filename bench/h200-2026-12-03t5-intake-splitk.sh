#!/usr/bin/env bash
# Session t, batch t5 (.dev/s1old: the CLI at e461622).
# Batch t4's diagnose at 128x12288x4096: load-only takes 98% of the full time for both
# winners (36.1-36.8 us) where M = 1's decode kernel reads the same B in 31.3; t1's
# multicast (fewer L2 reads, the same bytes landing in each SM) did not help. What is
# the same across every M = 128 tile timed so far is the bytes each SM takes in: about
# 2 MB (64x192: B 1.5 MB + A 0.5; 128x128: B 1 + A 1, every block reading all of A),
# ~60 GB/s a multiprocessor over the kernel. Split-K over 128 units cuts that without
# a partial wave: 128x192 split 2 takes A 0.5 + B 0.75 = 1.25 MB a unit (64 tiles x 2);
# at 128x8192x8192, 128x256 split 4 takes 0.5 + 1 = 1.5 MB (32 x 4) where the 64x128
# winner takes 3. The tune's split-K candidates so far had 1.45-3 units an SM.
# Written before: if per-SM intake is what limits, 128x192 split 2 ~20% under the
# 37.3 us winner at 128x12288x4096 and 128x256 split 4 ~30% under 45.4 at
# 128x8192x8192 (less the partials' reduction); a tie or worse if not.
B=.dev/s1old
source bench/lib.sh t5
S=',"ksplit":'
C=(); for c in "$(cfg 64 64 192 6 1 true)" "$(cfg 64 128 128 6 2 false)" "$(cfg 64 128 192 5 2 false 1 ${S}2)" \
  "$(cfg 64 128 240 4 2 false 1 ${S}2)" "$(cfg 64 128 192 5 2 false)"; do C+=(--config "$c"); done
D=(); for c in "$(cfg 64 64 128 8 1 true)" "$(cfg 64 128 256 4 2 false 1 ${S}4)" "$(cfg 64 128 256 3 2 false 1 ${S}4)" \
  "$(cfg 64 128 128 6 2 false 1 ${S}2)" "$(cfg 64 128 192 5 2 false 1 ${S}3)"; do D+=(--config "$c"); done
for round in 1 2; do
  for e in none bias_relu; do
    timeout 90 $B/crossgemm tune --shape 128x12288x4096 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-t5-$round "${C[@]}" > $R/tune-12288-$e-$round.json 2> $R/tune-12288-$e-$round.err
    python3 bench/tune_summary.py "128x12288x4096 $e $round" $R/tune-12288-$e-$round.json
    timeout 90 $B/crossgemm tune --shape 128x8192x8192 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-t5-$round "${D[@]}" > $R/tune-8192-$e-$round.json 2> $R/tune-8192-$e-$round.err
    python3 bench/tune_summary.py "128x8192x8192 $e $round" $R/tune-8192-$e-$round.json
  done
done
finish
