#!/usr/bin/env bash
# Runs every libFuzzer harness of tests/fuzz/ for a while on a seed corpus
# made from the Siconos problems ($CLCONE_PROBLEMS, else tests/data/problems)
# and generated scenes; fails on the first crash, leak or sanitizer report
# (libFuzzer's own exit status), leaving the input in DIR/artifacts/.
#   usage: tests/fuzz/run.sh DIR CLCONE SECONDS   (DIR holds fuzz_NAME)
set -euo pipefail
dir=$1 cli=$2 seconds=$3
problems=${CLCONE_PROBLEMS:-$(dirname "$0")/../data/problems}
corpus=$dir/corpus
rm -rf "$corpus"
mkdir -p "$corpus"/{dat,hdf5,scene,reactions} "$dir/artifacts"
for f in "$problems"/*.dat; do cp "$f" "$corpus/dat/"; done
for f in "$problems"/*.hdf5 "$(dirname "$0")"/regress/*.hdf5; do cp "$f" "$corpus/hdf5/"; done
for g in "stack --n 3" "wall --n 3" "incline" "pile --n 20" "grid --n 2"; do
    name=${g%% *}
    "$cli" gen $g -o "$corpus/scene/$name.scene" >/dev/null
done
# reactions files as `solve --out` writes them, behind the contact-count byte
for f in FrictionContact3D_1c Rover4396 FC3D_Example1 Confeti-ex13-4contact-Fc3D-SBM NESpheres_10_1; do
    "$cli" solve "$problems/$f.dat" --device ref --out "$dir/r.txt" >/dev/null || true
    n=$(grep -vc '^#' "$dir/r.txt")
    { printf "\\$(printf '%03o' "$n")"; cat "$dir/r.txt"; } > "$corpus/reactions/$f.txt"
done
rm -f "$dir/r.txt"
# allocator_may_return_null: on a damaged file libhdf5 may ask for an
# impossible size (2^64 - 136 bytes), which the system allocator refuses
# with NULL and libhdf5 then fails the read; ASan's default is to abort
# instead. Everything else ASan checks stays fatal.
# max_allocation_size_mb: libhdf5 also asks for a plausible-looking 4 GiB
# on some damaged files (regress/hdf5-4gib-alloc.hdf5); libFuzzer's own
# malloc limit (rss_limit_mb) would call that an out-of-memory crash, so
# ASan refuses anything over 1 GiB first, with NULL, as it does the above.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=1024
export LSAN_OPTIONS=suppressions=$(dirname "$0")/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for name in dat hdf5 scene reactions; do
    echo "fuzz_$name: ${seconds}s on $(ls "$corpus/$name" | wc -l) seeds"
    "$dir/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/fuzz_$name-" "$corpus/$name" 2>"$dir/fuzz_$name.log" || {
        tail -n 60 "$dir/fuzz_$name.log"
        echo "fuzz_$name FAILED: the input is in $dir/artifacts/, the log in $dir/fuzz_$name.log" >&2
        exit 1
    }
    grep -E '^stat::number_of_executed_units|^Done' "$dir/fuzz_$name.log" || true
done
echo "fuzzing: no crash, leak or sanitizer report"
