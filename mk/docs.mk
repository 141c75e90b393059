# mk/docs.mk - the checks of README.md and docs/: their programs build and
# print what they show, README's contents link every section, every
# relative link leads to a file and a heading that exist, the walkthrough
# of docs/how-it-works.md is what the program prints, the page of
# main --trace=html says what main --trace says, and the table of targets
# (docs/make-targets.md, which `make help` prints) names every target and
# only targets; and each
# of these checks, fed the fault it is there for, reports it.

# ---- README's first program, and its C++ one ---------------------------------------
# Built by README's own lines, with each backend, in an empty directory
# with the library's files, and run: it must print README's output
# (test/docs/first_program.sh; `make wasm-test` runs the wasm lines of
# docs/platforms.md); the C++ program likewise (test/docs/block_program.sh).
.PHONY: first-program-check
first-program-check:
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "README's first program" \
		test/docs/first_program.sh $(B)/readme/first first-build first-build-cxx asm-build
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "README's C++ program" \
		test/docs/block_program.sh $(B)/readme/cxx cxx.cpp

# ---- README's checked build ---------------------------------------------------------
# Its programs, built by the documents' lines, stop with their lines
# (test/docs/checked_message.sh): the checked build's (README's program also
# gives its wrong answer unchecked, and stops so under gdb where gdb is
# installed), and under ASan (docs/checking.md).
.PHONY: checked-message-check
checked-message-check:
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "README's checked build" \
		test/docs/checked_message.sh $(B)/readme/checked
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "README's checked build under ASan" \
		test/docs/checked_message.sh $(B)/readme/checked-asan checked-asan

# ---- README's walkthrough, made by the program --------------------------------
# The trace excerpts and frame table of docs/how-it-works.md are what
# main --trace prints when built as `make` builds it by default, with g++ on
# x86_64: this build, whatever CXX, CXXFLAGS or CPPFLAGS say.  readme-trace
# rewrites them; readme-check (run by `make test`) fails when they are stale.
# Elsewhere the sizes differ: the check says so and passes.
README_BUILD := $(B)/readme
README_CXX   := g++ -O2 -g
$(README_BUILD)/main: $(TRACE_SOURCES) $(TRACE_HEADERS) $(README_BUILD)/trace_page_html.h coroutine.cpp
	@mkdir -p $(@D)
	$(README_CXX) $(LIBFLAGS) -c coroutine.cpp -o $(@D)/coroutine.o
	$(README_CXX) -I$(@D) $(TRACE_SOURCES) $(@D)/coroutine.o -lbacktrace -o $@

.PHONY: readme-trace readme-check readme-walkthrough-check targets-check readme-contents-check
readme-trace: $(README_BUILD)/main
	test/docs/readme_trace.sh write $<

readme-check: first-program-check checked-message-check readme-walkthrough-check targets-check readme-contents-check \
	links-check pipes-check dist-check checks-test trace-page-data-check

# README's contents link every section, and only headings that exist; and
# Quick start's commands run make after a failed apt-get update, not after
# a failed install, and CI's first step runs README's test command
# (test/docs/quick_start.sh).
readme-contents-check:
	@test/docs/readme_contents.sh
	@test/docs/quick_start.sh

# Every relative link of README.md and docs/*.md leads to a file, and its
# anchor to a heading, that exist.
.PHONY: links-check
links-check:
	@test/docs/links.sh

# No script that sets pipefail pipes into a reader that may stop early
# (head, grep -q): its writer would die of SIGPIPE now and then.
.PHONY: pipes-check
pipes-check:
	@test/support/pipes_check.sh

readme-walkthrough-check:
	@if [ "$$(uname -m)" != x86_64 ]; then \
		echo "readme-check: README's walkthrough comes from x86_64, not checked on $$(uname -m)"; \
	elif ! grep -q "from g++ $$(g++ -dumpversion | cut -d. -f1) -O2" docs/how-it-works.md; then \
		echo "readme-check: README's walkthrough comes from another g++ than $$(g++ -dumpversion), not checked"; \
	else $(MAKE) --no-print-directory -s $(README_BUILD)/main && test/docs/readme_trace.sh check $(README_BUILD)/main; fi

