#!/usr/bin/env bash
# `make mpi-test`: solve --mpi under mpirun against one process. A batch
# over 1, 2 and 4 ranks (and 256 generated scenes over 3) must write
# the same reactions files, bit for bit, and print the same lines (but
# the last line's time) as build/clcone solve of the same files; a bad
# file, a rank that cannot open its device and a rank that dies must end
# every rank with a clear message and a non-zero exit, each under a time
# limit, never a hang. Prints "N passed, M failed"; exits 1 on a failure.
# Usage: tests/mpi/run.sh BUILD   (BUILD/clcone, clcone-mpi and mpi-api-test built)
set -u
build=${1:?usage: run.sh BUILD}
mpi_limit=120
here=$(dirname "$0")
. "$here/common.sh"
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -20; }

# The lines both runs print, but the batch's time and the "reactions
# written to" line, which names each run's own folder.
lines() { grep -E '^(batch|model|problem [0-9]+):|^status=' "$1" | sed 's/ time_ms=[^ ]*//'; }

# same NAME DIR_ONE DIR_K OUT_ONE OUT_K: every reactions file and line equal
same() {
    local name=$1 one=$2 k=$3 o1=$4 ok_=1
    [ -n "$(ls "$one")" ] || ok_=0
    for f in "$one"/*; do cmp -s "$f" "$k/$(basename "$f")" || { ok_=0; echo "differs: $f" >> "$5"; }; done
    [ "$(ls "$one" | wc -l)" = "$(ls "$k" | wc -l)" ] || ok_=0
    diff <(lines "$o1") <(lines "$5") >> "$5" || ok_=0
    [ $ok_ = 1 ] && ok "$name" || bad "$name" "$5"
}

# batch NAME RANKS FILES... -- OPTIONS...: one process, then RANKS ranks
batch() {
    local name=$1 np=$2 files=() opts=()
    shift 2
    while [ "$1" != -- ]; do files+=("$1"); shift; done
    shift
    opts=("$@")
    mkdir -p "$tmp/$name"
    "$cli" solve "${files[@]}" "${opts[@]}" --out "$tmp/$name/one" > "$tmp/$name/one.txt" 2>&1
    local rc1=$?
    "${mpirun[@]}" -np "$np" "$mpicli" solve --mpi "${files[@]}" "${opts[@]}" --out "$tmp/$name/mpi" \
        > "$tmp/$name/mpi.txt" 2>&1
    local rck=$?
    if [ $rc1 != $rck ]; then
        echo "exit codes: one process $rc1, $np ranks $rck" >> "$tmp/$name/mpi.txt"
        bad "$name" "$tmp/$name/mpi.txt"
        return
    fi
    same "$name" "$tmp/$name/one" "$tmp/$name/mpi" "$tmp/$name/one.txt" "$tmp/$name/mpi.txt"
}

# fails NAME PATTERN CMD...: a non-zero exit (2 when EXPECT_RC says so)
# within the time limit and PATTERN in what it printed
fails() {
    local name=$1 pattern=$2 rc
    shift 2
    "$@" > "$tmp/$name.txt" 2>&1
    rc=$?
    if [ $rc = 124 ] || [ $rc = 0 ] || { [ -n "${EXPECT_RC:-}" ] && [ $rc != "$EXPECT_RC" ]; }; then
        echo "exit code $rc" >> "$tmp/$name.txt"
        bad "$name" "$tmp/$name.txt"
    elif ! grep -q -- "$pattern" "$tmp/$name.txt"; then
        bad "$name (no '$pattern')" "$tmp/$name.txt"
    else
        ok "$name"
    fi
}

shared=()
for f in "${shared_names[@]}"; do
    [ -f "$problems/$f" ] || { bad "shared problem $problems/$f present"; continue; }
    shared+=("$problems/$f")
done

for np in 1 2 4; do
    batch "shared-float-coulomb-$np" $np "${shared[@]}" -- --max-iter 3000 --max-seconds 0
done
batch "shared-double-ccp-4" 4 "${shared[@]}" -- --model ccp --precision double --max-iter 3000 --max-seconds 0
batch "shared-ref-nsgs-2" 2 "${shared[@]}" -- --device ref --max-iter 500 --max-seconds 0

# 256 generated pile scenes over 3 ranks, each solved as a scene alone
gen=()
for i in $(seq 1 256); do
    "$cli" gen pile --n $((8 + i % 13)) --seed "$i" -o "$tmp/g$i.scene" > /dev/null || bad "gen pile $i"
    gen+=("$tmp/g$i.scene")
done
batch "generated-256-scenes-over-3" 3 "${gen[@]}" -- --model ccp --max-iter 100 --max-seconds 0
# problem files and scenes in one batch, soft (which reads each scene's
# time step) in double, over 4 ranks
"$cli" gen wall --n 20 -o "$tmp/wall.scene" > /dev/null || bad "gen wall"
batch "mixed-soft-double-4" 4 "${shared[@]:0:4}" "$tmp/g1.scene" "$tmp/wall.scene" "$tmp/g2.scene" -- \
    --model soft --precision double --max-iter 500 --max-seconds 0

# one scene over ranks (domain decomposition): `solve --mpi SCENE` on K
# ranks writes one process's reactions file, bit for bit, and stops at
# the same iteration with the same status and error
# domain NAME RANKS SCENE OPTIONS...: one process (once per NAME's
# scene and options), then RANKS ranks; with FLOAT_ERROR=1 the errors
# printed are left out of the comparison (a float device sums in float,
# the ranks exactly: docs/mpi.md, "One scene over ranks")
domain() {
    local name=$1 np=$2 scene=$3 key strip='s/ time_ms=[^ ]*//'
    shift 3
    [ -n "${FLOAT_ERROR:-}" ] && strip='s/ time_ms=[^ ]*//; s/ error=[^ ]*//'
    key=$(echo "$scene $*" | md5sum | cut -c1-12)
    mkdir -p "$tmp/$name"
    [ -f "$tmp/one-$key.r" ] || "$cli" solve "$scene" "$@" -o "$tmp/one-$key.r" > "$tmp/one-$key.txt" 2>&1
    "${mpirun[@]}" -np "$np" "$mpicli" solve --mpi "$scene" "$@" --out "$tmp/$name" > "$tmp/$name.txt" 2>&1
    if ! grep -q '^ranks: ' "$tmp/$name.txt"; then
        bad "$name (not over ranks)" "$tmp/$name.txt"
    elif ! cmp "$tmp/one-$key.r" "$tmp/$name/$(basename "$scene").r" >> "$tmp/$name.txt" 2>&1; then
        bad "$name (reactions differ)" "$tmp/$name.txt"
    elif ! diff <(grep ^status= "$tmp/one-$key.txt" | sed "$strip") \
                <(grep ^status= "$tmp/$name.txt" | sed "$strip") >> "$tmp/$name.txt"; then
        bad "$name (last lines differ)" "$tmp/$name.txt"
    else
        ok "$name ($(grep ^status= "$tmp/$name.txt" | sed "$strip"))"
    fi
}
"$cli" gen pile --n 3400 -o "$tmp/pile10k.scene" > /dev/null || bad "gen pile 10^4 contacts"
"$cli" gen wall --n 40 -o "$tmp/wall40.scene" > /dev/null || bad "gen wall 40"
dd=(--device cpu --precision double --max-seconds 0)
for np in 1 2 4; do
    domain "pile10k-apgd-ccp-$np" $np "$tmp/pile10k.scene" "${dd[@]}" --model ccp --solver apgd --tol 1e-2
    domain "wall-jacobi-coulomb-$np" $np "$tmp/wall40.scene" "${dd[@]}" --model coulomb --solver jacobi --max-iter 150
