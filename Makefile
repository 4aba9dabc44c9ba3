# tensorexpr — the only build system.
#
#   make            build/txc, build/libtensorexpr.a, build/libtensorexpr.so
#   make demo       install missing Debian packages (as root), build, run an example
#   make check      install missing Debian packages (as root), build, run every test
#   make check SANITIZE=1   the same with AddressSanitizer and UBSan
#   make bench      the benchmark suite against numpy and OpenBLAS (bench/results.md)
#   make graphs     the examples' optimised operation graphs as PNG (build/graphs)
#   make fuzz       libFuzzer over the whole compile path (FUZZ_SECONDS=60)
#   make install    PREFIX=/usr/local DESTDIR=   (and make uninstall)
#   make clean
#
# Generated sources (lexer.c, parser.c/.h) and every build output go to
# build/; nothing generated is ever committed.

CC       ?= cc
PYTHON   ?= /usr/bin/python3
B        := build
VERSION  := $(shell sed -n 's/^\#define TX_VERSION_STRING "\(.*\)"/\1/p' src/tensorexpr.h)
MAJOR    := $(firstword $(subst ., ,$(VERSION)))

# The sanitizer build lives in its own directory; B must be settled before
# ALL_CFLAGS expands it (-I$(B) finds the generated parser.h).
ifeq ($(SANITIZE),1)
  B := build-san
  SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS   += -fsanitize=address,undefined
endif

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=c99 -D_POSIX_C_SOURCE=200809L $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden \
              -DTX_BUILDING_LIBRARY -Isrc -I$(B) -Iruntime $(SAN_FLAGS)
LDLIBS   := -ltcc -llapacke -lopenblas -lsleef -lmvec -ldl -lm -lpthread

DEB_PACKAGES := re2c lemon libtcc-dev check libopenblas-dev liblapacke-dev python3-numpy pkg-config \
                clang libclang-rt-14-dev man-db groff graphviz binutils libsleef-dev \
                python3-pytest python3-hypothesis \
                openmpi-bin libopenmpi-dev libscalapack-openmpi-dev

LIB_SRC  := src/arena.c src/recover.c src/buf.c src/diag.c src/cst.c src/sema.c src/sema_extent.c src/sema_linalg.c \
            src/graph.c src/lower.c src/grad.c src/pass_delta.c src/pass_cse.c src/pass_order.c src/pass_factor.c src/pass_blas.c src/pass_split.c src/pass_fuse.c src/pipeline.c \
            src/target.c src/emit_program.c src/emit_kernel.c src/emit_memory.c src/emit_dense.c src/emit_blocks.c src/emit_cblocks.c \
            src/emit_sparse.c src/emit_blas.c src/emit_linalg.c src/emit_expr.c src/emit_names.c \
            src/mpi_plan.c src/jit.c src/jit_cc.c src/api.c
LIB_OBJ  := $(B)/lexer.o $(B)/parser.o $(patsubst src/%.c,$(B)/%.o,$(LIB_SRC)) $(B)/runtime.o $(B)/pool.o \
            $(B)/gemm.o $(B)/prims_text.o $(B)/linalg_text.o $(B)/mpi_text.o $(B)/complex_text.o
RT_OBJ   := $(B)/npy.o

all: $(B)/txc $(B)/libtensorexpr.a $(B)/libtensorexpr.so

# ---- generated front end ----
# one lemon run makes both (a grouped target: with -j, two runs could
# rewrite parser.c while it is being compiled)
$(B)/parser.c $(B)/parser.h &: grammar/parser.y | $(B)
	lemon -q -d$(B) -T/usr/share/lemon/lempar.c grammar/parser.y

$(B)/lexer.c: grammar/lexer.re $(B)/parser.h | $(B)
	re2c -W -Werror -8 -I /usr/share/re2c/stdlib -o $@ grammar/lexer.re

$(B):
	mkdir -p $(B)

