/* Compiles kernels/newton.cl's GMRES path (newton_krylov.cl), without
 * its dense factor: each kernel's barriers are its own. */
#define NEWTON_KRYLOV 1
