// Does a device fault on one GPU reach another GPU's context in the same
// process? Each scenario runs in a forked child (a sticky error lasts as long
// as its process). Build: nvcc -arch=sm_90 -o fault_scope fault_scope.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void poke(int *p) { *p = 1; }
__global__ void spin(volatile int *stop, int *out)
{
	long n = 0;
	while (!*stop)
		n++;
	out[0] = (int)(n & 0x7fffffff) | 1;
}
__global__ void add1(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += 1;
}

#define S(x) cudaGetErrorName(x)

static int use(int dev, const char *tag)
{
	cudaError_t e = cudaSetDevice(dev);
	int *d = NULL, h[256];
	if (e) { printf("  %s dev%d SetDevice %s\n", tag, dev, S(e)); return 1; }
	e = cudaMalloc(&d, sizeof(h));
	if (e) { printf("  %s dev%d Malloc %s\n", tag, dev, S(e)); return 1; }
	for (int i = 0; i < 256; i++) h[i] = i;
	cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
	add1<<<1, 256>>>(d, 256);
	e = cudaDeviceSynchronize();
	if (e) { printf("  %s dev%d launch %s\n", tag, dev, S(e)); return 1; }
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	for (int i = 0; i < 256; i++)
		if (h[i] != i + 1) { printf("  %s dev%d wrong result\n", tag, dev); return 1; }
	void *reg = aligned_alloc(4096, 1 << 20);
	e = cudaHostRegister(reg, 1 << 20, cudaHostRegisterMapped | cudaHostRegisterPortable);
	if (e) { printf("  %s dev%d HostRegister %s\n", tag, dev, S(e)); return 1; }
	cudaHostUnregister(reg);
	cudaFree(d);
	printf("  %s dev%d OK\n", tag, dev);
	return 0;
}

/* flags: 1 portable heap registered under dev1 before; 2 dev0 spinning during the fault;
 * 4 peer access both ways; 8 fault dev0 and use dev1 instead */
static int scenario(int flags)
{
	int good = (flags & 8) ? 1 : 0, bad = 1 - good;
	volatile int *stop = NULL;
	int *out = NULL;
	cudaStream_t s0;
	for (int dv = 0; dv < 2; dv++) { cudaSetDevice(dv); cudaFree(0); }
	if (flags & 4) {
		cudaSetDevice(0); printf("  peer 0->1 %s\n", S(cudaDeviceEnablePeerAccess(1, 0)));
		cudaSetDevice(1); printf("  peer 1->0 %s\n", S(cudaDeviceEnablePeerAccess(0, 0)));
	}
	void *heap = NULL;
	if (flags & 1) {
		cudaSetDevice(bad);
		heap = aligned_alloc(4096, 1 << 22);
		printf("  register portable heap under dev%d: %s\n", bad,
		       S(cudaHostRegister(heap, 1 << 22, cudaHostRegisterMapped | cudaHostRegisterPortable)));
	}
	if (flags & 2) {
		cudaSetDevice(good);
		cudaHostAlloc((void **)&stop, 4096, cudaHostAllocMapped | cudaHostAllocPortable);
		*stop = 0;
		cudaMalloc(&out, 4);
		cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking);
		spin<<<1, 1, 0, s0>>>(stop, out);
		usleep(100000);
	}
	cudaSetDevice(bad);
	poke<<<1, 1>>>((int *)0x10);
	cudaError_t e = cudaDeviceSynchronize();
	printf("  fault on dev%d: %s\n", bad, S(e));
	if (flags & 2) {
		cudaSetDevice(good);
		printf("  dev%d spinning kernel query after the fault: %s\n", good, S(cudaStreamQuery(s0)));
		*stop = 1;
		e = cudaStreamSynchronize(s0);
		int o = 0;
		cudaMemcpy(&o, out, 4, cudaMemcpyDeviceToHost);
		printf("  dev%d spinning kernel ended: %s out=%d\n", good, S(e), o);
	}
	int rc = use(good, "after");
	cudaSetDevice(bad);
	printf("  dev%d after: GetLastError %s, Malloc: ", bad, S(cudaGetLastError()));
	int *x; printf("%s\n", S(cudaMalloc(&x, 16)));
	return rc;
}

int main(void)
{
	/* the parent never initializes CUDA: a child forked after cuInit cannot use it */
	pid_t c = fork();
	if (c == 0) {
		int n = 0;
		cudaGetDeviceCount(&n);
		printf("devices: %d\n", n);
		exit(n >= 2 ? 0 : 77);
	}
	int cst;
	waitpid(c, &cst, 0);
	if (!WIFEXITED(cst) || WEXITSTATUS(cst) != 0) { printf("needs 2 GPUs\n"); return 77; }
	int flags[] = {0, 1, 2, 3, 4, 8 | 2, 8 | 3, 7};
	int bad = 0;
	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		printf("scenario flags=%d\n", flags[i]);
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) { exit(scenario(flags[i])); }
		int st; waitpid(p, &st, 0);
		printf(" -> %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "contained" : "NOT contained");
		bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	return bad ? 1 : 0;
}
