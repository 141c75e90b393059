# mk/consumers.mk - the library as others get it: the release tarball
# (dist), installed (install-check) and through CMake, Meson and pkg-config
# (consumer-test).

# ---- The release tarball -----------------------------------------------------------
# build/coroutine-1.0.0.tar.gz: every file of the commit DIST_COMMIT (HEAD
# unless given), under coroutine-1.0.0/, but the CI script and .gitignore;
# and its SHA-256 as sha256sum writes it (and `sha256sum -c` reads it).
# git archive gives the same bytes for the same commit, so anyone can check
# a published hash by running make dist at the release's tag.  Changes not
# committed are not in it: for HEAD, it says so.
DIST_NAME   := coroutine-$(VERSION)
DIST_DIR    ?= build
DIST_COMMIT ?= HEAD

.PHONY: dist
dist:
	@git rev-parse -q --verify '$(DIST_COMMIT)^{commit}' > /dev/null || \
		{ echo "make dist: needs a git checkout, and a commit $(DIST_COMMIT)"; exit 1; }
	@[ '$(DIST_COMMIT)' != HEAD ] || git diff --quiet HEAD || \
		echo "make dist: changes not committed are left out: the tarball holds HEAD"
	@mkdir -p $(DIST_DIR)
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_DIR)/$(DIST_NAME).tar.gz '$(DIST_COMMIT)' -- . ':!.ci' ':!.gitignore'
	cd $(DIST_DIR) && sha256sum $(DIST_NAME).tar.gz > $(DIST_NAME).tar.gz.sha256
	@cat $(DIST_DIR)/$(DIST_NAME).tar.gz.sha256

# The tarball as a user gets it, made into $(DIST_CHECK_DIR) and checked by
# test/docs/tarball.sh: no .ci/, a .sha256 that checks beside it, a README
# that names only files it holds.  Run by make test (readme-check), in a git
# checkout only: make dist needs one.
DIST_CHECK_DIR = $(B)/dist-check
DIST_CHECK_TARBALL = $(DIST_CHECK_DIR)/$(DIST_NAME).tar.gz

.PHONY: dist-check
dist-check:
	@if [ -e .git ] && command -v git > /dev/null; then \
		$(MAKE) --no-print-directory -s dist DIST_DIR=$(DIST_CHECK_DIR) > /dev/null && \
		LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "the release tarball" \
			test/docs/tarball.sh $(DIST_CHECK_TARBALL); \
	else echo "dist-check: not a git checkout, so no tarball to check"; fi

# Installs into a scratch DESTDIR, builds the generator example against the
# installed copy through pkg-config (which reads only that coroutine.pc and
# prefixes its paths with the DESTDIR), once linked with the shared library,
# which -lcoroutine prefers, and once with the static one; checks their
# output and that coroutine.pc's version is coroutine.h's, then uninstalls
# and checks that nothing is left behind.
INSTALL_CHECK := $(CURDIR)/build/install-check
INSTALLED_PKG_CONFIG := PKG_CONFIG_LIBDIR=$(INSTALL_CHECK)$(PREFIX)/lib/pkgconfig \
	PKG_CONFIG_SYSROOT_DIR=$(INSTALL_CHECK) pkg-config

.PHONY: install-check consumer-test
install-check:
	rm -rf $(INSTALL_CHECK)
	$(MAKE) install DESTDIR=$(INSTALL_CHECK)
	$(CHECK_SHARED) $(INSTALL_CHECK)$(PREFIX)/lib/libcoroutine.so
	$(CC) $(CFLAGS) $(LDFLAGS) examples/generator.c \
		$$($(INSTALLED_PKG_CONFIG) --cflags --libs coroutine) -o build/installed-generator
	readelf -d build/installed-generator | grep -q 'NEEDED.*\[$(SONAME)\]'
	LD_LIBRARY_PATH=$(INSTALL_CHECK)$(PREFIX)/lib ./build/installed-generator | diff -u examples/generator.expected -
	$(CC) $(CFLAGS) $(LDFLAGS) examples/generator.c $$($(INSTALLED_PKG_CONFIG) --cflags coroutine) \
		$(INSTALL_CHECK)$(PREFIX)/lib/libcoroutine.a -o build/installed-generator-static
	./build/installed-generator-static | diff -u examples/generator.expected -
	$(CC) $(CFLAGS) test/consumers/version.c $$($(INSTALLED_PKG_CONFIG) --cflags coroutine) \
		-DEXPECTED_VERSION='"'"$$($(INSTALLED_PKG_CONFIG) --modversion coroutine)"'"' -o build/installed-version
	./build/installed-version
	cmp debug/coroutine-gdb.py $(INSTALL_CHECK)$(PREFIX)/share/coroutine/coroutine-gdb.py
	cmp debug/coroutine_lldb.py $(INSTALL_CHECK)$(PREFIX)/share/coroutine/coroutine_lldb.py
	cmp debug/coroutine-gdb.py $(INSTALL_CHECK)$(PREFIX)/share/gdb/auto-load$(PREFIX)/lib/$(SHLIB)-gdb.py
	$(MAKE) uninstall DESTDIR=$(INSTALL_CHECK)
	test -z "$$(find $(INSTALL_CHECK) ! -type d)"
	rm -rf $(INSTALL_CHECK)
	@echo "install-check: OK"

# C projects that get the library through CMake (add_subdirectory,
# FetchContent, find_package), Meson (a subproject) and pkg-config, static
# and shared, both backends, installed and cross-built through the shipped
# toolchain and cross files; see test/consumers/run.sh.
consumer-test:
	test/consumers/run.sh
