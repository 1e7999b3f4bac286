# dist/install.mk: make install [PREFIX=/usr/local] [DESTDIR=]. Every
# directory can be set on its own (make deb puts the library in the multiarch
# directory). Man pages (MAN_PAGES, man/man.mk: paths ending in their section,
# man/vyred.8) and the Python package (PYTHON_PKG_DIR, python/python.mk: its
# directory) are installed when their fragments define them, and so are the
# example op modules (OPMOD_EXAMPLES, examples/ops.mk): each one's module
# directory $(BUILD)/examples/ops/NAME/ into lib/vyre/ops/NAME/ (it holds a
# shared object: architecture-dependent, so not under share), not enabled
# (the operator copies its files into vyred's ops directory), and its
# sources into share/vyre/examples/ops/NAME/. This file is read before
# theirs, so these are used only in recipes.

BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/vyre
UNITDIR    ?= $(PREFIX)/lib/systemd/system
PYTHONDIR  ?= $(PREFIX)/lib/python3/dist-packages
# the example op modules' directories (a host object each), not enabled
OPMODDIR   ?= $(PREFIX)/lib/vyre/ops
# /etc for PREFIX=/usr (the packages), else PREFIX/etc, so no install outside PREFIX writes /etc
SYSCONFDIR ?= $(patsubst /usr/etc,/etc,$(PREFIX)/etc)
# op modules (docs/design.md 6.7): made empty, root's, 0755, so the unit's --ops-dir exists
OPSDIR     ?= $(SYSCONFDIR)/vyre/ops.d

# vyre-demo goes too: the installed demo (share/vyre/demo.sh BINDIR) runs it.
INSTALL_PROGRAMS = $(PROGRAMS) vyre-demo
PY_PKG = $(notdir $(patsubst %/,%,$(PYTHON_PKG_DIR)))

.PHONY: install
install: build-all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/vyre \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DATADIR)/vyre/examples $(DESTDIR)$(DOCDIR)
	install -m 755 $(addprefix $(BUILD)/,$(INSTALL_PROGRAMS)) $(DESTDIR)$(BINDIR)/
	install -m 644 include/vyre/*.h $(DESTDIR)$(INCLUDEDIR)/vyre/
	install -m 644 $(BUILD)/libvyre.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libvyre.so $(DESTDIR)$(LIBDIR)/libvyre.so.$(VYRE_VERSION)
	ln -sf libvyre.so.$(VYRE_VERSION) $(DESTDIR)$(LIBDIR)/libvyre.so.$(VYRE_SO_MAJOR)
	ln -sf libvyre.so.$(VYRE_SO_MAJOR) $(DESTDIR)$(LIBDIR)/libvyre.so
	sed -e 's|^prefix=.*|prefix=$(PREFIX)|' -e 's|^libdir=.*|libdir=$(LIBDIR)|' \
	    -e 's|^includedir=.*|includedir=$(INCLUDEDIR)|' $(BUILD)/vyre.pc \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/vyre.pc
	install -d -m 755 $(DESTDIR)$(OPSDIR)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@OPSDIR@|$(OPSDIR)|g' dist/systemd/vyred.service.in \
		> $(DESTDIR)$(UNITDIR)/vyred.service
	install -m 644 dist/systemd/vyred.socket $(DESTDIR)$(UNITDIR)/
	install -m 644 examples/*.vs examples/*.out $(DESTDIR)$(DATADIR)/vyre/examples/
	install -m 755 tools/demo.sh $(DESTDIR)$(DATADIR)/vyre/demo.sh
	if [ -n "$(OPMOD_EXAMPLES)" ]; then \
		install -D -m 644 examples/ops/op_device.h $(DESTDIR)$(DATADIR)/vyre/examples/ops/op_device.h; \
	fi
	for m in $(OPMOD_EXAMPLES); do \
		for f in $(BUILD)/examples/ops/$$m/*; do \
			install -D -m 644 "$$f" "$(DESTDIR)$(OPMODDIR)/$$m/$${f##*/}" || exit 1; \
		done; \
		for f in examples/ops/$$m/*; do \
			install -D -m 644 "$$f" "$(DESTDIR)$(DATADIR)/vyre/examples/ops/$$m/$${f##*/}" || exit 1; \
		done; \
	done
	install -m 644 docs/operations.md $(DESTDIR)$(DOCDIR)/
	for p in $(MAN_PAGES); do \
		install -D -m 644 "$$p" "$(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/}" || exit 1; \
	done
	if [ -n "$(PY_PKG)" ]; then \
		cd $(PYTHON_PKG_DIR) && find . -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
		-exec install -D -m 644 {} $(abspath $(DESTDIR)$(PYTHONDIR))/$(PY_PKG)/{} \; ; \
	fi

# What the optional fragments add to an install, for tests/test_install.sh
# and tests/test_deb.sh (asked at run time, so a fragment added or removed
# since their scripts were generated counts).
.PHONY: install-parts
install-parts:
	@echo "man_pages=$(MAN_PAGES)"
	@echo "py_dir=$(PYTHON_PKG_DIR)"
	@echo "opmods=$(OPMOD_EXAMPLES)"
