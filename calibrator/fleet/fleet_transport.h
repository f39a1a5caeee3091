/* What carried a link (fleet_transport.c): the network interface whose
 * byte counters (/proc/net/dev, read on the sending rank around the
 * link's ping-pong) moved by the bytes it exchanged, and what the MPI
 * library says it was told to use.  What cannot be named from these is
 * "unknown", never a guess from host names.  No MPI types here. */
#ifndef CAL_FLEET_TRANSPORT_H
#define CAL_FLEET_TRANSPORT_H

#include "fleet_json.h"

#define CAL_NETDEV_MAX 64

/* One interface's byte counters. */
typedef struct cal_netdev {
  char name[32];
  unsigned long long rx, tx;
} cal_netdev_t;

/* The interfaces of a /proc/net/dev-format file (at most cap); the count,
 * or -1 when it cannot be read or is not in that format. */
int cal_netdev_read(const char *path, cal_netdev_t *dev, int cap);

/* Whether the MCA selection `list` (Open MPI's "tcp,self", "^openib" or
 * "" for every component) lets component `comp` be used. */
int cal_fleet_mca_allows(const char *list, const char *comp);

/* The kind of transport of one link from the counters before and after
 * its measurement (nb or na -1: unreadable), the bytes sent each way
 * (payload), whether MPI puts both ranks on one node, and the library's
 * selection; fills *t. */
void cal_fleet_transport_judge(const cal_fleet_mpi_t *mpi, int mpi_same_node,
                               const cal_netdev_t *before, int nb,
                               const cal_netdev_t *after, int na,
                               double payload, cal_fleet_transport_t *t);

/* The library's version line and its MCA selection (MPI_T control
 * variables pml, btl, mtl, btl_tcp_if_include); after MPI_Init. */
void cal_fleet_mpi_info(cal_fleet_mpi_t *m);

#endif
