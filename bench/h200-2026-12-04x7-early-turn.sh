#!/usr/bin/env bash
# Session x, batch x7 (reverted after the run: apply results/h200-2026-12-04x7/early-turn.patch;
# .dev/x7: the CLI at cc7fc1e, built alone: `cargo build --release
# --features baseline,aot --bin crossgemm`). CG_EARLY_TURN (default 0) switched per process
# with CROSSGEMM_EXP_DEFINES, alternating, two rounds: with ping-pong, a consumer gives the
# next one its turn once its tile's last wgmma group is issued instead of after waiting
# for it (SASS checked here: HGMMA x8, BAR.ARV, then the waits; no serialization warning).
# Written before: x6 found the ping-pong turns leading the stalls of the plain
# 4096x4096x128 winner (barrier 1.64 of 7.33 cycles an instruction); the next consumer's
# mainloop then starts one group's latency (~0.3-0.5 us of a ~2 us tile) earlier:
# expected 2-5% off the ping-pong tiles at K = 128 (4096x4096x128 none and bias_relu,
# 8192x8192x128), nothing where the loads bound the mainloop. Every candidate of a tune is
# checked against the reference.
B=.dev/x7
source bench/lib.sh x7
P=',"pingpong":true'
V="CG_EARLY_TURN=0 CG_EARLY_TURN=1"
alternate CROSSGEMM_EXP_DEFINES "$V" et 4096x4096x128 "$(cfg 64 128 128 6 2 false 1 "$P")" "$(cfg 64 128 128 6 2 true 1 "$P")" "$(cfg 128 128 128 3 2 false 1 "$P")"
EPI=bias_relu alternate CROSSGEMM_EXP_DEFINES "$V" et 4096x4096x128 "$(cfg 128 64 128 4 3 false 1 "$P")" "$(cfg 64 128 128 6 2 false 1 "$P")"
alternate CROSSGEMM_EXP_DEFINES "$V" et 8192x8192x128 "$(cfg 64 128 128 6 2 false 1 "$P")"
finish
