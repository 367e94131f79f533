# SPDX-License-Identifier: GPL-2.0-only
#
# Read after the tree's tools/testing/selftests/kvm/Makefile
# (make -f Makefile -f extra.mk): builds our tests and lib/ with exactly the
# upstream CFLAGS, LDFLAGS and libkvm objects.
OURS := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
OUR_LIB_SRCS := $(wildcard $(OURS)/lib/*.c $(OURS)/lib/x86_64/*.c)
OUR_LIB_OBJS := $(patsubst $(OURS)/lib/%.c,$(OUTPUT)/ours/lib/%.o,$(OUR_LIB_SRCS))
OUR_TESTS := $(patsubst $(OURS)/selftests/kvm/x86_64/%.c,$(OUTPUT)/x86_64/%,\
	       $(wildcard $(OURS)/selftests/kvm/x86_64/*.c))
OUR_CFLAGS := -I$(OURS)/lib/include -I$(OURS)/lib/include/x86_64

ours: $(OUR_TESTS)

$(OUTPUT)/ours/lib/%.o: $(OURS)/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(OUR_CFLAGS) -c $< -o $@

$(OUR_TESTS): $(OUTPUT)/x86_64/%: $(OURS)/selftests/kvm/x86_64/%.c $(OUR_LIB_OBJS) $(LIBKVM_OBJS)
	$(CC) $(CFLAGS) $(OUR_CFLAGS) $(LDFLAGS) $< $(OUR_LIB_OBJS) $(LIBKVM_OBJS) $(LDLIBS) -o $@
