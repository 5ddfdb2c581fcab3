#!/bin/sh
# bench/docs.sh REPORT OUT: docs/benchmarks.md from a bench run's
# report.md (`make bench` calls it), headed by what a reader needs to
# weigh the figures: the commit measured, the date, the machine. The
# report's plots stay in bench/results/ (not committed), so their image
# links become their paths there.
set -eu
report=$1
out=$2
[ -f "$report" ] || { echo "bench/docs.sh: no report at $report" >&2; exit 1; }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# A tree whose code differs from the commit is not the commit named: say
# so rather than name it alone (text, which no run reads, does not count).
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' ':(exclude)*.md' 2>/dev/null; then
  commit="$commit with uncommitted changes"
fi
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
cores=$(nproc 2>/dev/null || echo unknown)
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
{
  echo "# Benchmarks"
  echo
  echo "Written by \`make bench\` (\`bench/docs.sh\`) from \`$report\`; run it again"
  echo "rather than edit this file. What each section measures: [bench/README.md](../bench/README.md)."
  echo "Earlier runs, with their commits and dates: [measured.md](measured.md)."
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| commit | $commit |"
  echo "| date | $(date -u -r "$report" '+%Y-%m-%d %H:%M UTC') (the report's end) |"
  echo "| machine | ${model:-unknown CPU}, $cores cores online |"
  echo
  # The report's own title gives way to the one above, its sections stay
  # at their level; a plot is named by its file.
  sed -e '1{/^# /{N;d;};}' \
      -e 's|^!\[\([^]]*\)\](\([^)]*\))$|Plot: `bench/results/\2` (\1; in the run'"'"'s folder, not committed).|' "$report"
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "bench: wrote $out"
