#!/bin/sh
# Records what the CLI computes, bit for bit, so that a refactor can be
# shown to change no result: run it before and after into two folders and
# compare them (`diff -r BEFORE AFTER`; no output = identical bits).
#
#   tools/bitwise-check.sh OUTDIR [PROBLEMS_DIR]
#
# Every problem file of PROBLEMS_DIR (default tests/data/problems) with every
# (model, solver) pair that `clcone solvers` lists, on the reference and on
# the OpenCL device (float and double; once more with --plot, which records
# a history and so takes the multi-launch loop instead of the whole-problem
# kernels); a batch of problems on each backend; generated scenes solved
# with every model; and short simulations. Each run writes its reactions
# (or final scene) and its last line without the time. Iterations are
# capped and the time cap is off, so each run does fixed, repeatable work.
# CLCONE_CLI (default build/clcone) is the CLI; CLCONE_DEVICE_ARG (default
# 0) the device.
set -u
out=${1:?usage: tools/bitwise-check.sh OUTDIR [PROBLEMS_DIR]}
dir=${2:-tests/data/problems}
cli=${CLCONE_CLI:-build/clcone}
dev=${CLCONE_DEVICE_ARG:-0}
iters=200
mkdir -p "$out" || exit 2
: > "$out/lines.txt"

# run NAME ARGS...: the CLI's last line (time dropped) into lines.txt
run() {
    name=$1
    shift
    last=$("$cli" "$@" 2>&1 | tail -n 1 | sed 's/ time_ms=[^ ]*//')
    printf '%s: %s\n' "$name" "$last" >> "$out/lines.txt"
}

# backends: name and arguments
backends="ref:--device,ref float:--device,$dev,--precision,float double:--device,$dev,--precision,double"

# pairs BACKEND: "model:solver" per pair the backend runs (ref or device)
# on the local form
pairs() {
    "$cli" solvers | awk -v want="$1" '
        /^  [a-z]/ { local_form = ($0 ~ /local/); model = $NF; next }
        local_form && (($1 == "ref:" && want == "ref") || ($1 == "device:" && want == "device")) {
            line = $0; sub(/^ *[a-z]*: /, "", line)
            n = split(line, s, ", ")
            for (i = 1; i <= n; ++i) { sub(/ .*/, "", s[i]); if (s[i] != "newton" && s[i] != "-") print model ":" s[i] }
        }'
}

files=$(ls "$dir"/*.dat "$dir"/*.hdf5 2>/dev/null)
for b in $backends; do
    bname=${b%%:*}
    bargs=$(echo "${b#*:}" | tr ',' ' ')
    kind=device
    [ "$bname" = ref ] && kind=ref
    for pair in $(pairs $kind); do
        model=${pair%%:*}
        solver=${pair#*:}
        for f in $files; do
            tag="$bname.$model.$solver.$(basename "$f")"
            # shellcheck disable=SC2086
            run "$tag" solve "$f" $bargs --model "$model" --solver "$solver" --max-iter $iters \
                --max-seconds 0 -o "$out/$tag.r"
            if [ $kind = device ]; then
                run "$tag.history" solve "$f" $bargs --model "$model" --solver "$solver" --max-iter $iters \
                    --max-seconds 0 -o "$out/$tag.history.r" --plot "$out/plot.png"
                rm -f "$out/plot.png"
            fi
        done
        # the first five problems as one batch
        set -- $(echo "$files" | head -n 5)
        mkdir -p "$out/batch.$bname.$model.$solver"
        # shellcheck disable=SC2086
        run "batch.$bname.$model.$solver" solve "$@" $bargs --model "$model" --solver "$solver" \
            --max-iter $iters --max-seconds 0 --out "$out/batch.$bname.$model.$solver"
    done
done

# scenes: a small pile and a stack, each model on each backend
"$cli" gen pile --n 60 --seed 3 -o "$out/pile.scene" > /dev/null || exit 2
"$cli" gen stack --n 4 -o "$out/stack.scene" > /dev/null || exit 2
for b in $backends; do
    bname=${b%%:*}
    bargs=$(echo "${b#*:}" | tr ',' ' ')
    for scene in pile stack; do
        for model in coulomb ccp pyramid soft sap; do
            tag="scene.$bname.$scene.$model"
            # shellcheck disable=SC2086
            run "$tag" solve "$out/$scene.scene" $bargs --model $model --max-iter $iters --max-seconds 0 \
                -o "$out/$tag.r"
        done
        for model in ccp coulomb soft sap; do
            tag="simulate.$bname.$scene.$model"
            # shellcheck disable=SC2086
            run "$tag" simulate "$out/$scene.scene" --steps 5 $bargs --model $model --max-iter 100 --max-seconds 0 \
                --out "$out/$tag.scene"
        done
    done
done
echo "bitwise-check: $(wc -l < "$out/lines.txt") runs recorded in $out"
