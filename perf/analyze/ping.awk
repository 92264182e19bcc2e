# ping.awk: `ping -D -n` output to "seq send_time recv_time rtt_ms" lines,
# with icmp_seq unwrapped past 65535 (ping numbers modulo 2^16), in
# arrival order. send_time = recv_time - rtt.
/icmp_seq=/ && /time=/ {
	recv = substr($1, 2, length($1) - 2) + 0
	for (i = 2; i <= NF; i++) {
		if ($i ~ /^icmp_seq=/) { sub(/icmp_seq=/, "", $i); raw = $i + 0 }
		if ($i ~ /^time=/) { sub(/time=/, "", $i); rtt = $i + 0 }
	}
	if (seen && raw < last - 32768) base += 65536
	seq = raw + base
	if (seen && raw > last + 32768) seq -= 65536 # a late one from before a wrap
	else last = raw
	seen = 1
	printf "%d %.6f %.6f %.3f\n", seq, recv - rtt / 1000, recv, rtt
}