done
domain "pile10k-jacobi-coulomb-2" 2 "$tmp/pile10k.scene" "${dd[@]}" --model coulomb --solver jacobi --max-iter 150
domain "wall-apgd-soft-4" 4 "$tmp/wall40.scene" "${dd[@]}" --model soft --solver apgd --max-iter 300
FLOAT_ERROR=1 domain "wall-jacobi-ccp-float-3" 3 "$tmp/wall40.scene" --device cpu --max-seconds 0 --model ccp \
    --solver jacobi --max-iter 100
# what a scene over ranks refuses, on every rank, without a hang
EXPECT_RC=2 fails "domain-refuses-cgs" "a scene in parts runs jacobi or apgd" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "$tmp/wall40.scene" --model ccp --solver cgs
EXPECT_RC=2 fails "domain-refuses-ref" "a scene in parts runs jacobi or apgd on a device" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "$tmp/wall40.scene" --device ref --model ccp --solver jacobi
# a time cap over ranks: every rank stops at one check (no hang), on the
# slowest rank's clock, and says so; progress on rank 0's stderr
EXPECT_RC=1 fails "domain-time-cap" "reason=time cap 0.5 s reached" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "$tmp/wall40.scene" --model ccp --solver jacobi --tol 1e-300 \
    --max-iter 1000000000 --max-seconds 0.5 --progress
