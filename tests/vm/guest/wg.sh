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

# Remove the tunnel an earlier scenario of this boot set up. Its peers would
# stay beside ours, and WireGuard zeroes a peer's keys 540 s of awake time
# after its last handshake (REJECT_AFTER_TIME * 3, timers.c): "Keypair N
# destroyed" lines that could land in the middle of a count of ours. Peer
# removal logs those lines before it returns; the namespaces go after it.
teardown() {
	local n p
	for n in a b; do
		[ -e /run/netns/$n ] || continue
		for p in $(ns $n wg show wg$n peers 2> /dev/null); do
			ns $n wg set wg$n peer "$p" remove
		done
		ip netns del $n
	done
}

setup() {
	umask 077
	local d=/run/wgtest
	teardown
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

# Both peers up and a first handshake, reported; fails if there is none.
wg_start() {
	setup
	peer_b
	if ! prime; then
		not_ok "WireGuard handshake between the two netns"
		return 1
	fi
	if [ "$(ns a wg show wga peers | wc -l)" != 1 ] || [ "$(ns b wg show wgb peers | wc -l)" != 1 ]; then
		not_ok "WireGuard: one peer on each side (wga: $(ns a wg show wga peers | wc -l), wgb: $(ns b wg show wgb peers | wc -l))"
		return 1
	fi
	ok "WireGuard handshake between the two netns (A tx/rx per ping: $EXPECT_BYTES bytes)"
}

# wg_cycle LABEL EXPECT TRIGGER: one suspend/resume with the session up, and
# the checks for EXPECT: "autosleep" (the session and the crng survive) or
# "control" (keys cleared: a new handshake, and a reseed). TRIGGER is
# "autosleepd" (the test releases its wake lock and autosleepd suspends) or
# "test" (the test writes /sys/power/state itself, as logind would).
wg_cycle() {
	local c=$1 expect=$2 trigger=$3
	local hs0 hs1 rx0 tx0 rx1 tx1 s0 s1 f0 j0 j1 d0 pong new destroyed reseeded drx dtx i
	if [ $(( $(date +%s) - PRIMED )) -gt 60 ]; then
		prime || not_ok "$c: re-priming the session"
	fi
	# A peer that received data and sent none answers with a keepalive
	# 10 s later (timers.c); let it pass,
	# so nothing but our own ping moves the counters.
	sleep 11
	hs0=$(handshake)
	read -r rx0 tx0 < <(transfer)
	s0=$(stat_ success)
	f0=$(stat_ fail)
	j0=$(journal_successes)
	d0=$(dmesg | wc -l)

	arm_rtc 4
	mark "release $c"
	if [ "$trigger" = autosleepd ]; then
		release
		if ! wait_cycle "$s0" "$f0"; then
			not_ok "$c: autosleepd suspended the guest within 90 s"
			return
		fi
	else
		# The test's own suspend, as logind's would be: without wakeup_count,
		# so the test's wake lock does not stop it, and it returns on resume.
		echo mem > /sys/power/state || not_ok "$c: the test's own suspend (echo mem > /sys/power/state)"
	fi
	mark "resumed $c"
	ping_once
	pong=$?
	hs1=$(handshake)
	read -r rx1 tx1 < <(transfer)
	s1=$(stat_ success)
	# autosleepd logs the result after the thread reports it; give it a moment.
	for i in $(seq 50); do [ "$trigger" != autosleepd ] || [ "$(journal_successes)" -gt "$j0" ] && break; sleep 0.1; done
	j1=$(journal_successes)
	new=$(dmesg | tail -n +$((d0 + 1)))
	destroyed=$(grep -c 'Keypair [0-9]* destroyed' <<< "$new")
	reseeded=$(grep -c 'crng reseeded on system resumption' <<< "$new")
	drx=$((rx1 - rx0))
	dtx=$((tx1 - tx0))

	echo "# $c: suspend_stats success $s0 -> $s1; handshake $hs0 -> $hs1; A rx +$drx tx +$dtx (one ping: $EXPECT_BYTES); destroyed-keypair lines $destroyed; reseed lines $reseeded"
	check "$c: suspend_stats/success went up" [ "$s1" -gt "$s0" ]
	[ "$trigger" = autosleepd ] && check "$c: autosleepd logged the cycle" [ "$j1" -gt "$j0" ]
	check "$c: traffic flows through the tunnel after resume" [ $pong -eq 0 ]
	if [ "$expect" = autosleep ]; then
		check "$c: no new handshake" [ "$hs1" = "$hs0" ]
		check "$c: counters moved by exactly one ping each way" test $drx -eq $EXPECT_BYTES -a $dtx -eq $EXPECT_BYTES
		check "$c: no 'Keypair N destroyed'" [ "$destroyed" -eq 0 ]
		check "$c: no 'crng reseeded on system resumption'" [ "$reseeded" -eq 0 ]
	else
		check "$c: keys cleared: new handshake" [ "$hs1" != "$hs0" ]
		check "$c: keys cleared: counters show a new handshake plus the ping (tx $((WG_INITIATION_LEN + EXPECT_BYTES)), rx $((WG_RESPONSE_LEN + EXPECT_BYTES)))" \
			test $dtx -eq $((WG_INITIATION_LEN + EXPECT_BYTES)) -a $drx -eq $((WG_RESPONSE_LEN + EXPECT_BYTES))
		check "$c: keys cleared: 'Keypair N destroyed' logged" [ "$destroyed" -gt 0 ]
		check "$c: keys cleared: 'crng reseeded on system resumption' logged" [ "$reseeded" -gt 0 ]
	fi
}
