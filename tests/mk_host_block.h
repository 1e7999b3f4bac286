/* SPDX-License-Identifier: MIT */
/*
 * tests/mk_host_block.h - just enough of CUDA's block model to run device
 * code of the gpu/ .cuh files on host threads: threadIdx/blockDim, __syncthreads as a
 * pthread barrier, __syncthreads_or as a vote. Each test program includes it
 * inside its own anonymous namespace and initialises `barrier` for the
 * block's thread count before starting the threads.
 */
#ifndef VYRE_TESTS_MK_HOST_BLOCK_H
#define VYRE_TESTS_MK_HOST_BLOCK_H

struct thread_index {
	uint32_t x;
};
thread_local thread_index threadIdx;
thread_index blockDim;
pthread_barrier_t barrier;
std::atomic<int> vote[2];
thread_local int vote_phase;

void __syncthreads()
{
	pthread_barrier_wait(&barrier);
}

// Two vote words used in turn: one is reset while the other is in use.
int __syncthreads_or(int p)
{
	const int ph = vote_phase;

	vote_phase ^= 1;
	if (p)
		vote[ph] = 1;
	pthread_barrier_wait(&barrier);
	const int r = vote[ph];
	pthread_barrier_wait(&barrier);
	if (threadIdx.x == 0)
		vote[ph] = 0;
	return r;
}

#endif /* VYRE_TESTS_MK_HOST_BLOCK_H */