"$cli" gen stack --n 2 -o "$tmp/stack2.scene" > /dev/null || bad "gen stack 2"
EXPECT_RC=2 fails "domain-too-many-ranks" "use fewer ranks" \
    "${mpirun[@]}" -np 4 "$mpicli" solve --mpi "$tmp/stack2.scene" --model ccp --solver jacobi
EXPECT_RC=2 fails "domain-rank-without-device" "rank 1 of 2: no OpenCL device matches 'no-such-device'" \
    "${mpirun[@]}" -np 1 -x CLCONE_DEVICE=cpu "$mpicli" solve --mpi "$tmp/wall40.scene" --solver jacobi : \
    -np 1 -x CLCONE_DEVICE=no-such-device "$mpicli" solve --mpi "$tmp/wall40.scene" --solver jacobi
# rank 1 killed 3 s into a solve of 10^6 iterations: mpirun ends rank 0,
# which waits in an exchange with it, too
slowd=("$mpicli" solve --mpi "$tmp/pile10k.scene" --solver jacobi --tol 1e-12 --max-seconds 0)
fails "domain-rank-killed-mid-solve" "non-zero" \
    "${mpirun[@]}" -np 1 "${slowd[@]}" : -np 1 sh -c "${slowd[*]} & sleep 3; kill -9 \$!; wait \$!"

# stepping over ranks: each rank steps its own bodies with ghosts of its
# neighbours'. 50 steps of a 2,000-sphere pile on 2 ranks write one
# process's final scene bit for bit and the same per-step log (but its
# times), with ghosts exchanged and bodies migrating between ranks
"$cli" gen pile --n 2000 --seed 2 -o "$tmp/pile2k.scene" > /dev/null || bad "gen pile 2000"
simo=(--steps 50 --solver jacobi --device cpu --precision double --max-iter 25)
mkdir -p "$tmp/vtk1" "$tmp/vtk4"
"$cli" simulate "$tmp/pile2k.scene" "${simo[@]}" --out "$tmp/sim1.scene" --csv "$tmp/sim1.csv" --vtk "$tmp/vtk1" \
    --vtk-every 10 > "$tmp/sim1.txt" 2>&1
