/* SPDX-License-Identifier: MIT */
/* examples/scanlog/rules.h - scanlog's rule file (the format: rules.c). */
#ifndef VYRE_EXAMPLE_SCANLOG_RULES_H
#define VYRE_EXAMPLE_SCANLOG_RULES_H

#include <stdint.h>

#include "vyre/dfa.h"

struct scanlog_rule {
	uint8_t *bytes;
	uint32_t len, id, flags; /* flags: VYRE_DFA_* */
};

struct scanlog_rules {
	struct scanlog_rule *r;
	uint32_t n, cap;
};

/* Loads the rules of @path; 0, or -1 after printing the file, line and why. */
int scanlog_rules_load(const char *path, struct scanlog_rules *out);
void scanlog_rules_free(struct scanlog_rules *rs);

#endif /* VYRE_EXAMPLE_SCANLOG_RULES_H */
