/*
 * netns.c: the network namespace's own TCP counters (/proc/net/netstat,
 * /proc/net/snmp) beside the shim's findings.
 */
#include "internal.h"

void sa_netns_summary(json_t *summary)
{
}
