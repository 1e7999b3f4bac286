/* SPDX-License-Identifier: MIT */
/* vyred's command line: every flag, its default and its bounds. */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "config.h"
#include "config_gpus.h"

enum {
	OPT_SOCKET = 256,
	OPT_ALLOW_UID,
	OPT_ALLOW_GID,
	OPT_BACKEND,
	OPT_MODE,
	OPT_DOORBELL,
	OPT_MAX_BATCH,
	OPT_MAX_CLIENTS,
	OPT_MAX_DOMAINS,
	OPT_MAX_BUFFERS,
	OPT_SQ_MAX,
	OPT_CQ_MAX,
	OPT_HEAP_MAX,
	OPT_SPIN_US,
	OPT_CPU_THREADS,
	OPT_CPU,
	OPT_HELLO_TIMEOUT,
	OPT_ACCEPT_LOG,
	OPT_MAX_GROUPS,
	OPT_MAX_STAGES,
	OPT_BUDGET_BYTES,
	OPT_RESIDENT_BYTES,
	OPT_ARENA_BYTES,
	OPT_INFLIGHT,
	OPT_CLIENT_BATCHES,
	OPT_LOOPS,
	OPT_MIN_SHARE,
	OPT_DEVICE_BYTES_MAX,
	OPT_MAX_DEVICE_BUFFERS,
	OPT_GPUS,
	OPT_DOMAIN_GPU,
	OPT_PRIORITY,
	OPT_PRIORITY_MAX,
	OPT_PRIORITY_BATCH,
	OPT_GPU_WORKER,
	OPT_OPS_DIR,
};

