#!/usr/bin/env bash
# An install as a user keeps it after `make clean`: the installed files
# refer to nothing of the build tree or the clone (an RPATH/RUNPATH only
# relative to the file, $ORIGIN; no string, no pkg-config path into
# them), and with BUILD moved aside the
# installed clcone (--version, solve, mujoco), clcone-mpi where installed,
# and README.md's C example built with README.md's own pkg-config line
# against PREFIX all run. BUILD is moved back on every exit (a trap; the
# install suite also runs this script in a session of its own, so that a
# timeout of the suite cannot kill it halfway).
#
# README.md's convention, read here: its first ```c block is a complete
# program, and the first ```sh block with `pkg-config --cflags --libs
# clcone` builds it from example.c (that line alone is run, as written;
# CLCONE_EXAMPLE_FLAGS, the sanitizers of `make sanitize`, go after `cc`).
#
#   usage: tests/install-check.sh PREFIX BUILD   (run from the repository
#   root; PREFIX outside the clone)
# Exit 0 when every check passed; each failure prints a line FAIL: ...
set -uo pipefail
prefix=$(cd "$1" && pwd -P) || exit 2
build=$(cd "$2" && pwd -P) || exit 2
root=$(pwd -P)
[ -f "$root/README.md" ] || { echo "FAIL: run from the repository root"; exit 2; }
case $prefix/ in "$root"/*) echo "FAIL: the prefix $prefix is inside the clone"; exit 2 ;; esac
status=0
fail() { echo "FAIL: $*"; status=1; }
work=$(mktemp -d)
away=$build.away-$$
restore() {
    local rc=$?
    if [ -d "$away" ] && [ ! -e "$build" ]; then
        mv "$away" "$build" || { echo "FAIL: could not move $away back to $build"; rc=1; }
    elif [ -d "$away" ]; then
        echo "FAIL: $build was made again while moved aside; the original is $away"
        rc=1
    fi
    rm -rf "$work"
    exit $rc
}
trap restore EXIT
trap 'exit 3' INT TERM HUP

# ---- nothing installed refers to the build tree or the clone
while IFS= read -r f; do
    if readelf -h "$f" >/dev/null 2>&1; then
        rp=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(R[A-Z]*PATH).*\[\(.*\)\]/\1/p')
        for p in ${rp//:/ }; do
            case $p in '$ORIGIN'*) ;; *) fail "$f: rpath $p is not relative to the file (\$ORIGIN)" ;; esac
        done
        # what the program and the loader see: the file without its debug info
        strip -o "$work/stripped" "$f" 2>/dev/null || cp "$f" "$work/stripped"
        strings -a "$work/stripped" | grep -F -e "$build" -e "$root" >"$work/hits" && fail "$f names $(head -1 "$work/hits")"
    elif grep -I -q -F -e "$build" -e "$root" "$f"; then
        fail "$f names the build tree or the clone: $(grep -F -e "$build" -e "$root" "$f" | head -1)"
    fi
done < <(find "$prefix" -type f)

# ---- README.md's C example and its build line, extracted before the move
awk '/^```c$/ {on = 1; next} on && /^```/ {exit} on' "$root/README.md" >"$work/example.c"
line=$(awk '/^```sh$/ {on = 1; next} on && /^```/ {on = 0} on && /pkg-config --cflags --libs clcone/ {print; exit}' \
    "$root/README.md")
[ -s "$work/example.c" ] || fail "README.md has no \`\`\`c block"
[ -n "$line" ] || fail "README.md has no \`\`\`sh block with 'pkg-config --cflags --libs clcone'"
if [ -n "${CLCONE_EXAMPLE_FLAGS:-}" ]; then line=$(printf '%s\n' "$line" | sed "s|^cc |cc $CLCONE_EXAMPLE_FLAGS |"); fi

# ---- the build tree moved aside: what is installed alone
[ -e "$away" ] && { echo "FAIL: $away is in the way"; exit 2; }
mv "$build" "$away" || { echo "FAIL: cannot move $build aside"; exit 2; }
echo "moved $build aside"
bin=$prefix/bin
t() { timeout 120 "$@"; } # no check may hang with the build tree away
out=$(t "$bin/clcone" --version 2>&1) && [ "$out" = "clcone $(sed -n 's/^.define CLCONE_VERSION "\(.*\)"/\1/p' \
    include/clcone/base.h)" ] && echo "installed clcone --version: $out" || fail "clcone --version: $out"
out=$(t "$bin/clcone" solve tests/data/problems/Rover4396.dat 2>&1) && case $out in *status=converged*) true ;; *) false ;; esac &&
    echo "installed clcone solve: $(printf '%s\n' "$out" | tail -1)" || fail "clcone solve: $out"
if readelf -d "$bin/clcone" | grep -q 'NEEDED.*libmujoco'; then
    out=$(t "$bin/clcone" mujoco tests/data/models/mujoco/humanoid/humanoid.xml --steps 2 --device ref 2>&1) &&
        echo "installed clcone mujoco (with MuJoCo): $(printf '%s\n' "$out" | tail -1)" || fail "clcone mujoco: $out"
    # <clcone/mujoco.h> and libclcone_mujoco beside the libmujoco it finds
    printf '%s\n' '#include <clcone/mujoco.h>' '#include <stdio.h>' \
        'int main(void) { return puts(clcone_mj_version()) < 0; }' >"$work/mj.c"
    out=$(cd "$work" && t cc ${CLCONE_EXAMPLE_FLAGS:-} mj.c -I"$prefix/include" -L"$prefix/lib/clcone" -lclcone_mujoco \
        -o mj 2>&1) && out=$(cd "$work" && LD_LIBRARY_PATH=$prefix/lib/clcone t ./mj 2>&1) &&
        echo "a program with <clcone/mujoco.h> and libclcone_mujoco ran: MuJoCo $out" ||
        fail "a program with <clcone/mujoco.h> and libclcone_mujoco: $out"
else
    out=$(t "$bin/clcone" mujoco m.xml --steps 1 2>&1)
    [ $? -eq 2 ] && case $out in *"make mujoco"*) true ;; *) false ;; esac &&
        echo "installed clcone mujoco (without MuJoCo) says how to get it" || fail "clcone mujoco without MuJoCo: $out"
fi
# the Makefile's test for Open MPI (HAVE_MPI): then the MPI part is installed
if pkg-config --exists ompi-c 2>/dev/null && [ ! -x "$bin/clcone-mpi" ]; then
    fail "Open MPI is installed, but make install left out clcone-mpi"
fi
if [ -x "$bin/clcone-mpi" ]; then
    # one rank, shared memory only, as tests/mpi/ runs it; in a sanitized
    # build no leak check (what Open MPI keeps at exit is its own: tests/mpi
    # is not run under the sanitizers either)
    export OMPI_MCA_btl=self,vader OMPI_MCA_plm=isolated ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    out=$(t "$bin/clcone-mpi" --version 2>&1) &&
        echo "installed clcone-mpi --version: $out" || fail "clcone-mpi --version: $out"
    [ -f "$prefix/include/clcone/mpi/ranks.h" ] && [ -f "$prefix/lib/pkgconfig/clcone-mpi.pc" ] ||
        fail "the MPI part's header or clcone-mpi.pc is not installed"
    printf '%s\n' '#include <clcone/mpi/ranks.h>' 'int main(int argc, char **argv)' \
        '{ clcone_error e; clcone_status s; MPI_Init(&argc, &argv);' \
        '  s = clcone_mpi_agree(MPI_COMM_WORLD, CLCONE_OK, &e); MPI_Finalize(); return s != CLCONE_OK; }' >"$work/mpi.c"
    out=$(cd "$work" && PKG_CONFIG_PATH=$prefix/lib/pkgconfig t sh -c \
        "cc ${CLCONE_EXAMPLE_FLAGS:-} mpi.c \$(pkg-config --cflags --libs clcone-mpi) -o mpi" 2>&1) &&
        out=$(cd "$work" && LD_LIBRARY_PATH=$prefix/lib t ./mpi 2>&1) &&
        echo "a program built with clcone-mpi.pc ran" || fail "a program with <clcone/mpi/ranks.h> and clcone-mpi.pc: $out"
fi
# libclcone links no picture or HDF5 library; libclcone_output, through
# clcone-output.pc, reads an FCLib HDF5 problem and draws a plot
hits=$(readelf -d "$prefix/lib/libclcone.so" | grep -E 'NEEDED.*(cairo|png|hdf5|X11|curl)')
[ -z "$hits" ] && echo "installed libclcone.so needs no cairo or HDF5" || fail "libclcone.so needs $hits"
printf '%s\n' '#include <clcone/output.h>' 'int main(int argc, char **argv)' \
    '{ clcone_problem p; clcone_error e; double x[2] = {1, 2}, y[2] = {1, 0.5};' \
    '  clcone_plot_series s = {"error", 2, x, y}; clcone_plot_panel pn = {0};' \
    '  pn.nseries = 1; pn.series = &s; (void)argc;' \
    '  if (clcone_read_problem_hdf5(argv[1], &p, &e)) return 1;' \
    '  clcone_problem_free(&p); return clcone_plot_png("plot.png", NULL, &pn, 1, 1, 320, 240, &e) != CLCONE_OK; }' \
    >"$work/out.c"
out=$(cd "$work" && PKG_CONFIG_PATH=$prefix/lib/pkgconfig t sh -c \
    "cc ${CLCONE_EXAMPLE_FLAGS:-} out.c \$(pkg-config --cflags --libs clcone-output) -o out" 2>&1) &&
    out=$(cd "$work" && LD_LIBRARY_PATH=$prefix/lib t ./out "$root/tests/data/problems/Capsules-i125-1213.hdf5" 2>&1) &&
    [ -s "$work/plot.png" ] && echo "a program built with clcone-output.pc read HDF5 and drew a plot" ||
    fail "a program with <clcone/output.h> and clcone-output.pc: $out"
if [ -s "$work/example.c" ] && [ -n "$line" ]; then
    echo "README.md's build line: $line"
    out=$(cd "$work" && PKG_CONFIG_PATH=$prefix/lib/pkgconfig t sh -c "$line" 2>&1) || fail "README.md's build line: $out"
    exe=$(printf '%s\n' "$line" | sed -n 's/.* -o  *\([^ ]*\).*/\1/p')
    exe=${exe:-a.out}
    if [ -x "$work/$exe" ]; then
        out=$(cd "$work" && LD_LIBRARY_PATH=$prefix/lib t "./$exe" 2>&1) && echo "README.md's example ran: $out" ||
            fail "README.md's example ./$exe exited $?: $out"
    else
        fail "README.md's build line made no program"
    fi
fi
exit $status
