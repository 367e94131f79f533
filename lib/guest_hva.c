// SPDX-License-Identifier: GPL-2.0-only
#include "kvm_util.h"
#include "guest_hva.h"

void *guest_hva(struct kvm_vm *vm, void *gva, size_t size)
{
	u8 *start = addr_gva2hva(vm, (gva_t)gva);
	u8 *last = addr_gva2hva(vm, (gva_t)gva + size - 1);

	TEST_ASSERT(last - start == size - 1,
		    "guest data at 0x%lx (%zu bytes) not contiguous in host memory",
		    (gva_t)gva, size);
	return start;
}
