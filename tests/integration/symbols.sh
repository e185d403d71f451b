#!/bin/bash
# Symbol export check: libsockaudit.so defines (exports) only the libc names
# listed in shim/exports.map and sockaudit_*; nothing else of ours leaks out
# (a leaked sa_* helper could be bound by the host or another preload).
. "$(dirname "$0")/../lib.sh"

map=$TOP/shim/exports.map
[ -f "$LIB" ] || { fail "libsockaudit.so built" "$LIB missing"; finish; }
[ -f "$map" ] || { fail "shim/exports.map exists" "missing"; finish; }

# Names the map allows: the identifiers inside its global: block(s), without
# wildcards (sockaudit_* is handled below).
allowed=$(sed -e 's|/\*.*\*/||g' -e 's|#.*||' "$map" | tr -s ' \t;{}' '\n' |
	awk '/^global:$/{g=1; next} /^local:$/{g=0; next} g && /^[A-Za-z_][A-Za-z0-9_]*$/' | sort -u)
[ -n "$allowed" ] && ok "exports.map lists $(echo "$allowed" | wc -w) names" || fail "exports.map lists names" "none parsed"

# Defined dynamic symbols, without the version suffix; the version node name
# itself shows up as an ABS symbol with no type we care about.
nm -D --defined-only "$LIB" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort -u >"$T/defined"
bad=""
while read -r s; do
	case "$s" in
	sockaudit_*) ;;
	_init|_fini) ;;                  # the ELF entry points every .so has
	*) echo "$allowed" | grep -qx -- "$s" || bad="$bad $s" ;;
	esac
done <"$T/defined"
[ -z "$bad" ] && ok "only wrapped libc names and sockaudit_* exported ($(wc -l <"$T/defined") symbols)" \
	|| fail "only wrapped libc names and sockaudit_* exported" "also exported:$bad"

# Every name the map promises is really defined (a wrapper that silently
# went missing means a call the shim no longer sees).
missing=""
# A ThreadSanitizer build leaves the signal wrappers out on purpose (interpose.c).
tsan=0; ldd "$LIB" 2>/dev/null | grep -q 'libtsan\.so' && tsan=1
for s in $allowed; do
	[ $tsan = 1 ] && { [ "$s" = sigaction ] || [ "$s" = signal ]; } && continue
	grep -qx -- "$s" "$T/defined" || missing="$missing $s"
done
[ -z "$missing" ] && ok "every name in exports.map is defined" || fail "every name in exports.map is defined" "missing:$missing"

# The core wrappers the contract names are among them.
need="socket setsockopt listen accept accept4 connect close close_range closefrom dup2 dup3 syscall"
miss=""
for s in $need; do grep -qx "$s" "$T/defined" || miss="$miss $s"; done
[ -z "$miss" ] && ok "core wrappers exported ($need)" || fail "core wrappers exported" "missing:$miss"
grep -qx sockaudit_version "$T/defined" && grep -qx sockaudit_enabled "$T/defined" \
	&& ok "public sockaudit_version and sockaudit_enabled exported" \
	|| fail "public sockaudit_version and sockaudit_enabled exported"

# No sa_* internals, no jansson copies, no TLS guard variable.
leak=$(grep -E '^(sa_|json_|jsonp_)' "$T/defined" | tr '\n' ' ')
[ -z "$leak" ] && ok "no sa_*/json_* internals exported" || fail "no sa_*/json_* internals exported" "$leak"

# What every host maps for us: libc (and the sanitizer runtime in such a
# build), no libm, and no libjansson when its static archive was there to
# link in (Makefile: SHIM_JANSSON).
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed " in *" libm.so"*) fail "the shim does not load libm" "NEEDED: $needed" ;; *) ok "the shim does not load libm" ;; esac
jar=$(pkg-config --variable=libdir jansson 2>/dev/null)/libjansson.a
if [ -f "$jar" ]; then
	case " $needed " in *libjansson*) fail "jansson linked in statically" "NEEDED: $needed" ;;
	*) ok "jansson linked in statically (NEEDED: $needed)" ;; esac
fi

# Undefined symbols resolve: the library loads into a plain program.
if SOCKAUDIT_LOG=$T/true.jsonl LD_PRELOAD="$(preload_value)" /bin/true 2>"$T/err" && [ ! -s "$T/err" ]; then ok "preloads into /bin/true silently"
else fail "preloads into /bin/true silently" "$(head -3 "$T/err")"; fi
finish
