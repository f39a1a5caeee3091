/* Thread control: how many cores this process may really use, and pinning
 * of the one OpenMP runtime that both BLAS and our kernels run on. */
#ifndef CAL_THREADS_H
#define CAL_THREADS_H

#include <hwloc.h>
#include <sched.h>
#include <stddef.h>

/* CPU quota of a cgroup v2 `cpu.max` text ("max 100000" or "200000 100000"):
 * *cpus = quota/period, or 0 for no limit.  CAL_EPARSE on bad text. */
int cal_cgroup_v2_quota(const char *cpu_max, double *cpus);
/* cgroup v1: quota_us (-1 = none) and period_us as read from the files. */
int cal_cgroup_v1_quota(const char *quota_us, const char *period_us,
                        double *cpus);
/* Usable cores: the physical cores in the affinity mask, further capped by
 * a CPU quota (rounded up: 1.5 CPUs lets two threads make progress).  A
 * quota of 0 means none.  Always >= 1 when allowed_cores >= 1. */
int cal_usable_cores(int allowed_cores, double quota_cpus);
/* The quota of the cgroup this process is in (v2, else v1), 0 when none or
 * unreadable.  `root` is "/" normally; tests pass a synthetic tree. */
double cal_cgroup_quota_cpus(const char *root);


/* Load the hwloc topology once for a whole run: the whole machine
 * (disallowed PUs included, every cache kept), so it serves both
 * cal_threads_init_topology() and cal_hwinfo_read_topology().  0 or
 * CAL_ESYS; the caller frees it with hwloc_topology_destroy(). */
int cal_topology_load(hwloc_topology_t *topo);

typedef struct cal_threads cal_threads_t;

/* The CPUs this process may use: its affinity mask and the OpenMP
 * runtime's places.  With OMP_PROC_BIND or OMP_PLACES in the environment
 * the runtime binds the initial thread to its first place before main()
 * runs, and the mask alone would then say one core; the places are made
 * from the mask the process started with (so taskset and an explicit
 * OMP_PLACES still narrow it).  0, or -1 with *set empty. */
int cal_usable_cpu_set(cpu_set_t *set);
/* The same as an hwloc cpuset of topo.  0 or -1. */
int cal_usable_cpuset(hwloc_topology_t topo, hwloc_bitmap_t set);
/* The cores of this process's affinity mask, on a topology the caller
 * loaded (cal_topology_load) and keeps until cal_threads_free(t); t does
 * not destroy it.  Free t with cal_threads_free(). */
int cal_threads_init_topology(cal_threads_t **t, hwloc_topology_t topo);
/* The same on a topology of its own, loaded here and destroyed by
 * cal_threads_free(). */
int cal_threads_init(cal_threads_t **t);
/* Accepts NULL. */
void cal_threads_free(cal_threads_t *t);
/* Physical cores in the affinity mask. */
int cal_threads_allowed_cores(const cal_threads_t *t);
/* Hardware threads (PUs) in the affinity mask. */
int cal_threads_allowed_pus(const cal_threads_t *t);
/* Usable cores (affinity and cgroup quota). */
int cal_threads_usable(const cal_threads_t *t);
/* The CPU quota found (0 for none). */
double cal_threads_quota(const cal_threads_t *t);
/* Use n threads from now on (1 <= n <= usable): sets the OpenMP and BLAS
 * thread counts and binds thread i of the team to the i-th usable core.
 * CAL_EINVAL when n is out of range; a failed bind is reported through
 * cal_threads_pinned() and not an error (some containers forbid it). */
int cal_threads_use(cal_threads_t *t, int n);
/* The CPU each of the first n threads of the team is on now
 * (sched_getcpu inside a team of n, the pool BLAS and our kernels run on):
 * cpus[i] for thread i, -1 where unknown.  Returns n, or 0 when n < 1. */
int cal_threads_cpus(int n, int *cpus);
/* Whether the last cal_threads_use() pinned every thread. */
int cal_threads_pinned(const cal_threads_t *t);

#endif
