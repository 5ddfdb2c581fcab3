# Section 5 of bench/mpi/run.sh (sourced there, after section 3): one
# scene over ranks. Sets dd_alpha, dd_xpi, dd_spi and dd_neigh for the
# projection (section 4).
dd_iters=100
dd_opts=(--model ccp --solver jacobi --precision double --max-iter "$dd_iters" --max-seconds 0)
# the numbers of the "ranks:" line: ranks, most contacts on one, shared,
# ghosts, bytes an exchange, most from one rank, exchanges, sums
rank_nums() { grep '^ranks:' "$1" | grep -o '[0-9]\+' | tr '\n' ' '; }
# largest |difference| between two reactions files
rdiff() {
    paste -d' ' <(grep -v '^#' "$1") <(grep -v '^#' "$2") |
        awk '{ for (i = 1; i <= 3; ++i) { d = $i - $(i + 3); if (d < 0) d = -d; if (d > m) m = d } }
             END { if (NR == 0) print "FAILED: no reactions"; else printf "%.3g\n", m }'
}
{
    echo
    echo "## 5. One scene over ranks (domain decomposition)"
    echo
    echo "Generated piles (\`gen pile --n B\`), ccp, body-form Jacobi in double, $dd_iters iterations, no time"
    echo "cap, each rank on its own POCL device. Reactions against one process (\`clcone solve\`, the same"
    echo "options): largest |r_K - r_1|, and whether the last line (status, error, iterations) is the same."
    echo "Shared: contacts held by two ranks; ghosts: copies of neighbours' bodies; bytes: the halo"
    echo "(6 reals a body) a rank sends an iteration, the largest rank's and all ranks' (exchanges x bytes"
    echo "an exchange / iterations: a gather an iteration and one more at each check of the error). The"
    echo "exact sums (an allreduce of 75 int64 a sum) come on top at each check."
    echo
    echo "| bodies | contacts | ranks | largest difference | same last line | shared contacts | ghosts / bodies | bytes a rank an iteration (largest) | bytes all ranks an iteration |"
    echo "|---|---|---|---|---|---|---|---|---|"
} >> "$report"
dd_alpha=0 dd_xpi=0 dd_spi=0 dd_neigh=6
for B in 1000 3000 9000; do
    "$cli" gen pile --n "$B" --seed 1 -o "$tmp/dd$B.scene" > "$tmp/gen.txt"
    nc=$(sed -n 's/.* bodies, \([0-9]*\) contacts.*/\1/p' "$tmp/gen.txt")
    "$cli" solve "$tmp/dd$B.scene" "${dd_opts[@]}" -o "$tmp/dd1.r" > "$tmp/dd1.txt" 2>&1
    for np in 1 2 4; do
        rm -rf "$tmp/ddk"
        "${mpirun[@]}" -np "$np" "$mpicli" solve --mpi "$tmp/dd$B.scene" "${dd_opts[@]}" --out "$tmp/ddk" \
            > "$tmp/ddk.txt" 2>&1
        same=no
        cmp -s <(grep ^status= "$tmp/dd1.txt" | sed 's/ time_ms=[^ ]*//') \
               <(grep ^status= "$tmp/ddk.txt" | sed 's/ time_ms=[^ ]*//') && same=yes
        set -- $(rank_nums "$tmp/ddk.txt")
        echo "| $B | $nc | $np | $(rdiff "$tmp/dd1.r" "$tmp/ddk/dd$B.scene.r") | $same | $3 | $(awk -v g="$4" -v b="$B" 'BEGIN { printf "%.3f", g / b }') | $(awk -v x="$6" -v e="$7" -v i="$dd_iters" 'BEGIN { printf "%.0f", x * e / i }') | $(awk -v x="$5" -v e="$7" -v i="$dd_iters" 'BEGIN { printf "%.0f", x * e / i }') |" >> "$report"
        if [ "$B" = 9000 ] && [ "$np" = 4 ]; then
            dd_alpha=$(awk -v x="$6" -v b="$B" 'BEGIN { printf "%.4f", x / 48 / (b / 4) ^ (2 / 3) }')
            dd_xpi=$(awk -v e="$7" -v i="$dd_iters" 'BEGIN { printf "%.4f", e / i }')
            dd_spi=$(awk -v x="$8" -v i="$dd_iters" 'BEGIN { printf "%.4f", x / i }')
        fi
    done
done

# weak scaling: B bodies on one rank, 2B on two, each rank's POCL on one
# thread, the best of 5 (the machine is shared); and B bodies in one
# process without MPI, whose bodies keep the scene's order where a rank's
# are in the cut's
dd_weak() { # RANKS BODIES: the solve's time_ms
    "${mpirun[@]}" -x POCL_MAX_PTHREAD_COUNT=1 -np "$1" "$mpicli" solve --mpi "$tmp/dw$2.scene" \
        --model ccp --solver jacobi --precision double --max-iter 200 --max-seconds 0 > "$tmp/dw.txt" 2>&1
    field "$tmp/dw.txt" time_ms
}
dw=${MPI_BENCH_DD_BODIES:-4000}
"$cli" gen pile --n "$dw" --seed 1 -o "$tmp/dw$dw.scene" > /dev/null
"$cli" gen pile --n $((2 * dw)) --seed 1 -o "$tmp/dw$((2 * dw)).scene" > /dev/null
export POCL_MAX_PTHREAD_COUNT=1
dd_weak 1 "$dw" > /dev/null # the kernel cache, once
dw1=$(for t in 1 2 3 4 5; do dd_weak 1 "$dw"; done | sort -n | head -1)
dw2=$(for t in 1 2 3 4 5; do dd_weak 2 $((2 * dw)); done | sort -n | head -1)
dw0=$(for t in 1 2 3 4 5; do
    "$cli" solve "$tmp/dw$dw.scene" --model ccp --solver jacobi --precision double --max-iter 200 --max-seconds 0 \
        > "$tmp/dw0.txt" 2>&1
    field "$tmp/dw0.txt" time_ms
done | sort -n | head -1)
unset POCL_MAX_PTHREAD_COUNT
{
    echo
    echo "Weak scaling, 1 -> 2 ranks, one scene: a $dw-body pile on one rank, a $((2 * dw))-body pile"
    echo "(\`gen pile\`, seed 1) on two, ccp Jacobi in double, 200 iterations, each rank's POCL on one thread,"
    echo "the best of 5 solves (the longest rank's): 1 rank $dw1 ms, 2 ranks $dw2 ms (one process without MPI,"
    echo "the $dw-body pile: $dw0 ms), efficiency"
    eff=$(awk -v a="$dw1" -v b="$dw2" 'BEGIN { printf "%.2f", a / b }')
    echo "$eff (1.00 is perfect; the 2 ranks share the machine's 2 cores with whatever else runs)."
} >> "$report"
