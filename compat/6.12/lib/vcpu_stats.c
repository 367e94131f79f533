// SPDX-License-Identifier: GPL-2.0-only
/* vcpu_has_stat() and vcpu_get_stat(); see vcpu_stats.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_util.h"
#include "vcpu_stats.h"

#define MAX_STATS_FDS	64

static struct vcpu_stats_fd {
	struct kvm_vcpu *vcpu;
	int fd;
	struct kvm_stats_header header;
	struct kvm_stats_desc *descs;
} fds[MAX_STATS_FDS];

static struct vcpu_stats_fd *stats_fd_of(struct kvm_vcpu *vcpu)
{
	int i;

	for (i = 0; i < MAX_STATS_FDS; i++)
		if (fds[i].vcpu == vcpu)
			return &fds[i];
	return NULL;
}

static struct kvm_stats_desc *find_desc(struct vcpu_stats_fd *s, const char *name)
{
	struct kvm_stats_desc *desc;
	int i;

	for (i = 0; i < s->header.num_desc; i++) {
		desc = get_stats_descriptor(s->descs, i, &s->header);
		if (!strcmp(desc->name, name))
			return desc;
	}
	return NULL;
}

bool __vcpu_has_stat(struct kvm_vcpu *vcpu, const char *name)
{
	struct vcpu_stats_fd *s = stats_fd_of(vcpu);

	/* A vCPU at the address of a freed one gets a fresh fd. */
	if (s) {
		close(s->fd);
		free(s->descs);
	} else {
		s = stats_fd_of(NULL);
		TEST_ASSERT(s, "more than %d vCPUs with stats fds", MAX_STATS_FDS);
	}
	s->vcpu = vcpu;
	s->fd = vcpu_get_stats_fd(vcpu);
	read_stats_header(s->fd, &s->header);
	s->descs = read_stats_descriptors(s->fd, &s->header);
	return find_desc(s, name);
}

u64 __vcpu_get_stat(struct kvm_vcpu *vcpu, const char *name)
{
	struct vcpu_stats_fd *s = stats_fd_of(vcpu);
	struct kvm_stats_desc *desc;
	u64 value;

	TEST_ASSERT(s, "vCPU %u: call vcpu_has_stat() before it runs", vcpu->id);
	desc = find_desc(s, name);
	TEST_ASSERT(desc, "vCPU %u has no stat '%s'", vcpu->id, name);
	read_stat_data(s->fd, &s->header, desc, &value, 1);
	return value;
}
