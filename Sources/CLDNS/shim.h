// CLDNS: NLnet Labs' ldns for Swift, through a few whole operations: one query to one server,
// and (for the simulator) an answer built from record texts. Every pointer handed out is freed
// by the matching lookout_dns_*_free.
#ifndef LOOKOUT_LDNS_SHIM_H
#define LOOKOUT_LDNS_SHIM_H

#include <ldns/ldns.h>
#include <stdlib.h>
#include <string.h>

/// Not an ldns status: the query could not be put together from what it was given.
#define LOOKOUT_DNS_BAD_SERVER -1
#define LOOKOUT_DNS_BAD_NAME -2
#define LOOKOUT_DNS_BAD_TYPE -3
#define LOOKOUT_DNS_BAD_CLASS -4
#define LOOKOUT_DNS_BAD_SOURCE -5
/// Not an ldns status: an answer came with another ID than the question's (a forged or stray
/// answer, or garbage), which a client must not take (RFC 5452 section 9.1).
#define LOOKOUT_DNS_OTHER_ID -6

/// Sends one query for `name`/`type`/`klass` to `server` (an IPv4 or IPv6 literal) on `port`,
/// from `source` (an address literal of the same family, or NULL for any), over TCP when `tcp`,
/// with the RD bit when `recursion` and the message ID `id`, waiting at most `timeout_ms`, once
/// (no retry, no fallback to TCP on truncation). Returns an ldns status (0: an answer with the
/// same ID came, in `*answer`), a LOOKOUT_DNS_BAD_* code or LOOKOUT_DNS_OTHER_ID.
static inline int lookout_dns_query(
    const char *server, uint16_t port, const char *source, const char *name, const char *type, const char *klass, int tcp, int recursion,
    int timeout_ms, uint16_t id, ldns_pkt **answer) {
    *answer = NULL;
    ldns_rdf *address = ldns_rdf_new_frm_str(strchr(server, ':') ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, server);
    if (!address) return LOOKOUT_DNS_BAD_SERVER;
    ldns_rdf *from = NULL;
    if (source) {
        from = ldns_rdf_new_frm_str(strchr(source, ':') ? LDNS_RDF_TYPE_AAAA : LDNS_RDF_TYPE_A, source);
        if (!from) {
            ldns_rdf_deep_free(address);
            return LOOKOUT_DNS_BAD_SOURCE;
        }
    }
    ldns_rdf *dname = ldns_dname_new_frm_str(name);
    if (!dname) {
        ldns_rdf_deep_free(address);
        if (from) ldns_rdf_deep_free(from);
        return LOOKOUT_DNS_BAD_NAME;
    }
    ldns_rr_type rr_type = ldns_get_rr_type_by_name(type);
    if (rr_type == 0) {
        ldns_rdf_deep_free(address);
        ldns_rdf_deep_free(dname);
        if (from) ldns_rdf_deep_free(from);
        return LOOKOUT_DNS_BAD_TYPE;
    }
    ldns_rr_class rr_class = ldns_get_rr_class_by_name(klass);
    if (rr_class == 0) {
        ldns_rdf_deep_free(address);
        ldns_rdf_deep_free(dname);
        if (from) ldns_rdf_deep_free(from);
        return LOOKOUT_DNS_BAD_CLASS;
    }
    ldns_resolver *resolver = ldns_resolver_new();
    ldns_resolver_push_nameserver(resolver, address);
    ldns_rdf_deep_free(address);
    if (from) ldns_resolver_set_source(resolver, from);
    ldns_resolver_set_port(resolver, port);
    ldns_resolver_set_usevc(resolver, tcp ? 1 : 0);
    ldns_resolver_set_recursive(resolver, recursion ? 1 : 0);
    ldns_resolver_set_retry(resolver, 1);
    ldns_resolver_set_fallback(resolver, 0);
    ldns_resolver_set_random(resolver, 0);
    struct timeval timeout = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ldns_resolver_set_timeout(resolver, timeout);
    ldns_resolver_set_retrans(resolver, (uint8_t)(timeout_ms / 1000 > 255 ? 255 : timeout_ms / 1000 + 1));
    // ldns_resolver_send would pick the ID itself and take any answer: ask with ours, and check it.
    ldns_pkt *question = NULL;
    int status = (int)ldns_resolver_prepare_query_pkt(&question, resolver, dname, rr_type, rr_class, recursion ? LDNS_RD : 0);
    if (status == LDNS_STATUS_OK) {
        ldns_pkt_set_id(question, id);
        status = (int)ldns_resolver_send_pkt(answer, resolver, question);
        ldns_pkt_free(question);
        if (status == LDNS_STATUS_OK && *answer && ldns_pkt_id(*answer) != id) {
            ldns_pkt_free(*answer);
            *answer = NULL;
            status = LOOKOUT_DNS_OTHER_ID;
        }
    }
    ldns_rdf_deep_free(dname);
    // The source stays ours whether or not this ldns's deep free would take it.
    ldns_resolver_set_source(resolver, NULL);
    if (from) ldns_rdf_deep_free(from);
    ldns_resolver_deep_free(resolver);
    return status;
}

