/* needs: cone.h local_solve.h schedule.h contact.h newton_math.h newton_krylov.h newton.cl */
/* newton past the dense limit (host/opencl/newton.c): every problem of
 * the batch takes its Newton systems by GMRES, matrix-free
 * (newton_gmres in newton.cl), one work-group per problem. */
__kernel void newton_krylov_local(NEWTON_PARAMS)
{
    __local real_t sums[4 * CONE_REDUCE_WG], scal;
    __local int verdict, flag;
    newton_group(NEWTON_ARGS, sums, &scal, &verdict, &flag);
}
