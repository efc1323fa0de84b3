# Sourced by the bench/h200-*.sh scripts (from session t on) after setting B, the folder
# of binaries they run: `B=.dev/x; source bench/lib.sh NAME`. It sets the environment
# every device call needs, makes R=$OUT/NAME with the binaries' commit in it, and defines
# `cfg` (a wgmma config's JSON), `alternate`, `first_calls`, `suite` (a test binary's
# run) and `finish` (the archive the call brings back).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# Fail instead of skipping where CUDA or NVRTC is missing; time exactly the configs given
# (the shipped tables would answer a tune otherwise).
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
# The test suites on the H200 alone: the machine's PoCL 5.0 fails its f32 simt tiles (a
# known fault, batches 12-01b, 03s1, v2, v4), which stops a test before its CUDA parts.
export CROSSGEMM_TEST_DEVICES=${CROSSGEMM_TEST_DEVICES:-cuda:0}
NAME=$1
# Test binaries come gzipped (scripts/dev-build.sh) to fit the carry: those of every
# carried folder are unpacked, so that a batch comparing two builds (`first_calls`,
# `alternate B ..`) finds the other folder's binaries too.
# gunzip gives a file the mode of its .gz: made executable whatever that was.
for f in "$B"/*.gz .dev/*/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
R=$OUT/$NAME
mkdir -p "$R"
cp "$B/COMMIT" "$R/commit.txt"

# A wgmma config: cfg BK BM BN STAGES CONSUMERS INFLIGHT [CLUSTER_M] [EXTRA], EXTRA being
# more fields with their leading comma (e.g. ',"pingpong":true'). Check a new one with
# `cargo run -p gemm-core --example check_config` before spending device time on it.
cfg() {
    echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":${7:-1},\"inflight\":$6,\"group_m\":8,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5${8:-}}"
}

# Tunes a shape's configs (f16; the epilogue $EPI, none by default) under each value of an
# experiment switch, the values alternating process by process over two rounds, so that a
# power state between processes moves every value alike: `alternate VAR "V1 V2" LABEL
# SHAPE CONFIG...` writes $R/tune-SHAPE-pV-ROUND.json (.err; V's slashes as dashes) and a
# summary line each (bench/tune_summary.py). VAR `B` alternates the folders of binaries
# V1, V2 instead of an environment variable.
alternate() {
  local var=$1 values=$2 label=$3 s=$4; shift 4
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  for round in 1 2; do for v in $values; do
    local bin=$B/crossgemm tag=${v//\//-}
    [ "$var" = B ] && bin=$v/crossgemm
    env "$var=$v" timeout 100 $bin tune --shape $s --dtype f16 --epilogue ${EPI:-none} --json --cache-dir /tmp/cg-$NAME-$tag "${C[@]}" > $R/tune-$s-${EPI:-none}-p$tag-$round.json 2> $R/tune-$s-${EPI:-none}-p$tag-$round.err
    python3 bench/tune_summary.py "$s ${EPI:-none} $label $v round $round" $R/tune-$s-${EPI:-none}-p$tag-$round.json
  done; done
}

# First calls on the shipped tables (f16) of each case, `NAME|bench arguments`, by each
# folder of binaries in BINS, the folders alternating case by case over two rounds:
# `first_calls "$OLD $B" "k4099|--shape 1x4096x4099 --epilogues none" ...` writes
# $R/FOLDER-NAME-ROUND.{json,md,log} and prints each report's first rows (ROWS, 2 by
# default). DTYPES (f16 by default) names the dtypes; NO_TABLES=1 leaves the tables out
# (each call then runs the planner's default).
first_calls() {
  local bins=$1; shift
  unset CROSSGEMM_IGNORE_TABLES
  [ "${NO_TABLES:-0}" = 1 ] && export CROSSGEMM_IGNORE_TABLES=1
  for round in 1 2; do for bin in $bins; do for c in "$@"; do
    local args=${c#*|} tag=$(basename $bin)-${c%%|*}-$round
    timeout 90 $bin/crossgemm bench --first-call $args --dtypes ${DTYPES:-f16} --cache-dir /tmp/cg-$NAME-$(basename $bin)-${c%%|*} --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| [a-z_]+ \| [a-z_]+ \|" $R/$tag.md | head -${ROWS:-2} | cut -d"|" -f2-9
  done; done; done
}

# Runs a test binary of $B: `suite NAME TIMEOUT BINARY [TEST FILTERS..]` writes
# $R/NAME.log (8 test threads) and prints its exit status and result lines.
suite() {
  local n=$1 s=$2 bin=$3; shift 3
  timeout $s $B/$bin --test-threads 8 "$@" > $R/$n.log 2>&1; echo "$n rc=$?"
  grep -E "test result|panicked|FAILED" $R/$n.log | head -4
}

# The archive of R for the call to bring back.
finish() {
    cd "$OUT" && tar czf "$NAME.tgz" "$NAME" && rm -rf "$NAME"
}
