/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one ABI shared by the BPF datapath and the userspace loader.
 *
 * Every layout here is compiled into both sides. Fixed-width types only,
 * explicit padding, a _Static_assert on every size; tests/unit/test_abi.c
 * also compares these layouts with the BTF of the compiled BPF object.
 */
#ifndef BLOOMGATE_ABI_H
#define BLOOMGATE_ABI_H

#include <linux/types.h>

/* 2: name allowlist (allown_n), DNS counters, actions, name events and the
 * 32-byte attachment record (issue 4).
 * 3: abi_version and layout are one byte each; the filter header's
 * subs_depths mask (the suffix depths a query probes as SUBS keys).
 * 4: the EXACT name key hashes the wire name in one pass (bloomgate/dns.h,
 * E), no longer the suffix chain of every label: same layout, other keys,
 * so a version 3 filter must not be probed by this datapath.
 * 5: the exact stage (issue 11): a table of 32-bit fingerprints of the
 * Bloom keys, probed on a Bloom positive (fp_off, fp_nbuckets in the
 * header, in place of allow6_off and short6_off, which follow from the
 * other offsets: bg_allow6_off(), bg_short6_off()). */
#define BG_ABI_VERSION 5
#define BG_FILTER_MAGIC 0x46474c42U /* "BLGF" little endian */

/* Layout identifiers stored in the filter header. */
#define BG_LAYOUT_BLOCKED512 1 /* 512-bit cache-line blocks, k bits per key */

/* Bloom block: one 64-byte cache line. */
#define BG_BLOCK_BITS 512
#define BG_BLOCK_WORDS (BG_BLOCK_BITS / 64)
/* Upper bound on bits set per key; loops in the datapath are bounded by it. */
#define BG_K_MAX 16

/* Key kinds: the first byte of every key, so kinds never collide. */
enum bg_key_kind {
	BG_KEY_IPV4 = 1,
	BG_KEY_IPV6 = 2,
	BG_KEY_NAME_EXACT = 3, /* a domain name itself (bloomgate/dns.h) */
	BG_KEY_NAME_SUBS = 4, /* the proper subdomains of a domain name */
};

/*
 * IPv4 prefix key: 8 bytes, one xxh64 lane. A plain address is a /32.
 * addr is in network byte order with host bits cleared.
 */
struct bg_key4 {
	__u8 kind; /* BG_KEY_IPV4 */
	__u8 plen; /* 0..32 */
	__u16 pad; /* zero */
	__u32 addr; /* network byte order, masked to plen */
};
_Static_assert(sizeof(struct bg_key4) == 8, "bg_key4 size");

/* IPv6 prefix key: 24 bytes, three xxh64 lanes. A plain address is a /128. */
struct bg_key6 {
	__u8 kind; /* BG_KEY_IPV6 */
	__u8 plen; /* 0..128 */
	__u16 pad0; /* zero */
	__u32 pad1; /* zero */
	__u8 addr[16]; /* network byte order, masked to plen */
};
_Static_assert(sizeof(struct bg_key6) == 24, "bg_key6 size");

/* Bloom probes per packet and family are bounded by this constant, whatever
 * the list: the builder expands prefixes to at most this many lengths
 * (controlled prefix expansion), see user/core/filter.c. */
#define BG_PROBES_MAX 4
/* IPv4 prefixes of length <= 16 live in an exact bitmap of 2^16 bits, one
 * bit per /16 (128 elements of 512 bits): one read, no hash. */
#define BG_SHORT4_MAXLEN 16
#define BG_SHORT4_ELEMS ((1U << 16) / 512)

/*
 * Filter header: element 0 of every filter map. One map holds a whole
 * filter, so its parts always change together:
 *
 *   [0]                      this header
 *   [1 .. 128]               IPv4 /16 bitmap, if flags & BG_FILTER_F_SHORT4
 *   [bloom .. +nblocks)      Bloom blocks, bloom = 1 (+128 with the bitmap)
 *   [fp_off .. +fp_nbuckets) the exact stage: BG_FP_PER_BUCKET 32-bit
 *                            fingerprints of the Bloom keys a bucket
 *                            (struct bg_fp_bucket), none with
 *                            fp_nbuckets == 0 (`load --confirm off`)
 *   [allow4_off ..)          IPv4 allow ranges, 8 per element
 *   [bg_allow6_off() ..)     IPv6 allow ranges, 2 per element
 *   [bg_short6_off() ..)     IPv6 listed ranges too short to expand, 2 per
 *                            element
 *   [bg_allown_off() ..)     allowed domain-name keys: the sorted, distinct
 *                            64-bit Bloom hashes of the allow entries'
 *                            name keys (bloomgate/dns.h), 8 per element,
 *                            right after the short6 table
 *
 * Each table follows the one before it, so only the first offsets are
 * stored (bloomgate/lookup.h derives the others).
 */
