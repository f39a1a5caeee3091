/* A bare MPI ping-pong between ranks 0 and 1: the loop calibrate fleet's
 * point-to-point figure is compared with by the tests (not part of
 * calibrate).  Rank 0 sends BYTES and waits for them back, SAMPLES times
 * ITERS round trips after one warm-up round trip; it prints the median
 * one-way bandwidth (bytes / (round trip / 2), GB/s = 1e9 bytes/s).
 * usage: mpi_pingpong BYTES SAMPLES [ITERS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* iters round trips of bytes between ranks 0 and 1; seconds on rank 0 */
static double round_trips(char *buf, int bytes, int iters, int me) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (me == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == 1) {
      MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  long bytes = argc > 2 ? atol(argv[1]) : 0;
  int samples = argc > 2 ? atoi(argv[2]) : 0;
  int iters = argc > 3 ? atoi(argv[3]) : 1;
  if (n < 2 || bytes < 1 || bytes > (1L << 30) || samples < 1 ||
      samples > 1000 || iters < 1) {
    if (me == 0)
      fprintf(stderr, "usage: mpirun -np 2 mpi_pingpong BYTES SAMPLES "
                      "[ITERS]\n");
    MPI_Finalize();
    return 2;
  }
  char *buf = malloc((size_t)bytes);
  double *t = malloc((size_t)samples * sizeof *t);
  if (!buf || !t)
    MPI_Abort(MPI_COMM_WORLD, 4);
  memset(buf, 1, (size_t)bytes);
  round_trips(buf, (int)bytes, 1, me); /* warm-up */
  for (int s = 0; s < samples; s++)
    t[s] = round_trips(buf, (int)bytes, iters, me) / (2.0 * iters);
  if (me == 0) {
    qsort(t, (size_t)samples, sizeof *t, cmp);
    double med = samples % 2 ? t[samples / 2]
                             : (t[samples / 2 - 1] + t[samples / 2]) / 2;
    printf("bytes %ld samples %d iters %d one_way_us %.3f gbps %.6f\n", bytes,
           samples, iters, med * 1e6, (double)bytes / med / 1e9);
  }
  free(buf);
  free(t);
  MPI_Finalize();
  return 0;
}
