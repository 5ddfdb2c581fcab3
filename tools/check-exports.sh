#!/bin/sh
# Fails when a shared library exports a symbol that no installed header
# (include/clcone/, include/clcone/mpi/) declares, when its library has a
# global symbol named clcone_ that it does not export, and when the MPI part
# (host/mpi/, libclcone_mpi) includes a header of the library's own
# sources: the libraries meet through the documented API only, never
# through a private one (docs/library.md).
# Usage: tools/check-exports.sh LIB.so...
set -eu
[ $# -gt 0 ] || { echo 'usage: check-exports.sh LIB.so...' >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The headers' declarations without their comments: a name in a comment
# declares nothing.
perl -0777 -pe 's{/\*.*?\*/}{}gs' include/clcone/*.h include/clcone/mpi/*.h > "$tmp/decls"
fail=0
for lib in "$@"; do
    nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/syms"
    n=0
    while read -r sym; do
        n=$((n + 1))
        grep -Eq "(^|[^A-Za-z0-9_])$sym[[:space:]]*\(" "$tmp/decls" && continue
        echo "check-exports: $lib exports $sym, declared in no installed header (include/clcone/)" >&2
        fail=1
    done < "$tmp/syms"
    echo "check-exports: $lib: $n symbols, each declared in an installed header"
    # the public prefix means exported: an internal name is clc_
    if [ -f "${lib%.so}.a" ]; then
        nm --defined-only "${lib%.so}.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBRC]$/ && $3 ~ /^clcone_/ { print $3 }' \
            | sort -u | comm -23 - "$tmp/syms" > "$tmp/hidden"
        if [ -s "$tmp/hidden" ]; then
            echo "check-exports: $lib: internal symbols named with the public prefix clcone_ (name them clc_):" >&2
            cat "$tmp/hidden" >&2
            fail=1
        fi
    fi
done
private=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' host/mpi/*.[ch] | grep -v '"mpi/' || true)
if [ -n "$private" ]; then
    echo "check-exports: host/mpi/ includes a private header (use <clcone/...>, include/clcone/ext.h):" >&2
    echo "$private" >&2; fail=1
fi
exit $fail