/// 1 when the answer says it was cut to fit (the TC bit): over UDP, ask again over TCP.
static inline int lookout_dns_truncated(const ldns_pkt *packet) { return ldns_pkt_tc(packet) ? 1 : 0; }

/// A query for `name`/`type`/`klass` with `id` and the RD bit when `recursion`, for a transport
/// of the caller's own (DNS over TLS); NULL with a LOOKOUT_DNS_BAD_* code in `*status`.
static inline ldns_pkt *lookout_dns_question(const char *name, const char *type, const char *klass, int recursion, uint16_t id, int *status) {
    ldns_rr_type rr_type = ldns_get_rr_type_by_name(type);
    ldns_rr_class rr_class = ldns_get_rr_class_by_name(klass);
    if (rr_type == 0 || rr_class == 0) {
        *status = rr_type == 0 ? LOOKOUT_DNS_BAD_TYPE : LOOKOUT_DNS_BAD_CLASS;
        return NULL;
    }
    ldns_rdf *dname = ldns_dname_new_frm_str(name);
    if (!dname) {
        *status = LOOKOUT_DNS_BAD_NAME;
        return NULL;
    }
    // The packet takes the name.
    ldns_pkt *packet = ldns_pkt_query_new(dname, rr_type, rr_class, recursion ? LDNS_RD : 0);
    if (!packet) {
        *status = LOOKOUT_DNS_BAD_NAME;
        return NULL;
    }
    ldns_pkt_set_id(packet, id);
    *status = 0;
    return packet;
}

/// A message's ID.
static inline uint16_t lookout_dns_id(const ldns_pkt *packet) { return ldns_pkt_id(packet); }

/// 1 when `status` says an answer came that is no well-formed DNS message (cut short, a pointer
/// out of it, a name too long): the server answered badly, not the network.
static inline int lookout_dns_status_is_malformed(int status) {
    switch ((ldns_status)status) {
    case LDNS_STATUS_LABEL_OVERFLOW: case LDNS_STATUS_DOMAINNAME_OVERFLOW: case LDNS_STATUS_DOMAINNAME_UNDERFLOW:
    case LDNS_STATUS_PACKET_OVERFLOW: case LDNS_STATUS_INVALID_POINTER: case LDNS_STATUS_WIRE_INCOMPLETE_HEADER:
    case LDNS_STATUS_WIRE_INCOMPLETE_QUESTION: case LDNS_STATUS_WIRE_INCOMPLETE_ANSWER: case LDNS_STATUS_WIRE_INCOMPLETE_AUTHORITY:
    case LDNS_STATUS_WIRE_INCOMPLETE_ADDITIONAL: case LDNS_STATUS_WIRE_RDATA_ERR: case LDNS_STATUS_INVALID_RDF_TYPE:
    case LDNS_STATUS_RDATA_OVERFLOW:
        return 1;
    default:
        return 0;
    }
}

/// ldns's words for a status.
static inline const char *lookout_dns_status_text(int status) { return ldns_get_errorstr_by_id((ldns_status)status); }

static inline int lookout_dns_rcode(const ldns_pkt *packet) { return (int)ldns_pkt_get_rcode(packet); }

/// The rcode's mnemonic (NOERROR, NXDOMAIN...), or NULL for one ldns does not name.
static inline const char *lookout_dns_rcode_name(int rcode) {
    ldns_lookup_table *entry = ldns_lookup_by_id(ldns_rcodes, rcode);
    return entry ? entry->name : NULL;
}

