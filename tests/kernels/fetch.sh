#!/usr/bin/env bash
# fetch.sh PINS CACHE: download each pinned Debian kernel package through a
# private apt configuration (its own sources list, state and cache under
# CACHE; the machine's apt sources are never read or changed), check its
# SHA-256 against the pin and extract its vmlinuz to CACHE/NAME/vmlinuz.
# Cached kernels whose package still matches its checksum are reused.
set -euo pipefail

pins=$(realpath "$1")
cache=$(realpath -m "$2")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "test-kernels: $*" >&2; exit 1; }
[ -r "$keyring" ] || die "$keyring missing (make deps installs debian-archive-keyring)"

apt=$cache/apt
mkdir -p "$apt/etc/apt.conf.d" "$apt/etc/preferences.d" "$apt/etc/sources.list.d" \
	"$apt/state/lists/partial" "$apt/cache/archives/partial" "$cache/debs"
cat >"$apt/apt.conf" <<CONF
Dir::Etc "$apt/etc";
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Parts "$apt/etc/apt.conf.d";
Dir::Etc::Preferences "$apt/etc/preferences";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
Dir::State "$apt/state";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
Acquire::Retries "1";
Acquire::http::Timeout "30";
Acquire::https::Timeout "30";
CONF
touch "$apt/state/status"
export APT_CONFIG=$apt/apt.conf

# One sources line per suite the pins name.
awk '!/^#/ && NF {print $2}' "$pins" | sort -u | while read -r suite; do
	case $suite in
	*-security) echo "deb [signed-by=$keyring] $security $suite main" ;;
	*) echo "deb [signed-by=$keyring] $mirror $suite main" ;;
	esac
done >"$apt/etc/sources.list"

updated=""
update() {
	[ -n "$updated" ] && return
	echo "test-kernels: apt-get update (private sources: $(awk '{print $4}' "$apt/etc/sources.list" | paste -sd' '))"
	timeout 300 apt-get update -qq || die "apt-get update failed or timed out (mirror $mirror)"
	updated=1
}

sha() { sha256sum "$1" | awk '{print $1}'; }

awk '!/^#/ && NF' "$pins" | while read -r name suite pkg ver sum; do
	deb=$cache/debs/${pkg}_${ver}_amd64.deb
	deb=${deb//:/%3a}
	out=$cache/$name
	if [ -s "$out/vmlinuz" ] && [ -f "$deb" ] && [ "$(sha "$deb")" = "$sum" ]; then
		echo "test-kernels: $name: cached $pkg=$ver"
		continue
	fi
	update
	rm -f "$deb"
	echo "test-kernels: $name: apt-get download $pkg=$ver ($suite)"
	log=$(cd "$cache/debs" && timeout 600 apt-get download -q "$pkg=$ver" 2>&1) || {
		echo "$log" >&2
		if grep -q '404' <<<"$log"; then
			why="is gone from the mirror (HTTP 404)"
		elif grep -qi 'not found\|Unable to locate' <<<"$log"; then
			why="is no longer listed in $suite"
		else
			why="did not download (see above)"
		fi
		die "pinned kernel $name: $pkg=$ver $why.
  List what the suite has now: APT_CONFIG=$APT_CONFIG apt-cache search --names-only 'linux-image-.*-cloud-amd64-unsigned'
  and APT_CONFIG=$APT_CONFIG apt-cache madison NAME; pin one that downloads, with its .deb's sha256sum, in $pins."
	}
	[ -f "$deb" ] || die "$name: apt-get download left no $deb"
	got=$(sha "$deb")
	[ "$got" = "$sum" ] || die "$name: $pkg=$ver has sha256 $got, pinned $sum: refusing it"
	rm -rf "$out" && mkdir -p "$out/x"
	dpkg-deb -x "$deb" "$out/x"
	vmlinuz=$(ls "$out"/x/boot/vmlinuz-*) || die "$name: no boot/vmlinuz-* in $pkg"
	mv "$vmlinuz" "$out/vmlinuz"
	echo "$pkg=$ver" >"$out/package"
	rm -rf "$out/x"
done
