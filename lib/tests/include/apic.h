/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ICR fields the model reads, under apic.h's names, with their values
 * from the SDM (Vol. 3A, "Interrupt Command Register (ICR)"), for building
 * the model on a host without the KVM selftests' headers.
 */
#ifndef IPI_UNIT_APIC_H
#define IPI_UNIT_APIC_H

#define APIC_VECTOR_MASK	0x000ffULL
#define APIC_DM_FIXED_MASK	0x00700ULL
#define APIC_DEST_LOGICAL	0x00800ULL
#define APIC_ICR_BUSY		0x01000ULL
#define APIC_INT_ASSERT		0x04000ULL
#define APIC_INT_LEVELTRIG	0x08000ULL
#define APIC_DEST_ALLBUT	0xc0000ULL
#define X2APIC_RSVD_BITS_MASK	0xfff32000ULL	/* bits 31:20, 17:16, 13 */

#endif
