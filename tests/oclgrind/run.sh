#!/usr/bin/env bash
# Every device row of the solver contract (tests/oclgrind/cases), local
# form (whole-problem kernels and the multi-launch loop) and body form,
# float and double, batches, warm starts, under Oclgrind: a simulated
# GPU-like device that checks every memory access of every work-item.
# Fails on any Oclgrind report (data race, uninitialised value, invalid
# access, API error) and on any answer that differs from the POCL run of
# the same command where the design promises the same bits (the
# reactions file, status and iterations: Oclgrind takes the GPU branches,
# 64 lanes a problem, POCL one). Then the same under the limits real GPUs
# have: a largest work-group of 32 and 256, 16 KiB of local memory, and a
# global memory that the problem does not fit (a clear error, exit 2).
#
# usage: tests/oclgrind/run.sh CLI [JOBS [PATTERN]]   (make oclgrind)
# PATTERN (an extended regular expression) picks cases by name.
set -uo pipefail
cli=$(realpath "$1")
jobs=${2:-2}
pattern=${3:-.}
here=$(cd "$(dirname "$0")" && pwd)
problems=${CLCONE_PROBLEMS:-$here/../data/problems}
models=${CLCONE_MODELS:-$here/../data/models/mujoco}
out=$(dirname "$cli")/oclgrind
rm -rf "$out" && mkdir -p "$out"
command -v oclgrind >/dev/null || { echo "oclgrind: not installed (make oclgrind installs it)" >&2; exit 2; }
[ -d "$problems" ] || { echo "oclgrind: no problems at $problems" >&2; exit 2; }
[ -d "$models" ] || { echo "oclgrind: no MuJoCo models at $models" >&2; exit 2; }

# Inputs: Siconos problems and small generated scenes.
"$cli" gen pile --n 12 --seed 1 -o "$out/pile.scene" >/dev/null &&
"$cli" gen pile --n 3 --seed 170 -o "$out/pile3.scene" >/dev/null &&
"$cli" gen pile --n 6 --seed 13 -o "$out/pile6.scene" >/dev/null &&
"$cli" gen stack --n 3 -o "$out/stack.scene" >/dev/null &&
"$cli" gen stack --n 130 -o "$out/tall.scene" >/dev/null &&
"$cli" gen grid --n 8 -o "$out/grid.scene" >/dev/null &&
"$cli" solve "$problems/Rover1040.dat" --model ccp --device ref --max-iter 5 --out "$out/warm.r" >/dev/null
[ -s "$out/warm.r" ] || { echo "oclgrind: making the inputs failed" >&2; exit 2; }
# never release a buffer under Oclgrind (keep_buffers.c says why)
cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$out/keep_buffers.so" "$here/keep_buffers.c" ||
    { echo "oclgrind: building keep_buffers.so failed" >&2; exit 2; }
export P="$problems" S="$out" CLI="$cli" OUT="$out" KEEP="$out/keep_buffers.so"
# the CLI's own kernel cache, apart from the user's, and no CPU-device
# setting from the caller's environment
export CLCONE_CACHE_DIR="$out/cache"
unset CLCONE_DEVICE

# Whether files a and b hold the same tokens, numbers within 64 units
# of rounding (eps) of the largest magnitude in b.
close() {
    awk -v eps="$3" '
        NR == FNR { n = split($0, t); for (i = 1; i <= n; ++i) { A[FNR, i] = t[i]; v = t[i] + 0; if (v < 0) v = -v; if (t[i] ~ /^[-+0-9.]/ && v > m) m = v } len[FNR] = n; rows = FNR; next }
        { n = split($0, t); if (n != len[FNR]) bad = 1
          for (i = 1; i <= n; ++i) {
              if (t[i] ~ /^[-+]?[0-9.]/) { d = t[i] - A[FNR, i]; if (d < 0) d = -d; D[FNR, i] = d }
              else if (t[i] != A[FNR, i]) bad = 1
          } seen = FNR }
        END { if (seen != rows) bad = 1
              for (k in D) if (D[k] > 64 * eps * m) bad = 1
              exit bad }' "$2" "$1"
}
export -f close

# The last line's status and iterations, and with `=` its error.
verdict() {
    local pat='status=[a-z]* error=[^ ]* iters=[0-9]*'
    [ "$2" = "~" ] && pat='status=[a-z]* '
    grep -o "$pat" "$1" | tail -n 1
    [ "$2" = "~" ] && grep -o 'iters=[0-9]*' "$1" | tail -n 1
}
export -f verdict

