# clcone build. `make` builds the library and CLI; `make test` runs the
# Check suites (installing or naming missing dependencies first).

CC      ?= gcc
BUILD   ?= build
# `make install PREFIX=... DESTDIR=...`: libraries in LIBDIR, the public
# header as INCLUDEDIR/clcone/clcone.h, clcone.pc, the CLI in BINDIR.
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
# The version has one home, include/clcone/base.h; the soname follows its major.
VERSION := $(shell sed -n 's/^.define CLCONE_VERSION "\(.*\)"/\1/p' include/clcone/base.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
# apt-get waiting up to 10 minutes for another apt or dpkg (an unattended
# upgrade, a second build on the machine) to let go of its locks, rather
# than failing at once.
APT_GET := apt-get -o DPkg::Lock::Timeout=600
DEBIAN_DEPS := ocl-icd-opencl-dev opencl-headers pocl-opencl-icd check pkg-config libhdf5-dev clinfo \
	libcairo2-dev libpng-dev libsuitesparse-dev libopenblas0-serial

HDF5_CFLAGS := $(shell pkg-config --cflags hdf5 2>/dev/null)
HDF5_LIBS   := $(shell pkg-config --libs hdf5 2>/dev/null)
# cairo draws the pictures and plots and writes them through libpng; the
# tests decode them with libpng.
CAIRO_CFLAGS := $(shell pkg-config --cflags cairo 2>/dev/null)
CAIRO_LIBS  := $(shell pkg-config --libs cairo 2>/dev/null)
PNG_CFLAGS  := $(shell pkg-config --cflags libpng 2>/dev/null)
PNG_LIBS    := $(shell pkg-config --libs libpng 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS  := $(shell pkg-config --libs check 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 $(WARN) $(CFLAGS) -ffp-contract=off $(EXTRA_CFLAGS) -fPIC -Iinclude -Ihost -Ikernels -I$(BUILD) \
	-isystem /usr/include/suitesparse -DCL_TARGET_OPENCL_VERSION=120
# libclcone links what a solver needs; cairo and HDF5, with the
# desktop and network libraries they bring (X11, curl, ssl, ...), are
# libclcone_output's alone (host/output/, OUT_LIBS below).
LDLIBS  := -lOpenCL -lcholmod -lklu -lamd -lgomp -lm $(EXTRA_LDFLAGS)
OUT_LIBS := $(HDF5_LIBS) $(CAIRO_LIBS)

# MuJoCo, for the adapter (host/mujoco/, `clcone mujoco`, the mujoco
# suite) and the bench's section 5: MuJoCo 4 from PyPI. Since 4.0 the
# `mujoco` package is Python on top of `mujoco-core`, the wheel that ships
# libmujoco.so and the C headers. pip installs that one into a venv under
# $(BUILD) (without its Python dependencies, which the C library does not
# use; about 10 s) and the stamp records where the wheel put them. When
# pip fails: a system MuJoCo (MUJOCO_SYSTEM_H, its mujoco.h) if recent
# enough, else the adapter is left out (the CLI says how to get it) and
# the bench section skipped.
# `make test` and `make bench` try the pip install; `make mujoco` alone.
MUJOCO_PIP := mujoco-core==4.0.0
# ?=: the install suite's own `make install` of a sanitized build is
# given the venv that build was made with (test_env), not one of its own.
MUJOCO_VENV ?= $(BUILD)/venv
MUJOCO_STAMP := $(MUJOCO_VENV)/.mujoco
MUJOCO_WHEEL_INC := $(shell sed -n 1p $(MUJOCO_STAMP) 2>/dev/null)
MUJOCO_WHEEL_LIB := $(shell sed -n 2p $(MUJOCO_STAMP) 2>/dev/null)
MUJOCO_SYSTEM_H ?= $(firstword $(wildcard /usr/include/mujoco/mujoco.h /usr/local/include/mujoco/mujoco.h))
# Only a MuJoCo the adapter compiles against is used: 3.11.0 is the
# oldest whose headers have all it reads (mjData's efm_active came in
# 3.11; 3.3 lacks mjModel's tree_dofadr too, and 2.2.2, Debian bookworm's
# libmujoco-dev, mjContact's geom[2] and more); 4.0.0, the wheel, is the
# one the suites run on. An older one is left out with a message, never
# a failed build. mjVERSION_HEADER is major*100 + minor*10 + patch up to
# 3.4.0 (340), major*1000000 + minor*1000 + patch from 3.5.0 (3005000).
MUJOCO_MIN := 3011000
MUJOCO_MIN_NAME := 3.11.0
# $(call mj_check,HEADER): ok, or why HEADER will not do.
mj_check = $(shell h='$(1)'; v=$$(sed -n 's/^.define mjVERSION_HEADER \([0-9][0-9]*\).*/\1/p' "$$h" 2>/dev/null); \
  if [ -z "$$v" ]; then echo "$$h has no mjVERSION_HEADER"; exit; fi; \
  [ $$v -ge 1000 ] || v=$$((v / 100 * 1000000 + v / 10 % 10 * 1000 + v % 10)); \
  if [ $$v -ge $(MUJOCO_MIN) ]; then echo ok; \
  else echo "MuJoCo $$((v / 1000000)).$$((v / 1000 % 1000)).$$((v % 1000)) ($$h) is older than $(MUJOCO_MIN_NAME)"; fi)
MUJOCO_WHEEL_CHECK := $(if $(MUJOCO_WHEEL_LIB),$(call mj_check,$(MUJOCO_WHEEL_INC)/mujoco/mujoco.h))
MUJOCO_SYSTEM_CHECK := $(if $(MUJOCO_SYSTEM_H),$(call mj_check,$(MUJOCO_SYSTEM_H)))
ifeq ($(MUJOCO_WHEEL_CHECK),ok)
MUJOCO_FOUND := yes
MUJOCO_FROM := the PyPI wheel $(MUJOCO_PIP) in $(MUJOCO_VENV)
MUJOCO_INC := -isystem $(MUJOCO_WHEEL_INC)
MUJOCO_LIBS := $(MUJOCO_WHEEL_LIB) -Wl,-rpath,$(dir $(MUJOCO_WHEEL_LIB))
else ifeq ($(MUJOCO_SYSTEM_CHECK),ok)
MUJOCO_FOUND := yes
MUJOCO_FROM := the system MuJoCo, $(MUJOCO_SYSTEM_H)
MUJOCO_SYSTEM_INC := $(patsubst %/mujoco/mujoco.h,%,$(MUJOCO_SYSTEM_H))
MUJOCO_INC := $(or $(shell pkg-config --cflags mujoco 2>/dev/null),$(if \
  $(filter /usr/include,$(MUJOCO_SYSTEM_INC)),,-isystem $(MUJOCO_SYSTEM_INC)))
MUJOCO_LIBS := $(or $(shell pkg-config --libs mujoco 2>/dev/null),-lmujoco)
else
# what was found and why it was left out: the build's message and
# `clcone mujoco`'s
MUJOCO_SKIPPED := $(strip $(if $(filter ok,$(MUJOCO_WHEEL_CHECK)),,$(MUJOCO_WHEEL_CHECK)) \
  $(if $(filter ok,$(MUJOCO_SYSTEM_CHECK)),,$(MUJOCO_SYSTEM_CHECK)))
endif
# The adapter's objects are linked into the CLI and the tests only, so
# libclcone never depends on libmujoco; the stamp records whether they
# were built with MuJoCo, so that finding it later rebuilds what uses it.
MJ_SRC  := $(wildcard host/mujoco/*.c)
MJ_STAMP := $(BUILD)/mujoco-found
ifneq ($(MUJOCO_FOUND),)
MJ_OBJ  := $(patsubst host/%.c,$(BUILD)/obj/%.o,$(MJ_SRC))
MJ_CFLAGS := -DCLCONE_MUJOCO '-DCLCONE_MUJOCO_FROM="$(MUJOCO_FROM)"' $(MUJOCO_INC)
MJ_LIBS := $(MUJOCO_LIBS)
else ifneq ($(MUJOCO_SKIPPED),)
MJ_CFLAGS := '-DCLCONE_MUJOCO_SKIPPED="$(MUJOCO_SKIPPED)"'
endif

# One folder per layer, lowest first (docs/architecture.md); cli/ is the
# program, mpi/ and mujoco/ optional parts, the rest the library. The one
# list of them: check-layers reads it.
LAYERS  := core io ref opencl solve world step output mpi mujoco cli
# cli_mpi.c is clcone-mpi's alone (CLI_MPI_OBJ below).
CLI_SRC := $(filter-out host/cli/cli_mpi.c,$(wildcard host/cli/*.c))
# mpi/ is a library part of its own (libclcone_mpi, `make mpi`): the
# single-process library and CLI never link MPI.
MPI_SRC := $(wildcard host/mpi/*.c)
# output/ is a library of its own too (libclcone_output: pictures, plots,
# FCLib HDF5), so that libclcone does not link cairo and HDF5.
OUT_SRC := $(wildcard host/output/*.c)
OUT_OBJ := $(patsubst host/%.c,$(BUILD)/obj/%.o,$(OUT_SRC))
LIB_SRC := $(filter-out host/cli/%.c $(MPI_SRC) $(MJ_SRC) $(OUT_SRC),$(wildcard host/*/*.c))
HOST_H  := $(wildcard include/clcone/*.h host/*/*.h)
LIB_OBJ := $(patsubst host/%.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/kernels_embedded.o
KERNEL_SRC := $(wildcard kernels/*.h kernels/*.cl)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_OBJ := $(patsubst tests/%.c,$(BUILD)/tobj/%.o,$(TEST_SRC)) $(BUILD)/tobj/main.o

.PHONY: all test sanitize valgrind deps check-deps demo bench clean install
all: $(BUILD)/libclcone.a $(BUILD)/libclcone.so $(BUILD)/libclcone_output.a $(BUILD)/libclcone_output.so $(BUILD)/clcone

# Library objects hide every symbol not marked CLCONE_API
# (include/clcone/base.h), so the shared library exports only the public
# clcone_ API.
$(BUILD)/obj/%.o: host/%.c $(HOST_H) $(KERNEL_SRC) | $(BUILD)/obj
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@

# Kernel sources become C string literals so the binary runs from anywhere.
$(BUILD)/kernels_embedded.c: $(KERNEL_SRC) Makefile | $(BUILD)/obj
	@{ echo '/* generated from kernels/ by the Makefile */'; \
	  echo '#include <stddef.h>'; \
	  for f in $(KERNEL_SRC); do \
	    n=$$(basename $$f | tr '.-' '__'); \
	    echo "const char clc_src_$$n[] ="; \
	    sed 's/\\/\\\\/g; s/"/\\"/g; s/^/"/; s/$$/\\n"/' $$f; \
	    echo ';'; \
	  done; \
	  echo 'const struct clc_kernel_file { const char *name; const char *source; } clc_kernel_files[] = {'; \
	  for f in $(KERNEL_SRC); do \
	    echo "{\"$$(basename $$f)\", clc_src_$$(basename $$f | tr '.-' '__')},"; \
	  done; \
	  echo '{NULL, NULL}};'; } > $@

$(BUILD)/obj/kernels_embedded.o: $(BUILD)/kernels_embedded.c
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -Wno-overlength-strings -c $< -o $@

# Made afresh: ar would keep the members of sources that no longer exist.
# q, not r: members of one name from two folders (ref/apgd.o and
# opencl/apgd.o) must both stay, where r would replace the first.
$(BUILD)/libclcone.a: $(LIB_OBJ)
	rm -f $@
	ar qcs $@ $^
	@test $$(ar t $@ | wc -l) -eq $(words $^) || { echo '$@: a member is missing' >&2; rm -f $@; exit 1; }

$(BUILD)/libclcone.so.$(VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libclcone.so.$(SOMAJOR) -o $@ $^ $(LDLIBS)

$(BUILD)/libclcone.so: $(BUILD)/libclcone.so.$(VERSION)
	ln -sf libclcone.so.$(VERSION) $(BUILD)/libclcone.so.$(SOMAJOR)
	ln -sf libclcone.so.$(SOMAJOR) $@

# libclcone_output (include/clcone/output.h, clcone-output.pc) over
# libclcone.so: the public API from there, and its own hidden copies of
# the few internal helpers it shares with libclcone's sources (errors,
# allocation, atomic files, rotations; --exclude-libs), so that neither
# library exports anything an installed header does not declare.
$(OUT_OBJ): private ALL_CFLAGS += $(HDF5_CFLAGS) $(CAIRO_CFLAGS)
$(BUILD)/libclcone_output.a: $(OUT_OBJ)
	rm -f $@
	ar qcs $@ $^
	@test $$(ar t $@ | wc -l) -eq $(words $^) || { echo '$@: a member is missing' >&2; rm -f $@; exit 1; }

$(BUILD)/libclcone_output.so.$(VERSION): $(OUT_OBJ) $(BUILD)/libclcone.so $(BUILD)/libclcone.a
	$(CC) -shared -Wl,-soname,libclcone_output.so.$(SOMAJOR) -o $@ $(OUT_OBJ) -L$(BUILD) -lclcone \
	  $(BUILD)/libclcone.a -Wl,--exclude-libs,ALL $(OUT_LIBS) $(LDLIBS)

$(BUILD)/libclcone_output.so: $(BUILD)/libclcone_output.so.$(VERSION)
	ln -sf libclcone_output.so.$(VERSION) $(BUILD)/libclcone_output.so.$(SOMAJOR)
	ln -sf libclcone_output.so.$(SOMAJOR) $@

# The wheel's libmujoco as installed: under its soname (what the CLI's
# NEEDED names), with the wheel's licence files.
MJ_SHIP := $(if $(filter ok,$(MUJOCO_WHEEL_CHECK)),$(MUJOCO_WHEEL_LIB))
MJ_SHIP_NAME = $(or $(shell objdump -p $(MJ_SHIP) 2>/dev/null | sed -n 's/^ *SONAME *//p'),$(notdir $(MJ_SHIP)))
MJ_SHIP_LICENSES = $(wildcard $(dir $(MJ_SHIP))../mujoco_core-*.dist-info/licenses/*)
# Only the public headers are installed, in INCLUDEDIR/clcone; clcone.pc's
# Cflags name INCLUDEDIR, so a program writes #include <clcone/clcone.h>.
# Where Open MPI is installed the MPI part too (libclcone_mpi, its header
# <clcone/mpi/ranks.h>, clcone-mpi.pc, clcone-mpi: the MPI section below
# adds them to the prerequisites). Nothing installed refers to the build
# tree: the wheel's libmujoco, when the CLI uses it, is installed in
# LIBDIR/clcone/ with its licences, and the CLI linked again to find it
# there, relative to itself (tests/install-check.sh checks); beside it
# libclcone_mujoco, the API of <clcone/mujoco.h> (a header installed with
# the others), which finds it there ($ORIGIN).
install: all $(if $(MJ_SHIP),$(BUILD)/install/clcone $(BUILD)/libclcone_mujoco.so)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/clcone $(DESTDIR)$(BINDIR)
	install -m 644 $(BUILD)/libclcone.a $(BUILD)/libclcone_output.a $(DESTDIR)$(LIBDIR)/
	$(call install_so,libclcone)
	$(call install_so,libclcone_output)
	install -m 644 include/clcone/*.h $(DESTDIR)$(INCLUDEDIR)/clcone/
	$(call install_pc,clcone,-lOpenCL -lcholmod -lklu -lamd -lgomp -lm)
	$(call install_pc,clcone-output,$(strip $(OUT_LIBS)))
ifneq ($(MJ_SHIP),)
	install -d $(DESTDIR)$(LIBDIR)/clcone/mujoco-licenses
	install -m 755 $(MJ_SHIP) $(DESTDIR)$(LIBDIR)/clcone/$(MJ_SHIP_NAME)
	$(if $(MJ_SHIP_LICENSES),install -m 644 $(MJ_SHIP_LICENSES) $(DESTDIR)$(LIBDIR)/clcone/mujoco-licenses/)
	install -m 755 $(BUILD)/libclcone_mujoco.so $(DESTDIR)$(LIBDIR)/clcone/
	install -m 755 $(BUILD)/install/clcone $(DESTDIR)$(BINDIR)/
else
	install -m 755 $(BUILD)/clcone $(DESTDIR)$(BINDIR)/
endif
	@$(if $(HAVE_MPI),,echo 'clcone install: Open MPI is not installed: the MPI part left out (make mpi installs it)')
	$(if $(HAVE_MPI),install -d $(DESTDIR)$(INCLUDEDIR)/clcone/mpi)
	$(if $(HAVE_MPI),install -m 644 $(MPI_H) $(DESTDIR)$(INCLUDEDIR)/clcone/mpi/)
	$(if $(HAVE_MPI),install -m 644 $(BUILD)/libclcone_mpi.a $(DESTDIR)$(LIBDIR)/)
	$(if $(HAVE_MPI),$(call install_so,libclcone_mpi))
	$(if $(HAVE_MPI),$(call install_pc,clcone-mpi,))
	$(if $(HAVE_MPI),install -m 755 $(BUILD)/clcone-mpi $(DESTDIR)$(BINDIR)/)

# $(call install_so,NAME): NAME.so.VERSION into LIBDIR, with its links.
install_so = install -m 755 $(BUILD)/$(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/ && \
  ln -sf $(1).so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(1).so.$(SOMAJOR) && ln -sf $(1).so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/$(1).so
# $(call install_pc,NAME,LIBS_PRIVATE): NAME.pc.in filled in, as LIBDIR/pkgconfig/NAME.pc.
install_pc = sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
  -e 's|@VERSION@|$(VERSION)|; s|@LIBS_PRIVATE@|$(2)|' $(1).pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$(1).pc

CLI_OBJ := $(patsubst host/%.c,$(BUILD)/obj/%.o,$(CLI_SRC))
# What links both archives: the CLI, the tests, the bench, the MPI CLI.
FULL_LIBS := $(BUILD)/libclcone_output.a $(BUILD)/libclcone.a
$(BUILD)/clcone: $(CLI_OBJ) $(MJ_OBJ) $(FULL_LIBS)
	$(CC) $(CLI_OBJ) $(MJ_OBJ) $(FULL_LIBS) $(MJ_LIBS) $(OUT_LIBS) $(LDLIBS) -o $@

# BINDIR to LIBDIR, for the installed CLI's rpath ($ORIGIN/../lib by default).
BIN_TO_LIB = $(shell realpath -m --relative-to='$(BINDIR)' '$(LIBDIR)')
# Linked at every install: the rpath follows BINDIR and LIBDIR.
$(BUILD)/install/clcone: $(CLI_OBJ) $(MJ_OBJ) $(FULL_LIBS) FORCE
	@mkdir -p $(@D)
	$(CC) $(CLI_OBJ) $(MJ_OBJ) $(FULL_LIBS) $(MJ_SHIP) -Wl,-rpath,'$$ORIGIN/$(BIN_TO_LIB)/clcone' \
	  $(OUT_LIBS) $(LDLIBS) -o $@

# What includes MuJoCo's headers when found (private: not passed on to
# prerequisites), rebuilt when that changes.
MJ_USERS := $(MJ_OBJ) $(BUILD)/obj/cli/cli_mujoco.o $(patsubst tests/%.c,$(BUILD)/tobj/%.o,$(wildcard tests/test_mujoco*.c))
$(MJ_USERS): private ALL_CFLAGS += $(MJ_CFLAGS)
# the oldest MuJoCo the adapter takes, for the message of a CLI without it
$(BUILD)/obj/cli/cli_mujoco.o $(BUILD)/obj-mpi/cli/cli_mujoco.o: private ALL_CFLAGS += \
  '-DCLCONE_MUJOCO_MIN="$(MUJOCO_MIN_NAME)"'
$(MJ_USERS): $(MJ_STAMP)
MJ_SKIP_MSG = clcone: building without the MuJoCo adapter: $(MUJOCO_SKIPPED), the oldest it compiles against \
  (`make mujoco` installs $(MUJOCO_PIP) from PyPI into $(MUJOCO_VENV))
$(MJ_STAMP): FORCE | $(BUILD)/obj
	@$(if $(MUJOCO_SKIPPED),echo '$(MJ_SKIP_MSG)' >&2)
	@echo 'mujoco=$(or $(MUJOCO_FROM),no $(MUJOCO_SKIPPED))' | cmp -s - $@ || \
	  echo 'mujoco=$(or $(MUJOCO_FROM),no $(MUJOCO_SKIPPED))' > $@

.PHONY: mujoco mujoco-lib
mujoco: $(MUJOCO_STAMP)
	@$(MAKE) --no-print-directory $(BUILD)/clcone
# the Python package's build: MuJoCo's wheel as for `make mujoco`, then
# libclcone_mujoco (after the install, so the sub-make finds it)
mujoco-lib: $(MUJOCO_STAMP)
	@$(MAKE) --no-print-directory $(BUILD)/libclcone_mujoco.so

# libclcone_mujoco (include/clcone/mujoco.h, mujoco/api.c): the adapter as
# a shared library for a program that holds its own MuJoCo model and data,
# the Python package's clcone.mujoco. It carries its own copy of the
# library (hidden: --exclude-libs), so the adapter's internal calls need no
# export from libclcone, and needs the libmujoco it was compiled against:
# the one already loaded under that soname (the Python package imports
# mujoco first), else the one beside it as the Python packages install
# them (site-packages/mujoco, from the clcone package's folder), or as
# `make install` installs them (the same folder).
MJ_SO_LIBS := $(if $(filter ok,$(MUJOCO_WHEEL_CHECK)),$(MUJOCO_WHEEL_LIB),$(MUJOCO_LIBS))
$(BUILD)/libclcone_mujoco.so: $(MJ_OBJ) $(FULL_LIBS) $(MJ_STAMP)
	$(if $(MUJOCO_FOUND),,@echo '$(MJ_SKIP_MSG)' >&2; exit 1)
	$(CC) -shared -Wl,-soname,libclcone_mujoco.so -Wl,--exclude-libs,ALL -o $@ $(MJ_OBJ) $(FULL_LIBS) \
	  $(MJ_SO_LIBS) -Wl,-rpath,'$$ORIGIN/../mujoco:$$ORIGIN' $(OUT_LIBS) $(LDLIBS)

# No include or call from a lower layer to a higher one, and no cycle
# between files (tools/check-layers.sh reads the includes and the objects'
# symbols).
.PHONY: check-layers check-size
check-layers: $(LIB_OBJ) $(OUT_OBJ) $(CLI_OBJ) $(MJ_OBJ) $(if $(HAVE_MPI),$(MPI_OBJ))
	sh tools/check-layers.sh $(BUILD)/obj "$(LAYERS)"

# No source file over 800 lines, no function over 120 (tools/check-size.sh).
check-size:
	sh tools/check-size.sh

# docs/architecture.md's file map names every source file and only files
# that exist; the README's and docs/' links lead somewhere
# (tools/check-filemap.sh).
.PHONY: check-filemap
check-filemap:
	sh tools/check-filemap.sh

$(BUILD)/suites.h: $(TEST_SRC) Makefile | $(BUILD)/tobj
	@{ for f in $(TEST_SRC); do n=$$(basename $$f .c | sed 's/^test_//'); \
	    echo "Suite *suite_$$n(void);"; done; \
	  echo 'static const struct { const char *name; Suite *(*make)(void); } ALL_SUITES[] = {'; \
	  for f in $(TEST_SRC); do n=$$(basename $$f .c | sed 's/^test_//'); \
	    echo "  {\"$$n\", suite_$$n},"; done; echo '};'; } > $@

$(BUILD)/tobj/%.o: tests/%.c tests/testutil.h tests/mujoco_fixture.h $(HOST_H) $(BUILD)/suites.h $(KERNEL_SRC) | $(BUILD)/tobj
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(PNG_CFLAGS) $(HDF5_CFLAGS) -D_DEFAULT_SOURCE -Wno-shadow -Wno-format-truncation -c $< -o $@

$(BUILD)/tests: $(TEST_OBJ) $(MJ_OBJ) $(FULL_LIBS)
	$(CC) $(ALL_CFLAGS) $(TEST_OBJ) $(MJ_OBJ) $(FULL_LIBS) $(MJ_LIBS) $(CHECK_LIBS) $(PNG_LIBS) $(OUT_LIBS) $(LDLIBS) -o $@

$(BUILD)/obj $(BUILD)/tobj:
	mkdir -p $@

# The Python package (python/, python/README.md): a fresh virtual
# environment under $(BUILD), the package installed into it from the
# working tree as a user installs it (its build runs `make
# $(BUILD)/libclcone.so` and `make mujoco-lib`), then its tests, which compare with the CLI. pytest
# exits 5 when it collects no test: like any non-zero exit, a failure here.
PYTHON ?= python3
PYVENV := $(BUILD)/pyvenv
.PHONY: python-test
python-test: check-deps
	$(call need_packages,python3-venv,clcone python)
	@$(MAKE) --no-print-directory $(BUILD)/clcone
	rm -rf $(PYVENV)
	$(PYTHON) -m venv $(PYVENV)
	@# the examples extra beside pytest (the examples' tests show that it
	@# names what they import) and the mujoco extra: the mujoco package of
	@# the version libclcone_mujoco is built against, the Makefile's wheel's
	CLCONE_BUILD=$(BUILD) $(PYVENV)/bin/pip install -q './python[examples,mujoco]' pytest
	CLCONE_CLI=$(BUILD)/clcone $(PYVENV)/bin/python -m pytest -q python/tests

# Checks Debian packages ($(1)) for a target named in messages ($(2));
# installs the missing ones when run as root with apt-get available,
# otherwise prints the exact command and fails.
define need_packages
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "$(2): installing missing packages:$$missing"; \
	    ($(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq $$missing) >/dev/null || \
	      { echo "$(2): apt-get install failed; run: sudo apt-get install$$missing" >&2; exit 1; }; \
	  else \
	    echo "$(2): missing packages:$$missing" >&2; \
	    echo "$(2): install them with: sudo apt-get install$$missing  (or: sudo make deps)" >&2; exit 1; \
	  fi; \
	fi
endef

check-deps:
	$(call need_packages,$(DEBIAN_DEPS),clcone)

deps:
	@if [ "$$(id -u)" = 0 ]; then $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y $(DEBIAN_DEPS); \
	else echo "run as root: sudo apt-get install $(DEBIAN_DEPS)"; exit 1; fi

# Sub-make after check-deps so pkg-config flags are read once packages exist.
# The environment of the suites built in folder $(1): the install suite
# (tests/test_install.c) installs from it and builds examples/ against it.
test_env = CLCONE_CLI=$(1)/clcone CLCONE_ROOT=$(CURDIR) CLCONE_BUILD=$(1) MUJOCO_VENV=$(MUJOCO_VENV)

# MuJoCo first (a failed pip only leaves the mujoco suite skipped), so
# that the sub-make finds it.
test: check-deps $(MUJOCO_STAMP)
	@$(MAKE) --no-print-directory $(BUILD)/tests $(BUILD)/clcone $(BUILD)/libclcone.so
	$(call test_env,$(BUILD)) $(BUILD)/tests
	@# the MPI suite too where Open MPI is installed (make mpi-test installs it)
	@if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then $(MAKE) --no-print-directory mpi-test; \
	else echo "clcone: Open MPI not installed, MPI suite skipped (make mpi-test installs it and runs it)"; fi

# The example is built with the sanitizers too: an instrumented library
# needs the ASan runtime loaded first, by the program. EXTRA_CFLAGS and
# EXTRA_LDFLAGS reach the suites' own makes (the install suite's `make
# install` builds the MPI part where Open MPI is installed) through the
# environment, so what they build links with the instrumented library.
SANITIZE_FLAGS := -fsanitize=address,undefined
SAN_BUILD ?= build/sanitize
SAN_CFLAGS := $(SANITIZE_FLAGS) -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# MuJoCo's wheel is the one in $(MUJOCO_VENV), so that the MuJoCo suites
# run under the sanitizers too (built there without it, they never ran).
SAN_VARS = BUILD=$(SAN_BUILD) MUJOCO_VENV=$(MUJOCO_VENV) EXTRA_CFLAGS="$(SAN_CFLAGS)" EXTRA_LDFLAGS="$(SANITIZE_FLAGS)"
sanitize: check-deps $(MUJOCO_STAMP)
	@$(MAKE) --no-print-directory $(SAN_VARS) $(SAN_BUILD)/tests $(SAN_BUILD)/clcone $(SAN_BUILD)/libclcone.so
	@# allocator_may_return_null: libhdf5 asks for impossible sizes on damaged
	@# files (tests/fuzz/regress/) and fails the read when refused, as the
	@# system allocator refuses them; ASan's default would abort instead.
	@# intercept_tls_get_addr=0: GCC 12's runtime takes a dynamic TLS block
	@# that glibc (>= 2.25) mallocs 16 bytes into a page for a glibc 2.19
	@# one and reads ASan's chunk header before it as the block's address
	@# and size; at exit LeakSanitizer's tracer scans that range and dies
	@# ("Tracer caught signal 11"). POCL's clang makes such blocks in the
	@# tests that build from source; about one placement in 128 is hit, and
	@# which depends on the heap (device:stale_cache_entry_never_used failed
	@# in CI). The runtime sizes no other dynamic TLS block, so it scans
	@# none: the leak check loses nothing. Test:
	@# device:leak_check_survives_dtls_at_page_offset_16.
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  CLCONE_EXAMPLE_FLAGS="$(SANITIZE_FLAGS)" $(call test_env,$(SAN_BUILD)) \
	  EXTRA_CFLAGS="$(SAN_CFLAGS)" EXTRA_LDFLAGS="$(SANITIZE_FLAGS)" $(SAN_BUILD)/tests

# The Python package's thread tests under ASan+UBSan: the package is
# installed into a fresh venv from the sanitized build (its build runs
# `make $(SAN_BUILD)/libclcone.so` with the same variables), and since
# Python itself is not instrumented the ASan runtime is preloaded.
# detect_leaks=0: what the interpreter keeps at exit is not clcone's. -s:
# a report ends the process, and pytest would drop what it captured.
PYSAN_VENV := $(SAN_BUILD)/pyvenv
.PHONY: python-sanitize
python-sanitize: check-deps
	$(call need_packages,python3-venv,clcone python)
	@$(MAKE) --no-print-directory $(SAN_VARS) $(SAN_BUILD)/libclcone.so
	rm -rf $(PYSAN_VENV)
	$(PYTHON) -m venv $(PYSAN_VENV)
	CLCONE_BUILD=$(SAN_BUILD) $(SAN_VARS) $(PYSAN_VENV)/bin/pip install -q ./python pytest numpy
	LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:intercept_tls_get_addr=0 \
	  $(PYSAN_VENV)/bin/python -m pytest -q -s -p no:cacheprovider python/tests/test_threads.py

# Valgrind runs the suites that never open an OpenCL device: under
# memcheck every POCL kernel build (LLVM) and worker thread runs
# instrumented (most of a 34-minute CI went there) and what it reports
# there is POCL's; `make sanitize` runs every suite, the device ones
# included, under ASan+UBSan. cli and install are left out too: their
# work happens in child processes, which valgrind does not follow.
# SUITES="..." picks others.
VALGRIND_SUITES := cone io lemke reference scene
valgrind: check-deps
	@$(MAKE) --no-print-directory $(BUILD)/tests $(BUILD)/clcone
	CK_FORK=no CLCONE_CLI=$(BUILD)/clcone valgrind --error-exitcode=1 --leak-check=full \
	  --errors-for-leak-kinds=definite --suppressions=tests/valgrind.supp $(BUILD)/tests \
	  $(or $(SUITES),$(VALGRIND_SUITES))

demo: check-deps
	@$(MAKE) --no-print-directory $(BUILD)/clcone
	@# exit 1 is the demo's honest "not converged": its solves stop at a cap
	@$(BUILD)/clcone demo || [ $$? -eq 1 ]

clean:
	rm -rf build

# ------------------------------------------------------------------ #
# Benchmarks (bench/): `make bench` builds bench/ against the static
# library and writes bench/results/report.md with PNG plots (gnuplot),
# then docs/benchmarks.md: the report headed by the commit, date and
# machine (bench/docs.sh), the one committed record of a run.
# BENCH_QUICK=1 runs the small version. The MuJoCo sections (5, 8) link
# against MuJoCo as the adapter does (MUJOCO_* above), section 8 with the
# adapter itself; without MuJoCo the report says they were skipped.
BENCH_DEPS := gnuplot-nox
BENCH_SRC := $(wildcard bench/*.c)
ifneq ($(MUJOCO_FOUND),)
MUJOCO_CFLAGS := -DBENCH_MUJOCO '-DBENCH_MUJOCO_FROM="$(MUJOCO_FROM)"' $(MUJOCO_INC)
endif

# Section 7 solves the Siconos problems with Siconos itself (numerics,
# from C): only build/bench links it, never the library or the CLI. `make
# bench` installs libsiconos-numerics-dev as it does the bench's other
# packages, but a failed install only leaves the section out (the report
# says so). The stamp records whether the bench was built with it, so
# that installing it later rebuilds the bench.
SICONOS_PKG := libsiconos-numerics-dev
SICONOS_H := $(wildcard /usr/include/siconos/numerics/FrictionContactProblem.h)
SICONOS_STAMP := $(BUILD)/bench-siconos
ifneq ($(SICONOS_H),)
SICONOS_CFLAGS := -DBENCH_SICONOS \
	'-DBENCH_SICONOS_VERSION="$(shell dpkg-query -W -f='$${Version}' $(SICONOS_PKG) 2>/dev/null)"' \
	-isystem /usr/include/siconos
SICONOS_LIBS := -lsiconos_numerics
endif

.PHONY: bench-siconos-deps FORCE
bench-siconos-deps:
	$(call need_packages,$(SICONOS_PKG),clcone bench (section 7, Siconos))

$(SICONOS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@echo 'siconos=$(if $(SICONOS_H),yes,no)' | cmp -s - $@ || echo 'siconos=$(if $(SICONOS_H),yes,no)' > $@

# A failed pip is not a failed bench or test run: no stamp, the fallback
# above, and the next `make test` or `make bench` tries again.
MJ_FALLBACK = falling back to a system MuJoCo of $(MUJOCO_MIN_NAME) or newer, if installed
$(MUJOCO_STAMP):
	@rm -f $@; \
	if python3 -m venv $(MUJOCO_VENV) && $(MUJOCO_VENV)/bin/pip install -q --disable-pip-version-check \
	    --no-deps --retries 1 --timeout 30 '$(MUJOCO_PIP)'; then \
	  files=$$($(MUJOCO_VENV)/bin/pip show -f $(firstword $(subst ==, ,$(MUJOCO_PIP)))); \
	  loc=$$(echo "$$files" | sed -n 's/^Location: //p'); \
	  lib=$$(echo "$$files" | grep -m1 -E '^ *[^ ]*/libmujoco\.so[.0-9]*$$' | tr -d ' '); \
	  hdr=$$(echo "$$files" | grep -m1 -E '^ *[^ ]*/include/mujoco/mujoco\.h$$' | tr -d ' '); \
	  if [ -n "$$lib" ] && [ -n "$$hdr" ]; then \
	    printf '%s\n%s\n' "$$loc/$${hdr%/mujoco/mujoco.h}" "$$loc/$$lib" > $@; \
	  else echo "clcone: $(MUJOCO_PIP) has no libmujoco.so or mujoco.h; $(MJ_FALLBACK)" >&2; fi; \
	else echo "clcone: pip install $(MUJOCO_PIP) failed; $(MJ_FALLBACK)" >&2; fi

.PHONY: bench-deps
bench-deps: check-deps
	$(call need_packages,$(BENCH_DEPS),clcone bench)

$(BUILD)/bench: $(BENCH_SRC) $(wildcard bench/*.h) $(HOST_H) $(FULL_LIBS) $(wildcard $(MUJOCO_STAMP)) $(SICONOS_STAMP) $(MJ_SRC)
	$(CC) $(ALL_CFLAGS) $(MUJOCO_CFLAGS) $(SICONOS_CFLAGS) $(BENCH_SRC) $(if $(MUJOCO_FOUND),$(MJ_SRC)) $(FULL_LIBS) $(MUJOCO_LIBS) \
	  $(SICONOS_LIBS) $(OUT_LIBS) $(LDLIBS) -o $@

bench: bench-deps $(MUJOCO_STAMP)
	@$(MAKE) --no-print-directory bench-siconos-deps || \
	  echo "clcone bench: without $(SICONOS_PKG), section 7 (Siconos itself) is skipped" >&2
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/clcone
	$(BUILD)/bench --out bench/results
	sh bench/docs.sh bench/results/report.md docs/benchmarks.md

# bench/gpu.sh's bundle, for a GPU machine where nothing can be installed:
# the bench and the CLI with every shared library ldd finds for them (the
# OpenCL loader, HDF5, cairo, ...) but the C library's own, which the
# other machine has; the GPU's OpenCL driver is that machine's.
.PHONY: gpu-bundle
gpu-bundle: check-deps
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/clcone
	rm -rf $(BUILD)/gpu-bundle
	mkdir -p $(BUILD)/gpu-bundle/lib
	cp $(BUILD)/bench $(BUILD)/clcone $(BUILD)/gpu-bundle/
	for f in $(BUILD)/bench $(BUILD)/clcone; do ldd $$f; done | awk '$$2 == "=>" && $$3 ~ /^\// {print $$3}' | \
	  sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' | \
	  xargs -r cp -L -t $(BUILD)/gpu-bundle/lib
	@du -sh $(BUILD)/gpu-bundle

# ------------------------------------------------------------------ #
# MPI (host/mpi/, include/clcone/mpi/ranks.h, docs/mpi.md):
# libclcone_mpi.a/.so over the library and build/clcone-mpi, the CLI's
# sources compiled with CLCONE_MPI (solve --mpi), against Open MPI, which
# `make mpi` installs as the other dependencies are. The flags are read
# when used (=), so that the sub-make after the install finds them.
MPI_DEPS := libopenmpi-dev openmpi-bin
HAVE_MPI := $(shell pkg-config --exists ompi-c 2>/dev/null && echo 1)
MPI_CFLAGS = $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS = $(shell pkg-config --libs ompi-c 2>/dev/null)
MPI_OBJ := $(patsubst host/%.c,$(BUILD)/obj/%.o,$(MPI_SRC))
MPI_H := $(wildcard include/clcone/mpi/*.h)
CLI_MPI_OBJ := $(patsubst host/%.c,$(BUILD)/obj-mpi/%.o,$(CLI_SRC) host/cli/cli_mpi.c)

$(BUILD)/obj/mpi/%.o: host/mpi/%.c $(HOST_H) $(MPI_H) | $(BUILD)/obj
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/libclcone_mpi.a: $(MPI_OBJ)
	rm -f $@
	ar qcs $@ $^
	@test $$(ar t $@ | wc -l) -eq $(words $^) || { echo '$@: a member is missing' >&2; rm -f $@; exit 1; }

$(BUILD)/libclcone_mpi.so: $(MPI_OBJ) $(BUILD)/libclcone.so
	$(CC) -shared -Wl,-soname,libclcone_mpi.so.$(SOMAJOR) -o $@.$(VERSION) $(MPI_OBJ) \
	  -L$(BUILD) -lclcone $(MPI_LIBS)
	ln -sf libclcone_mpi.so.$(VERSION) $@.$(SOMAJOR)
	ln -sf libclcone_mpi.so.$(SOMAJOR) $@

$(BUILD)/obj-mpi/%.o: host/%.c $(HOST_H) $(MPI_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) -DCLCONE_MPI -c $< -o $@

$(BUILD)/clcone-mpi: $(CLI_MPI_OBJ) $(BUILD)/libclcone_mpi.a $(FULL_LIBS)
	$(CC) $(CLI_MPI_OBJ) $(BUILD)/libclcone_mpi.a $(FULL_LIBS) $(MPI_LIBS) $(OUT_LIBS) $(LDLIBS) -o $@

# Every symbol the shared libraries export is declared in an installed
# header, and host/mpi/ includes no header of the library's sources
# (tools/check-exports.sh): no private ABI between the libraries.
.PHONY: check-exports
EXPORT_LIBS = $(BUILD)/libclcone.so $(BUILD)/libclcone_output.so $(if $(HAVE_MPI),$(BUILD)/libclcone_mpi.so)
check-exports: $(EXPORT_LIBS) $(EXPORT_LIBS:.so=.a)
	sh tools/check-exports.sh $(EXPORT_LIBS)

# `make install` installs the MPI part where Open MPI is installed.
install: $(if $(HAVE_MPI),$(BUILD)/libclcone_mpi.a $(BUILD)/libclcone_mpi.so $(BUILD)/clcone-mpi)

.PHONY: mpi mpi-deps mpi-test bench-mpi
mpi-deps: check-deps
	$(call need_packages,$(MPI_DEPS),clcone mpi)

mpi: mpi-deps
	@$(MAKE) --no-print-directory $(BUILD)/libclcone_mpi.a $(BUILD)/libclcone_mpi.so $(BUILD)/clcone-mpi $(BUILD)/clcone

$(BUILD)/mpi-api-test: tests/mpi/api.c $(MPI_H) $(BUILD)/libclcone_mpi.a $(BUILD)/libclcone.a
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) $< $(BUILD)/libclcone_mpi.a $(BUILD)/libclcone.a $(MPI_LIBS) $(LDLIBS) -o $@

# 1, 2, 3 and 4 ranks against one process, bitwise, the library's own
# calls (tests/mpi/api.c) and the error cases, each under a time limit
# (tests/mpi/run.sh).
mpi-test: mpi
	@$(MAKE) --no-print-directory $(BUILD)/mpi-api-test
	tests/mpi/run.sh $(BUILD)

$(BUILD)/mpi-pingpong: bench/mpi/pingpong.c
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) $< $(MPI_LIBS) -o $@

# The MPI section of the bench (bench/mpi/run.sh): reactions over ranks
# against one process, weak scaling 1 -> 2 ranks, the loopback ping-pong
# and a projection model fed with them, in bench/results/mpi.md.
bench-mpi: mpi
	@$(MAKE) --no-print-directory $(BUILD)/mpi-pingpong
	bench/mpi/run.sh $(BUILD) bench/results

# ------------------------------------------------------------------ #
# Oclgrind (tests/oclgrind/): every device row of the solver contract on
# both forms and precisions, batches and warm starts, under Oclgrind, a
# simulated GPU-like device that checks every memory access of every
# work-item (data races, uninitialised values, API errors), and under the
# limits real GPUs have (work-groups of 32 and 256, 16 KiB of local
# memory, too little global memory, a compiler that rejects the source).
# Fails on any report and on an answer unlike POCL's where the design
# promises it (tests/oclgrind/cases). OCLGRIND_JOBS runs at once.
OCLGRIND_JOBS ?= 2
.PHONY: oclgrind
oclgrind: check-deps $(MUJOCO_STAMP)
	$(call need_packages,oclgrind,clcone oclgrind)
	@$(MAKE) --no-print-directory $(BUILD)/clcone
	tests/oclgrind/run.sh $(BUILD)/clcone $(OCLGRIND_JOBS)

# ------------------------------------------------------------------ #
# Fuzzing (tests/fuzz/): a libFuzzer harness per reader (.dat, HDF5,
# scene, reactions), built with clang under ASan+UBSan by `make fuzz`;
# `make fuzz-run` runs each for FUZZ_SECONDS on a seed corpus from the
# Siconos problems (tests/data/problems) and generated scenes and fails
# on any crash, leak or sanitizer report. clang and its libFuzzer runtime (libclang-rt-V-dev,
# V its major version) are installed by fuzz-deps, for these targets only.
FUZZ_NAMES := dat hdf5 scene reactions
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SECONDS ?= 15

.PHONY: fuzz fuzz-run fuzz-deps
fuzz-deps: check-deps
	@install() { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "clcone fuzz: installing $$*"; \
	    ($(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq "$$@") >/dev/null || \
	      { echo "clcone fuzz: apt-get install failed; run: sudo apt-get install $$*" >&2; exit 1; }; \
	  else echo "clcone fuzz: missing $$*; install with: sudo apt-get install $$*" >&2; exit 1; fi; }; \
	command -v clang >/dev/null || install clang; \
	rt=libclang-rt-$$(clang -dumpversion | cut -d. -f1)-dev; \
	dpkg-query -W -f='$${Status}' $$rt 2>/dev/null | grep -q "install ok installed" || install $$rt

fuzz: fuzz-deps
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/fuzz CC=clang CFLAGS="-O1 -g" \
	  EXTRA_CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" EXTRA_LDFLAGS="$(FUZZ_SAN)" \
	  $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_NAMES))

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FULL_LIBS)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $< $(FULL_LIBS) $(OUT_LIBS) $(LDLIBS) -o $@

fuzz-run: fuzz
	@$(MAKE) --no-print-directory $(BUILD)/clcone
	tests/fuzz/run.sh $(BUILD)/fuzz $(BUILD)/clcone $(FUZZ_SECONDS)