# simulated NAME RANKS ONE OPTIONS...: RANKS ranks against one process's
# run ONE (its .scene and .csv): final scene and log (but the times) equal
simulated() {
    local name=$1 np=$2 one=$3
    shift 3
    "${mpirun[@]}" -np "$np" "$mpicli" simulate --mpi "$@" --out "$tmp/$name.scene" --csv "$tmp/$name.csv" \
        > "$tmp/$name.txt" 2>&1
    if ! cmp "$one.scene" "$tmp/$name.scene" >> "$tmp/$name.txt" 2>&1; then
        bad "$name (final scenes differ)" "$tmp/$name.txt"
    elif ! diff <(cut -d, -f1-4,6-11 "$one.csv") <(cut -d, -f1-4,6-11 "$tmp/$name.csv") >> "$tmp/$name.txt"; then
        bad "$name (logs differ)" "$tmp/$name.txt"
    else
        return 0
    fi
    return 1
}
# figure NAME WHAT: the number before WHAT on the run's "ranks:" lines
figure() { sed -n "s/^ranks: .* \([0-9.]*\) $2.*/\1/p" "$tmp/$1.txt" | head -1; }
if simulated simulate-50-steps-2-ranks 2 "$tmp/sim1" "$tmp/pile2k.scene" "${simo[@]}"; then
    moved=$(sed -n 's/^ranks: .*bodies that changed rank: \([0-9]*\)$/\1/p' "$tmp/simulate-50-steps-2-ranks.txt")
    ghosts=$(figure simulate-50-steps-2-ranks "ghosts a step")
    if ! [ "${moved:-0}" -gt 0 ]; then
        bad "simulate-50-steps-2-ranks (no body changed rank)" "$tmp/simulate-50-steps-2-ranks.txt"
    elif ! awk "BEGIN { exit !(${ghosts:-0} > 0) }"; then
        bad "simulate-50-steps-2-ranks (no ghosts)" "$tmp/simulate-50-steps-2-ranks.txt"
    else
        ok "simulate-50-steps-2-ranks ($moved times a body changed rank, $ghosts ghosts a step)"
    fi
fi
# 4 ranks cut again at every step (any imbalance), the VTK frames too
if simulated simulate-4-ranks-repartitioned 4 "$tmp/sim1" "$tmp/pile2k.scene" "${simo[@]}" --mpi-rebalance 0 \
    --vtk "$tmp/vtk4" --vtk-every 10; then
    cuts=$(figure simulate-4-ranks-repartitioned repartitions)
    if ! diff -r "$tmp/vtk1" "$tmp/vtk4" >> "$tmp/simulate-4-ranks-repartitioned.txt" 2>&1; then
        bad "simulate-4-ranks-repartitioned (VTK frames differ)" "$tmp/simulate-4-ranks-repartitioned.txt"
    elif ! [ "${cuts:-0}" -gt 0 ]; then
        bad "simulate-4-ranks-repartitioned (never cut again)" "$tmp/simulate-4-ranks-repartitioned.txt"
    else
        ok "simulate-4-ranks-repartitioned ($cuts repartitions)"
    fi
fi
# boxes (contacts of several features a pair) with two static boxes among
# them, apgd, on 3 ranks
awk '/^box/ { n++; if (n == 30 || n == 50) $2 = 0 } { print }' "$tmp/wall.scene" > "$tmp/wallst.scene"
wallo=("$tmp/wallst.scene" --steps 30 --solver apgd --model coulomb --device cpu --precision double --max-iter 50)
"$cli" simulate "${wallo[@]}" --out "$tmp/wall1.scene" --csv "$tmp/wall1.csv" > "$tmp/wall1.txt" 2>&1
simulated simulate-static-boxes-apgd-3-ranks 3 "$tmp/wall1" "${wallo[@]}" --mpi-rebalance 0.05 &&
    ok "simulate-static-boxes-apgd-3-ranks ($(figure simulate-static-boxes-apgd-3-ranks repartitions) repartitions)"
EXPECT_RC=2 fails "simulate-refuses-acgs" "a scene in parts runs jacobi or apgd" \
    "${mpirun[@]}" -np 2 "$mpicli" simulate --mpi "$tmp/wall40.scene" --steps 2
EXPECT_RC=2 fails "simulate-too-many-ranks" "use fewer ranks" \
    "${mpirun[@]}" -np 4 "$mpicli" simulate --mpi "$tmp/stack2.scene" --steps 2 --solver jacobi
EXPECT_RC=2 fails "simulate-rank-without-device" "rank 1 of 2: no OpenCL device matches 'no-such-device'" \
    "${mpirun[@]}" -np 1 -x CLCONE_DEVICE=cpu "$mpicli" simulate --mpi "$tmp/wall40.scene" --steps 2 --solver jacobi : \
    -np 1 -x CLCONE_DEVICE=no-such-device "$mpicli" simulate --mpi "$tmp/wall40.scene" --steps 2 --solver jacobi