# One case: CONFIG NAME EXPECT ARGS... ; runs POCL (once per name) and
# Oclgrind with CONFIG's flags, compares. Prints one line; exits
# non-zero on a failure.
one() {
    local config=$1 name=$2 expect=$3; shift 3
    # each config has its own POCL twin: parallel jobs never share a folder
    local flags=() dir="$OUT/$config/$name" ref="$OUT/pocl/$config/$name" eps=1.2e-7
    case $config in
        default) ;;
        wg32) flags=(--max-wgsize 32) ;;
        wg256) flags=(--max-wgsize 256) ;;
        lmem16k) flags=(--local-mem-size 16384) ;;
        *) echo "FAIL $name [$config]: unknown config"; return 1 ;;
    esac
    case " $* " in *" --precision double "*) eps=2.3e-16 ;; esac
    mkdir -p "$dir" "$ref"
    local args=() rargs=() a
    for a in "$@"; do args+=("${a//@OUT@/$dir}"); rargs+=("${a//@OUT@/$ref}"); done
    # no wall-clock cap (each case ends by its iterations or steps): under
    # Oclgrind on a busy machine the CLI's 30 s default stopped a hybrid
    # solve early, an answer that depends on the machine's load
    args+=(--max-seconds 0)
    rargs+=(--max-seconds 0)
    # POCL keeps its own kernel cache: a binary cache (CLCONE_CACHE_DIR)
    # would have it build every kernel for any work-group size first, 8
    # minutes for the newton program where a build for the launch's takes 25 s
    env -u CLCONE_CACHE_DIR XDG_CACHE_HOME="$OUT/xdg" "$CLI" "${rargs[@]}" --device cpu >"$ref/stdout" 2>"$ref/stderr"
    echo $? >"$ref/status"
    # keep_buffers.so after Oclgrind's runtime in LD_PRELOAD comes before it
    oclgrind --data-races --uninitialized --check-api --log "$dir/oclgrind.log" "${flags[@]}" \
        sh -c 'LD_PRELOAD="$KEEP:$LD_PRELOAD" exec "$@"' sh \
        "$CLI" "${args[@]}" --device 0 >"$dir/stdout" 2>"$dir/stderr"
    echo $? >"$dir/status"
    local why="" f
    [ -s "$dir/oclgrind.log" ] && why="Oclgrind reports in $dir/oclgrind.log: $(grep -m1 -E '[A-Za-z]' "$dir/oclgrind.log")"
    [ -n "$why" ] || grep -q 'Oclgrind' "$dir/stdout" || why="did not run on Oclgrind ($(head -c 300 "$dir/stderr"))"
    [ -n "$why" ] || cmp -s "$ref/status" "$dir/status" || why="exit $(cat "$dir/status"), POCL $(cat "$ref/status"): $(tail -n 2 "$dir/stderr")"
    [ -n "$why" ] || [ "$(verdict "$dir/stdout" "$expect")" = "$(verdict "$ref/stdout" "$expect")" ] ||
        why="last line '$(verdict "$dir/stdout" "$expect" | tr '\n' ' ')', POCL '$(verdict "$ref/stdout" "$expect" | tr '\n' ' ')'"
    # every output but pictures (their titles name the device)
    for f in "$ref"/*; do
        [ -n "$why" ] && break
        case ${f##*/} in stdout | stderr | status | *.png) continue ;; esac
        if [ "$expect" = "=" ]; then
            cmp -s "$f" "$dir/${f##*/}" || why="${f##*/} differs from POCL's"
        else
            close "$dir/${f##*/}" "$f" "$eps" || why="${f##*/} differs from POCL's by more than 64 units of rounding"
        fi
    done
    if [ -n "$why" ]; then echo "FAIL $name [$config]: $why"; return 1; fi
    echo "ok   $name [$config] $(grep -o 'status=[a-z]* error=[^ ]* iters=[0-9]*' "$dir/stdout" | tail -n 1)"
}
export -f one

# jobs: CONFIG NAME EXPECT ARGS...
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/cases" >"$out/cases"
configs=(default wg32 wg256 lmem16k)
{
    while read -r name args; do echo "default $name $args"; done <"$out/cases"
    # the limits bite on the whole-problem kernels: their rows again
    grep -E '^group-' "$out/cases" | while read -r name args; do
        for c in "${configs[@]:1}"; do echo "$c $name $args"; done
    done
} | awk -v re="$pattern" '$2 ~ re' | sed -e "s|@P@|$P|g" -e "s|@S@|$S|g" -e "s|@M@|$models|g" >"$out/jobs"
start=$(date +%s)
xargs -r -P "$jobs" -L 1 bash -c 'one "$0" "$@"' <"$out/jobs" >"$out/results"
# Oclgrind against itself: 32, 64 and 64 lanes of 256 allowed, any local
# memory size, the same bits
for d in "$out"/wg32 "$out"/wg256 "$out"/lmem16k; do
    [ -d "$d" ] || continue
    for c in "$d"/*; do
        for f in "$c"/*; do
            case ${f##*/} in stdout | stderr | status | oclgrind.log | *.png) continue ;; esac
            cmp -s "$f" "$out/default/${c##*/}/${f##*/}" ||
                echo "FAIL ${c##*/} [${d##*/}]: ${f##*/} differs from Oclgrind's default run" >>"$out/results"
        done
    done
done
# Devices too small, and a compiler that rejects the source: a clear
# error naming the size or the program, exit 2, never a crash.
refused() {
    local name=$1 expect=$2; shift 2
    mkdir -p "$out/refused/$name"
    CLCONE_CACHE_DIR=off oclgrind "$@" --device 0 >"$out/refused/$name/stdout" 2>"$out/refused/$name/stderr"
    local rc=$?
    if [ $rc -eq 2 ] && grep -q -- "$expect" "$out/refused/$name/stderr"; then
        echo "ok   $name [refused] $(grep -o -- "$expect" "$out/refused/$name/stderr" | head -n 1)"
    else
        echo "FAIL $name [refused]: exit $rc, expected 2 and '$expect' on stderr: $(tail -n 1 "$out/refused/$name/stderr")"
    fi
}
if echo refused | grep -qE -- "$pattern"; then
    refused small-global-mem "does not fit in the 65536 bytes of global memory" --global-mem-size 65536 \
        "$cli" solve "$problems/Capsules-i100-1090.dat"
    refused small-local-mem "kernel newton_local needs 1036 bytes of local memory" --local-mem-size 1024 \
        "$cli" solve "$problems/Rover1040.dat"
    refused build-failure "building program 'iterate'.*build log" --build-options "-Dreal_t=int*" \
        "$cli" solve "$problems/Rover1040.dat"
fi >>"$out/results"
sort -k2 "$out/results"
fails=$(grep -c '^FAIL' "$out/results")
total=$(wc -l <"$out/results")
echo "oclgrind: $((total - fails)) passed, $fails failed ($(( $(date +%s) - start )) s)"
[ "$fails" -eq 0 ]
