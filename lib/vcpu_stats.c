// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-vCPU binary stats reader, in the style of __vm_get_stat().
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "vcpu_stats.h"

bool vcpu_stat_open(struct kvm_vcpu *vcpu, const char *name,
		    struct vcpu_stat *stat)
{
	struct kvm_stats_header header;
	struct kvm_stats_desc *desc;
	int i;

	stat->fd = vcpu_get_stats_fd(vcpu);
	stat->vcpu_id = vcpu->id;
	read_stats_header(stat->fd, &header);
	stat->descs = read_stats_descriptors(stat->fd, &header);
	stat->data_offset = header.data_offset;

	for (i = 0; i < header.num_desc; i++) {
		desc = get_stats_descriptor(stat->descs, i, &header);
		if (!strcmp(desc->name, name)) {
			stat->desc = desc;
			return true;
		}
	}

	vcpu_stat_close(stat);
	return false;
}

uint64_t vcpu_stat_read(struct vcpu_stat *stat)
{
	uint64_t value;
	ssize_t r;

	r = pread(stat->fd, &value, sizeof(value),
		  stat->data_offset + stat->desc->offset);
	TEST_ASSERT(r == sizeof(value), "reading stat '%s' of vCPU %u: %zd",
		    stat->desc->name, stat->vcpu_id, r);
	return value;
}

void vcpu_stat_close(struct vcpu_stat *stat)
{
	free(stat->descs);
	close(stat->fd);
	stat->descs = NULL;
	stat->desc = NULL;
	stat->fd = -1;
}
