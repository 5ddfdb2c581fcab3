#!/bin/sh
# Fails when a source file is over MAX_LINES lines or a function over
# MAX_FUNC lines (its signature to its closing brace): a room a newcomer
# can read whole. The sources keep one style: a function's signature starts
# at column 0 and its body opens with a `{` line and closes with a `}` line
# at column 0, which is what the scan below relies on.
# Usage: tools/check-size.sh [FILE...]   (default: host/, bench/, kernels/)
set -eu
MAX_LINES=${MAX_LINES:-800}
MAX_FUNC=${MAX_FUNC:-120}
# Every C and OpenCL source below host/, bench/ (bench/mpi/ too; not the
# results) and kernels/.
[ $# -gt 0 ] || set -- $(find host bench kernels -path bench/results -prune -o -type f \( -name '*.[ch]' -o -name '*.cl' \) -print | sort)
awk -v max_lines="$MAX_LINES" -v max_func="$MAX_FUNC" '
FNR == 1 { if (prev != "" && prev_n > max_lines) big(prev, prev_n); sig = 0; body = 0 }
{ prev = FILENAME; prev_n = FNR }
function big(f, n) { printf "check-size: %s has %d lines (at most %d)\n", f, n, max_lines; bad++ }
# A line at column 0 that can begin a signature (not a directive, comment,
# brace or blank) is where the next body, if one opens, starts.
!body && /^[A-Za-z_]/ && !/^(typedef|struct|enum|union)[ \t]/ { sig = FNR; sigline = $0 }
!body && /^\{[ \t]*$/ && sig { body = 1; start = sig; name = sigline; next }
body && /^\}/ {
    body = 0
    if (FNR - start + 1 > max_func) {
        sub(/\(.*/, "", name); n = split(name, w, /[ \t*]+/)
        printf "check-size: %s:%d: %s has %d lines (at most %d)\n", FILENAME, start, w[n], FNR - start + 1, max_func
        bad++
    }
    sig = 0
}
END {
    if (prev != "" && prev_n > max_lines) big(prev, prev_n)
    if (bad) exit 1
}' "$@" >&2 || exit 1
echo "check-size: $# files, none over $MAX_LINES lines, no function over $MAX_FUNC lines"
