# tests/reliability.mk: reliability and security suites (issue 6) - the
# Promela model of the ring protocol, libFuzzer harnesses and their corpus
# replay, and the process-level crash, hostile-client, isolation, restart and
# limits tests. See docs/reliability.md.

# models/check.sh runs spin on models/ring.pml; the test is a wrapper script
# so tests/run.sh finds it in $(BUILD)/tests like every other test.
TESTS += test_model
$(BUILD)/tests/test_model: models/check.sh models/ring.pml tests/reliability.mk
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/models/check.sh" "$$@"\n' '$(CURDIR)' >$@
	chmod +x $@
