# What tests/mpi/run.sh and bench/mpi/run.sh share, sourced after they set
# build (the build folder) and mpi_limit (seconds a run of mpirun may take).
cli=$build/clcone
mpicli=$build/clcone-mpi
problems=${CLCONE_PROBLEMS:-$(dirname "${BASH_SOURCE[0]}")/../data/problems}
# Shared memory and loopback only: no network, as in CI. Ranks oversubscribe
# the cores (4 ranks on 2 here), unbound; root in containers.
export OMPI_MCA_btl=self,vader OMPI_MCA_plm=isolated OMPI_MCA_btl_vader_single_copy_mechanism=none
mpirun=(timeout "$mpi_limit" mpirun --allow-run-as-root --oversubscribe --bind-to none)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A batch of shared problems from 3 to 1213 contacts, .dat and .hdf5
shared_names=(Capsules-i101-404.dat BoxesStack1-i100000-32.hdf5.dat Confeti-ex03-Fc3D-SBM.dat Rover1040.dat
              FC3D_Example1.dat Confeti-ex13-4contact-Fc3D-SBM.dat Rover4609.dat Capsules-i125-1213.hdf5)