# rank 1 killed 3 s into a run of 5,000 steps: mpirun ends rank 0, which
# waits in an exchange with it, too
slows=("$mpicli" simulate --mpi "$tmp/pile2k.scene" --steps 5000 --solver jacobi --max-iter 25)
fails "simulate-rank-killed-mid-run" "non-zero" \
    "${mpirun[@]}" -np 1 "${slows[@]}" : -np 1 sh -c "${slows[*]} & sleep 3; kill -9 \$!; wait \$!"

# cut again at once, not at the load's next check (--mpi-rebalance 1000
# never cuts for the load): a body that lands beyond the neighbouring
# regions in one step (4 ranks), and a rank whose bodies all leave the
# ground (2 ranks; cut again by that step's contacts, or it would get the
# same bodies back)
# at_once NAME RANKS SCENE STEPS: RANKS ranks against one process, cut again
at_once() {
    local name=$1 np=$2 o=("$3" --steps "$4" --solver jacobi --device cpu --precision double)
    "$cli" simulate "${o[@]}" --out "$tmp/$name-1.scene" --csv "$tmp/$name-1.csv" > "$tmp/$name-1.txt" 2>&1
    if simulated "$name" "$np" "$tmp/$name-1" "${o[@]}" --mpi-rebalance 1000; then
        local cuts=$(figure "$name" repartitions)
        [ "${cuts:-0}" -gt 0 ] && ok "$name ($cuts repartitions)" || bad "$name (never cut again)" "$tmp/$name.txt"
    fi
}
at_once simulate-body-jumps-beyond-neighbours 4 "$here/jump.scene" 5
at_once simulate-rank-loses-its-contacts 2 "$here/liftoff.scene" 20
"$cli" gen pile --n 300 --seed 3 -o "$tmp/p300.scene" > /dev/null && "$cli" export "$tmp/p300.scene" -o "$tmp/p300.dat" > /dev/null
# rank 0 cannot write a VTK frame mid-run (a folder in its way): every
# rank ends, rank 0 says which file
mkdir -p "$tmp/vtkx/bodies_000004.vtk"
EXPECT_RC=2 fails "simulate-output-unwritable-mid-run" "bodies_000004.vtk: cannot open for writing" \
    "${mpirun[@]}" -np 2 "$mpicli" simulate --mpi "$tmp/p300.scene" --steps 6 --solver jacobi --max-iter 25 \
    --vtk "$tmp/vtkx" --vtk-every 2
# one rank's device fails mid-run (tests/mpi/clfail.c, preloaded into
# that rank alone): at the first solve's set-up (agreed: every rank ends
# with its message), in the new plan's warm-up and in the middle of a
# later solve (the others wait in an exchange: it says why and ends the
# job), on rank 1 and on rank 0; a NaN in rank 1's reactions at the end
# of the first solve (the 82nd buffer read on this code) makes bodies no
# region holds: refused on every rank at the next step
cc -shared -fPIC -o "$tmp/clfail.so" "$here/clfail.c" -ldl || bad "build tests/mpi/clfail.c"
devfail() {
    local name=$1 pattern=$2 rank=$3 env=$4 pre=() post=()
    local run=("$mpicli" simulate --mpi "$tmp/p300.scene" --steps 4 --solver jacobi --device cpu --precision double
               --max-iter 25)
    if [ "$rank" = 0 ]; then pre=(-x LD_PRELOAD="$tmp/clfail.so" -x "$env"); else post=(-x LD_PRELOAD="$tmp/clfail.so" -x "$env"); fi
    EXPECT_RC=2 fails "$name" "$pattern" "${mpirun[@]}" -np 1 "${pre[@]}" "${run[@]}" : -np 1 "${post[@]}" "${run[@]}"
}
devfail simulate-device-fails-at-set-up "step 1: rank 1 of 2: .*CL_OUT_OF_RESOURCES" 1 CLFAIL_WRITE=1
devfail simulate-device-fails-in-warm-up "rank 1: .*CL_OUT_OF_RESOURCES" 1 CLFAIL_LAUNCH=1
devfail simulate-device-fails-mid-solve-rank-1 "rank 1: .*CL_OUT_OF_RESOURCES" 1 CLFAIL_LAUNCH=200
devfail simulate-device-fails-mid-solve-rank-0 "step 2: .*CL_OUT_OF_RESOURCES" 0 CLFAIL_LAUNCH=200
devfail simulate-nan-on-one-rank "rank 1 of 2: body [0-9]*: position, orientation or velocity not finite" 1 \
    CLFAIL_NAN=82