/// 0 answer, 1 authority, 2 additional.
static inline ldns_rr_list *lookout_dns_section(const ldns_pkt *packet, int section) {
    switch (section) {
    case 0: return ldns_pkt_answer(packet);
    case 1: return ldns_pkt_authority(packet);
    default: return ldns_pkt_additional(packet);
    }
}

static inline size_t lookout_dns_count(const ldns_pkt *packet, int section) {
    ldns_rr_list *list = lookout_dns_section(packet, section);
    return list ? ldns_rr_list_rr_count(list) : 0;
}

/// The record as text (`name TTL CLASS TYPE RDATA`, tab-separated, no line break); free().
static inline char *lookout_dns_record_text(const ldns_pkt *packet, int section, size_t index) {
    char *text = ldns_rr2str(ldns_rr_list_rr(lookout_dns_section(packet, section), index));
    if (text) {
        size_t length = strlen(text);
        while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r')) text[--length] = 0;
    }
    return text;
}

/// The record's type number (1 A, 6 SOA...).
static inline int lookout_dns_record_type(const ldns_pkt *packet, int section, size_t index) {
    return (int)ldns_rr_get_type(ldns_rr_list_rr(lookout_dns_section(packet, section), index));
}

/// An SOA record's serial, or -1 when the record is not an SOA.
static inline int64_t lookout_dns_soa_serial(const ldns_pkt *packet, int section, size_t index) {
    ldns_rr *rr = ldns_rr_list_rr(lookout_dns_section(packet, section), index);
    if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_SOA || ldns_rr_rd_count(rr) < 3) return -1;
    return (int64_t)ldns_rdf2native_int32(ldns_rr_rdf(rr, 2));
}

static inline void lookout_dns_packet_free(ldns_pkt *packet) { ldns_pkt_free(packet); }

// MARK: - Answering (lookout-sim)

/// A query read from the wire, or NULL when it is not one.
static inline ldns_pkt *lookout_dns_parse(const uint8_t *data, size_t length) {
    ldns_pkt *packet = NULL;
    if (ldns_wire2pkt(&packet, data, length) != LDNS_STATUS_OK) return NULL;
    if (!ldns_pkt_question(packet) || ldns_rr_list_rr_count(ldns_pkt_question(packet)) == 0) {
        ldns_pkt_free(packet);
        return NULL;
    }
    return packet;
}

/// The question's name (lower case, with its final dot) and type mnemonic; free() the name.
static inline char *lookout_dns_question_name(const ldns_pkt *query) {
    ldns_rdf *owner = ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_question(query), 0));
    ldns_rdf *lowered = ldns_rdf_clone(owner);
    ldns_dname2canonical(lowered);
    char *text = ldns_rdf2str(lowered);
    ldns_rdf_deep_free(lowered);
    return text;
}

static inline int lookout_dns_question_type(const ldns_pkt *query) {
    return (int)ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_question(query), 0));
}

/// An answer to `query` with `rcode`, its question copied, AA set and RD echoed.
static inline ldns_pkt *lookout_dns_response(const ldns_pkt *query, int rcode) {
    ldns_pkt *response = ldns_pkt_new();
    ldns_pkt_set_id(response, ldns_pkt_id(query));
    ldns_pkt_set_qr(response, 1);
    ldns_pkt_set_aa(response, 1);
    ldns_pkt_set_rd(response, ldns_pkt_rd(query));
    ldns_pkt_set_rcode(response, (uint8_t)rcode);
    ldns_rr *question = ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(query), 0));
    ldns_pkt_push_rr(response, LDNS_SECTION_QUESTION, question);
    return response;
}

/// Adds a record written as zone-file text to `section` (0 answer, 1 authority, 2 additional);
/// 0 when the text is not a record.
static inline int lookout_dns_add(ldns_pkt *response, int section, const char *text) {
    ldns_rr *rr = NULL;
    if (ldns_rr_new_frm_str(&rr, text, 300, NULL, NULL) != LDNS_STATUS_OK) return 0;
    ldns_pkt_section target = section == 0 ? LDNS_SECTION_ANSWER : section == 1 ? LDNS_SECTION_AUTHORITY : LDNS_SECTION_ADDITIONAL;
    ldns_pkt_push_rr(response, target, rr);
    return 1;
}

/// The packet in wire format; free() `*data`. 0 on failure.
static inline int lookout_dns_wire(const ldns_pkt *packet, uint8_t **data, size_t *length) {
    return ldns_pkt2wire(data, packet, length) == LDNS_STATUS_OK;
}

#endif
