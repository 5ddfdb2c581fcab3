#!/bin/sh
# tools/check-filemap.sh [ROOT]: `make check-filemap`, run by CI. The one
# file map is the "File map" section of docs/architecture.md: an entry per
# folder (a line "    FOLDER/ text", continued by lines indented deeper).
# Fails, naming each, on
#   - a source file (.c .h .cl .py .sh) under host/, kernels/, include/,
#     python/clcone/, tests/ or tools/ that its folder's entry does not
#     name, or such a folder without an entry;
#   - a name in an entry that is not a file or folder of that folder;
#   - a path elsewhere in docs/architecture.md that does not exist
#     (host-relative `core/iterate.c` and `<clcone/x.h>` are looked up
#     under host/, kernels/ and include/ too);
#   - a C identifier in backquotes there (one with an underscore, or one
#     written as a call, `name()`) that no source file has;
#   - a relative link in README.md or docs/*.md that leads nowhere.
set -eu
cd "${1:-.}"
doc=docs/architecture.md
fail=0
bad() { echo "check-filemap: $*" >&2; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The map's entries, one a line: FOLDER<TAB>its text.
awk '/^## File map/ { on = 1; next }
     on && /^## / { on = 0 }
     !on { next }
     /^    [^ ]/ { if (dir != "") print dir "\t" text; dir = $1; $1 = ""; text = $0; next }
     /^     +[^ ]/ && dir != "" { text = text " " $0; next }
     { if (dir != "") print dir "\t" text; dir = ""; text = "" }
     END { if (dir != "") print dir "\t" text }' "$doc" > "$tmp/entries"
[ -s "$tmp/entries" ] || bad "$doc has no \"## File map\" section with entries"

# The words of a text that can name a file: letters, digits, _ . - /.
words() { tr -c 'A-Za-z0-9_./*-' '\n' | sed -n 's|^\./||; /[A-Za-z]/p'; }

# Tracked files and new ones not ignored, so that a file not yet
# committed is checked too.
git ls-files -co --exclude-standard > "$tmp/files" 2>/dev/null || find . -type f | sed 's|^\./||' > "$tmp/files"

# 1. Every source file is named in its folder's entry.
grep -E '^(host|kernels|include|python/clcone|tests|tools)/' "$tmp/files" | grep -E '\.(c|h|cl|py|sh)$' |
  while IFS= read -r f; do
    d=${f%/*}/
    b=${f##*/}
    text=$(awk -F '\t' -v d="$d" '$1 == d { print $2 }' "$tmp/entries")
    if [ -z "$text" ]; then
      echo "$d has no entry in $doc's file map (it holds $f)"
    elif ! printf '%s\n' "$text" | words | grep -qxF "$b"; then
      echo "$f is not named in $doc's entry for $d"
    fi
  done > "$tmp/unnamed"
[ -s "$tmp/unnamed" ] && { sed 's/^/check-filemap: /' "$tmp/unnamed" >&2; fail=1; }

# 2. Every name in an entry that looks like a file (an extension) or a
# folder (a trailing /) is one, in the entry's folder.
while IFS="$(printf '\t')" read -r d text; do
  [ -e "$d" ] || bad "$doc's file map has an entry for $d, which does not exist"
  printf '%s\n' "$text" | words | grep -E '(\.[a-z]+|/)$' | grep -vE 'NAME|[*]|^\.' | while IFS= read -r w; do
    case $w in
      */*) found=; for c in "$d$w" "$w" "host/$w" "kernels/$w" "include/$w"; do [ -e "$c" ] && found=1; done ;;
      *) found=; [ -e "$d$w" ] && found=1 ;;
    esac
    [ -n "$found" ] || echo "check-filemap: $doc's entry for $d names $w: no $d$w"
  done
done < "$tmp/entries" > "$tmp/stale"
[ -s "$tmp/stale" ] && { cat "$tmp/stale" >&2; fail=1; }

# 3. Every path named elsewhere in the document exists (placeholders
# such as NAME, globs, variables and build outputs aside).
awk '/^## File map/ { on = 1; next } on && /^## / { on = 0 } !on' "$doc" | words |
  grep -E '/|\.(c|h|cl|py|sh|md|in)$' | grep -vE 'NAME|[*$]|^\.|^(build|\.\.)/|^https?:|^/|//' |
  sed 's|[.]$||' | sort -u | while IFS= read -r p; do
    case $p in */*) ;; *)
      # a bare file name: somewhere in the tree
      grep -q "/$p\$\|^$p\$" "$tmp/files" || echo "check-filemap: $doc names $p: no such file"; continue ;;
    esac
    for c in "$p" "host/$p" "kernels/$p" "include/$p"; do [ -e "$c" ] && continue 2; done
    echo "check-filemap: $doc names $p: no such path"
  done > "$tmp/paths"
[ -s "$tmp/paths" ] && { cat "$tmp/paths" >&2; fail=1; }

# 4. Every identifier in backquotes that has an underscore or is written
# as a call is in the sources.
# (File names and prefixes such as `clcone_buf_*` are not identifiers.)
grep -o '`[^`]*`' "$doc" | sed -E 's#[A-Za-z0-9_./-]*\.(c|h|cl|py|sh|md)\b##g' |
  grep -oE '[A-Za-z_][A-Za-z0-9_]*(\(|_[A-Za-z0-9_]*)' | tr -d '(' | grep -vE '_$|NAME' | sort -u |
  while IFS= read -r id; do
    grep -rqw --include='*.[ch]' --include='*.cl' --include='*.py' --include='*.sh' --include=Makefile -e "$id" \
      host kernels include tests python bench tools examples Makefile 2>/dev/null ||
      echo "check-filemap: $doc names \`$id\`, which no source file has"
  done > "$tmp/ids"
[ -s "$tmp/ids" ] && { cat "$tmp/ids" >&2; fail=1; }

# 5. Relative links in the README and docs/ lead to files.
for md in README.md docs/*.md; do
  grep -oE '\]\([^)#]+(#[^)]*)?\)' "$md" | sed 's/^](//; s/)$//; s/#.*//' | grep -vE '^(https?|mailto):|^$' |
    while IFS= read -r target; do
      [ -e "$(dirname "$md")/$target" ] || echo "check-filemap: $md links to $target, which does not exist"
    done
done > "$tmp/links"
[ -s "$tmp/links" ] && { cat "$tmp/links" >&2; fail=1; }

[ $fail = 0 ] && echo "check-filemap: the file map and the links in README.md and docs/ are up to date"
exit $fail
