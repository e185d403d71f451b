# mk/lint.mk: the format check `make lint` runs first.
#   make lint-format                 the C lines changed since LINT_BASE
#                                    (main) in check mode (.clang-format)
#   make lint-format LINT_FILES=...  whole files instead
# Not part of `make test`: the tree predates .clang-format and is checked
# a change at a time, not reformatted (scripts/lint-format.sh).
LINT_BASE ?= main
LINT_FILES ?=

.PHONY: lint-format
lint: lint-format
lint-format:
	@scripts/lint-format.sh $(if $(LINT_FILES),-- $(LINT_FILES),$(LINT_BASE))
