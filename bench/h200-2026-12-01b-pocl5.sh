set -u
B=.dev/s2
mkdir -p $OUT/p
CROSSGEMM_DUMP=/tmp/dump CROSSGEMM_TEST_DEVICES=opencl:0:0 timeout 60 $B/runtime_tests opencl_generated_gemm > $OUT/p/unit.log 2>&1; echo "rc=$?"
cp /tmp/dump/cg_t_ea777831* $OUT/p/ 2>/dev/null
ls /tmp/dump; grep -h "device:\|options\|build" /tmp/dump/cg_t_ea777831*.log
POCL_DEBUG=all CROSSGEMM_TEST_DEVICES=opencl:0:0 timeout 60 $B/runtime_tests opencl_generated_gemm > $OUT/p/pocl-debug.log 2>&1
grep -i "error\|warn\|fail" $OUT/p/pocl-debug.log | sort | uniq -c | sort -rn | head -20