struct bg_filter_header {
	__u32 magic; /* BG_FILTER_MAGIC */
	__u8 abi_version; /* BG_ABI_VERSION */
	__u8 layout; /* BG_LAYOUT_* */
	/* bit i (1 <= i <= BG_DNS_SUFFIX_MAX, bloomgate/dns.h) set when the
	 * Bloom part holds the SUBS key of at least one name of i labels: a
	 * query probes only those suffix depths. Other bits are clear
	 * (BG_SUBS_DEPTHS_ALL; bg_header_ok refuses a header without). */
	__u16 subs_depths;
	__u32 nblocks; /* Bloom blocks (may be 0 with no expandable prefix) */
	__u8 k; /* bits per key, 1..BG_K_MAX */
	__u8 flags; /* BG_FILTER_F_* */
	__u8 n4; /* IPv4 prefix lengths probed in the Bloom part */
	__u8 n6; /* IPv6 prefix lengths probed in the Bloom part */
	__u64 seed; /* hash seed, random per build */
	__u32 entries; /* keys in the Bloom part, after expansion */
	__u8 len4[BG_PROBES_MAX]; /* IPv4 lengths probed, longest first */
	__u8 len6[BG_PROBES_MAX]; /* IPv6 lengths probed, longest first */
	__u32 allow4_off, allow4_n; /* element index, number of ranges */
	/* The exact stage: its first element and its buckets; 0 buckets: no
	 * stage, a Bloom positive is acted on as it is. */
	__u32 fp_off, fp_nbuckets;
	__u32 allow6_n; /* at bg_allow6_off() */
	__u32 short6_n; /* at bg_short6_off() */
	__u32 allown_n; /* allowed name keys, at bg_allown_off() */
};
_Static_assert(sizeof(struct bg_filter_header) == 64, "header is one block");

#define BG_FILTER_F_SHORT4 0x01 /* the IPv4 /16 bitmap is present */
#define BG_FILTER_F_NAMES 0x02 /* the Bloom part holds domain-name keys */
/* The bits bg_filter_header.subs_depths may have: 1 .. BG_DNS_SUFFIX_MAX
 * (checked against it in bloomgate/dns.h). */
#define BG_SUBS_DEPTHS_ALL 0x07feU

/* Exact ranges (allowlists, short IPv6 prefixes): sorted, disjoint,
 * inclusive, host-order numbers so they compare as integers. */
struct bg_range4 {
	__u32 start;
	__u32 end;
};
_Static_assert(sizeof(struct bg_range4) * 8 == 64, "8 IPv4 ranges an element");

struct bg_range6 {
	__u64 start_hi, start_lo;
	__u64 end_hi, end_lo;
};
_Static_assert(sizeof(struct bg_range6) * 2 == 64, "2 IPv6 ranges an element");
#define BG_RANGE4_PER_ELEM 8
#define BG_RANGE6_PER_ELEM 2
#define BG_NAMEKEY_PER_ELEM 8 /* allowed name keys (__u64) an element */
/* Binary-search steps bound: ranges per table < 2^BG_RANGE_STEPS. */
#define BG_RANGE_STEPS 28

struct bg_block {
	__u64 w[BG_BLOCK_WORDS];
};
_Static_assert(sizeof(struct bg_block) == 64, "block is one cache line");

/*
 * A bucket of the exact stage: BG_FP_PER_BUCKET fingerprints, one cache
 * line; 0 is an empty slot (a fingerprint is never 0). A key's
 * fingerprint is in one of its two buckets (bloomgate/lookup.h,
 * bg_fp_confirm; built by user/core/filter.c).
 */
#define BG_FP_PER_BUCKET 16
struct bg_fp_bucket {
	__u32 fp[BG_FP_PER_BUCKET];
};
_Static_assert(sizeof(struct bg_fp_bucket) == 64, "bucket is one cache line");