# ---- objects ----
$(B)/lexer.o: $(B)/lexer.c src/tx.h src/tensorexpr.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@
# Lemon's template trips -Wshadow style warnings we do not control.
$(B)/parser.o: $(B)/parser.c src/tx.h src/tensorexpr.h
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -Wno-unused-variable -Wno-missing-prototypes -c $< -o $@
$(B)/%.o: src/%.c src/tx.h src/tensorexpr.h $(B)/parser.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/sema.o $(B)/sema_extent.o $(B)/sema_linalg.o: src/sema.h
$(B)/api.o: runtime/hugemem.h
$(B)/emit_%.o: src/emit_%.c src/emit.h src/tx.h src/tensorexpr.h runtime/runtime.h $(B)/parser.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/npy.o: runtime/npy.c runtime/npy.h runtime/hugemem.h | $(B)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
# the runtime JIT code calls (primitives, linear algebra, the symbol table
# of runtime/symbols.def): gcc -O3, each primitive cloned per ISA
# (runtime.c). No FMA contraction, so every clone computes the same bits;
# no errno from libm, so sqrt is one vector instruction (still exact).
# The .inc texts for standalone C
RT_CFLAGS := -O3 -ffp-contract=off -fno-math-errno -Wno-unused-function
$(B)/runtime.o: runtime/runtime.c runtime/runtime.h runtime/symbols.def runtime/prims.inc runtime/vmath.inc runtime/linalg.inc \
               runtime/complex.inc | $(B)
	$(CC) $(ALL_CFLAGS) $(RT_CFLAGS) -c $< -o $@
$(B)/pool.o: runtime/pool.c runtime/runtime.h | $(B)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
$(B)/gemm.o: runtime/gemm.c runtime/runtime.h | $(B)
	$(CC) $(ALL_CFLAGS) -c $< -o $@
# runtime/X.inc as a C string tx_X_source, for the standalone emitter
# (prims.inc's after vmath.inc's, whose blends it uses)
TEXT_SED := sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/'
$(B)/%_text.c: runtime/%.inc | $(B)
	{ echo '#include "runtime.h"'; echo 'const char tx_$*_source[] ='; $(TEXT_SED) $<; echo ';'; } > $@
$(B)/prims_text.c: runtime/vmath.inc runtime/prims.inc | $(B)
	{ echo '#include "runtime.h"'; echo 'const char tx_prims_source[] ='; cat $^ | $(TEXT_SED); echo ';'; } > $@
$(B)/%_text.o: $(B)/%_text.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# ---- libraries and the CLI ----
$(B)/libtensorexpr.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# libtcc.a is not PIC: copy it with its three glibc data references
# renamed to hidden variables (src/tcc_shim.c) so it links into a .so.
$(B)/libtcc_shlib.a: | $(B)
	objcopy --redefine-sym stdout=txtcc_stdout --redefine-sym stderr=txtcc_stderr \
	    --redefine-sym environ=txtcc_environ /usr/lib/x86_64-linux-gnu/libtcc.a $@

$(B)/libtensorexpr.map: | $(B)
	printf '{\n  global: tx_*;\n  local: *;\n};\n' > $@

$(B)/libtensorexpr.so: $(LIB_OBJ) $(B)/tcc_shim.o $(B)/libtcc_shlib.a $(B)/libtensorexpr.map
	$(CC) -shared -o $@ -Wl,-soname,libtensorexpr.so.$(MAJOR) -Wl,--version-script=$(B)/libtensorexpr.map \
	    $(LIB_OBJ) $(B)/tcc_shim.o -Wl,--whole-archive $(B)/libtcc_shlib.a -Wl,--no-whole-archive \
	    $(LDFLAGS) -llapacke -lopenblas -lsleef -lmvec -ldl -lm -lpthread
	ln -sf libtensorexpr.so $(B)/libtensorexpr.so.$(MAJOR)

# the command line: main.c and its output files (cli_output.c), not in the library
CLI_OBJ  := $(B)/main.o $(B)/cli_output.o $(B)/cli_report.o $(B)/cli_mpi.o
$(CLI_OBJ): src/cli_output.h src/cli_report.h src/cli_mpi.h runtime/npy.h

$(B)/txc: $(CLI_OBJ) $(RT_OBJ) $(B)/libtensorexpr.a
	$(CC) -o $@ $(CLI_OBJ) $(RT_OBJ) $(B)/libtensorexpr.a $(LDFLAGS) $(LDLIBS)

# ---- Debian packages (installed when missing, if we are root) ----
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ]; then \
	        echo "installing:$$missing"; \
	        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	    else \
	        echo "missing Debian packages:$$missing (run 'make deps' as root, or apt-get install them)"; exit 1; \
	    fi; \
	fi

