# perf/analyze/wgprofile.awk: groups `perf script -F comm,tid,ip,sym`
# samples of a wireguard-go process (stock, or the relay, which embeds it)
# by the wireguard-go routine they ran in, and prints, per group, the
# samples and the samples per sample of ChaCha20-Poly1305. The cipher's work
# is fixed per byte, so that ratio is CPU per byte in units of the cipher's
# cost: it does not move when the machine is slower for everyone (a busy
# neighbour, a noisy host), as samples per second or per GB do.
#
#   perf script -i FILE -F comm,tid,ip,sym | awk -f wgprofile.awk
#
# With -v json=1 it prints one JSON object instead (perf/profile-throughput.sh
# keeps it in its summary): samples, the cipher's and the copies' samples
# and shares of all samples, and each group's samples. The cipher share
# counts samples whose leaf (the function the sample was in) is ChaCha20
# or Poly1305 code; the copy share those whose leaf copies bytes: Go's
# memmove, the kernel's user copies (copy_user*, copy_to/from_user,
# rep_movs_alternative, _copy_to/from_iter) and checksum-and-copy.
function flush(   g) {
	if (!nf) return
	if (leaf ~ /chacha20|poly1305/) cipherleaf++
	if (leaf ~ /memmove|memcpy|copy_user|copy_to_user|copy_from_user|rep_movs|_copy_to_iter|_copy_from_iter|csum_partial_copy|copy_page/) copyleaf++
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
	if (json) {
		printf "{\"samples\":%d,\"cipherSamples\":%d,\"cipherShare\":%s,\"copySamples\":%d,\"copyShare\":%s,\"groups\":{", \
			total, cipherleaf, share(cipherleaf), copyleaf, share(copyleaf)
		sep = ""
		for (g in n) { printf "%s\"%s\":%d", sep, g, n[g]; sep = "," }
		print "}}"
		exit
	}
	c = n["cipher"] > 0 ? n["cipher"] : 1
	printf "%-14s %8s %10s\n", "group", "samples", "per-cipher"
	for (g in n) printf "%-14s %8d %10.2f\n", g, n[g], n[g] / c | "sort -k2,2nr"
	close("sort -k2,2nr")
	printf "%-14s %8d %10.2f\n", "total", total, total / c
}
function share(k) { return total > 0 ? sprintf("%.4f", k / total) : "null" }