/* Filter map: ARRAY, key __u32, value one 64-byte element. */
#define BG_FILTER_VALUE_SIZE 64

/* ---- Counters and malformed-packet reasons --------------------------------
 * X-macros: the index enum and the names used by `stats` come from one list.
 * Append only; a retired index stays reserved forever.
 */
#define BG_COUNTERS(X)                                                        \
	X(PACKETS, "packets")         /* every frame the program saw */      \
	X(IPV4, "ipv4")               /* IPv4 packets */                      \
	X(IPV6, "ipv6")               /* IPv6 packets */                      \
	X(NON_IP, "non_ip")           /* neither IPv4 nor IPv6, passed */      \
	X(FRAGMENTS, "fragments")     /* IP fragments, judged by address */    \
	X(PROBES, "probes")           /* Bloom, bitmap and range lookups */   \
	X(NEGATIVES, "negatives")     /* addresses judged "not listed" */     \
	X(POSITIVES, "positives")     /* addresses judged listed (confirmed) */ \
	X(DROPPED, "dropped")         /* packets dropped on a positive */     \
	X(FLAGGED, "flagged")         /* packets passed and flagged */        \
	X(PASSED, "passed")           /* packets passed (all reasons) */      \
	X(NO_FILTER, "no_filter")     /* no filter loaded: passed */          \
	X(EVENTS_LOST, "events_lost") /* ring buffer full: event not sent */   \
	X(MALFORMED, "malformed")     /* sum of the malformed reasons below */ \
	X(ALLOWLISTED, "allowlisted") /* positives passed by the allowlist */ \
	/* DNS (bloomgate_dns, bpf/dns.h). The reasons a packet to the DNS   \
	 * port is not judged by name are counters, not malformed reasons:   \
	 * a response or a NOTIFY is a well-formed packet, and "malformed"   \
	 * stays the sum of the L2/L3 parser's reasons. */                   \
	X(DNS_QUERIES, "dns_queries")     /* queries parsed to a name */      \
	X(DNS_PROBES, "dns_probes")       /* name-key Bloom probes */         \
	X(DNS_POSITIVES, "dns_positives") /* names judged listed (confirmed) */ \
	X(DNS_NEGATIVES, "dns_negatives") /* names judged "not listed" */     \
	X(DNS_RESPONSE, "dns_response")   /* QR=1: not a query */             \
	X(DNS_OPCODE, "dns_opcode")       /* OPCODE is not QUERY (0) */       \
	X(DNS_QDCOUNT, "dns_qdcount")     /* QDCOUNT is not 1 */              \
	X(DNS_NAME_TOO_LONG, "dns_name_too_long") /* QNAME over 255 bytes */  \
	X(DNS_BAD_LABEL, "dns_bad_label") /* pointer or reserved label type */ \
	X(DNS_TRUNCATED, "dns_truncated") /* UDP/DNS message cut short */ \
	X(ANSWERED, "answered")           /* queries answered (XDP_TX) */     \
	X(DNS_ALLOWLISTED, "dns_allowlisted") /* name positives allowed */    \
	X(DNS_NO_PROG, "dns_no_prog")     /* tail call to bloomgate_dns     \
					     failed: judged by address only */ \
	/* The exact stage (issue 11): a Bloom positive whose key it does not  \
	 * hold is not listed; counted once per address or query judged.    \
	 * Included in negatives / dns_negatives. */                         \
	X(BLOOM_FP, "bloom_false_positives") /* addresses */                \
	X(DNS_BLOOM_FP, "dns_bloom_false_positives") /* query names */      \
	/* A frame with no address to judge (a malformed reason that leaves \
	 * family 0: cut or invalid L2/L3 headers, more than BG_VLAN_MAX     \
	 * tags) dropped by `attach --unparsed drop`; counted in dropped and \
	 * under its malformed reason too. */                                \
	X(UNPARSED_DROPPED, "unparsed_dropped")                              \
	/* A positive (confirmed, not allowlisted) whose address is in the   \
	 * protected set (struct bg_protect_map): passed, never dropped nor  \
	 * flagged; counted in positives and passed too. */                  \
	X(PROTECTED, "protected")

