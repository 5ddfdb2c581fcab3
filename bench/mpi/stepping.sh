# Section 6 of bench/mpi/run.sh (sourced there, after section 5): one
# world stepped over ranks (simulate --mpi) against one process. Time a
# step: the difference of a long and a short run over their difference
# in steps, so that start-up and kernel compilation drop out; best of 3.
st_n=2000 st_short=20 st_long=120
st_opts=(--solver jacobi --device cpu --precision double --max-iter 25)
"$cli" gen pile --n $st_n --seed 2 -o "$tmp/st.scene" > /dev/null
# st_run NAME CMD...: the wall ms of the short and the long run into
# st_ms (best of 3 each), the long run's output in $tmp/NAME.txt and its
# final scene in $tmp/NAME.scene
st_run() {
    local name=$1 t0 best
    shift
    st_ms=()
    for steps in $st_short $st_long; do
        best=
        for try in 1 2 3; do
            t0=$(now_ms)
            "$@" --steps $steps --out "$tmp/$name.scene" > "$tmp/$name.txt" 2>&1
            t0=$(($(now_ms) - t0))
            [ -z "$best" ] || [ $t0 -lt $best ] && best=$t0
        done
        st_ms+=("$best")
    done
}
st_per_step() { awk -v a="${st_ms[0]}" -v b="${st_ms[1]}" 'BEGIN { printf "%.1f", (b - a) / ('$st_long' - '$st_short') }'; }
{
    echo
    echo "## 6. One world stepped over ranks"
    echo
    echo "\`simulate\` of a $st_n-sphere pile (\`gen pile --n $st_n --seed 2\`), ${st_opts[*]}, against"
    echo "\`clcone simulate\` (one process). A step: (wall time of $st_long steps - of $st_short) / $((st_long - st_short)),"
    echo "best of 3 runs each, so that start-up and compilation drop out. Bytes: what all ranks send a step"
    echo "(ghosts, migrations, the ghosts' state at the solve, the energies to rank 0, the solves' halo"
    echo "exchanges, cuts), over the $st_long steps; the final scene compared with one process's."
    echo
    echo "| run | ms a step | bytes a step (all ranks) | of which halo in the solves | ghosts a step | repartitions | bodies that changed rank | final scene |"
    echo "|---|---|---|---|---|---|---|---|"
} >> "$report"
st_run one "$cli" simulate "$tmp/st.scene" "${st_opts[@]}"
echo "| one process | $(st_per_step) | - | - | - | - | - | - |" >> "$report"
for np in 1 2 4; do
    st_run "st$np" "${mpirun[@]}" -np $np "$mpicli" simulate --mpi "$tmp/st.scene" "${st_opts[@]}"
    nums=($(sed -n 's/^ranks: .* \([0-9]*\) repartitions, \([0-9.]*\) ghosts a step, \([0-9]*\) bytes sent a step (\([0-9]*\) in.*/\1 \2 \3 \4/p' "$tmp/st$np.txt"))
    moved=$(sed -n 's/^ranks: .*bodies that changed rank: \([0-9]*\)$/\1/p' "$tmp/st$np.txt")
    same=$(cmp -s "$tmp/one.scene" "$tmp/st$np.scene" && echo "the same bytes" || echo "DIFFERS")
    echo "| $np rank(s) | $(st_per_step) | ${nums[2]:-?} | ${nums[3]:-?} | ${nums[1]:-?} | ${nums[0]:-?} | ${moved:-?} | $same |" >> "$report"
done