# ---- demo: a real program end to end ----
demo: deps
	$(MAKE) all
	@echo "== examples/matmul.tx"; cat examples/matmul.tx
	@echo "== txc graph examples/matmul.tx"; $(B)/txc graph examples/matmul.tx
	@mkdir -p $(B)/demo
	$(PYTHON) -c "import numpy as np; r=np.random.default_rng(1); \
	    np.save('$(B)/demo/A.npy', r.standard_normal((300,200))); \
	    np.save('$(B)/demo/B.npy', r.standard_normal((200,100)))"
	$(B)/txc run examples/matmul.tx A=$(B)/demo/A.npy B=$(B)/demo/B.npy C=$(B)/demo/C.npy --time
	$(PYTHON) -c "import numpy as np; A=np.load('$(B)/demo/A.npy'); B=np.load('$(B)/demo/B.npy'); \
	    C=np.load('$(B)/demo/C.npy'); e=abs(C-A@B).max()/abs(A@B).max(); \
	    print('C = A @ B, shape', C.shape, ', max relative difference from numpy: %.2e' % e); \
	    assert e < 1e-12"

# ---- tests ----
TEST_BINS := $(B)/check_npy $(B)/check_unit $(B)/check_api $(B)/check_sparse $(B)/check_threads $(B)/check_profile \
             $(B)/check_internal $(B)/check_prims $(B)/check_bind $(B)/check_gemm