#define BG_MALFORMED_REASONS(X)                                               \
	X(TRUNC_ETH, "trunc_eth")           /* shorter than an Ethernet header */ \
	X(TRUNC_VLAN, "trunc_vlan")         /* VLAN tag cut short */             \
	X(VLAN_TOO_DEEP, "vlan_too_deep")   /* more than BG_VLAN_MAX tags */     \
	X(TRUNC_IPV4, "trunc_ipv4")         /* IPv4 header or options cut short */ \
	X(BAD_IPV4_IHL, "bad_ipv4_ihl")     /* IHL below 5 */                    \
	X(BAD_IPV4_VERSION, "bad_ipv4_version") /* version field is not 4 */     \
	X(TRUNC_IPV6, "trunc_ipv6")         /* IPv6 header cut short */          \
	X(BAD_IPV6_VERSION, "bad_ipv6_version") /* version field is not 6 */     \
	X(TRUNC_IPV6_EXT, "trunc_ipv6_ext") /* extension header cut short */     \
	X(IPV6_EXT_TOO_LONG, "ipv6_ext_too_long") /* chain over BG_IPV6_EXT_MAX */

#define BG__ENUM(name, str) BG_CNT_##name,
enum bg_counter { BG_COUNTERS(BG__ENUM) BG_CNT__COUNT };
#undef BG__ENUM
#define BG__ENUM(name, str) BG_MAL_##name,
enum bg_malformed { BG_MALFORMED_REASONS(BG__ENUM) BG_MAL__COUNT };
#undef BG__ENUM

/* Room reserved so new counters never change the map's value size. */
#define BG_CNT_SLOTS 32
#define BG_MAL_SLOTS 32
_Static_assert(BG_CNT__COUNT <= BG_CNT_SLOTS, "too many counters");
_Static_assert(BG_MAL__COUNT <= BG_MAL_SLOTS, "too many malformed reasons");

/* Per-CPU counter block: the single value of a PERCPU_ARRAY. */
struct bg_counters {
	__u64 cnt[BG_CNT_SLOTS];
	__u64 malformed[BG_MAL_SLOTS];
};
_Static_assert(sizeof(struct bg_counters) == 8 * (BG_CNT_SLOTS + BG_MAL_SLOTS),
	       "counters size");

/* ---- Configuration and verdicts ---------------------------------------- */
enum bg_match {
	BG_MATCH_DST = 1,
	BG_MATCH_SRC = 2,
	BG_MATCH_BOTH = 3, /* BG_MATCH_DST | BG_MATCH_SRC */
};

enum bg_action {
	BG_ACTION_DROP = 1,
	BG_ACTION_FLAG = 2,
};

enum bg_verdict {
	BG_VERDICT_PASS = 0,
	BG_VERDICT_DROP = 1,
	BG_VERDICT_FLAG = 2,
	BG_VERDICT_ANSWER = 3, /* a DNS query answered with XDP_TX */
};

/* What bloomgate_dns does with a query whose name is listed (and not
 * allowed), chosen at attach time (`attach --dns-action`). */
enum bg_dns_action {
	BG_DNS_ACTION_DROP = 1,
	BG_DNS_ACTION_FLAG = 2, /* pass, count, event with the name */
	BG_DNS_ACTION_NXDOMAIN = 3, /* answer RCODE 3 in place, XDP_TX */
	BG_DNS_ACTION_REFUSED = 4, /* answer RCODE 5 in place, XDP_TX */
};

/*
 * What becomes of a frame the parser could not take to an address
 * (bpf/parse.h: family 0 with a malformed reason), chosen at attach time
 * (`attach --unparsed`). A well-formed non-IP frame (ARP...) is not
 * unparsed: it always passes. Nor is an IPv6 packet whose extension chain
 * is cut or too long: its fixed header is valid, it is judged by address.
 */
enum bg_unparsed {
	BG_UNPARSED_PASS = 0, /* counted and passed (the default) */
	BG_UNPARSED_DROP = 1, /* counted and dropped (unparsed_dropped) */
};

/* UDP destination ports judged as DNS: at most this many, set at attach
 * time (`attach --dns-port`, default 53). */
#define BG_DNS_PORTS_MAX 4

/* Event sent through the ring buffer for every flagged packet (drops send
 * none: at line rate they would flood the ring; they are counted). */
