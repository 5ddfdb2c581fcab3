#!/bin/sh
# Fails when a file includes or calls into a higher layer, or when files
# include or call each other in a cycle, inside a folder as across folders.
# Layers, lowest first (docs/architecture.md): kernels/ and include/clcone/
# below everything, then the host/ folders in the order LAYERS names them
# (the Makefile's LAYERS, the one list); a host/ folder not in it fails.
# Usage: tools/check-layers.sh OBJDIR "LAYERS"   (OBJDIR/<layer>/<file>.o, built)
set -eu
usage='usage: check-layers.sh OBJDIR "core io ..."'
objdir=${1:?$usage}
layers=${2:?$usage}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rank() {
    case $1 in kernels|include) echo 0; return;; esac
    i=1
    for l in $layers; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done
    echo "check-layers: $1 is not a layer" >&2; exit 2
}
# file -> its layer name (host/core/x.c -> core, include/clcone/x.h -> include)
layer_of() {
    case $1 in
        host/*) echo "$1" | cut -d/ -f2;;
        include/*) echo include;;
        kernels/*) echo kernels;;
    esac
}
# Every host/ folder is a layer of the list.
for d in host/*/; do d=${d%/}; rank "${d#host/}" > /dev/null; done
# A name may repeat across layers (ref/apgd.c and opencl/apgd.c: one
# solver's two backends): the static libraries are made with `ar q`,
# which keeps both members, and their rules count the members.
# The public headers are included as <clcone/x.h> (or "x.h" between
# themselves): by a bare name, a user's own solve.h would take their place.
bare=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]('"$(ls include/clcone | sed 's/\./\\./' | paste -sd'|')"')[>"]' \
    host/*/*.[ch] tests/*.[ch] tests/fuzz/*.[ch] bench/*.[ch] examples/*.c python/bench/*.c 2>/dev/null || true)
if [ -n "$bare" ]; then
    echo "check-layers: a public header included by its bare name (write <clcone/x.h>):" >&2
    echo "$bare" >&2; echo x >> "$tmp/fail"
fi
# Includes: "dir/file.h" is host/dir/file.h; a bare name is a sibling in
# kernels/ or include/clcone/, or a kernel header.
for f in $(ls host/*/*.[ch] include/clcone/*.h kernels/*.h kernels/*.cl); do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        case $inc in
            */*) target=host/$inc;;
            *) if [ -f "$(dirname "$f")/$inc" ]; then target=$(dirname "$f")/$inc
               elif [ -f "kernels/$inc" ]; then target=kernels/$inc
               elif [ -f "include/clcone/$inc" ]; then target=include/clcone/$inc
               else target=generated/$inc; fi;;
        esac
        [ "${target#generated/}" != "$target" ] && continue
        [ -f "$target" ] || { echo "check-layers: $f includes missing $inc" >&2; echo x >> "$tmp/fail"; continue; }
        echo "$f $target" >> "$tmp/includes"
    done
done
touch "$tmp/includes"
while read -r a b; do
    ra=$(rank "$(layer_of "$a")"); rb=$(rank "$(layer_of "$b")")
    if [ "$rb" -gt "$ra" ]; then
        echo "check-layers: $a (layer $(layer_of "$a")) includes $b from the higher layer $(layer_of "$b")" >&2
        echo x >> "$tmp/fail"
    fi
done < "$tmp/includes"
if ! tsort "$tmp/includes" > /dev/null 2> "$tmp/tsort"; then
    echo "check-layers: include cycle:" >&2; cat "$tmp/tsort" >&2; echo x >> "$tmp/fail"
fi
# Calls: a symbol one object leaves undefined and another defines.
for o in "$objdir"/*/*.o; do
    src=host/$(echo "$o" | sed "s|^$objdir/||; s|\.o\$|.c|")
    [ -f "$src" ] || continue
    nm "$o" | awk -v f="$src" '$1 == "U" { print "U", f, $2 } NF == 3 && $2 ~ /^[TDBRC]$/ { print "D", f, $3 }'
done > "$tmp/syms"
awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[NR] = $2 " " $3 }
     END { for (k in use) { split(use[k], u, " "); if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]], u[2] } }' \
    "$tmp/syms" | sort -u > "$tmp/calls"
while read -r a b sym; do
    ra=$(rank "$(layer_of "$a")"); rb=$(rank "$(layer_of "$b")")
    if [ "$rb" -gt "$ra" ]; then
        echo "check-layers: $a (layer $(layer_of "$a")) calls $sym of $b in the higher layer $(layer_of "$b")" >&2
        echo x >> "$tmp/fail"
    fi
done < "$tmp/calls"
cut -d' ' -f1,2 "$tmp/calls" | sort -u > "$tmp/callpairs"
if ! tsort "$tmp/callpairs" > /dev/null 2> "$tmp/tsort"; then
    echo "check-layers: call cycle between files:" >&2; cat "$tmp/tsort" >&2; echo x >> "$tmp/fail"
fi
if [ -s "$tmp/fail" 2>/dev/null ]; then exit 1; fi
echo "check-layers: $(wc -l < "$tmp/includes") includes and $(wc -l < "$tmp/callpairs") file-to-file calls, no cycle, none upwards"
