/* Whether the threads of a team have a core's arithmetic pipes each, at
 * this moment.  CPU time cannot tell: two vCPUs the hypervisor runs on the
 * two hardware threads of one core (or on one core in turn, fast enough)
 * each get a full CPU-second per second, and a 2-thread GEMM runs at
 * 1-thread speed.  A register-resident multiply loop can: timed on one
 * thread, then on n threads at once, its n-thread time equals the
 * one-thread time when every thread has pipes of its own, and is about n
 * times longer when they share one core's. */
#ifndef CAL_PIPES_H
#define CAL_PIPES_H

/* The ratio of the one-thread time to the n-thread time of the same loop
 * per thread, best of `tries` (>= 1) each, on the first n threads of the
 * OpenMP team (the caller has set the team up, cal_threads_use): about 1
 * when the n threads computed side by side, about 1/n when they shared one
 * core's pipes.  Each timing takes about `seconds`.  -1 when n < 2. */
double cal_pipes_probe(int n, double seconds, int tries);

/* How long each timing of a point's probe takes (two of each). */
#define CAL_PIPES_PROBE_S 0.003

/* The share of a team's rate below which its threads shared pipes. */
#define CAL_PIPES_MIN 0.8

/* How far apart a team's threads are: the round trip of a cache line
 * handed from thread 0 to each other thread and back, `rounds` times,
 * best of `tries` per pair, the slowest pair, in ns (-1 when n < 2).
 * Two vCPUs on the cores of one L3 hand a line back and forth in tens of
 * ns; on two dies or sockets, several times that, and a product whose
 * threads share packed blocks (OpenBLAS's) runs slower for it, which
 * the pipes probe does not see. */
double cal_team_rtt_probe(int n, long rounds, int tries);

/* Round trips of a point's probe (a few ms at the slowest seen). */
#define CAL_TEAM_RTT_ROUNDS 4000

/* A team whose round trip is this many times the least a run has seen
 * was placed apart (another die or socket) when it was probed. */
#define CAL_TEAM_RTT_APART 2.5

/* The least round trip (cal_team_rtt_probe) of `probes` probes of a team
 * of n, each after a pause of gap_s: the hypervisor moves a vCPU while it
 * is halted, and a team that keeps computing keeps its placement (on a
 * 2-vCPU Zen 4 guest the threads stayed on two dies through 40 s of
 * probes back to back, and came together within 3 s of probes 0.1 s
 * apart).  -1 when n < 2. */
double cal_team_rtt_least(int n, int probes, double gap_s);

/* Probes of a team of n, each after a pause of gap_s, until its round
 * trip is at most limit_ns or wait_s has passed; the last probe's round
 * trip (-1 when n < 2). */
double cal_team_rtt_wait(int n, double limit_ns, double wait_s, double gap_s);

/* The pause between those probes, and the longest a point placed apart
 * waits for its threads to come close before it is measured again. */
#define CAL_TEAM_RTT_GAP_S 0.05
#define CAL_TEAM_RTT_WAIT_S 3.0

#endif
