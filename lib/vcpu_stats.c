// SPDX-License-Identifier: GPL-2.0-only
/*
 * vcpu_has_stat(): kvm_util reads a stat by name and fails when it is
 * missing; this only looks for the name, in the same descriptors.
 */
#include <string.h>

#include "kvm_util.h"
#include "vcpu_stats.h"

bool __vcpu_has_stat(struct kvm_vcpu *vcpu, const char *name)
{
	struct kvm_binary_stats *stats = &vcpu->stats;
	struct kvm_stats_desc *desc;
	int i;

	if (!stats->desc) {
		read_stats_header(stats->fd, &stats->header);
		stats->desc = read_stats_descriptors(stats->fd, &stats->header);
	}

	for (i = 0; i < stats->header.num_desc; i++) {
		desc = get_stats_descriptor(stats->desc, i, &stats->header);
		if (!strcmp(desc->name, name))
			return true;
	}
	return false;
}
