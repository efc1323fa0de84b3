#!/usr/bin/env bash
# Session ak, batch ak6: every planned config that splits K, of the bf16 and f32 kernels
# (tests/kernels.rs `every_planned_config_bf16_f32` narrowed by CROSSGEMM_TEST_CONFIGS to
# "ksplit"), through CUDA against the host reference at its shapes (aligned, ragged, few
# rows): the simt family's splits of tall tiles (e2bc4fa) are new configs of a kernel
# whose splits were tested on short tiles only. Binaries: tests/kernels.rs at the commit in
# .dev/ak5s/COMMIT. Carry: [".dev/ak5s"]. ~3 minutes.
# Written before: passes.
BATCH=${BATCH:-ak6}
B=${B:-.dev/ak5s}
source bench/lib.sh $BATCH
export CROSSGEMM_TEST_CONFIGS=ksplit
timeout 240 $B/kernels --test-threads 1 every_planned_config_bf16_f32 > $R/splits.log 2>&1; echo "kernels splits rc=$?"
grep -E "test result|panicked" $R/splits.log | head -3
finish
