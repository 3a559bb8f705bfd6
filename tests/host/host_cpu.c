/*
 * Host implementation of lib/this_cpu.h: the calling thread's "CPU
 * number" is a thread-local variable, set by each test or bench thread
 * that plays a CPU (this_cpu_num_set()); 0 for threads that never set it.
 */
#include "lib/this_cpu.h"

__thread unsigned this_cpu_num_tls;
