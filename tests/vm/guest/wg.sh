# SPDX-License-Identifier: LGPL-2.1-or-later
# Two WireGuard peers, A in netns a and B in netns b, joined by veth. Shared
# by the wireguard-and-crng scenario and the demo.

ns() { ip netns exec "$@"; }

# Wire-format size of one WireGuard data message carrying an IP packet of $1
# bytes: 16-byte header, plaintext padded to 16, 16-byte tag (noise.h, send.c).
wg_data_len() { echo $(( 16 + ($1 + 15) / 16 * 16 + 16 )); }
# Handshake initiation and response messages (messages.h).
WG_INITIATION_LEN=148
WG_RESPONSE_LEN=92
PING_PAYLOAD=56
PING_IP_LEN=$(( 20 + 8 + PING_PAYLOAD ))
EXPECT_BYTES=$(wg_data_len $PING_IP_LEN)

setup() {
	umask 077
	local d=/run/wgtest
	mkdir -p $d
	ip netns add a
	ip netns add b
	ip link add va netns a type veth peer name vb netns b
	ip -n a addr add 192.0.2.1/24 dev va
	ip -n b addr add 192.0.2.2/24 dev vb
	for n in a b; do ip -n $n link set lo up; done
	ip -n a link set va up
	ip -n b link set vb up
	wg genkey > $d/ka; wg pubkey < $d/ka > $d/pa
	wg genkey > $d/kb; wg pubkey < $d/kb > $d/pb
	# Created inside each netns, so each opens its UDP socket there.
	ip -n a link add wga type wireguard
	ip -n b link add wgb type wireguard
	ns a wg set wga private-key $d/ka listen-port 51820
	ns b wg set wgb private-key $d/kb listen-port 51820
	ip -n a addr add 198.51.100.1/24 dev wga
	ip -n b addr add 198.51.100.2/24 dev wgb
	ip -n a link set wga up
	ip -n b link set wgb up
	PA=$(cat $d/pa)
	PB=$(cat $d/pb)
}

peer_a() { ns a wg set wga peer "$PB" allowed-ips 198.51.100.2/32 endpoint 192.0.2.2:51820; }
peer_b() { ns b wg set wgb peer "$PA" allowed-ips 198.51.100.1/32 endpoint 192.0.2.1:51820; }
ping_once() { ns a ping -q -c 1 -W 5 -s $PING_PAYLOAD 198.51.100.2 > /dev/null; }
handshake() { ns a wg show wga latest-handshakes | cut -f2; }
transfer() { ns a wg show wga transfer | cut -f2-; } # "rx tx"

# A fresh session: a rekey is legitimate REKEY_AFTER_TIME (120 s, time asleep
# included) after the handshake, so start over well before that.
prime() {
	ns a wg set wga peer "$PB" remove 2>/dev/null
	peer_a
	ping_once || return 1
	PRIMED=$(date +%s)
}