# ---- README's table of targets --------------------------------------------------
# Every target a user runs is declared .PHONY and named in the tables of
# docs/make-targets.md, and every target the tables name exists; the first
# table, which `make help` prints first, holds the everyday targets and
# only them.  Internal targets, which other targets call, are listed here
# instead.
EVERYDAY_TARGETS = all run test examples install uninstall bench bench-ir help clean
INTERNAL_TARGETS = all check check-outputs check-bugs check-checked-bugs check-checked-asan-bugs check-no-cxx-runtime bench-programs bench-check first-program-check \
	matrix-checked checked-message-check \
	msvc-view readme-walkthrough-check trace-page-data-check targets-check readme-contents-check links-check pipes-check dist-check checks-test matrix-std $(MATRIX) $(CROSS_TESTS)

targets-check:
	@$(MAKE) -pRrq -f Makefile : 2>/dev/null | sed -n 's/^\.PHONY: *//p' | tr ' ' '\n' | sort -u > $(B)/targets.phony
	@awk -f mk/help.awk -v list=1 docs/make-targets.md | sort -u > $(B)/targets.readme
	@echo $(INTERNAL_TARGETS) | tr ' ' '\n' | sort -u > $(B)/targets.internal
	@missing=$$(comm -23 $(B)/targets.phony $(B)/targets.internal | comm -23 - $(B)/targets.readme); \
	 unknown=$$(comm -13 $(B)/targets.phony $(B)/targets.readme); \
	 if [ -n "$$missing$$unknown" ]; then \
		[ -z "$$missing" ] || echo "docs/make-targets.md lacks:" $$missing; \
		[ -z "$$unknown" ] || echo "docs/make-targets.md names targets that do not exist:" $$unknown; \
		exit 1; fi
	@everyday=$$(awk -f mk/help.awk -v list=1 -v first=1 docs/make-targets.md | sort -u | paste -sd' '); \
	 [ "$$everyday" = "$$(echo $(EVERYDAY_TARGETS) | tr ' ' '\n' | sort -u | paste -sd' ')" ] || \
		{ echo "docs/make-targets.md's first table (make help's first) is not the everyday ones ($(EVERYDAY_TARGETS)): $$everyday"; exit 1; }

# ---- The page of main --trace=html -------------------------------------------------
# In headless Chromium (Debian's chromium), driven by node, in a window of
# 1,024 x 768: the DOM its script drew at every step of its three
# walkthroughs must say what main --trace, --trace=trees and --trace=clone
# say (the values drawn with the heap copies too), every step must show its
# run stack, heap copies and caption without scrolling, the legend beside
# the step, no text under 12 px and no two texts overlapping
# (test/docs/trace_page.sh); screenshots of every step are left in
# $(O)/trace-page/.  CI runs it on both backends.
.PHONY: trace-page-test trace-page-data-check
trace-page-test: $(O)/main$(EXE)
	test/docs/trace_page.sh $(O)/main$(EXE) $(O)/trace-page

# What of the page needs no browser (run by `make test`): it is
# trace_page.html with the walkthroughs put in, and carries the path that
# --trace=clone reads in each heap copy (test/docs/trace_page_html.sh).
trace-page-data-check: $(O)/main$(EXE)
	@test/docs/trace_page_html.sh $(O)/main$(EXE)

# ---- The checks themselves -------------------------------------------------------
# Each check above, test/support/run.sh and test/docs/tarball.sh, fed in a
# scratch copy the fault it is there to catch, must report it
# (test/support/checks_test.sh): the tarball dist-check made is the good
# one its faults are made from (none outside a git checkout).
.PHONY: checks-test
checks-test: dist-check
	@LOG_DIR=$(B) V='$(V)' test/support/run.sh --command "the build's checks, each fed its fault" \
		test/support/checks_test.sh $(B)/checks-test $$([ ! -f $(DIST_CHECK_TARBALL) ] || echo $(DIST_CHECK_TARBALL))