struct bg_event {
	__u64 ts_ns; /* bpf_ktime_get_ns() */
	__u32 ifindex; /* ingress interface */
	__u8 family; /* BG_KEY_IPV4 or BG_KEY_IPV6 */
	__u8 which; /* BG_MATCH_DST or BG_MATCH_SRC: the address that matched */
	__u8 verdict; /* enum bg_verdict */
	__u8 pad;
	__u8 addr[16]; /* matched address, IPv4 in the first 4 bytes */
};
_Static_assert(sizeof(struct bg_event) == 32, "event size");

/* bg_event.which of a flagged DNS query: the record is a bg_name_event. */
#define BG_EVENT_NAME 4

/* Event for a flagged DNS query: ev.which = BG_EVENT_NAME, ev.addr the
 * client (source) address, name the QNAME in wire form (length-prefixed
 * labels, lowercased, ending with the root byte; zero padded). */
struct bg_name_event {
	struct bg_event ev;
	__u8 name[256];
};
_Static_assert(sizeof(struct bg_name_event) == 32 + 256, "name event size");

/* Attachment record, one per interface, kept in a pinned array for `status`. */
struct bg_attach_rec {
	__u32 ifindex; /* 0: free slot */
	__u8 mode; /* 1 native, 2 skb (BG_ATTACH_MODE_MASK); flags above */
	__u8 match; /* enum bg_match */
	__u8 action; /* enum bg_action */
	__u8 dns_action; /* enum bg_dns_action */
	__u32 prog_id; /* id of the bloomgate program on that interface */
	__u32 netns_ino; /* network namespace of ifindex (nsfs inode) */
	__u32 dns_prog_id; /* id of its bloomgate_dns (tail-called) */
	__u16 dns_ports[BG_DNS_PORTS_MAX]; /* host order, 0 = unused */
	/* Filter map size in elements (`attach --capacity`), 0 = any size.
	 * Every attachment of a pin directory shares one bg_filters, whose
	 * inner-map template has this size, so their records agree. */
	__u32 capacity;
};
_Static_assert(sizeof(struct bg_attach_rec) == 32, "attach record size");
/*
 * The record has no free byte, so settings added later are flags in the
 * high bits of mode, whose values use the low four. A record written
 * before a flag existed has 0 there: the flag's 0 must be the old
 * behaviour (that is the versioning). Every reader of mode masks it.
 */
#define BG_ATTACH_MODE_MASK 0x0f
#define BG_ATTACH_F_UNPARSED_DROP 0x80 /* attach --unparsed drop; 0: pass */
/* attach --grow: a filter that outgrows the capacity gets a larger map and
 * program, replacing the attached ones (user/kern/attach.h); 0: refused */
#define BG_ATTACH_F_GROW 0x40
/* attach --chain: every packet passed goes on to the program in the
 * attachment's BG_PROG_NEXT slot, when there is one (`bloomgate chain`) */
#define BG_ATTACH_F_CHAIN 0x20
#define BG_ATTACH_MAX 64

/* ---- The protected set -----------------------------------------------------
 * Addresses the datapath never drops nor flags, whatever a filter says:
 * the addresses of the attached interfaces, the next hops of the default
 * routes, the resolvers of resolv.conf and the operator's own prefixes
 * (load --protect, the agent's protect:). One pinned map a pin directory
 * (BG_MAP_PROTECT), apart from the filter: a filter built elsewhere (an
 * artifact, the fleet) is swapped in byte for byte and is still judged
 * against this gateway's own set. The datapath reads it only where it
 * would drop or flag an address (after the exact stage and the
 * allowlist): clean traffic never touches it.
 *
 * The map is an ARRAY of one struct bg_protect_map, BPF_F_MMAPABLE, made
 * of two halves: the datapath reads half[sel & 1]; a writer (under the pin
 * directory's lock) fills the other half through the mapping, then stores
 * sel, one aligned word, so a packet sees the old set or the new one,
 * never a mixture; before it writes into a half again it waits for an RCU
 * grace period since the flip (user/kern/protect.c), so no packet still
 * reads the half it overwrites.
 */
#define BG_PROTECT_MAX 256 /* items a set holds, and ranges of each family */
/* Binary-search steps over BG_PROTECT_MAX ranges: 2^steps > MAX. */
#define BG_PROTECT_STEPS 9
_Static_assert((1 << BG_PROTECT_STEPS) > BG_PROTECT_MAX &&
		       !(BG_PROTECT_MAX & (BG_PROTECT_MAX - 1)),
	       "the search covers every range, indices masked by MAX - 1");