static const struct option options[] = {
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"allow-uid", required_argument, NULL, OPT_ALLOW_UID},
    {"allow-gid", required_argument, NULL, OPT_ALLOW_GID},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"mode", required_argument, NULL, OPT_MODE},
    {"doorbell", required_argument, NULL, OPT_DOORBELL},
    {"max-batch", required_argument, NULL, OPT_MAX_BATCH},
    {"max-clients", required_argument, NULL, OPT_MAX_CLIENTS},
    {"max-domains", required_argument, NULL, OPT_MAX_DOMAINS},
    {"max-buffers", required_argument, NULL, OPT_MAX_BUFFERS},
    {"sq-entries-max", required_argument, NULL, OPT_SQ_MAX},
    {"cq-entries-max", required_argument, NULL, OPT_CQ_MAX},
    {"heap-bytes-max", required_argument, NULL, OPT_HEAP_MAX},
    {"spin-us", required_argument, NULL, OPT_SPIN_US},
    {"cpu-threads", required_argument, NULL, OPT_CPU_THREADS},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"hello-timeout-ms", required_argument, NULL, OPT_HELLO_TIMEOUT},
    {"accept-log", required_argument, NULL, OPT_ACCEPT_LOG},
    {"max-groups", required_argument, NULL, OPT_MAX_GROUPS},
    {"max-stages", required_argument, NULL, OPT_MAX_STAGES},
    {"budget-bytes", required_argument, NULL, OPT_BUDGET_BYTES},
    {"resident-bytes", required_argument, NULL, OPT_RESIDENT_BYTES},
    {"arena-bytes", required_argument, NULL, OPT_ARENA_BYTES},
    {"inflight", required_argument, NULL, OPT_INFLIGHT},
    {"client-batches", required_argument, NULL, OPT_CLIENT_BATCHES},
    {"loops", required_argument, NULL, OPT_LOOPS},
    {"min-share", required_argument, NULL, OPT_MIN_SHARE},
    {"device-bytes-max", required_argument, NULL, OPT_DEVICE_BYTES_MAX},
    {"max-device-buffers", required_argument, NULL, OPT_MAX_DEVICE_BUFFERS},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"domain-gpu", required_argument, NULL, OPT_DOMAIN_GPU},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"priority-max", required_argument, NULL, OPT_PRIORITY_MAX},
    {"priority-batch", required_argument, NULL, OPT_PRIORITY_BATCH},
    {"ops-dir", required_argument, NULL, OPT_OPS_DIR},
    {"gpu-worker", required_argument, NULL, OPT_GPU_WORKER}, /* front.c's, not for users */
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vyred [options]\n"
		"\n"
		"The vyre daemon: drains work items from its clients' shared-memory rings,\n"
		"executes them and posts completions. Runs in the foreground, logs to stderr;\n"
		"SIGTERM or SIGINT drains, completes everything accepted, removes the socket\n"
		"and exits 0. Under systemd it takes the socket systemd passes (LISTEN_FDS),\n"
		"leaves that one in place, and sends READY=1, STATUS= and watchdog pings to\n"
		"$NOTIFY_SOCKET (docs/operations.md).\n"
		"\n"
		"  --socket PATH          control socket (default %s; mode 0660,\n"
		"                         parent directory created)\n"
		"  --allow-uid UID|NAME   allow this user to connect (repeatable; default:\n"
		"                         the daemon's own uid when no --allow-* is given)\n"
		"  --allow-gid GID|NAME   allow members of this group (repeatable)\n"
		"  --backend auto|cpu|cuda\n"
		"                         executor (default auto: cuda when a usable GPU and\n"
		"                         the embedded megakernel exist, else cpu)\n"
		"  --mode persistent|launch\n"
		"                         CUDA execution mode (default persistent)\n"
		"  --doorbell auto|futex|eventfd\n"
		"                         how vyred sleeps on idle clients (default auto:\n"
		"                         io_uring FUTEX_WAIT if the kernel has it, else\n"
		"                         eventfd reads)\n"
		"  --max-batch N          most items drained per batch (default 4096)\n"
		"  --inflight N           most batches running at once, 1-64 (default %u)\n"
		"  --client-batches N     most batches of one client in flight at once, 1 to\n"
		"                         --inflight (default %u); its CQEs still come in\n"
		"                         submission order, an item that conflicts with its\n"
		"                         own running items, or a FENCE item, waits for them\n"
		"  --loops auto|N         event loops per GPU, 1-16, each on its own thread\n"
		"                         with its own share of the GPU; a domain's clients\n"
		"                         all go to one loop, new domains to the loop with\n"
		"                         the fewest clients of their GPU (default auto: CUDA\n"
		"                         persistent mode one per 4 online CPUs per GPU, 1-4;\n"
		"                         else 1); with a class above 0 allowed, a loop\n"
		"                         without other classes first, and class 0 keeps off\n"
		"                         each GPU's last loop\n"
		"  --gpus all|LIST        the GPUs to drive: device ordinals separated by\n"
		"                         commas, at most 16; an ordinal named twice makes\n"
		"                         two GPUs of one device (default all: every usable\n"
		"                         device; the cpu backend: one)\n"
		"  --domain-gpu NAME=INDEX\n"
		"                         run named domain NAME on the GPU at position INDEX\n"
		"                         of --gpus (repeatable); other domains go to the\n"
		"                         least loaded GPU when they are made\n"
		"  --priority-max N       the highest priority class (0-3) any client may\n"
		"                         ask for (default 0)\n"
		"  --priority uid:U=N|gid:G=N\n"
		"                         let user U, or members of group G (primary or\n"
		"                         supplementary), ask for class N (0-3; U and G a\n"
		"                         number or a name; repeatable; the highest bound\n"
		"                         that applies wins)\n"
		"  --priority-batch N     while a loop has a client of a higher class, a\n"
		"                         lower class's batch takes at most N items\n"
		"                         (default %u)\n"
		"  --min-share N          when several clients have work, each gets an equal\n"
		"                         share of a batch, but never fewer than N items\n"
		"                         (default %u)\n"
		"  --max-clients N        most connected clients (default 256)\n"
		"  --max-domains N        most live domains per loop (default 256)\n"
		"  --max-buffers N        most live buffers per loop (default 262144)\n"
		"  --sq-entries-max N     largest SQ a client may ask for (default %u)\n"
		"  --cq-entries-max N     largest CQ a client may ask for (default %u)\n"
		"  --heap-bytes-max N     largest domain heap a client may ask for\n"
		"                         (default 1073741824)\n"
		"  --device-bytes-max N   device buffers (VYRE_BUF_DEVICE) of each GPU's\n"
		"                         domains together (default: cuda 3/4 of the GPU\n"
		"                         memory free at start, cpu 1073741824)\n"
		"  --max-device-buffers N most live device buffers per loop (default %u)\n"
		"  --spin-us N            longest adaptive spin before sleeping (default 200)\n"
		"  --cpu-threads N        cpu backend worker threads per loop (default 0: the\n"
		"                         online CPUs shared out over the loops)\n"
		"  --cpu N                pin event loop L (drain, plan, submit, complete) to\n"
		"                         CPU N + L; backend threads keep every CPU (default:\n"
		"                         none)\n"
		"  --hello-timeout-ms N   close a connection that sent no HELLO for this long\n"
		"                         (default 5000)\n"
		"  --ops-dir DIR          load the op modules (*.opmod) of DIR at start\n"
		"                         (docs/design.md 6.7): files owned by root or\n"
		"                         vyred's user and writable by no one else; a bad\n"
		"                         module stops vyred unless it says optional\n"
		"                         (default: none, the built-in ops only)\n"
		"  --accept-log PATH      testing aid: append 'client_id user_data' for each\n"
		"                         accepted item, in acceptance order\n"
		"  --max-groups N         planner: most dependency layers per batch (default:\n"
		"                         --max-batch); a deeper batch is planned shorter\n"
		"  --max-stages N         planner: most groups after memory splitting per batch\n"
		"                         (default: --max-batch)\n"
		"  --budget-bytes N       planner: device bytes one fused launch may touch\n"
		"                         (default 1073741824)\n"
		"  --resident-bytes N     planner: of the budget, bytes already resident on the\n"
		"                         device (default 0)\n"
		"  --arena-bytes N        planner: scratch arena, allocated at start (default:\n"
		"                         what --max-batch needs); a smaller one plans shorter\n"
		"                         batches\n"
		"  -h, --help             this text\n",
		VYRE_DEFAULT_SOCKET, VYRED_DEFAULT_INFLIGHT, VYRED_DEFAULT_CLIENT_BATCHES,
		VYRED_DEFAULT_PRIORITY_BATCH, VYRED_DEFAULT_MIN_SHARE, VYRE_MAX_RING_ENTRIES,
		VYRE_MAX_RING_ENTRIES, VYRED_DEFAULT_DEVICE_BUFFERS);
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;

	errno = 0;
	if (!s || *s == '\0' || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 0);

	if (errno || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, lo, hi, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int vyre_config_uid(const char *s, uid_t *out)
{
	uint64_t v;
	const struct passwd *pw;

	if (parse_u64(s, 0, UINT32_MAX - 1, &v) == 0) {
		*out = (uid_t)v;
		return 0;
	}
	pw = getpwnam(s);
	if (!pw)
		return -1;
	*out = pw->pw_uid;
	return 0;
}

int vyre_config_gid(const char *s, gid_t *out)
{
	uint64_t v;
	const struct group *gr;

	if (parse_u64(s, 0, UINT32_MAX - 1, &v) == 0) {
		*out = (gid_t)v;
		return 0;
	}
	gr = getgrnam(s);
	if (!gr)
		return -1;
	*out = gr->gr_gid;
	return 0;
}

static void defaults(struct vyre_daemon_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->socket_path = VYRE_DEFAULT_SOCKET;
	cfg->backend = VYRE_BACKEND_CHOICE_AUTO;
	cfg->mode = VYRE_CUDA_PERSISTENT;
	cfg->doorbell = VYRE_DOORBELL_AUTO;
	cfg->max_batch = 4096;
	cfg->inflight = VYRED_DEFAULT_INFLIGHT;
	cfg->client_batches = VYRED_DEFAULT_CLIENT_BATCHES;
	cfg->loops = 0;
	cfg->min_share = VYRED_DEFAULT_MIN_SHARE;
	cfg->priority_batch = VYRED_DEFAULT_PRIORITY_BATCH;
	cfg->max_clients = 256;
	cfg->max_domains = 256;
	cfg->max_buffers = 262144;
	cfg->sq_entries_max = VYRE_MAX_RING_ENTRIES;
	cfg->cq_entries_max = VYRE_MAX_RING_ENTRIES;
	cfg->heap_bytes_max = 1ull << 30;
	cfg->max_device_buffers = VYRED_DEFAULT_DEVICE_BUFFERS;
	cfg->spin_max_us = 200;
	cfg->loop_cpu = -1;
	cfg->worker_fd = -1;
	cfg->hello_timeout_ms = 5000;
}

static int bad_priority(const char *arg, const char *why)
{
	fprintf(stderr, "vyred: invalid value for --priority: '%s': %s (see --help)\n", arg, why);
	return -1;
}

int vyre_config_priority(const char *arg, struct vyre_daemon_config *cfg)
{
	const char *eq = strrchr(arg, '=');
	char who[256];
	struct vyre_priority_rule r = {0};

	if (!eq || eq[1] < '0' || eq[1] > '0' + (int)VYRE_PRIORITY_MAX || eq[2] != '\0')
		return bad_priority(arg, "want uid:U=N or gid:G=N, N 0-3");
	r.max = (uint32_t)(eq[1] - '0');
	if (!strncmp(arg, "gid:", 4))
		r.is_gid = 1;
	else if (strncmp(arg, "uid:", 4))
		return bad_priority(arg, "want uid:U=N or gid:G=N, N 0-3");
	if (eq - arg - 4 <= 0 || (size_t)(eq - arg - 4) >= sizeof(who))
		return bad_priority(arg, "no user or group");
	memcpy(who, arg + 4, (size_t)(eq - arg - 4));
	who[eq - arg - 4] = '\0';
	uid_t uid;
	gid_t gid;

	if (r.is_gid ? vyre_config_gid(who, &gid) : vyre_config_uid(who, &uid))
		return bad_priority(arg, r.is_gid ? "no such group" : "no such user");
	r.id = r.is_gid ? (uint32_t)gid : (uint32_t)uid;
	if (cfg->n_priority_rules == VYRED_MAX_PRIORITY_RULES)
		return bad_priority(arg, "at most 32 rules");
	cfg->priority_rules[cfg->n_priority_rules++] = r;
	return 0;
}

static int bad(const char *flag, const char *arg)
{
	fprintf(stderr, "vyred: invalid value for --%s: '%s' (see --help)\n", flag, arg);
	return -1;
}

static int parse_choice(int opt, const char *arg, struct vyre_daemon_config *cfg)
{
	if (opt == OPT_BACKEND) {
		if (!strcmp(arg, "auto"))
			cfg->backend = VYRE_BACKEND_CHOICE_AUTO;
		else if (!strcmp(arg, "cpu"))
			cfg->backend = VYRE_BACKEND_CHOICE_CPU;
		else if (!strcmp(arg, "cuda"))
			cfg->backend = VYRE_BACKEND_CHOICE_CUDA;
		else
			return bad("backend", arg);
	} else if (opt == OPT_MODE) {
		if (!strcmp(arg, "persistent"))
			cfg->mode = VYRE_CUDA_PERSISTENT;
		else if (!strcmp(arg, "launch"))
			cfg->mode = VYRE_CUDA_LAUNCH;
		else
			return bad("mode", arg);
	} else {
		if (!strcmp(arg, "auto"))
			cfg->doorbell = VYRE_DOORBELL_AUTO;
		else if (!strcmp(arg, "futex"))
			cfg->doorbell = VYRE_DOORBELL_FUTEX;
		else if (!strcmp(arg, "eventfd"))
			cfg->doorbell = VYRE_DOORBELL_EVENTFD;
		else
			return bad("doorbell", arg);
	}
	return 0;
}

static int parse_planner(int opt, const char *arg, struct vyre_daemon_config *cfg)
{
	switch (opt) {
	case OPT_MAX_GROUPS:
		return parse_u32(arg, 1, UINT32_MAX, &cfg->max_groups) ? bad("max-groups", arg) : 0;
	case OPT_MAX_STAGES:
		return parse_u32(arg, 1, UINT32_MAX, &cfg->max_stages) ? bad("max-stages", arg) : 0;
	case OPT_BUDGET_BYTES:
		return parse_u64(arg, 1, UINT64_MAX, &cfg->budget_bytes) ? bad("budget-bytes", arg)
									 : 0;
	case OPT_RESIDENT_BYTES:
		return parse_u64(arg, 0, UINT64_MAX, &cfg->resident_bytes)
			   ? bad("resident-bytes", arg)
			   : 0;
	default: /* OPT_ARENA_BYTES */
		return parse_u64(arg, 1, 1ull << 40, &cfg->arena_bytes) ? bad("arena-bytes", arg)
									: 0;
	}
}

static int parse_one(int opt, const char *arg, struct vyre_daemon_config *cfg)
{
	switch (opt) {
	case OPT_SOCKET:
		if (!*arg)
			return bad("socket", arg);
		cfg->socket_path = arg;
		return 0;
	case OPT_ALLOW_UID:
		if (cfg->n_allow_uid == VYRED_MAX_ALLOW ||
		    vyre_config_uid(arg, &cfg->allow_uid[cfg->n_allow_uid]) != 0)
			return bad("allow-uid", arg);
		cfg->n_allow_uid++;
		return 0;
	case OPT_ALLOW_GID:
		if (cfg->n_allow_gid == VYRED_MAX_ALLOW ||
		    vyre_config_gid(arg, &cfg->allow_gid[cfg->n_allow_gid]) != 0)
			return bad("allow-gid", arg);
		cfg->n_allow_gid++;
		return 0;
	case OPT_BACKEND:
	case OPT_MODE:
	case OPT_DOORBELL:
		return parse_choice(opt, arg, cfg);
	case OPT_MAX_BATCH:
		return parse_u32(arg, 1, 1u << 20, &cfg->max_batch) ? bad("max-batch", arg) : 0;
	case OPT_INFLIGHT:
		return parse_u32(arg, 1, VYRED_MAX_INFLIGHT, &cfg->inflight) ? bad("inflight", arg)
									     : 0;
	case OPT_CLIENT_BATCHES:
		cfg->client_batches_set = 1;
		return parse_u32(arg, 1, VYRED_MAX_INFLIGHT, &cfg->client_batches)
			   ? bad("client-batches", arg)
			   : 0;
	case OPT_LOOPS:
		if (!strcmp(arg, "auto")) {
			cfg->loops = 0;
			return 0;
		}
		return parse_u32(arg, 1, VYRED_MAX_LOOPS_PER_GPU, &cfg->loops) ? bad("loops", arg)
									       : 0;
	case OPT_GPUS:
		return vyre_config_gpus(arg, cfg);
	case OPT_DOMAIN_GPU:
		return vyre_config_domain_gpu(arg, cfg);
	case OPT_GPU_WORKER:
		return vyre_config_gpu_worker(arg, cfg);
	case OPT_PRIORITY:
		return vyre_config_priority(arg, cfg);
	case OPT_PRIORITY_MAX:
		return parse_u32(arg, 0, VYRE_PRIORITY_MAX, &cfg->priority_max)
			   ? bad("priority-max", arg)
			   : 0;
	case OPT_PRIORITY_BATCH:
		return parse_u32(arg, 1, 1u << 20, &cfg->priority_batch)
			   ? bad("priority-batch", arg)
			   : 0;
	case OPT_MIN_SHARE:
		return parse_u32(arg, 1, 1u << 20, &cfg->min_share) ? bad("min-share", arg) : 0;
	case OPT_MAX_CLIENTS:
		return parse_u32(arg, 1, 65536, &cfg->max_clients) ? bad("max-clients", arg) : 0;
	case OPT_MAX_DOMAINS:
		return parse_u32(arg, 1, 65536, &cfg->max_domains) ? bad("max-domains", arg) : 0;
	case OPT_MAX_BUFFERS:
		return parse_u32(arg, 1, (1u << 20) - 1, &cfg->max_buffers)
			   ? bad("max-buffers", arg)
			   : 0;
	case OPT_SQ_MAX:
		return parse_u32(arg, 2, VYRE_MAX_RING_ENTRIES, &cfg->sq_entries_max)
			   ? bad("sq-entries-max", arg)
			   : 0;
	case OPT_CQ_MAX:
		return parse_u32(arg, 2, VYRE_MAX_RING_ENTRIES, &cfg->cq_entries_max)
			   ? bad("cq-entries-max", arg)
			   : 0;
	case OPT_HEAP_MAX:
		return parse_u64(arg, 4096, 1ull << 40, &cfg->heap_bytes_max)
			   ? bad("heap-bytes-max", arg)
			   : 0;
	case OPT_DEVICE_BYTES_MAX:
		cfg->device_bytes_set = 1;
		return parse_u64(arg, 0, 1ull << 50, &cfg->device_bytes_max)
			   ? bad("device-bytes-max", arg)
			   : 0;
	case OPT_MAX_DEVICE_BUFFERS:
		return parse_u32(arg, 0, VYRED_MAX_DEVICE_BUFFERS, &cfg->max_device_buffers)
			   ? bad("max-device-buffers", arg)
			   : 0;
	case OPT_SPIN_US:
		return parse_u32(arg, 0, 1000000, &cfg->spin_max_us) ? bad("spin-us", arg) : 0;
	case OPT_CPU_THREADS:
		return parse_u32(arg, 0, 1024, &cfg->cpu_threads) ? bad("cpu-threads", arg) : 0;
	case OPT_HELLO_TIMEOUT:
		return parse_u32(arg, 1, 3600000, &cfg->hello_timeout_ms)
			   ? bad("hello-timeout-ms", arg)
			   : 0;
	case OPT_CPU: {
		uint32_t cpu;

		if (parse_u32(arg, 0, CPU_SETSIZE - 1, &cpu))
			return bad("cpu", arg);
		cfg->loop_cpu = (int)cpu;
		return 0;
	}
	case OPT_ACCEPT_LOG:
		cfg->accept_log = arg;
		return 0;
	case OPT_OPS_DIR:
		if (!*arg)
			return bad("ops-dir", arg);
		cfg->ops_dir = arg;
		return 0;
	default:
		return parse_planner(opt, arg, cfg);
	}
}

/* Each domain and device buffer of a loop is a backend heap, and those are 16-bit indices. */
static int check_heaps(const struct vyre_daemon_config *cfg)
{
	if ((uint64_t)cfg->max_domains + cfg->max_device_buffers <= VYRE_BACKEND_MAX_HEAPS)
		return 0;
	fprintf(stderr,
		"vyred: invalid values: --max-domains %u plus --max-device-buffers %u is more than "
		"%u\n",
		cfg->max_domains, cfg->max_device_buffers, VYRE_BACKEND_MAX_HEAPS);
	return -1;
}

/* --client-batches is at most --inflight; its default follows a smaller --inflight. */
static int check_client_batches(struct vyre_daemon_config *cfg)
{
	if (cfg->client_batches <= cfg->inflight)
		return 0;
	if (!cfg->client_batches_set) {
		cfg->client_batches = cfg->inflight;
		return 0;
	}
	fprintf(stderr,
		"vyred: invalid value for --client-batches: %u is more than --inflight %u\n",
		cfg->client_batches, cfg->inflight);
	return -1;
}

int vyre_daemon_config_parse(int argc, char **argv, struct vyre_daemon_config *cfg)
{
	int opt;

	defaults(cfg);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return 1;
		}
		if (opt == '?' || parse_one(opt, optarg, cfg) != 0) {
			if (opt == '?')
				fprintf(stderr, "vyred: see --help\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "vyred: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	if (vyre_config_check_pins(cfg) != 0 || check_client_batches(cfg) != 0 ||
	    check_heaps(cfg) != 0)
		return -1;
	if (cfg->worker_fd >= 0 && vyre_config_worker(cfg) != 0)
		return -1;
	if (cfg->n_allow_uid == 0 && cfg->n_allow_gid == 0) {
		cfg->allow_uid[0] = geteuid();
		cfg->n_allow_uid = 1;
	}
	return 0;
}
