# mk/pkg.mk: the Debian package and the old-glibc test root.
#   make deb   build/deb/sockaudit_<version>_<arch>.deb with dpkg-buildpackage,
#              from a copy of the tree (dh's clean step would empty build/),
#              then lintian (fails on errors, prints the rest)
#   make deb ARCH=arm64   the same cross-built for arm64 (dpkg-buildpackage -a
#              arm64, scripts/ensure-deps.sh arm64 first), in build/arm64/deb/
# `make test` builds the Debian 11 root once (scripts/deb11-root.sh; skipped
# with a line saying why when the registry cannot be reached) and the .deb,
# outside the per-test timeouts.
ifeq ($(ARCH),arm64)
DEB_DIR := $(BUILD)/arm64/deb
DEB_HOST_OPT := -a arm64
DEB_DEPS := deb arm64
else
DEB_DIR := $(BUILD)/deb
DEB_DEPS := deb
endif
DEB_SRC := $(DEB_DIR)/sockaudit-$(VERSION)

.PHONY: deb deb-build deb11-root
deb:
	@scripts/ensure-deps.sh $(DEB_DEPS)
	@$(MAKE) --no-print-directory deb-build
	lintian --fail-on error --info $(DEB_DIR)/*.changes

deb-build:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files --cached --others --exclude-standard | \
			while IFS= read -r f; do [ -e "$$f" ] && printf '%s\n' "$$f"; done | \
			tar -T - -cf - | tar -C $(DEB_SRC) -xf -; \
	else \
		tar --exclude=./build --exclude=./.git -cf - . | tar -C $(DEB_SRC) -xf -; \
	fi
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u BUILD -u ARCH dpkg-buildpackage -us -uc -b $(DEB_HOST_OPT) >../build.log 2>&1 || { tail -30 ../build.log; exit 1; }
	@ls $(DEB_DIR)/*.deb

deb11-root:
	@scripts/deb11-root.sh $(BUILD) || true

test-extra:: deb11-root
	@[ -f $(DEB_DIR)/sockaudit_$(VERSION)_$$(dpkg --print-architecture).deb ] && [ -z "$$(find . -path ./build -prune -o -newer $(DEB_DIR)/sockaudit_$(VERSION)_$$(dpkg --print-architecture).deb -type f \( -name '*.[chS]' -o -name '*.ld' -o -name Makefile -o -name '*.mk' -o -path './debian/*' -o -path './docs/*' \) -print | head -1)" ] || \
		$(MAKE) --no-print-directory deb-build || echo "make deb-build failed: tests/integration/pkg_deb.sh will say why"
