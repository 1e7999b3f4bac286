/* SPDX-License-Identifier: MIT */
/*
 * tests/mk_host_block.h - just enough of CUDA's block model to run device
 * code of the gpu/ .cuh files on host threads: threadIdx/blockDim,
 * __syncthreads as a pthread barrier, __syncthreads_or as a vote, and warp
 * shuffles and votes. Each test program includes it inside its own
 * anonymous namespace (after <atomic>, <cstdio>, <cstdlib> and
 * <pthread.h>) and starts a block with host_block_run.
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

/*
 * And of a warp, for code run on warps of 32 threads (blockDim.x a multiple
 * of 32): each warp meets at a barrier of its own (`warps`, one a warp, set
 * up by the test); a shuffle or a vote is a store, a barrier, a load and a
 * barrier.
 */
struct host_warp {
	pthread_barrier_t bar;
	uint64_t v[32];
};
host_warp *warps;

inline host_warp &my_warp()
{
	return warps[threadIdx.x / 32];
}

inline void __syncwarp()
{
	pthread_barrier_wait(&my_warp().bar);
}

template <class T> T lane_exchange(T x, uint32_t src)
{
	host_warp &w = my_warp();

	w.v[threadIdx.x % 32] = (uint64_t)x;
	pthread_barrier_wait(&w.bar);
	const T r = (T)w.v[src % 32];
	pthread_barrier_wait(&w.bar);
	return r;
}

template <class T> T __shfl_sync(uint32_t, T x, uint32_t src)
{
	return lane_exchange(x, src);
}

template <class T> T __shfl_up_sync(uint32_t, T x, uint32_t d)
{
	const uint32_t lane = threadIdx.x % 32;

	return lane_exchange(x, lane >= d ? lane - d : lane);
}

template <class T> T __shfl_xor_sync(uint32_t, T x, uint32_t m)
{
	return lane_exchange(x, (threadIdx.x % 32) ^ m);
}

inline int __any_sync(uint32_t, int p)
{
	host_warp &w = my_warp();
	int r = 0;

	w.v[threadIdx.x % 32] = p != 0;
	pthread_barrier_wait(&w.bar);
	for (uint32_t k = 0; k < 32; k++)
		r |= w.v[k] != 0;
	pthread_barrier_wait(&w.bar);
	return r;
}

struct host_thread_job {
	void (*body)(void *, uint32_t);
	void *ctx;
	uint32_t tid;
};

inline void *host_thread_main(void *arg)
{
	const host_thread_job *j = static_cast<const host_thread_job *>(arg);

	threadIdx.x = j->tid;
	vote_phase = 0;
	j->body(j->ctx, j->tid);
	return nullptr;
}

/*
 * Runs body(ctx, t) for every t below `threads` on host threads as one
 * block: threadIdx.x = t, blockDim.x = threads, `barrier` the block's; with
 * warp_bars each 32 threads also get a barrier of their own (`warps`) for
 * __syncwarp, the shuffles and the votes. Exits when the system refuses a
 * thread or a barrier.
 */
inline void host_block_run(uint32_t threads, bool warp_bars, void (*body)(void *, uint32_t),
			   void *ctx)
{
	const uint32_t n_warps = warp_bars ? threads / 32 : 0;
	host_warp *ws = n_warps ? new host_warp[n_warps] : nullptr;
	pthread_t *th = new pthread_t[threads];
	host_thread_job *jobs = new host_thread_job[threads];

	blockDim.x = threads;
	if (pthread_barrier_init(&barrier, nullptr, threads) != 0) {
		fprintf(stderr, "pthread_barrier_init failed\n");
		exit(1);
	}
	for (uint32_t w = 0; w < n_warps; w++)
		if (pthread_barrier_init(&ws[w].bar, nullptr, 32) != 0) {
			fprintf(stderr, "pthread_barrier_init failed\n");
			exit(1);
		}
	if (n_warps)
		warps = ws;
	for (uint32_t t = 0; t < threads; t++) {
		jobs[t] = {body, ctx, t};
		if (pthread_create(&th[t], nullptr, host_thread_main, &jobs[t]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	for (uint32_t t = 0; t < threads; t++)
		pthread_join(th[t], nullptr);
	for (uint32_t w = 0; w < n_warps; w++)
		pthread_barrier_destroy(&ws[w].bar);
	if (n_warps)
		warps = nullptr;
	pthread_barrier_destroy(&barrier);
	delete[] jobs;
	delete[] th;
	delete[] ws;
}

#endif /* VYRE_TESTS_MK_HOST_BLOCK_H */
