# man/man.mk: the manual pages (mdoc), the list `make install` installs
# (MAN_PAGES, each page's section is its suffix), a lint target, and the test
# that keeps them in step with the tools and include/vyre/vyre.h.

MAN_PAGES := $(sort $(wildcard man/*.[1-8]))

.PHONY: man-lint
man-lint:
	mandoc -T lint -W warning $(MAN_PAGES)

TESTS += test_man
$(BUILD)/tests/test_man: tests/test_man.sh $(MAN_PAGES) include/vyre/vyre.h \
			 $(BUILD)/vyred $(BUILD)/vyre-submit $(BUILD)/vyre-top $(BUILD)/vyre-bench
	@mkdir -p $(dir $@)
	sed -e 's|@VYRE_SRCDIR@|$(CURDIR)|g' -e 's|@VYRE_BUILD@|$(abspath $(BUILD))|g' $< > $@
	chmod +x $@
