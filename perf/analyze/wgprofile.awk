# perf/analyze/wgprofile.awk: groups `perf script -F comm,tid,ip,sym`
# samples of a wireguard-go process (stock, or the relay, which embeds it)
# by the wireguard-go routine they ran in, and prints, per group, the
# samples and the samples per sample of ChaCha20-Poly1305. The cipher's work
# is fixed per byte, so that ratio is CPU per byte in units of the cipher's
# cost: it does not move when the machine is slower for everyone (a busy
# neighbour, a noisy host), as samples per second or per GB do.
#
#   perf script -i FILE -F comm,tid,ip,sym | awk -f wgprofile.awk
function flush(   g) {
	if (!nf) return
	if (leaf ~ /chacha20poly1305\./) g = "cipher"
	else if (body ~ /RoutineSequentialReceiver/) g = "tun-write"
	else if (body ~ /RoutineReceiveIncoming/) g = "udp-receive"
	else if (body ~ /RoutineSequentialSender/) g = "udp-send"
	else if (body ~ /RoutineReadFromTUN/) g = "tun-read"
	else if (body ~ /RoutineDecryption|RoutineEncryption/) g = "crypto-other"
	else if (body ~ /liqo-relay/) g = "relay-control"
	else if (body ~ /runtime\.sysmon/) g = "sysmon"
	else if (body ~ /runtime\.(schedule|findRunnable|gcBgMarkWorker)/) g = "scheduler+gc"
	else g = "other"
	n[g]++
	total++
	nf = 0; body = ""; leaf = ""
}
/^$/ { flush(); next }
!nf { nf = 1; next }   # the sample's header line (comm tid)
{
	if (nf == 1) leaf = $2
	nf++
	body = body " " $2
}
END {
	flush()
	c = n["cipher"] > 0 ? n["cipher"] : 1
	printf "%-14s %8s %10s\n", "group", "samples", "per-cipher"
	for (g in n) printf "%-14s %8d %10.2f\n", g, n[g], n[g] / c | "sort -k2,2nr"
	close("sort -k2,2nr")
	printf "%-14s %8d %10.2f\n", "total", total, total / c
}