# the library's own calls (tests/mpi/api.c), over 3 ranks
"${mpirun[@]}" -np 3 "$build/mpi-api-test" > "$tmp/api.txt" 2>&1 && grep -q ' 0 failed' "$tmp/api.txt" &&
    ok "library calls ($(tail -1 "$tmp/api.txt"))" || bad "library calls" "$tmp/api.txt"

# errors: every rank ends, rank 0 says why
echo 'not a problem' > "$tmp/bad.dat"
EXPECT_RC=2 fails "bad-file-names-it" "$tmp/bad.dat:1" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "${shared[0]}" "$tmp/bad.dat"
EXPECT_RC=2 fails "rank-without-device" "rank 1 of 2: no OpenCL device matches 'no-such-device'" \
    "${mpirun[@]}" -np 1 -x CLCONE_DEVICE=cpu "$mpicli" solve --mpi "${shared[@]:0:3}" : \
    -np 1 -x CLCONE_DEVICE=no-such-device "$mpicli" solve --mpi "${shared[@]:0:3}"
fails "rank-that-dies-at-start" "non-zero" \
    "${mpirun[@]}" -np 1 "$mpicli" solve --mpi "${shared[@]:0:3}" : -np 1 false
# rank 1 killed 3 s into solves that run to their 20 s cap (two
# 900-contact piles, Jacobi asked for 1e-300: the default hybrid now
# solves them in a quarter of a second): mpirun ends rank 0 too
cp "$tmp/p300.dat" "$tmp/p300b.dat"
slow=("$mpicli" solve --mpi "$tmp/p300.dat" "$tmp/p300b.dat" --solver jacobi --tol 1e-300 --max-iter 1000000000
    --max-seconds 20)
fails "rank-killed-mid-solve" "non-zero" \
    "${mpirun[@]}" -np 1 "${slow[@]}" : -np 1 sh -c "${slow[*]} & sleep 3; kill -9 \$!; wait \$!"
echo 'clcone-scene 1' > "$tmp/bad.scene"
EXPECT_RC=2 fails "bad-scene-names-it" "$tmp/bad.scene" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "$tmp/g1.scene" "$tmp/bad.scene"
EXPECT_RC=2 fails "check-refuses-mpi" "only solve and simulate run over MPI ranks" \
    "${mpirun[@]}" -np 2 "$mpicli" check --mpi "${shared[0]}" "$tmp/x.r"
EXPECT_RC=2 fails "plain-clcone-refuses-mpi" "built without MPI" "$cli" solve --mpi "${shared[0]}"
# no output may name an input (rank 0 refuses before the others are told
# of any work): a batch's --out DIR holding, under a name it writes, a
# link to an input, and simulate's CSV over its scene; both left whole
mkdir -p "$tmp/over" && cp "${shared[0]}" "$tmp/in.dat" && ln -sf ../in.dat "$tmp/over/in.dat.r"
cp "$tmp/g1.scene" "$tmp/keep.scene"
EXPECT_RC=2 fails "batch-out-over-an-input" "would overwrite the input FILE $tmp/in.dat" \
    "${mpirun[@]}" -np 2 "$mpicli" solve --mpi "$tmp/in.dat" --out "$tmp/over"
EXPECT_RC=2 fails "simulate-csv-over-its-scene" "would overwrite the input SCENE $tmp/g1.scene" \
    "${mpirun[@]}" -np 2 "$mpicli" simulate --mpi "$tmp/g1.scene" --steps 1 --csv "$tmp/./g1.scene"
if cmp -s "${shared[0]}" "$tmp/in.dat" && cmp -s "$tmp/keep.scene" "$tmp/g1.scene"; then ok "inputs-left-whole"
else bad "inputs-left-whole"; fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