/* Why an item is in the set (struct bg_protect_item.kind). */
enum bg_protect_kind {
	BG_PROTECT_IFACE = 1, /* an address of an attached interface */
	BG_PROTECT_GATEWAY = 2, /* the next hop of a default route */
	BG_PROTECT_RESOLVER = 3, /* a nameserver line of resolv.conf */
	BG_PROTECT_GIVEN = 4, /* load --protect */
	BG_PROTECT_CONFIG = 5, /* the agent's protect: */
};

/* One address or prefix of the set and why it is there (for `check` and
 * the reports; the datapath reads the ranges only). */
struct bg_protect_item {
	__u8 family; /* BG_KEY_IPV4 or BG_KEY_IPV6 */
	__u8 plen; /* 32 / 128 for an address */
	__u8 kind; /* enum bg_protect_kind */
	__u8 pad;
	__u32 ifindex; /* IFACE: the interface; GATEWAY: the route's device */
	__u32 netns_ino; /* IFACE, GATEWAY: their network namespace */
	__u8 addr[16]; /* network order, masked; IPv4 in the first 4 bytes */
	char ifname[16]; /* IFACE, GATEWAY: the device's name, NUL-ended */
};
_Static_assert(sizeof(struct bg_protect_item) == 44, "protect item size");

/* One half: the sorted, disjoint, inclusive ranges the datapath searches
 * (host order, as the allowlist's), then the items they were made of. */
struct bg_protect_set {
	__u32 n4, n6; /* ranges, <= BG_PROTECT_MAX */
	__u32 nitems; /* <= BG_PROTECT_MAX */
	/* the binary search's steps over n4 and n6 ranges: their bit length
	 * (1 + floor(log2 n), 0 for none), <= BG_PROTECT_STEPS */
	__u8 steps4, steps6;
	__u16 pad;
	/* A first look that needs no search: bit (a >> 24) of map4 is set
	 * when a range holds an address of that /8; bit
	 * bg_protect_bit6(first 32 bits) of map6 when one holds an address
	 * of that /32 (every bit when a range is wider than a /32). A clear
	 * bit: not protected (bloomgate/lookup.h). */
	__u64 map4[4], map6[4];
	struct bg_range4 r4[BG_PROTECT_MAX];
	struct bg_range6 r6[BG_PROTECT_MAX];
	struct bg_protect_item item[BG_PROTECT_MAX];
};
_Static_assert(sizeof(struct bg_protect_set) ==
		       16 + 64 + BG_PROTECT_MAX * (8 + 32 + 44),
	       "protect set size");

struct bg_protect_map {
	__u32 sel; /* the half the datapath reads: sel & 1 */
	__u32 pad;
	/* CLOCK_MONOTONIC ns of a flip not followed by a grace period (the
	 * writer could not ask for one), 0 otherwise: the next writer waits
	 * BG_PROTECT_SETTLE_NS from it */
	__u64 flipped_ns;
	struct bg_protect_set half[2];
};
_Static_assert(sizeof(struct bg_protect_map) ==
		       16 + 2 * sizeof(struct bg_protect_set),
	       "protect map size");

/* Parser bounds (named constants, one definition). */
#define BG_VLAN_MAX 2
#define BG_IPV6_EXT_MAX 6

/* Map names: BPF symbols and pin file names, so the two cannot drift. */
#define BG_PIN_DIR "/sys/fs/bpf/bloomgate"
#define BG_MAP_FILTERS bg_filters
#define BG_MAP_COUNTERS bg_stats
#define BG_MAP_EVENTS bg_events
#define BG_MAP_ATTACH bg_attach
#define BG_MAP_PROTECT bg_protect
/* PROG_ARRAY of bloomgate_dns (at BG_PROG_DNS) and the operator's next
 * program (at BG_PROG_NEXT: `bloomgate chain`, tail-called for every packet
 * bloomgate passes, on an attachment made with --chain), private to one
 * attachment and pinned with it: the kernel empties a prog array when its
 * last user reference closes, which would silently stop the tail calls. */
#define BG_MAP_PROGS bg_progs
#define BG_PROG_DNS 0
#define BG_PROG_NEXT 1
#define BG_PROGS_MAX 2
#define BG__STR(x) #x
#define BG_TEXTIFY(x) BG__STR(x)

#endif /* BLOOMGATE_ABI_H */
