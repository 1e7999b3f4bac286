# dist/deb.mk: make deb - binary Debian packages from this build, with
# dpkg-deb and dpkg-shlibdeps (dpkg-dev), no debhelper: vyre (daemon, tools,
# units, man pages), libvyre0, libvyre-dev and, when python/python.mk defines
# PYTHON_PKG_DIR, python3-vyre. Output in $(BUILD)/deb/ (dist/deb/build.sh).

DEB_VERSION ?= $(VYRE_VERSION)-1
DEB_DIR     := $(BUILD)/deb

.PHONY: deb
deb: build-all
ifneq ($(SANITIZE),)
	@echo "make deb: packages are built from a plain build, not SANITIZE=$(SANITIZE)" >&2; exit 1
endif
	rm -rf $(DEB_DIR)
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DEB_DIR))/stage PREFIX=/usr \
		LIBDIR=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	sh dist/deb/build.sh $(DEB_DIR) $(VYRE_VERSION) $(DEB_VERSION)
