/* The reference for harness fidelity: a plain C loop of getppid(), timed
 * with CLOCK_MONOTONIC around the whole loop, pinned to one CPU.
 * Usage: getppid_loop [iterations] [cpu]   Prints ns per call. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 10000000;
	int cpu = argc > 2 ? atoi(argv[2]) : 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	for (long i = 0; i < iterations / 10; i++) /* warm up */
		if (getppid() < 0)
			return 1;
	double t0 = now_ns();
	for (long i = 0; i < iterations; i++)
		if (getppid() < 0)
			return 1;
	double t1 = now_ns();
	printf("%.2f\n", (t1 - t0) / iterations);
	return 0;
}