$(B)/check_npy: tests/check_npy.c $(RT_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $$(pkg-config --libs check)
# the unit tests: one file per compiler phase (tests/unit/main.c lists the suites)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
$(B)/check_unit: $(UNIT_SRC) $(wildcard tests/unit/*.h) $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $(UNIT_SRC) $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_api: tests/check_api.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_sparse: tests/check_sparse.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_threads: tests/check_threads.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_gemm: tests/check_gemm.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_profile: tests/check_profile.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_internal: tests/check_internal.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
# the primitives through the library's table, and prims.inc compiled as
# each of the library's clones is (x86-64-v4, -v3, baseline)
$(B)/prims_isa%.o: tests/prims_isa.c tests/prims_isa.h runtime/prims.inc runtime/symbols.def | $(B)
	$(CC) $(ALL_CFLAGS) $(RT_CFLAGS) -DTX_ISA=$* -Itests -c $< -o $@
$(B)/check_prims: tests/check_prims.c tests/prims_isa.h runtime/vmath.inc $(B)/prims_isa4.o $(B)/prims_isa3.o $(B)/prims_isa1.o \
                  $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(B)/prims_isa4.o $(B)/prims_isa3.o $(B)/prims_isa1.o $(B)/libtensorexpr.a \
	    $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)
$(B)/check_bind: tests/check_bind.c $(B)/libtensorexpr.a
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libtensorexpr.a $(LDFLAGS) $$(pkg-config --libs check) $(LDLIBS)

check: deps
	$(MAKE) all $(TEST_BINS)
	TXC=$(B)/txc B=$(B) PYTHON=$(PYTHON) sh tests/run_all.sh

# the Python package's tests alone (also part of make check)
check-python: all
	PYTHONPATH=python $(PYTHON) -m pytest -q tests/python

# ---- pictures of the examples' optimised graphs (Graphviz) ----
graphs: all
	mkdir -p $(B)/graphs
	for f in examples/*.tx; do n=$$(basename $$f .tx); \
	    $(B)/txc graph --dot $$f > $(B)/graphs/$$n.dot && dot -Tpng $(B)/graphs/$$n.dot -o $(B)/graphs/$$n.png || exit 1; \
	done
	@echo "wrote $(B)/graphs/*.png"

# ---- fuzzing (libFuzzer; clang) ----
FUZZ_SECONDS ?= 60
FUZZ_DIR := build-fuzz
FUZZ_FLAGS := -std=c99 -D_POSIX_C_SOURCE=200809L -g -O1 -fsanitize=fuzzer,address,undefined \
              -Isrc -I$(FUZZ_DIR) -Iruntime

$(FUZZ_DIR)/fuzz_compile: tests/fuzz/fuzz_compile.c $(LIB_SRC) grammar/parser.y grammar/lexer.re src/tx.h \
                          runtime/runtime.c runtime/pool.c runtime/gemm.c runtime/symbols.def runtime/prims.inc $(B)/prims_text.c \
                          runtime/linalg.inc $(B)/linalg_text.c runtime/mpi.inc $(B)/mpi_text.c \
                          runtime/complex.inc $(B)/complex_text.c
	mkdir -p $(FUZZ_DIR)/corpus
	lemon -q -d$(FUZZ_DIR) -T/usr/share/lemon/lempar.c grammar/parser.y
	re2c -W -Werror -8 -I /usr/share/re2c/stdlib -o $(FUZZ_DIR)/lexer.c grammar/lexer.re
	clang $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_compile.c $(LIB_SRC) $(FUZZ_DIR)/lexer.c $(FUZZ_DIR)/parser.c \
	    runtime/runtime.c runtime/pool.c runtime/gemm.c $(B)/prims_text.c $(B)/linalg_text.c $(B)/mpi_text.c $(B)/complex_text.c \
	    -ltcc -llapacke -lopenblas -ldl -lm -lpthread

fuzz: deps
	$(MAKE) $(FUZZ_DIR)/fuzz_compile
	mkdir -p $(FUZZ_DIR)/corpus
	cp -n tests/num/*.tx tests/diag/*.tx tests/graph/*.tx examples/*.tx $(FUZZ_DIR)/corpus/ 2>/dev/null || true
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_DIR)/fuzz_compile -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 $(FUZZ_DIR)/corpus 2>&1 | tail -25

# the benchmarks' second peer: Debian's torch, installed when missing if
# we are root (else its columns read "-")
BENCH_PACKAGES := python3-torch

bench: deps
	@$(MAKE) -s deps DEB_PACKAGES="$(BENCH_PACKAGES)" || echo "make bench: without $(BENCH_PACKAGES), torch's columns read -"
	$(MAKE) all
	sh bench/run.sh

# ---- install ----
PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR  := $(DESTDIR)$(PREFIX)/lib
MANPAGES := $(wildcard man/*.1 man/*.3 man/*.5 man/*.7)
# the Python package, where Debian's python3 looks: /usr/lib/python3/dist-packages
# for PREFIX=/usr, PREFIX/lib/python3.X/dist-packages otherwise (/usr/local)
PYVER   := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYDIR   ?= $(DESTDIR)$(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)

$(B)/tensorexpr.pc: FORCE | $(B)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	    'Name: tensorexpr' 'Description: compiler for einsum-style tensor expressions to C, with a libtcc JIT' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -ltensorexpr' \
	    'Libs.private: -ltcc -llapacke -lopenblas -lsleef -lmvec -ldl -lm -lpthread' > $@

install: all $(B)/tensorexpr.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(B)/txc $(DESTDIR)$(PREFIX)/bin/txc
	install -m 644 $(B)/libtensorexpr.a $(LIBDIR)/libtensorexpr.a
	install -m 755 $(B)/libtensorexpr.so $(LIBDIR)/libtensorexpr.so.$(VERSION)
	ln -sf libtensorexpr.so.$(VERSION) $(LIBDIR)/libtensorexpr.so.$(MAJOR)
	ln -sf libtensorexpr.so.$(MAJOR) $(LIBDIR)/libtensorexpr.so
	install -m 644 src/tensorexpr.h $(DESTDIR)$(PREFIX)/include/tensorexpr.h
	install -m 644 $(B)/tensorexpr.pc $(LIBDIR)/pkgconfig/tensorexpr.pc
	install -d $(PYDIR)/tensorexpr
	install -m 644 python/tensorexpr/__init__.py python/tensorexpr/_lib.py python/tensorexpr/_core.py \
	    python/tensorexpr/_einsum.py $(PYDIR)/tensorexpr/
	printf '# written by make install\nLIBRARY = %s\n' "'$(PREFIX)/lib/libtensorexpr.so.$(MAJOR)'" \
	    > $(PYDIR)/tensorexpr/_libpath.py
	for m in $(MANPAGES); do s=$${m##*.}; install -d $(DESTDIR)$(PREFIX)/share/man/man$$s; \
	    install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/txc $(LIBDIR)/libtensorexpr.a $(LIBDIR)/libtensorexpr.so \
	    $(LIBDIR)/libtensorexpr.so.$(MAJOR) $(LIBDIR)/libtensorexpr.so.$(VERSION) \
	    $(DESTDIR)$(PREFIX)/include/tensorexpr.h $(LIBDIR)/pkgconfig/tensorexpr.pc
	rm -rf $(PYDIR)/tensorexpr
	for m in $(MANPAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m##*/}; done

clean:
	rm -rf build build-san

FORCE:

.PHONY: check-python
.PHONY: all deps demo check bench fuzz graphs install uninstall clean FORCE
